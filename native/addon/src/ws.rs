//! WebSockets on the engine's connections (RFC 6455): the state of a connection that became a
//! WebSocket, a sibling of `h1::Conn` over the same `io::Transport`: frames in from its input,
//! frames out to its output, on the loop HTTP is served on.
//!
//! An HTTP request with an Upgrade header (when the app has WebSocket routes) pauses its
//! connection: nothing more is read until JavaScript answers it. A 101 from `handshake` turns the
//! connection into a WebSocket, and its bytes are decoded by `cog_framing::websocket` from then
//! on; any other answer closes it. Messages, drains and closes reach JavaScript in the same
//! batches as requests (`Event::Ws*`). Pings are answered here, and Close frames, and a
//! connection that breaks the protocol is failed with the code the decoder gives.
//!
//! permessage-deflate (when the route enables it and the client offers it): the decoder inflates,
//! and messages go out compressed, each socket with its own compressor (as `ws` does it: every
//! message with context takeover, where even a short one gains from the shared window; with
//! server_no_context_takeover only those of at least `COMPRESS_THRESHOLD` bytes). A publication
//! is therefore framed once for the sockets without the extension and compressed per socket for
//! those with it: with context takeover (what clients ask by default, and what compresses best
//! for chat-like streams) each socket's deflate stream differs, so one compressed frame can't
//! serve them all.

use crate::events::Event;
use crate::io::{Input, Transport, HIGH_WATER};
use crate::uv::UV_WRITABLE;
use cog_framing::deflate::{negotiate, Deflater, Inflater};
use cog_framing::websocket::{accept_key, write_close, write_compressed_frame, write_frame, Decoder, Event as Frame, OP_BINARY, OP_PING, OP_PONG, OP_TEXT};

/// Without context takeover, messages smaller than this go out uncompressed (ws's default
/// threshold): compressed alone, deflate costs more than it saves on them.
const COMPRESS_THRESHOLD: usize = 1024;

/// How long a Close frame the server sent waits for the client's before the connection is cut.
const CLOSE_TIMEOUT: u64 = 5_000;

/// A WebSocket route's limits (src/websocket/types.ts, `WebSocketSettings`).
pub struct Limits {
    /// Largest message, inflated.
    pub max_payload: usize,
    /// Most frames a message may come in (0: no limit).
    pub max_fragments: usize,
    /// Milliseconds of silence before the connection is cut (0: never).
    pub idle_timeout: u64,
    /// Most unsent bytes a message may find waiting, and whether passing it cuts the socket.
    pub max_backpressure: usize,
    pub close_on_backpressure: bool,
}

/// What `send` reports: the message went out with the rest, or waits behind unsent bytes, or the socket is gone.
pub const SENT: i32 = 1;
pub const QUEUED: i32 = 0;
pub const GONE: i32 = -1;

/// A connection's WebSocket state.
pub(crate) struct Conn {
    /// The socket's id: the upgrade request's.
    id: u64,
    decoder: Decoder,
    /// Milliseconds of silence before the connection is cut (a ping half-way); 0: never.
    idle_timeout: u64,
    /// When the client was last heard from.
    heard: u64,
    pinged: bool,
    /// When the server sent its Close frame.
    close_sent: Option<u64>,
    /// Whether JavaScript was told the socket closed (it is told once).
    reported: bool,
    /// Nothing more is decoded: a Close arrived, or the client broke the protocol.
    done_reading: bool,
    /// JavaScript waits for a drain event (a send found output waiting).
    wants_drain: bool,
    /// Most unsent bytes a message may find waiting, and whether passing it cuts the socket.
    max_backpressure: usize,
    close_on_backpressure: bool,
    /// The Close frame to answer with once the batch that found the client's Close (or its
    /// protocol error) is answered: after what the app sent for the messages before it.
    close_reply: Option<(u16, &'static str)>,
    /// The compressor for outgoing messages, when permessage-deflate lets the server compress,
    /// and the size from which a message is compressed.
    deflater: Option<(Deflater, usize)>,
    /// The connection closes once its output is written: the closing handshake is done, the
    /// client ended its side, or the server stops.
    closing: bool,
}

/// Whether a message may be queued (`Conn::admits`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    Yes,
    /// Dropped: the server's Close is out, or the message would pass maxBackpressure.
    No,
    /// Dropped, and the socket must be cut (its route says so past maxBackpressure).
    Cut,
}

