//! One HTTP/3 connection over a quinn-proto connection: the client's control and QPACK streams,
//! its request streams read into events, and the app's answers framed onto them.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use quinn_proto::{Dir, ReadError, StreamEvent, StreamId as QuicStream, VarInt, WriteError};

use crate::config::Config;
use crate::error::{code, Error};
use crate::events::{ConnId, Event, Request, StreamId};
use crate::frame::{self, setting, stream_type, Frame, FrameError, FrameReader};
use crate::message::{self, Head};
use crate::qpack::{self, DecoderStream, EncoderStream};

/// A client-initiated unidirectional stream, by the type its first bytes give (§6.2).
enum Uni {
    /// The type has not arrived whole.
    Typing(Vec<u8>),
    Control(FrameReader),
    Encoder(EncoderStream),
    Decoder(DecoderStream),
    /// An unknown or reserved type: not read (STOP_SENDING sent).
    Ignored,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the HEADERS frame.
    Head,
    /// Head delivered; DATA frames (or trailers) may follow.
    Body,
    /// Trailers delivered: nothing may follow but the stream's end.
    Trailers,
    /// The request is whole (the stream's end read).
    Done,
}

/// A request stream.
struct Req {
    reader: FrameReader,
    phase: Phase,
    /// The request was handed to the app (a later reset is reported).
    announced: bool,
    content_length: Option<u64>,
    received: u64,
    /// Body bytes handed over and not yet consumed by the app.
    unconsumed: u64,
    /// Reading stopped at `body_window`; `consume` resumes it.
    held: bool,
    /// The index in the event list of this stream's latest event, while it is there to amend.
    last_event: Option<usize>,
    // Sending.
    responded: bool,
    queue: VecDeque<Bytes>,
    queued: usize,
    end_queued: bool,
    finished: bool,
    wants_drain: bool,
}

impl Req {
    fn new(max_frame: u64) -> Req {
        Req {
            reader: FrameReader::new(max_frame),
            phase: Phase::Head,
            announced: false,
            content_length: None,
            received: 0,
            unconsumed: 0,
            held: false,
            last_event: None,
            responded: false,
            queue: VecDeque::new(),
            queued: 0,
            end_queued: false,
            finished: false,
            wants_drain: false,
        }
    }
}

/// What reading a stream ran into.
enum Fault {
    /// Reset this stream with the code (a stream error).
    Stream(u64),
    /// Close the connection with the code (a connection error).
    Connection(u64, &'static str),
}

pub(crate) struct Conn {
    pub(crate) quic: quinn_proto::Connection,
    pub(crate) id: ConnId,
    config: Config,
    control: Option<QuicStream>,
    uni: HashMap<QuicStream, Uni>,
    peer_control: bool,
    peer_encoder: bool,
    peer_decoder: bool,
    settings: bool,
    requests: HashMap<QuicStream, Req>,
    /// The GOAWAY sent: requests on streams from this id on are refused.
    goaway: Option<u64>,
    /// How many STREAM frames had left when the GOAWAY was written: one more means it has left
    /// too (the control stream goes before every other), so the connection may close.
    goaway_after: u64,
    /// Buffers reused by every answer's head (its QPACK section, a field name in lower case), so
    /// that an answer costs one allocation: the frames it queues.
    scratch: Scratch,
    /// The next request stream id after the highest accepted.
    next_request: u64,
    pub(crate) closed: bool,
    pub(crate) now: Instant,
}

fn varint(v: u64) -> VarInt {
    VarInt::from_u64(v).unwrap_or(VarInt::MAX)
}

impl Conn {
    pub(crate) fn new(quic: quinn_proto::Connection, id: ConnId, config: Config, now: Instant) -> Conn {
        Conn {
            quic,
            id,
            config,
            control: None,
            uni: HashMap::new(),
            peer_control: false,
            peer_encoder: false,
            peer_decoder: false,
            settings: false,
            requests: HashMap::new(),
            goaway: None,
            goaway_after: 0,
            scratch: Scratch::default(),
            next_request: 0,
            closed: false,
            now,
        }
    }

