//! What a connection reports: requests, their body and trailers, streams closed or reset, and
//! the client's GOAWAY and PING. Events are stored as spans into one byte buffer (no allocation
//! per request or per header once the buffers have grown) and read as borrowed views.

/// An HTTP/2 stream identifier (odd: opened by the client).
pub type StreamId = u32;

/// A range of `Events::bytes`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Span {
    start: u32,
    len: u32,
}

impl Span {
    pub(crate) fn push(bytes: &mut Vec<u8>, data: &[u8]) -> Span {
        let start = bytes.len() as u32;
        bytes.extend_from_slice(data);
        Span { start, len: data.len() as u32 }
    }

    fn of(self, bytes: &[u8]) -> &[u8] {
        &bytes[self.start as usize..(self.start + self.len) as usize]
    }

    /// The same span in a buffer where its bytes start `by` later.
    pub(crate) fn shifted(self, by: u32) -> Span {
        Span { start: self.start + by, len: self.len }
    }
}

/// A header field: name and value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Field {
    pub(crate) name: Span,
    pub(crate) value: Span,
}

/// The pseudo-header fields of a request (RFC 9113 §8.3.1), and the order they came in.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pseudo {
    pub(crate) method: Span,
    pub(crate) scheme: Span,
    pub(crate) authority: Span,
    pub(crate) path: Span,
    pub(crate) protocol: Span,
    pub(crate) order: Order,
}

/// The pseudo-header names, in the order `Order` numbers them.
const PSEUDO_NAMES: [&[u8]; 5] = [b":method", b":scheme", b":authority", b":path", b":protocol"];

/// Which pseudo-header fields came, in their order (node:http2 shows a request's raw headers as
/// they came, pseudo-headers first: the engine does too).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Order {
    kinds: [u8; 5],
    len: u8,
}

impl Order {
    /// Notes the pseudo-header `kind` (its place in `PSEUDO_NAMES`); nghttp2 lets each come once.
    pub(crate) fn push(&mut self, kind: u8) {
        if (self.len as usize) < self.kinds.len() {
            self.kinds[self.len as usize] = kind;
            self.len += 1;
        }
    }
}

#[derive(Debug)]
pub(crate) enum Stored {
    Request {
        stream: StreamId,
        pseudo: Pseudo,
        fields: (u32, u32),
        end_stream: bool,
        too_large: bool,
    },
    Data {
        stream: StreamId,
        data: Span,
        end_stream: bool,
    },
    Trailers {
        stream: StreamId,
        fields: (u32, u32),
    },
    Closed {
        stream: StreamId,
    },
    Reset {
        stream: StreamId,
        code: u32,
    },
    Drained {
        stream: StreamId,
    },
    GoAway {
        last_stream: StreamId,
        code: u32,
    },
    Ping,
    /// A request reset before anything of it was handed over, and what followed it: left out.
    Dropped,
}

/// The events of a connection since they were last taken (`Connection::take_events`).
#[derive(Debug, Default)]
pub struct Events {
    pub(crate) list: Vec<Stored>,
    pub(crate) bytes: Vec<u8>,
    pub(crate) fields: Vec<Field>,
}

