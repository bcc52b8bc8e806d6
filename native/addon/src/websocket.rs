//! WebSockets on the engine's connections (RFC 6455): the handshake a WebSocket route accepts,
//! then frames in and out on the same loop, reads and writes as the HTTP side does them.
//!
//! An HTTP request with an Upgrade header (when the app has WebSocket routes) pauses its
//! connection: nothing more is read until JavaScript answers it. A 101 from `accept` turns the
//! connection into a WebSocket, and its bytes are decoded by `cog_framing::websocket` from then
//! on; any other answer closes it. Messages, drains and closes reach JavaScript in the same
//! batches as requests (`Event::Ws*`). Pings are answered here, and Close frames, and a
//! connection that breaks the protocol is failed with the code the decoder gives.
//!
//! permessage-deflate (when the route enables it and the client offers it): the decoder inflates,
//! and messages go out compressed, each socket with its own compressor (as `ws` does it: every
//! message with context takeover, where even a short one gains from the shared window; with
//! server_no_context_takeover only those of at least `COMPRESS_THRESHOLD` bytes). A publication is therefore framed once for the sockets without the extension
//! and compressed per socket for those with it: with context takeover (what clients ask by
//! default, and what compresses best for chat-like streams) each socket's deflate stream
//! differs, so one compressed frame can't serve them all.

use crate::events::Event;
use crate::state::{now, State};
use crate::uv::*;
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

/// A connection's WebSocket state.
pub(crate) struct WsConn {
    /// The socket's id: the upgrade request's.
    pub(crate) id: u64,
    decoder: Decoder,
    /// Milliseconds of silence before the connection is cut (a ping half-way); 0: never.
    idle_timeout: u64,
    /// When the client was last heard from.
    pub(crate) heard: u64,
    pinged: bool,
    /// When the server sent its Close frame.
    close_sent: Option<u64>,
    /// Whether JavaScript was told the socket closed (it is told once).
    reported: bool,
    /// Nothing more is decoded: a Close arrived, or the client broke the protocol.
    pub(crate) done_reading: bool,
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
}

/// What `send` reports: the message went out with the rest, or waits behind unsent bytes, or the socket is gone.
pub const SENT: i32 = 1;
pub const QUEUED: i32 = 0;
pub const GONE: i32 = -1;