    /// Handles quinn-proto's application events until there are none.
    pub(crate) fn poll_quic(&mut self, events: &mut Vec<Event>) {
        while let Some(event) = self.quic.poll() {
            match event {
                quinn_proto::Event::HandshakeDataReady => {}
                quinn_proto::Event::Connected => {
                    self.open_control();
                    events.push(Event::Connected { conn: self.id, remote: self.quic.remote_address() });
                }
                quinn_proto::Event::ConnectionLost { reason } => {
                    let code = match &reason {
                        quinn_proto::ConnectionError::ApplicationClosed(close) => Some(close.error_code.into_inner()),
                        _ => None,
                    };
                    self.lost(code, reason.to_string(), events);
                }
                quinn_proto::Event::Stream(StreamEvent::Opened { dir }) => self.accept(dir, events),
                quinn_proto::Event::Stream(StreamEvent::Readable { id }) => self.read(id, events),
                quinn_proto::Event::Stream(StreamEvent::Writable { id }) => self.flush(id, events),
                quinn_proto::Event::Stream(StreamEvent::Finished { id }) => self.finished(id, events),
                quinn_proto::Event::Stream(StreamEvent::Stopped { id, error_code }) => {
                    self.drop_request(id, Some(error_code.into_inner()), events);
                }
                quinn_proto::Event::Stream(StreamEvent::Available { .. }) => {}
                quinn_proto::Event::DatagramReceived | quinn_proto::Event::DatagramsUnblocked => {}
            }
        }
    }

    /// The connection is gone: every request still open is reset.
    fn lost(&mut self, code: Option<u64>, reason: String, events: &mut Vec<Event>) {
        if self.closed {
            return;
        }
        self.closed = true;
        let mut open: Vec<_> = self.requests.drain().filter(|(_, r)| r.announced).map(|(id, _)| id).collect();
        open.sort();
        for id in open {
            events.push(Event::Reset { conn: self.id, stream: id.into(), code: code::H3_REQUEST_CANCELLED });
        }
        events.push(Event::ConnectionClosed { conn: self.id, code, reason });
    }

    /// Closes the connection with an HTTP/3 error code.
    pub(crate) fn close(&mut self, code: u64, reason: &'static str, events: &mut Vec<Event>) {
        if self.closed {
            return;
        }
        self.quic.close(self.now, varint(code), Bytes::from_static(reason.as_bytes()));
        self.lost(Some(code), reason.to_string(), events);
    }

    /// Opens the server's control stream with its SETTINGS (§6.2.1): no dynamic QPACK table
    /// and no blocked streams, and the field section size.
    fn open_control(&mut self) {
        let Some(id) = self.quic.streams().open(Dir::Uni) else {
            return;
        };
        let mut settings = Vec::new();
        for (id, value) in
            [(setting::QPACK_MAX_TABLE_CAPACITY, 0), (setting::QPACK_BLOCKED_STREAMS, 0), (setting::MAX_FIELD_SECTION_SIZE, self.config.max_header_list_size)]
        {
            frame::write_varint(id, &mut settings);
            frame::write_varint(value, &mut settings);
        }
        let mut out = Vec::new();
        frame::write_varint(stream_type::CONTROL, &mut out);
        frame::write_header(frame::SETTINGS, settings.len() as u64, &mut out);
        out.extend_from_slice(&settings);
        // A fresh stream takes these few bytes whole (the client's stream window is at least
        // this: RFC 9114 §6.2 asks it to allow the control stream).
        let _ = self.quic.send_stream(id).write(&out);
        // Before any answer's data: a GOAWAY must not wait behind bodies (`is_quiet` counts on it).
        let _ = self.quic.send_stream(id).set_priority(i32::MAX);
        self.control = Some(id);
    }

    fn accept(&mut self, dir: Dir, events: &mut Vec<Event>) {
        while let Some(id) = self.quic.streams().accept(dir) {
            match dir {
                Dir::Bi => {
                    let n = u64::from(id);
                    if self.goaway.is_some_and(|g| n >= g) || self.closed {
                        // §5.2: a request past the GOAWAY is rejected, not processed.
                        let _ = self.quic.recv_stream(id).stop(varint(code::H3_REQUEST_REJECTED));
                        let _ = self.quic.send_stream(id).reset(varint(code::H3_REQUEST_REJECTED));
                        continue;
                    }
                    self.next_request = self.next_request.max(n + 4);
                    self.requests.insert(id, Req::new(self.config.max_header_list_size * 2));
                }
                Dir::Uni => {
                    self.uni.insert(id, Uni::Typing(Vec::new()));
                }
            }
            self.read(id, events);
        }
    }