impl Events {
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn iter(&self) -> impl Iterator<Item = Event<'_>> {
        self.list.iter().filter_map(move |stored| self.view(stored))
    }

    pub(crate) fn clear(&mut self) {
        self.list.clear();
        self.bytes.clear();
        self.fields.clear();
    }

    fn headers(&self, (start, end): (u32, u32)) -> Headers<'_> {
        Headers { bytes: &self.bytes, fields: &self.fields[start as usize..end as usize] }
    }

    fn view<'a>(&'a self, stored: &Stored) -> Option<Event<'a>> {
        let bytes = &self.bytes;
        Some(match *stored {
            Stored::Request { stream, pseudo, fields, end_stream, too_large } => Event::Request(Request {
                stream,
                method: pseudo.method.of(bytes),
                scheme: pseudo.scheme.of(bytes),
                authority: pseudo.authority.of(bytes),
                path: pseudo.path.of(bytes),
                protocol: pseudo.protocol.of(bytes),
                order: pseudo.order,
                headers: self.headers(fields),
                end_stream,
                too_large,
            }),
            Stored::Data { stream, data, end_stream } => Event::Data { stream, data: data.of(bytes), end_stream },
            Stored::Trailers { stream, fields } => Event::Trailers { stream, headers: self.headers(fields) },
            Stored::Closed { stream } => Event::Closed { stream },
            Stored::Reset { stream, code } => Event::Reset { stream, code },
            Stored::Drained { stream } => Event::Drained { stream },
            Stored::GoAway { last_stream, code } => Event::GoAway { last_stream, code },
            Stored::Ping => Event::Ping,
            Stored::Dropped => return None,
        })
    }
}

/// One event, borrowing its bytes from `Events`.
#[derive(Debug)]
pub enum Event<'a> {
    /// A new request: its head. `end_stream`: it has no body.
    Request(Request<'a>),
    /// Request body bytes. The app calls `Connection::consume` once it has taken them (flow
    /// control: the client may send only a window's worth ahead). `end_stream`: the body ends
    /// here (`data` may be empty then).
    Data { stream: StreamId, data: &'a [u8], end_stream: bool },
    /// Trailer fields: the body has ended.
    Trailers { stream: StreamId, headers: Headers<'a> },
    /// The stream is done: its request was received and its response sent whole.
    Closed { stream: StreamId },
    /// The stream ended before that: the client reset it (RST_STREAM), or the connection did (a
    /// protocol error, the connection closing). `code` is HTTP/2's error code.
    Reset { stream: StreamId, code: u32 },
    /// The stream's buffered response body fell under `Config::stream_high_water`.
    Drained { stream: StreamId },
    /// The client is going away: streams after `last_stream` are not going to be processed.
    GoAway { last_stream: StreamId, code: u32 },
    /// The client sent a PING (already answered).
    Ping,
}

/// A request's head. Pseudo-header fields absent from the request are empty (`authority` may
/// be; nghttp2 has checked that `method`, `scheme` and `path` are there, except for CONNECT).
#[derive(Debug)]
pub struct Request<'a> {
    pub stream: StreamId,
    pub method: &'a [u8],
    pub scheme: &'a [u8],
    pub authority: &'a [u8],
    pub path: &'a [u8],
    /// `:protocol` of an extended CONNECT (RFC 8441); empty otherwise.
    pub protocol: &'a [u8],
    order: Order,
    /// The regular header fields, in order (names lower-case, as HTTP/2 requires).
    pub headers: Headers<'a>,
    pub end_stream: bool,
    /// The header list was larger than `Config::max_header_list_size`: `headers` holds only the
    /// fields that fit. The app should answer 431.
    pub too_large: bool,
}

impl<'a> Request<'a> {
    /// The pseudo-header fields that came, with their names, in the order they came.
    pub fn pseudo_headers(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + '_ {
        self.order.kinds[..self.order.len as usize].iter().map(move |&kind| {
            let value = match kind {
                0 => self.method,
                1 => self.scheme,
                2 => self.authority,
                3 => self.path,
                _ => self.protocol,
            };
            (PSEUDO_NAMES[kind as usize], value)
        })
    }
}

/// Header fields in order.
#[derive(Clone, Copy, Debug)]
pub struct Headers<'a> {
    bytes: &'a [u8],
    fields: &'a [Field],
}

impl<'a> Headers<'a> {
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let bytes = self.bytes;
        self.fields.iter().map(move |f| (f.name.of(bytes), f.value.of(bytes)))
    }

    /// The first field of that (lower-case) name.
    pub fn get(&self, name: &[u8]) -> Option<&'a [u8]> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}
