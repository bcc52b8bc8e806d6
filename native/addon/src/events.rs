//! What the engine tells JavaScript: the events its connection state machines produce, gathered
//! per read slice and delivered together (`js::deliver` turns them into calls). Plain data: the
//! machines that make them know nothing of Node-API, and the boundary that delivers them nothing
//! of connections.

/// Flags of a request handed to JavaScript (`src/engines/kit/addon.ts` holds the same numbers).
pub const FLAG_HTTP11: u32 = 1;
/// The request broke one of Cog's rules: the status is in the high 16 bits, the message is passed along.
pub const FLAG_REFUSED: u32 = 4;
/// The request has a body and a Content-Encoding header.
pub const FLAG_ENCODED: u32 = 8;
/// The request asks to change protocols (a WebSocket handshake, say): its connection closes after a non-101 answer.
pub const FLAG_UPGRADE: u32 = 16;
/// The request came on an HTTP/2 stream.
pub const FLAG_HTTP2: u32 = 32;
/// The request came on an HTTP/3 stream (QUIC).
pub const FLAG_HTTP3: u32 = 64;

/// The body a request is handed over with.
#[derive(Debug, PartialEq, Eq)]
pub enum Body {
    None,
    Whole(Vec<u8>),
    /// It follows in pieces (`BodyPiece`, then `BodyEnd`): its declared length, None if chunked.
    Follows(Option<u64>),
}

/// Bytes of a body read from the socket straight into memory JavaScript is to own: a Buffer
/// made for them by the boundary with JavaScript (`js::piece`), kept here as what it is to this
/// layer, something that owns the Buffer until it is handed over. Never written to again once
/// read into, so a piece an app keeps keeps its bytes.
pub struct ReadPiece(pub Box<dyn std::any::Any>);

impl std::fmt::Debug for ReadPiece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadPiece")
    }
}

/// The same piece only (each holds a Buffer of its own).
impl PartialEq for ReadPiece {
    fn eq(&self, other: &ReadPiece) -> bool {
        std::ptr::eq(&*self.0, &*other.0)
    }
}
impl Eq for ReadPiece {}

/// Why a connection failed, as a Node socket's 'error' says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocketFailure {
    /// A read (`writing` false) or a write of the socket failed with `errno`: `read ECONNRESET`,
    /// `write EPIPE`.
    Os { errno: i32, writing: bool },
    /// The client broke TLS (a record that does not decrypt, say): the code node:tls's error
    /// has for it (OpenSSL's, `ERR_SSL_…`), and rustls's words for it.
    Tls { code: String, message: String },
}

#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// A request for the app (its method and URL are read from the engine's record when delivered).
    Request {
        id: u64,
        body: Body,
        flags: u32,
        problem: Option<String>,
    },
    /// The request's client is gone, or its connection closed before it was answered.
    Abort {
        id: u64,
    },
    /// A streamed response may write again.
    Drain {
        id: u64,
    },
    /// Bytes of a body that follows its request.
    BodyPiece {
        id: u64,
        piece: Vec<u8>,
    },
    /// Bytes of a body that follows its request, read straight into a Buffer for JavaScript.
    BodyRead {
        id: u64,
        piece: ReadPiece,
    },
    /// The trailer fields that came after a request's body (HTTP/2's last HEADERS, or after the
    /// last chunk of a chunked HTTP/1.1 body): `name\0value\0…` (see `trailer_fields`), before
    /// its `BodyEnd` (or after its `Request`, when the body came whole with the head).
    BodyTrailers {
        id: u64,
        fields: Vec<u8>,
    },
    /// The body that followed its request is whole.
    BodyEnd {
        id: u64,
    },
    /// The server could not accept for want of a descriptor (the process's file limit): the
    /// connections waiting were closed unserved. Told once per server; about no request (id 0).
    OutOfDescriptors,
    /// A body JavaScript is receiving did not arrive within its requestTimeout: the app answers the 408.
    BodyTimeout {
        id: u64,
    },
    /// A WebSocket message (text is checked UTF-8).
    WsMessage {
        id: u64,
        data: Vec<u8>,
        text: bool,
    },
    WsDrain {
        id: u64,
    },
    /// The socket closed: the peer's code (1005 if none, 1006 if cut, or the code it was failed with) and reason.
    WsClose {
        id: u64,
        code: u16,
        reason: Vec<u8>,
    },
    /// Bytes that arrived on a tunnelled connection (an upgrade handed to JavaScript raw).
    TunnelData {
        id: u64,
        data: Vec<u8>,
    },
    /// The client ended its side of a tunnelled connection.
    TunnelEnd {
        id: u64,
    },
    /// A tunnelled connection's output is below the high-water mark again.
    TunnelDrain {
        id: u64,
    },
    /// A tunnelled connection's write side is shut, all that was written to it sent (Node's 'finish').
    TunnelShut {
        id: u64,
    },
    /// A tunnelled connection closed; `failure` when its socket failed (the client reset it, say).
    TunnelClose {
        id: u64,
        failure: Option<SocketFailure>,
    },
}

/// Trailer fields as JavaScript takes them: each name and value followed by a NUL (latin1; a
/// field holds no NUL), names as they came.
pub fn trailer_fields<'a>(fields: impl Iterator<Item = (&'a [u8], &'a [u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in fields {
        out.extend_from_slice(name);
        out.push(0);
        out.extend_from_slice(value);
        out.push(0);
    }
    out
}

impl Event {
    /// The request (or WebSocket) the event is about.
    pub fn id(&self) -> u64 {
        match *self {
            Event::Request { id, .. }
            | Event::Abort { id }
            | Event::Drain { id }
            | Event::BodyPiece { id, .. }
            | Event::BodyRead { id, .. }
            | Event::BodyEnd { id }
            | Event::BodyTrailers { id, .. }
            | Event::BodyTimeout { id }
            | Event::WsMessage { id, .. }
            | Event::WsDrain { id }
            | Event::WsClose { id, .. }
            | Event::TunnelData { id, .. }
            | Event::TunnelEnd { id }
            | Event::TunnelDrain { id }
            | Event::TunnelShut { id }
            | Event::TunnelClose { id, .. } => id,
            Event::OutOfDescriptors => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Body, Event, ReadPiece};

    #[test]
    fn every_event_names_its_request() {
        let events = [
            Event::Request { id: 1, body: Body::None, flags: 0, problem: None },
            Event::Abort { id: 2 },
            Event::Drain { id: 3 },
            Event::BodyPiece { id: 4, piece: Vec::new() },
            Event::BodyEnd { id: 5 },
            Event::BodyTimeout { id: 6 },
            Event::WsMessage { id: 7, data: Vec::new(), text: true },
            Event::WsDrain { id: 8 },
            Event::WsClose { id: 9, code: 1000, reason: Vec::new() },
            Event::BodyRead { id: 10, piece: ReadPiece(Box::new(())) },
            Event::TunnelData { id: 11, data: Vec::new() },
            Event::TunnelEnd { id: 12 },
            Event::TunnelDrain { id: 13 },
            Event::TunnelShut { id: 14 },
            Event::TunnelClose { id: 15, failure: None },
        ];
        assert_eq!(events.iter().map(Event::id).collect::<Vec<_>>(), (1..=15).collect::<Vec<_>>());
    }
}