    fn read(&mut self, id: QuicStream, events: &mut Vec<Event>) {
        if self.closed {
            return;
        }
        match id.dir() {
            Dir::Bi => self.read_request(id, events),
            Dir::Uni => self.read_uni(id, events),
        }
    }

    /// Reads what a stream has (at most `limit` bytes): the pieces, whether its end came, and
    /// the client's reset code if it reset it.
    fn take(&mut self, id: QuicStream, limit: usize) -> (Vec<Bytes>, bool, Option<u64>) {
        let mut pieces = Vec::new();
        let (mut fin, mut reset) = (false, None);
        let mut stream = self.quic.recv_stream(id);
        let Ok(mut chunks) = stream.read(true) else {
            return (pieces, false, None);
        };
        let mut left = limit;
        while left > 0 {
            match chunks.next(left) {
                Ok(Some(chunk)) => {
                    left -= chunk.bytes.len();
                    pieces.push(chunk.bytes);
                }
                Ok(None) => {
                    fin = true;
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(code)) => {
                    reset = Some(code.into_inner());
                    break;
                }
            }
        }
        let _ = chunks.finalize();
        (pieces, fin, reset)
    }

    fn read_request(&mut self, id: QuicStream, events: &mut Vec<Event>) {
        loop {
            let Some(req) = self.requests.get_mut(&id) else {
                return;
            };
            if req.phase == Phase::Done {
                return;
            }
            req.last_event = None;
            let limit = match req.phase {
                Phase::Head => 64 * 1024,
                _ => self.config.body_window.saturating_sub(req.unconsumed) as usize,
            };
            if limit == 0 {
                req.held = true;
                return;
            }
            req.held = false;
            let (pieces, fin, reset) = self.take(id, limit);
            if pieces.is_empty() && !fin && reset.is_none() {
                return;
            }
            let conn = self.id;
            let max = self.config.max_header_list_size;
            let req = self.requests.get_mut(&id).unwrap();
            let mut fault = None;
            for piece in pieces {
                if let Err(f) = request_bytes(conn, id, req, piece, max, events) {
                    fault = Some(f);
                    break;
                }
            }
            if fault.is_none() && fin {
                fault = request_end(conn, id, req, events).err();
            }
            match fault {
                Some(Fault::Connection(code, reason)) => return self.close(code, reason, events),
                Some(Fault::Stream(code)) => return self.reset_stream(id, code, events),
                None => {}
            }
            if let Some(code) = reset {
                // The client gave up on the request: reset the response too.
                let _ = self.quic.send_stream(id).reset(varint(code::H3_REQUEST_CANCELLED));
                return self.drop_request(id, Some(code), events);
            }
            if fin {
                self.maybe_done(id);
                return;
            }
        }
    }