impl State {
    /// Completes the handshake of request `id` (a WebSocket route accepted it): writes the 101
    /// and turns its connection into a WebSocket. False when the client is gone.
    pub fn ws_accept(&mut self, id: u64, limits: Limits, per_message_deflate: bool) -> bool {
        let Limits { max_payload, max_fragments, idle_timeout, max_backpressure, close_on_backpressure } = limits;
        let Some(key_header) = self.header(id, b"sec-websocket-key", true) else { return false };
        let offer = if per_message_deflate { self.header(id, b"sec-websocket-extensions", false) } else { None };
        let Some(req) = self.reqs.get(id) else { return false };
        let (key, gen) = (req.conn, req.gen);
        // Only a request parsed as an upgrade without a body (RFC 6455's handshake is a GET
        // without one) becomes a WebSocket: with a body half read, the connection can't be one.
        if !self.is_conn(key, gen) || !self.conns[key].as_ref().is_some_and(|c| c.h1.upgrading()) {
            return false;
        }
        self.reqs.remove(id);
        let agreed = match offer.as_deref().map(negotiate) {
            None => None,
            Some(Ok(agreed)) => agreed,
            Some(Err(_)) => {
                // As ws answers it: the handshake fails, the connection closes once this is written.
                const MESSAGE: &str = "Invalid or unacceptable Sec-WebSocket-Extensions header";
                let conn = self.conns[key].as_mut().unwrap();
                conn.h1.upgrade_refused(id);
                conn.io.output().extend_from_slice(format!("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{MESSAGE}", MESSAGE.len()).as_bytes());
                if !conn.in_batch {
                    self.write_out(key);
                }
                return false;
            }
        };
        let server_id = self.conns[key].as_ref().unwrap().server;
        let server = self.servers[server_id].as_mut().unwrap();
        let now = now(server);
        if idle_timeout > 0 {
            // The sweep runs often enough to cut a socket at most a quarter of its timeout late.
            let every = (idle_timeout / 4).clamp(25, server.settings.check_interval.max(25));
            if every < server.sweep_every {
                server.sweep_every = every;
                unsafe { uv_timer_start(server.timer, crate::timers::on_timer, every, every) };
            }
        }
        let conn = self.conns[key].as_mut().unwrap();
        conn.h1.upgraded(id);
        conn.io.output().extend_from_slice(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ");
        conn.io.output().extend_from_slice(accept_key(key_header.trim_ascii()).as_bytes());
        let (decoder, deflater) = match &agreed {
            None => (Decoder::new(max_payload, max_fragments), None),
            Some(agreed) => {
                conn.io.output().extend_from_slice(b"\r\nSec-WebSocket-Extensions: ");
                conn.io.output().extend_from_slice(agreed.header().as_bytes());
                let threshold = if agreed.server_no_context_takeover { COMPRESS_THRESHOLD } else { 0 };
                let deflater = agreed.server_compresses().then(|| (Deflater::new(agreed.server_no_context_takeover), threshold));
                (Decoder::with_inflater(max_payload, max_fragments, Inflater::new(agreed.client_no_context_takeover)), deflater)
            }
        };
        conn.io.output().extend_from_slice(b"\r\n\r\n");
        conn.ws = Some(Box::new(WsConn { id, decoder, idle_timeout, heard: now, pinged: false, close_sent: None, reported: false, done_reading: false, wants_drain: false, close_reply: None, max_backpressure, close_on_backpressure, deflater }));
        self.ws_conns.insert(id, (key, gen));
        let (in_batch, waiting) = (conn.in_batch, !conn.io.input().is_empty());
        if !in_batch {
            self.write_out(key);
            if waiting && self.is_conn(key, gen) {
                // Frames that came with the handshake: decode them as if just read.
                self.mark_ready(server_id, key, gen);
            }
        }
        true
    }

    /// Decodes the WebSocket frames in the connection's input into `calls`.
    pub(crate) fn parse_frames(&mut self, key: usize, calls: &mut Vec<Event>) {
        let conn = self.conns[key].as_mut().unwrap();
        let ws = conn.ws.as_mut().unwrap();
        let mut used = 0;
        while !ws.done_reading && conn.io.unsent() <= crate::io::HIGH_WATER {
            match ws.decoder.decode(&mut conn.io.buffers().0[used..]) {
                Ok((0, _)) => break,
                Ok((n, event)) => {
                    used += n;
                    match event {
                        None | Some(Frame::Pong(_)) => {}
                        // Once the server has sent its Close, messages are not delivered (RFC 6455 §5.5.1).
                        Some(Frame::Text(data)) if ws.close_sent.is_none() => calls.push(Event::WsMessage { id: ws.id, data, text: true }),
                        Some(Frame::Binary(data)) if ws.close_sent.is_none() => calls.push(Event::WsMessage { id: ws.id, data, text: false }),
                        Some(Frame::Text(_) | Frame::Binary(_)) => {}
                        Some(Frame::Ping(payload)) => {
                            if ws.close_sent.is_none() {
                                write_frame(conn.io.output(), OP_PONG, &payload);
                            }
                        }
                        Some(Frame::Close(code, reason)) => {
                            // Answered with the same code (unless the server's Close went first).
                            ws.close_reply = Some((code, ""));
                            ws.done_reading = true;
                            ws.reported = true;
                            calls.push(Event::WsClose { id: ws.id, code, reason });
                        }
                    }
                }
                Err(failure) => {
                    ws.close_reply = Some((failure.code, failure.message));
                    ws.done_reading = true;
                    ws.reported = true;
                    calls.push(Event::WsClose { id: ws.id, code: failure.code, reason: Vec::new() });
                }
            }
        }
        if ws.done_reading || conn.io.ended() {
            conn.io.clear_input();
        } else {
            conn.io.consume(used);
        }
    }

    /// At the end of a batch: the Close frame owed to the client goes out after the app's
    /// answers, and the connection closes once it is written.
    pub(crate) fn ws_end_batch(conn: &mut crate::state::Conn) {
        let Some(ws) = conn.ws.as_mut() else { return };
        let Some((code, reason)) = ws.close_reply.take() else { return };
        if ws.close_sent.is_none() {
            write_close(conn.io.output(), code, reason.as_bytes());
        }
        conn.h1.close_when_done();
    }

    /// The connection of socket `id`, if it is still open.
    fn ws_conn(&self, id: u64) -> Option<usize> {
        let &(key, gen) = self.ws_conns.get(&id)?;
        self.is_conn(key, gen).then_some(key)
    }

    /// Sends one message (`SENT`, `QUEUED` or `GONE`: dropped).
    pub fn ws_send(&mut self, id: u64, data: &[u8], binary: bool) -> i32 {
        let Some(key) = self.ws_conn(id) else { return GONE };
        if !self.admits(key, data.len() + 10) {
            return GONE;
        }
        let conn = self.conns[key].as_mut().unwrap();
        write_message(conn, data, binary);
        self.after_send(key)
    }

    /// Whether a frame of `size` bytes may be queued on the connection: not once the server's
    /// Close is out, nor past maxBackpressure (then the socket is cut, if its route says so).
    fn admits(&mut self, key: usize, size: usize) -> bool {
        let conn = self.conns[key].as_mut().unwrap();
        let ws = conn.ws.as_ref().unwrap();
        if ws.close_sent.is_some() || conn.h1.closing() {
            return false;
        }
        let buffered = conn.io.unsent();
        if buffered == 0 || buffered + size <= ws.max_backpressure {
            return true;
        }
        if ws.close_on_backpressure {
            let server = conn.server;
            let calls = self.close_conn(key);
            self.defer(server, calls);
        }
        false
    }

    /// One message to many sockets: framed once and copied to each connection's output, or
    /// compressed per socket for those that compress it (see the module's comment).
    pub fn ws_send_many(&mut self, ids: &[u64], data: &[u8], binary: bool) {
        let mut frame = Vec::with_capacity(data.len() + 10);
        write_frame(&mut frame, if binary { OP_BINARY } else { OP_TEXT }, data);
        for &id in ids {
            let Some(key) = self.ws_conn(id) else { continue };
            if !self.admits(key, frame.len()) {
                continue;
            }
            let conn = self.conns[key].as_mut().unwrap();
            if compresses(conn, data) {
                write_message(conn, data, binary);
            } else {
                conn.io.output().extend_from_slice(&frame);
            }
            self.after_send(key);
        }
    }

    /// After output was added: it is written at the end of the batch, or, sent from outside one
    /// (a timer, a publication), after this turn of the loop's poll phase, with whatever else is
    /// sent to the connection meanwhile (corked, as a batch's answers are: a publication to a
    /// thousand sockets several times a turn costs a write per socket, not per message). Reports
    /// whether it waits behind bytes the client has not read, and if so asks for a drain event.
    fn after_send(&mut self, key: usize) -> i32 {
        let conn = self.conns[key].as_mut().unwrap();
        if !conn.in_batch {
            conn.in_batch = true;
            let (server, gen) = (conn.server, conn.gen);
            self.schedule(server, Vec::new(), Some((key, gen, false)));
        }
        let conn = self.conns[key].as_mut().unwrap();
        if conn.io.polling() & UV_WRITABLE == 0 {
            return SENT;
        }
        conn.ws.as_mut().unwrap().wants_drain = true;
        QUEUED
    }

    /// Writes the connection's output now; events it raises go to JavaScript from the loop.
    fn write_out(&mut self, key: usize) {
        let server = self.conns[key].as_ref().unwrap().server;
        let (_, calls) = self.flush(key);
        if !calls.is_empty() {
            self.defer(server, calls);
        }
    }

    /// Unsent bytes of socket `id`.
    pub fn ws_buffered(&self, id: u64) -> usize {
        self.ws_conn(id).map_or(0, |key| {
            let conn = self.conns[key].as_ref().unwrap();
            conn.io.unsent()
        })
    }

    /// Sends a Close frame (none when `code` is `NO_STATUS`); the connection closes when the
    /// client answers, or after `CLOSE_TIMEOUT`.
    pub fn ws_close(&mut self, id: u64, code: u16, reason: &[u8]) {
        let Some(key) = self.ws_conn(id) else { return };
        let conn = self.conns[key].as_mut().unwrap();
        let server = self.servers[conn.server].as_ref().unwrap();
        let ws = conn.ws.as_mut().unwrap();
        if ws.close_sent.is_some() || ws.done_reading {
            return;
        }
        ws.close_sent = Some(now(server));
        write_close(conn.io.output(), code, reason);
        if !conn.in_batch {
            self.write_out(key);
        }
    }

    /// Cuts the connection of socket `id` (JavaScript hears of it as a close with 1006).
    pub fn ws_terminate(&mut self, id: u64) {
        let Some(key) = self.ws_conn(id) else { return };
        let server = self.conns[key].as_ref().unwrap().server;
        let calls = self.close_conn(key);
        self.defer(server, calls);
    }

    /// The connection was closed: forget its socket; if JavaScript was not told yet, it is cut (1006).
    pub(crate) fn ws_closed(&mut self, ws: &WsConn, calls: &mut Vec<Event>) {
        self.ws_conns.remove(&ws.id);
        if !ws.reported {
            calls.push(Event::WsClose { id: ws.id, code: 1006, reason: Vec::new() });
        }
    }

    /// A drain event, when the output is written and JavaScript waits for it.
    pub(crate) fn ws_drained(conn: &mut crate::state::Conn, calls: &mut Vec<Event>) {
        if let Some(ws) = conn.ws.as_mut() {
            if ws.wants_drain && conn.io.unsent() == 0 {
                ws.wants_drain = false;
                calls.push(Event::WsDrain { id: ws.id });
            }
        }
    }

    /// The timeout sweep's part for a WebSocket: cut after `CLOSE_TIMEOUT` without the client's
    /// Close, or after `idle_timeout` of silence, pinged half-way. Returns whether to cut it.
    pub(crate) fn ws_sweep(conn: &mut crate::state::Conn, now: u64) -> bool {
        let ws = conn.ws.as_mut().unwrap();
        if let Some(sent) = ws.close_sent {
            return now.saturating_sub(sent) >= CLOSE_TIMEOUT;
        }
        if ws.idle_timeout == 0 || ws.done_reading {
            return false;
        }
        let silent = now.saturating_sub(ws.heard);
        if silent >= ws.idle_timeout {
            return true;
        }
        if silent >= ws.idle_timeout / 2 && !ws.pinged {
            ws.pinged = true;
            write_frame(conn.io.output(), OP_PING, b"");
        }
        false
    }

    /// The client was heard from (bytes arrived).
    pub(crate) fn ws_heard(conn: &mut crate::state::Conn, now: u64) {
        if let Some(ws) = conn.ws.as_mut() {
            ws.heard = now;
            ws.pinged = false;
        }
    }
}

/// Whether a message goes out compressed on the connection.
fn compresses(conn: &crate::state::Conn, data: &[u8]) -> bool {
    conn.ws.as_ref().unwrap().deflater.as_ref().is_some_and(|(_, threshold)| data.len() >= *threshold)
}

/// Appends one message to the connection's output: compressed (RSV1 set) when it compresses.
fn write_message(conn: &mut crate::state::Conn, data: &[u8], binary: bool) {
    let opcode = if binary { OP_BINARY } else { OP_TEXT };
    if !compresses(conn, data) {
        return write_frame(conn.io.output(), opcode, data);
    }
    let compressed = conn.ws.as_mut().unwrap().deflater.as_mut().unwrap().0.deflate(data);
    write_compressed_frame(conn.io.output(), opcode, &compressed);
}