/// Answers the handshake of request `id` (a WebSocket route accepted it) into `io`'s output:
/// the 101, with the permessage-deflate terms agreed from the client's `offer` (when the route
/// enables it). None when the offer is invalid: then the 400 `ws` answers is written instead,
/// and the connection must close once it is out.
pub(crate) fn handshake(io: &mut Transport, id: u64, key_header: &[u8], offer: Option<&[u8]>, limits: Limits, now: u64, closing: bool) -> Option<Box<Conn>> {
    let Limits { max_payload, max_fragments, idle_timeout, max_backpressure, close_on_backpressure } = limits;
    let agreed = match offer.map(negotiate) {
        None => None,
        Some(Ok(agreed)) => agreed,
        Some(Err(_)) => {
            const MESSAGE: &str = "Invalid or unacceptable Sec-WebSocket-Extensions header";
            io.output().extend_from_slice(
                format!("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{MESSAGE}", MESSAGE.len())
                    .as_bytes(),
            );
            return None;
        }
    };
    let out = io.output();
    out.extend_from_slice(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ");
    out.extend_from_slice(accept_key(key_header.trim_ascii()).as_bytes());
    let (decoder, deflater) = match &agreed {
        None => (Decoder::new(max_payload, max_fragments), None),
        Some(agreed) => {
            out.extend_from_slice(b"\r\nSec-WebSocket-Extensions: ");
            out.extend_from_slice(agreed.header().as_bytes());
            let threshold = if agreed.server_no_context_takeover { COMPRESS_THRESHOLD } else { 0 };
            let deflater = agreed.server_compresses().then(|| (Deflater::new(agreed.server_no_context_takeover), threshold));
            (Decoder::with_inflater(max_payload, max_fragments, Inflater::new(agreed.client_no_context_takeover)), deflater)
        }
    };
    out.extend_from_slice(b"\r\n\r\n");
    Some(Box::new(Conn {
        id,
        decoder,
        idle_timeout,
        heard: now,
        pinged: false,
        close_sent: None,
        reported: false,
        done_reading: false,
        wants_drain: false,
        close_reply: None,
        max_backpressure,
        close_on_backpressure,
        deflater,
        closing,
    }))
}

impl Conn {
    /// The socket's id.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// What to do with the socket's input now.
    pub(crate) fn input(&self) -> Input {
        if self.done_reading {
            Input::Drop
        } else {
            Input::Read
        }
    }

    /// The client was heard from (bytes arrived).
    pub(crate) fn heard(&mut self, now: u64) {
        self.heard = now;
        self.pinged = false;
    }

    /// The client ended its side: the connection closes once its output is written.
    pub(crate) fn input_ended(&mut self) {
        self.closing = true;
    }

    /// Whether the connection closes once its output is written.
    pub(crate) fn closing(&self) -> bool {
        self.closing
    }

    /// Whether the socket should be polled for input.
    pub(crate) fn wants_input(&self, io: &Transport) -> bool {
        !(io.ended() || self.closing)
    }

    /// Decodes the frames in the input into `events`; pings are answered, a Close or a broken
    /// frame ends the reading (answered at the end of the batch: `end_batch`).
    pub(crate) fn parse(&mut self, io: &mut Transport, events: &mut Vec<Event>) {
        let mut used = 0;
        while !self.done_reading && io.unsent() <= HIGH_WATER {
            match self.decoder.decode(&mut io.buffers().0[used..]) {
                Ok((0, _)) => break,
                Ok((n, frame)) => {
                    used += n;
                    match frame {
                        None | Some(Frame::Pong(_)) => {}
                        // Once the server has sent its Close, messages are not delivered (RFC 6455 §5.5.1).
                        Some(Frame::Text(data)) if self.close_sent.is_none() => events.push(Event::WsMessage { id: self.id, data, text: true }),
                        Some(Frame::Binary(data)) if self.close_sent.is_none() => events.push(Event::WsMessage { id: self.id, data, text: false }),
                        Some(Frame::Text(_) | Frame::Binary(_)) => {}
                        Some(Frame::Ping(payload)) => {
                            if self.close_sent.is_none() {
                                write_frame(io.output(), OP_PONG, &payload);
                            }
                        }
                        Some(Frame::Close(code, reason)) => {
                            // Answered with the same code (unless the server's Close went first).
                            self.close_reply = Some((code, ""));
                            self.done_reading = true;
                            self.reported = true;
                            events.push(Event::WsClose { id: self.id, code, reason });
                        }
                    }
                }
                Err(failure) => {
                    self.close_reply = Some((failure.code, failure.message));
                    self.done_reading = true;
                    self.reported = true;
                    events.push(Event::WsClose { id: self.id, code: failure.code, reason: Vec::new() });
                }
            }
        }
        if self.done_reading || io.ended() {
            io.clear_input();
        } else {
            io.consume(used);
        }
    }

    /// At the end of a batch: the Close frame owed to the client goes out after the app's
    /// answers, and the connection closes once it is written.
    pub(crate) fn end_batch(&mut self, io: &mut Transport) {
        let Some((code, reason)) = self.close_reply.take() else { return };
        if self.close_sent.is_none() {
            write_close(io.output(), code, reason.as_bytes());
        }
        self.closing = true;
    }

    /// Whether a frame of `size` bytes may be queued: not once the server's Close is out, nor
    /// past maxBackpressure (then the socket is cut, if its route says so).
    pub(crate) fn admits(&self, io: &Transport, size: usize) -> Admit {
        if self.close_sent.is_some() || self.closing {
            return Admit::No;
        }
        let buffered = io.unsent();
        if buffered == 0 || buffered + size <= self.max_backpressure {
            Admit::Yes
        } else if self.close_on_backpressure {
            Admit::Cut
        } else {
            Admit::No
        }
    }

    /// Whether a message goes out compressed.
    pub(crate) fn compresses(&self, data: &[u8]) -> bool {
        self.deflater.as_ref().is_some_and(|(_, threshold)| data.len() >= *threshold)
    }

    /// Appends one message to the output: compressed (RSV1 set) when it compresses.
    pub(crate) fn write_message(&mut self, io: &mut Transport, data: &[u8], binary: bool) {
        let opcode = if binary { OP_BINARY } else { OP_TEXT };
        match self.deflater.as_mut() {
            Some((deflater, threshold)) if data.len() >= *threshold => write_compressed_frame(io.output(), opcode, &deflater.deflate(data)),
            _ => write_frame(io.output(), opcode, data),
        }
    }

    /// After a message was queued: `SENT` if nothing waited before it, else `QUEUED` (the
    /// socket was waiting to be writable) and a drain event will follow.
    pub(crate) fn queued(&mut self, io: &Transport) -> i32 {
        if io.polling() & UV_WRITABLE == 0 {
            return SENT;
        }
        self.wants_drain = true;
        QUEUED
    }

    /// Sends a Close frame (none when `code` is `NO_STATUS`) at `now`; the connection closes when
    /// the client answers, or after `CLOSE_TIMEOUT`. False if a Close was sent or received already.
    pub(crate) fn close(&mut self, io: &mut Transport, code: u16, reason: &[u8], now: u64) -> bool {
        if self.close_sent.is_some() || self.done_reading {
            return false;
        }
        self.close_sent = Some(now);
        write_close(io.output(), code, reason);
        true
    }

    /// The connection closed: if JavaScript was not told yet, it is told the socket was cut (1006).
    pub(crate) fn closed(&self, events: &mut Vec<Event>) {
        if !self.reported {
            events.push(Event::WsClose { id: self.id, code: 1006, reason: Vec::new() });
        }
    }

    /// A drain event, when the output is written and JavaScript waits for it.
    pub(crate) fn drained(&mut self, io: &Transport, events: &mut Vec<Event>) {
        if self.wants_drain && io.unsent() == 0 {
            self.wants_drain = false;
            events.push(Event::WsDrain { id: self.id });
        }
    }

    /// The timeout sweep's part: cut after `CLOSE_TIMEOUT` without the client's Close, or after
    /// `idle_timeout` of silence, pinged half-way. Returns whether to cut it.
    pub(crate) fn sweep(&mut self, io: &mut Transport, now: u64) -> bool {
        if let Some(sent) = self.close_sent {
            return now.saturating_sub(sent) >= CLOSE_TIMEOUT;
        }
        if self.idle_timeout == 0 || self.done_reading {
            return false;
        }
        let silent = now.saturating_sub(self.heard);
        if silent >= self.idle_timeout {
            return true;
        }
        if silent >= self.idle_timeout / 2 && !self.pinged {
            self.pinged = true;
            write_frame(io.output(), OP_PING, b"");
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::socket::{client_send as send, read_all};

    const LIMITS: Limits = Limits { max_payload: 1024, max_fragments: 0, idle_timeout: 1000, max_backpressure: 100, close_on_backpressure: false };

    fn limits(close_on_backpressure: bool) -> Limits {
        Limits { close_on_backpressure, ..LIMITS }
    }

    /// A client's masked frame (mask 0: the payload as it is).
    fn masked(opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut frame = vec![0x80 | opcode, 0x80 | payload.len() as u8, 0, 0, 0, 0];
        frame.extend_from_slice(payload);
        frame
    }

    fn accepted(io: &mut Transport) -> Box<Conn> {
        handshake(io, 7, b"dGhlIHNhbXBsZSBub25jZQ==", None, LIMITS, 0, false).unwrap()
    }

    #[test]
    fn the_handshake_answers_101_with_the_accept_key() {
        let (mut io, client) = Transport::pair();
        let ws = accepted(&mut io);
        io.write();
        let out = String::from_utf8(read_all(client)).unwrap();
        assert_eq!(
            out,
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        );
        assert_eq!((ws.id(), ws.input()), (7, Input::Read));
        io.close_pair(client);
    }

    #[test]
    fn an_invalid_deflate_offer_is_refused_400() {
        let (mut io, client) = Transport::pair();
        assert!(handshake(&mut io, 7, b"k", Some(b"permessage-deflate; bogus"), LIMITS, 0, false).is_none());
        io.write();
        assert!(String::from_utf8(read_all(client)).unwrap().starts_with("HTTP/1.1 400 Bad Request\r\n"));
        io.close_pair(client);
    }

    #[test]
    fn messages_go_to_javascript_and_pings_are_answered() {
        let (mut io, client) = Transport::pair();
        let mut ws = accepted(&mut io);
        io.write();
        read_all(client);
        let mut bytes = masked(0x1, b"hi");
        bytes.extend(masked(0x9, b"p"));
        bytes.extend(&masked(0x2, b"bin")[..4]);
        send(client, &bytes);
        io.read(&mut Vec::new());
        let mut events = Vec::new();
        ws.parse(&mut io, &mut events);
        assert_eq!(events, [Event::WsMessage { id: 7, data: b"hi".to_vec(), text: true }]);
        assert_eq!(io.input().len(), 4, "a partial frame waits");
        io.write();
        assert_eq!(read_all(client), [0x8a, 0x01, b'p'], "the pong");
        io.close_pair(client);
    }

    #[test]
    fn the_clients_close_is_reported_once_and_answered_after_the_batch() {
        let (mut io, client) = Transport::pair();
        let mut ws = accepted(&mut io);
        io.write();
        read_all(client);
        send(client, &masked(0x8, &[0x03, 0xe8]));
        io.read(&mut Vec::new());
        let mut events = Vec::new();
        ws.parse(&mut io, &mut events);
        assert_eq!(events, [Event::WsClose { id: 7, code: 1000, reason: Vec::new() }]);
        assert_eq!(ws.input(), Input::Drop);
        assert!(!ws.closing());
        ws.end_batch(&mut io);
        assert!(ws.closing() && !ws.wants_input(&io));
        io.write();
        assert_eq!(read_all(client), [0x88, 0x02, 0x03, 0xe8]);
        let mut events = Vec::new();
        ws.closed(&mut events);
        assert!(events.is_empty(), "already told");
        io.close_pair(client);
    }

    #[test]
    fn backpressure_drops_or_cuts_as_the_route_says() {
        let (mut io, client) = Transport::pair();
        let mut ws = handshake(&mut io, 7, b"k", None, limits(false), 0, false).unwrap();
        io.write();
        read_all(client);
        assert_eq!(ws.admits(&io, 1000), Admit::Yes, "nothing waits: any message goes");
        ws.write_message(&mut io, &[b'a'; 90], false);
        assert_eq!(ws.admits(&io, 1000), Admit::No);
        let cut = handshake(&mut io, 8, b"k", None, limits(true), 0, false).unwrap();
        assert_eq!(cut.admits(&io, 1000), Admit::Cut);
        assert!(ws.close(&mut io, 1001, b"bye", 5));
        assert!(!ws.close(&mut io, 1001, b"bye", 5), "once");
        assert_eq!(ws.admits(&io, 1), Admit::No, "nothing after the server's Close");
        io.close_pair(client);
    }

    #[test]
    fn silence_is_pinged_half_way_then_cut_and_a_close_unanswered_is_cut() {
        let (mut io, client) = Transport::pair();
        let mut ws = accepted(&mut io);
        io.write();
        read_all(client);
        assert!(!ws.sweep(&mut io, 499));
        assert!(!ws.sweep(&mut io, 500));
        io.write();
        assert_eq!(read_all(client), [0x89, 0x00], "a ping");
        ws.heard(600);
        assert!(!ws.sweep(&mut io, 1599));
        assert!(ws.sweep(&mut io, 1600));
        let mut closing = accepted(&mut io);
        closing.close(&mut io, 1000, b"", 0);
        assert!(!closing.sweep(&mut io, CLOSE_TIMEOUT - 1) && closing.sweep(&mut io, CLOSE_TIMEOUT));
        io.close_pair(client);
    }

    #[test]
    fn a_drain_follows_a_queued_message_once_the_output_is_written() {
        let (mut io, client) = Transport::pair();
        let mut ws = accepted(&mut io);
        let mut events = Vec::new();
        assert_eq!(ws.queued(&io), SENT, "the socket did not wait");
        ws.drained(&io, &mut events);
        assert!(events.is_empty());
        ws.wants_drain = true;
        io.write();
        ws.drained(&io, &mut events);
        assert_eq!(events, [Event::WsDrain { id: 7 }]);
        io.close_pair(client);
    }
}