    fn read_uni(&mut self, id: QuicStream, events: &mut Vec<Event>) {
        let (pieces, fin, reset) = self.take(id, usize::MAX);
        let mut result = Ok(());
        for piece in pieces {
            result = self.uni_bytes(id, piece, events);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() && (fin || reset.is_some()) {
            if let Some(Uni::Control(_) | Uni::Encoder(_) | Uni::Decoder(_)) = self.uni.get(&id) {
                result = Err(Fault::Connection(code::H3_CLOSED_CRITICAL_STREAM, "critical stream closed"));
            } else {
                self.uni.remove(&id);
            }
        }
        match result {
            Err(Fault::Connection(code, reason)) => self.close(code, reason, events),
            Err(Fault::Stream(code)) => self.close(code, reason_of(code), events),
            Ok(()) => {}
        }
    }

    fn uni_bytes(&mut self, id: QuicStream, mut piece: Bytes, events: &mut Vec<Event>) -> Result<(), Fault> {
        if let Some(Uni::Typing(partial)) = self.uni.get_mut(&id) {
            while !piece.is_empty() {
                partial.push(piece[0]);
                piece = piece.slice(1..);
                if partial.len() == frame::varint_len(partial[0]) {
                    break;
                }
            }
            let Some((ty, _)) = frame::read_varint(partial) else {
                return Ok(());
            };
            let kind = match ty {
                stream_type::CONTROL if self.peer_control => return Err(dup()),
                stream_type::CONTROL => {
                    self.peer_control = true;
                    Uni::Control(FrameReader::new(16 * 1024))
                }
                stream_type::QPACK_ENCODER if self.peer_encoder => return Err(dup()),
                stream_type::QPACK_ENCODER => {
                    self.peer_encoder = true;
                    Uni::Encoder(EncoderStream::default())
                }
                stream_type::QPACK_DECODER if self.peer_decoder => return Err(dup()),
                stream_type::QPACK_DECODER => {
                    self.peer_decoder = true;
                    Uni::Decoder(DecoderStream::default())
                }
                // §6.2.2: only servers push.
                stream_type::PUSH => return Err(Fault::Connection(code::H3_STREAM_CREATION_ERROR, "push stream from a client")),
                _ => {
                    let _ = self.quic.recv_stream(id).stop(varint(code::H3_STREAM_CREATION_ERROR));
                    Uni::Ignored
                }
            };
            self.uni.insert(id, kind);
        }
        if piece.is_empty() {
            return Ok(());
        }
        let conn = self.id;
        let settings = &mut self.settings;
        match self.uni.get_mut(&id) {
            Some(Uni::Control(reader)) => {
                reader.read(piece, &mut |f| control_frame(conn, settings, f, events)).map_err(|FrameError(c)| Fault::Connection(c, reason_of(c)))
            }
            Some(Uni::Encoder(s)) => s.receive(&piece).map_err(|e| Fault::Connection(e.0, "QPACK encoder stream")),
            Some(Uni::Decoder(s)) => s.receive(&piece).map_err(|e| Fault::Connection(e.0, "QPACK decoder stream")),
            _ => Ok(()),
        }
    }

    /// A stream error: the request stream is reset both ways with `code`.
    fn reset_stream(&mut self, id: QuicStream, code: u64, events: &mut Vec<Event>) {
        let _ = self.quic.recv_stream(id).stop(varint(code));
        let _ = self.quic.send_stream(id).reset(varint(code));
        self.drop_request(id, Some(code), events);
    }

    /// Forgets a request, reporting its reset if the app knew of it.
    fn drop_request(&mut self, id: QuicStream, code: Option<u64>, events: &mut Vec<Event>) {
        if let Some(req) = self.requests.remove(&id) {
            if req.announced && !(req.finished && req.phase == Phase::Done) {
                let code = code.unwrap_or(code::H3_REQUEST_CANCELLED);
                events.push(Event::Reset { conn: self.id, stream: id.into(), code });
            }
        }
    }

    /// A request whose response is sent and acknowledged and whose request was read whole is
    /// forgotten; one whose response ended first has its reading stopped (§4.1.2).
    fn maybe_done(&mut self, id: QuicStream) {
        if let Some(req) = self.requests.get(&id) {
            if req.finished {
                if req.phase != Phase::Done {
                    let _ = self.quic.recv_stream(id).stop(varint(code::H3_NO_ERROR));
                }
                self.requests.remove(&id);
            }
        }
    }

    fn finished(&mut self, id: QuicStream, events: &mut Vec<Event>) {
        if let Some(req) = self.requests.get_mut(&id) {
            req.finished = true;
            events.push(Event::Closed { conn: self.id, stream: id.into() });
            self.maybe_done(id);
        }
    }

    fn request(&mut self, stream: StreamId) -> Result<&mut Req, Error> {
        if self.closed {
            return Err(Error::Connection);
        }
        let id = QuicStream::from(varint(stream));
        self.requests.get_mut(&id).filter(|r| !r.end_queued).ok_or(Error::Stream(stream))
    }

    /// Queues a response head (1xx heads too) and `body` after it (a final head's only: empty for
    /// none), in one buffer, and ends the stream with them if `end`.
    pub(crate) fn respond<'a>(
        &mut self,
        stream: StreamId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
        body: &[u8],
        end: bool,
        events: &mut Vec<Event>,
    ) -> Result<bool, Error> {
        let req = self.request(stream)?;
        if req.responded || !(100..=999).contains(&status) || status == 101 || (status < 200 && !body.is_empty()) {
            return Err(Error::Stream(stream));
        }
        let block = self.scratch.encode(Some(status), headers, body)?;
        if status >= 200 {
            self.request(stream)?.responded = true;
        }
        self.queue(stream, block, end, events)
    }

    /// Queues response body bytes; `Ok(false)` says the stream's buffer is past its high-water
    /// mark: wait for `Drained`.
    pub(crate) fn send_data(&mut self, stream: StreamId, data: &[u8], end: bool, events: &mut Vec<Event>) -> Result<bool, Error> {
        let req = self.request(stream)?;
        if !req.responded {
            return Err(Error::Stream(stream));
        }
        let mut out = BytesMut::with_capacity(data.len() + 9);
        if !data.is_empty() {
            frame::write_header(frame::DATA, data.len() as u64, &mut out);
            out.extend_from_slice(data);
        }
        self.queue(stream, out.freeze(), end, events)
    }

    /// Queues trailer fields and ends the stream.
    pub(crate) fn send_trailers(&mut self, stream: StreamId, headers: &[(&[u8], &[u8])], events: &mut Vec<Event>) -> Result<bool, Error> {
        let req = self.request(stream)?;
        if !req.responded {
            return Err(Error::Stream(stream));
        }
        let block = self.scratch.encode(None, headers.iter().copied(), b"")?;
        self.queue(stream, block, true, events)
    }

    fn queue(&mut self, stream: StreamId, bytes: Bytes, end: bool, events: &mut Vec<Event>) -> Result<bool, Error> {
        let id = QuicStream::from(varint(stream));
        let high = self.config.stream_high_water;
        let req = self.requests.get_mut(&id).ok_or(Error::Stream(stream))?;
        if !bytes.is_empty() {
            req.queued += bytes.len();
            req.queue.push_back(bytes);
        }
        req.end_queued = end;
        self.flush(id, events);
        let Some(req) = self.requests.get_mut(&id) else {
            return Ok(true);
        };
        let below = req.queued < high;
        req.wants_drain |= !below;
        Ok(below)
    }

    /// Writes what a stream has queued into QUIC as far as flow control lets it, then its end.
    fn flush(&mut self, id: QuicStream, events: &mut Vec<Event>) {
        let Some(req) = self.requests.get_mut(&id) else {
            return;
        };
        let mut stopped = None;
        while !req.queue.is_empty() {
            let mut send = self.quic.send_stream(id);
            match send.write_chunks(req.queue.make_contiguous()) {
                Ok(written) => {
                    req.queued -= written.bytes;
                    req.queue.drain(..written.chunks);
                    if written.bytes == 0 {
                        break;
                    }
                }
                Err(WriteError::Blocked) => break,
                Err(WriteError::Stopped(code)) => {
                    stopped = Some(code.into_inner());
                    break;
                }
                Err(WriteError::ClosedStream) => {
                    stopped = Some(code::H3_REQUEST_CANCELLED);
                    break;
                }
            }
        }
        if let Some(code) = stopped {
            return self.drop_request(id, Some(code), events);
        }
        if req.queue.is_empty() && req.end_queued && !req.finished {
            let _ = self.quic.send_stream(id).finish();
        }
        if req.wants_drain && req.queued < self.config.stream_high_water {
            req.wants_drain = false;
            events.push(Event::Drained { conn: self.id, stream: id.into() });
        }
    }

    /// Resets a stream both ways (the app's choice of code).
    pub(crate) fn reset(&mut self, stream: StreamId, code: u64, events: &mut Vec<Event>) -> Result<(), Error> {
        if self.closed {
            return Err(Error::Connection);
        }
        let id = QuicStream::from(varint(stream));
        if self.requests.remove(&id).is_none() {
            return Err(Error::Stream(stream));
        }
        let _ = self.quic.recv_stream(id).stop(varint(code));
        let _ = self.quic.send_stream(id).reset(varint(code));
        let _ = events;
        Ok(())
    }

    /// The app took `n` bytes of a request's body: reading resumes when it was held.
    pub(crate) fn consume(&mut self, stream: StreamId, n: u64, events: &mut Vec<Event>) -> Result<(), Error> {
        let id = QuicStream::from(varint(stream));
        let Some(req) = self.requests.get_mut(&id) else {
            return Err(Error::Stream(stream));
        };
        req.unconsumed = req.unconsumed.saturating_sub(n);
        if req.held {
            self.read_request(id, events);
        }
        Ok(())
    }

    /// Graceful shutdown (§5.2): GOAWAY with the first request stream not accepted; requests
    /// already open are answered, later ones rejected.
    pub(crate) fn shutdown(&mut self) {
        let (Some(control), None) = (self.control, self.goaway) else {
            return;
        };
        let mut out = Vec::new();
        let mut id = Vec::new();
        frame::write_varint(self.next_request, &mut id);
        frame::write_header(frame::GOAWAY, id.len() as u64, &mut out);
        out.extend_from_slice(&id);
        let _ = self.quic.send_stream(control).write(&out);
        self.goaway = Some(self.next_request);
        self.goaway_after = self.quic.stats().frame_tx.stream;
    }

    /// Whether a connection that was shut down has no request left and its GOAWAY has left (the
    /// endpoint then closes it with H3_NO_ERROR). Once closed, quinn-proto sends only
    /// CONNECTION_CLOSE and drops the streams' unsent data: closing a quiet connection as soon as
    /// it was shut down lost its GOAWAY.
    pub(crate) fn is_quiet(&self) -> bool {
        self.goaway.is_some() && self.requests.is_empty() && self.quic.stats().frame_tx.stream > self.goaway_after
    }
}

fn dup() -> Fault {
    Fault::Connection(code::H3_STREAM_CREATION_ERROR, "second control or QPACK stream")
}

fn reason_of(code: u64) -> &'static str {
    match code {
        code::H3_FRAME_UNEXPECTED => "frame unexpected",
        code::H3_FRAME_ERROR => "frame error",
        code::H3_EXCESSIVE_LOAD => "frame too large",
        code::H3_SETTINGS_ERROR => "settings error",
        code::H3_MISSING_SETTINGS => "missing settings",
        code::QPACK_DECOMPRESSION_FAILED => "QPACK decompression failed",
        _ => "protocol error",
    }
}

/// A frame on the client's control stream (§6.2.1, §7.2).
fn control_frame(conn: ConnId, settings: &mut bool, f: Frame, events: &mut Vec<Event>) -> Result<(), FrameError> {
    match f {
        Frame::Begin { ty, .. } => {
            if !*settings && ty != frame::SETTINGS {
                return Err(FrameError(code::H3_MISSING_SETTINGS));
            }
            if (*settings && ty == frame::SETTINGS) || matches!(ty, frame::DATA | frame::HEADERS | frame::PUSH_PROMISE) || frame::is_http2_reserved(ty) {
                return Err(FrameError(code::H3_FRAME_UNEXPECTED));
            }
            if ty == frame::SETTINGS {
                *settings = true;
            }
            Ok(())
        }
        Frame::Whole { ty: frame::SETTINGS, payload } => frame::parse_settings(&payload).map(|_| ()),
        Frame::Whole { ty: frame::GOAWAY, payload } => {
            let id = frame::parse_single(&payload)?;
            events.push(Event::GoAway { conn, id });
            Ok(())
        }
        Frame::Whole { payload, .. } => frame::parse_single(&payload).map(|_| ()),
        Frame::Data(_) => Ok(()),
    }
}

/// Bytes of a request stream: frames checked against where the request stands (§4.1).
fn request_bytes(conn: ConnId, id: QuicStream, req: &mut Req, piece: Bytes, max: u64, events: &mut Vec<Event>) -> Result<(), Fault> {
    let mut fault = None;
    let result = req.reader.read(piece, &mut |f| {
        match f {
            Frame::Begin { ty, .. } => {
                let unexpected = match ty {
                    frame::DATA => req.phase != Phase::Body,
                    frame::HEADERS => req.phase == Phase::Trailers,
                    frame::CANCEL_PUSH | frame::SETTINGS | frame::GOAWAY | frame::MAX_PUSH_ID | frame::PUSH_PROMISE => true,
                    ty => frame::is_http2_reserved(ty),
                };
                if unexpected {
                    return Err(FrameError(code::H3_FRAME_UNEXPECTED));
                }
            }
            Frame::Data(data) => {
                req.received += data.len() as u64;
                if req.content_length.is_some_and(|n| req.received > n) {
                    fault = Some(Fault::Stream(code::H3_MESSAGE_ERROR));
                    return Err(FrameError(0));
                }
                req.unconsumed += data.len() as u64;
                req.last_event = Some(events.len());
                events.push(Event::Data { conn, stream: id.into(), data, end_stream: false });
            }
            Frame::Whole { payload, .. } => {
                let mut head = Head::default();
                qpack::decode_section(&payload, |n, v| head.field(n, v, max)).map_err(|e| FrameError(e.0))?;
                if req.phase == Phase::Head {
                    if !head.is_valid_request() {
                        fault = Some(Fault::Stream(code::H3_MESSAGE_ERROR));
                        return Err(FrameError(0));
                    }
                    req.phase = Phase::Body;
                    req.announced = true;
                    req.content_length = head.content_length;
                    req.last_event = Some(events.len());
                    events.push(Event::Request(Request {
                        conn,
                        stream: id.into(),
                        method: head.method.unwrap_or_default(),
                        scheme: head.scheme.unwrap_or_default(),
                        authority: head.authority.unwrap_or_default(),
                        path: head.path.unwrap_or_default(),
                        headers: head.headers,
                        end_stream: false,
                        too_large: head.too_large,
                    }));
                } else {
                    if !head.is_valid_trailers() {
                        fault = Some(Fault::Stream(code::H3_MESSAGE_ERROR));
                        return Err(FrameError(0));
                    }
                    req.phase = Phase::Trailers;
                    req.last_event = Some(events.len());
                    events.push(Event::Trailers { conn, stream: id.into(), headers: head.headers });
                }
            }
        }
        Ok(())
    });
    match (result, fault) {
        (_, Some(fault)) => Err(fault),
        (Err(FrameError(c)), None) => Err(Fault::Connection(c, reason_of(c))),
        (Ok(()), None) => Ok(()),
    }
}

/// The end of a request stream: it must end between frames (§7.1), after a head (§4.1), with
/// as many body bytes as its Content-Length (§4.1.2).
fn request_end(conn: ConnId, id: QuicStream, req: &mut Req, events: &mut Vec<Event>) -> Result<(), Fault> {
    if !req.reader.at_boundary() {
        return Err(Fault::Connection(code::H3_FRAME_ERROR, "stream ended inside a frame"));
    }
    if req.phase == Phase::Head {
        return Err(Fault::Stream(code::H3_REQUEST_INCOMPLETE));
    }
    if req.content_length.is_some_and(|n| n != req.received) {
        return Err(Fault::Stream(code::H3_MESSAGE_ERROR));
    }
    let end_marked = match req.last_event.and_then(|i| events.get_mut(i)) {
        Some(Event::Request(r)) => {
            r.end_stream = true;
            true
        }
        Some(Event::Data { end_stream, .. }) => {
            *end_stream = true;
            true
        }
        Some(Event::Trailers { .. }) => true,
        _ => false,
    };
    if !end_marked {
        events.push(Event::Data { conn, stream: id.into(), data: Bytes::new(), end_stream: true });
    }
    req.phase = Phase::Done;
    Ok(())
}

/// A HEADERS frame for a response head (`status`) or trailers: names lower-cased, HTTP/1.1's
/// connection fields left out, values with CR, LF or NUL refused.
/// Buffers an answer's head is encoded in, kept from one answer to the next.
#[derive(Debug, Default)]
struct Scratch {
    section: Vec<u8>,
    name: Vec<u8>,
}

impl Scratch {
    /// A HEADERS frame (with `:status` when given) and, when `body` is not empty, a DATA frame
    /// with it, in one buffer. A field HTTP/3 forbids the value of, or a name that is not a
    /// token, is refused; connection-specific fields are left out.
    fn encode<'a>(&mut self, status: Option<u16>, headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>, body: &[u8]) -> Result<Bytes, Error> {
        let Scratch { section, name: lower } = self;
        section.clear();
        qpack::begin_section(section);
        if let Some(status) = status {
            // 100..=999, checked by the caller: three digits.
            let digits = [b'0' + (status / 100) as u8, b'0' + (status / 10 % 10) as u8, b'0' + (status % 10) as u8];
            qpack::encode_field(b":status", &digits, section);
        }
        for (name, value) in headers {
            lower.clear();
            lower.extend(name.iter().map(u8::to_ascii_lowercase));
            if !message::valid_name(lower) || value.iter().any(|&c| c == 0 || c == b'\r' || c == b'\n') {
                return Err(Error::InvalidHeader);
            }
            if message::is_connection_specific(lower) {
                continue;
            }
            qpack::encode_field(lower, value, section);
        }
        let mut out = BytesMut::with_capacity(section.len() + 9 + if body.is_empty() { 0 } else { body.len() + 9 });
        frame::write_header(frame::HEADERS, section.len() as u64, &mut out);
        out.extend_from_slice(section);
        if !body.is_empty() {
            frame::write_header(frame::DATA, body.len() as u64, &mut out);
            out.extend_from_slice(body);
        }
        Ok(out.freeze())
    }
}
