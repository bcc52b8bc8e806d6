//! The engine's WebSocket calls: JavaScript accepts an upgrade (the connection's protocol becomes
//! a WebSocket: `ws.rs`), sends, publishes, closes and cuts sockets by id. Sends from outside a
//! batch are corked like a batch's answers (see `after_send`).

use super::state::{now, Connection, Protocol, State};
use crate::events::Event;
use crate::ws::{self, Admit, GONE};
use cog_framing::websocket::{write_frame, OP_BINARY, OP_TEXT};

impl State {
    /// Completes the handshake of request `id` (a WebSocket route accepted it): writes the 101
    /// and turns its connection into a WebSocket. False when the client is gone, or when its
    /// permessage-deflate offer is invalid (answered 400, as `ws` answers it).
    pub fn ws_accept(&mut self, id: u64, limits: ws::Limits, per_message_deflate: bool) -> bool {
        let Some(key_header) = self.header(id, b"sec-websocket-key", true) else { return false };
        let offer = if per_message_deflate { self.header(id, b"sec-websocket-extensions", false) } else { None };
        let Some(req) = self.reqs.get(id) else { return false };
        let (key, gen) = req.conn();
        // Only a request parsed as an upgrade without a body (RFC 6455's handshake is a GET
        // without one) becomes a WebSocket: with a body half read, the connection can't be one.
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen) else { return false };
        let Protocol::H1(h1) = &mut conn.proto else { return false };
        if !h1.upgrading() {
            return false;
        }
        self.reqs.remove(id);
        let server = self.servers[conn.server].as_mut().unwrap();
        let now = now(server);
        let idle_timeout = limits.idle_timeout;
        let Some(socket) = ws::handshake(&mut conn.io, id, &key_header, offer.as_deref(), limits, now, h1.closing()) else {
            // The handshake failed: the connection closes once the 400 is written.
            h1.upgrade_refused(id);
            if !conn.in_batch {
                self.write_out(key);
            }
            return false;
        };
        if idle_timeout > 0 {
            // The sweep runs often enough to cut a socket at most a quarter of its timeout late.
            let every = (idle_timeout / 4).clamp(25, server.settings.check_interval.max(25));
            if every < server.sweep_every {
                server.sweep_every = every;
                // SAFETY: the server's sweep timer, initialised in `listen`, closed only in `dispose`.
                unsafe { crate::uv::uv_timer_start(server.timer, super::timers::on_timer, every, every) };
            }
        }
        // Requests before the handshake still unanswered will never be: their answers can't go
        // into a WebSocket's stream. They are aborted.
        h1.upgraded(id);
        let mut aborted = Vec::new();
        h1.close(&mut self.reqs, &mut aborted);
        conn.proto = Protocol::Ws(socket);
        self.ws_conns.insert(id, (key, gen));
        let (server_id, in_batch, waiting) = (conn.server, conn.in_batch, !conn.io.input().is_empty());
        if !aborted.is_empty() {
            self.defer(server_id, aborted);
        }
        if !in_batch {
            self.write_out(key);
            if waiting && self.is_conn(key, gen) {
                // Frames that came with the handshake: decode them as if just read.
                self.mark_ready(server_id, key, gen);
            }
        }
        true
    }

    /// The connection of socket `id`, if it is still open, and its WebSocket.
    fn socket(&mut self, id: u64) -> Option<(usize, &mut Connection)> {
        let &(key, gen) = self.ws_conns.get(&id)?;
        let conn = self.conns.get_mut(key)?.as_mut().filter(|c| c.gen == gen)?;
        matches!(conn.proto, Protocol::Ws(_)).then_some((key, conn))
    }

    /// Sends one message (`SENT`, `QUEUED` or `GONE`: dropped).
    pub fn ws_send(&mut self, id: u64, data: &[u8], binary: bool) -> i32 {
        let Some((key, conn)) = self.socket(id) else { return GONE };
        let Protocol::Ws(ws) = &mut conn.proto else { return GONE };
        match ws.admits(&conn.io, data.len() + 10) {
            Admit::Yes => ws.write_message(&mut conn.io, data, binary),
            Admit::No => return GONE,
            Admit::Cut => return self.cut(key),
        }
        self.after_send(key)
    }

    /// One message to many sockets: framed once and copied to each connection's output, or
    /// compressed per socket for those that compress it (see `ws.rs`).
    pub fn ws_send_many(&mut self, ids: &[u64], data: &[u8], binary: bool) {
        let mut frame = Vec::with_capacity(data.len() + 10);
        write_frame(&mut frame, if binary { OP_BINARY } else { OP_TEXT }, data);
        for &id in ids {
            let Some((key, conn)) = self.socket(id) else { continue };
            let Protocol::Ws(ws) = &mut conn.proto else { continue };
            match ws.admits(&conn.io, frame.len()) {
                Admit::Yes if ws.compresses(data) => ws.write_message(&mut conn.io, data, binary),
                Admit::Yes => conn.io.output().extend_from_slice(&frame),
                Admit::No => continue,
                Admit::Cut => {
                    self.cut(key);
                    continue;
                }
            }
            self.after_send(key);
        }
    }

    /// Cuts a socket past its maxBackpressure; JavaScript hears of it from the loop. Returns `GONE`.
    fn cut(&mut self, key: usize) -> i32 {
        let server = self.conns[key].as_ref().unwrap().server;
        let calls = self.close_conn(key);
        self.defer(server, calls);
        GONE
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
        let Protocol::Ws(ws) = &mut conn.proto else { return GONE };
        ws.queued(&conn.io)
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
    pub fn ws_buffered(&mut self, id: u64) -> usize {
        self.socket(id).map_or(0, |(_, conn)| conn.io.unsent())
    }

    /// Sends a Close frame (none when `code` is `NO_STATUS`); the connection closes when the
    /// client answers, or after its close timeout.
    pub fn ws_close(&mut self, id: u64, code: u16, reason: &[u8]) {
        let Some(server) = self.socket(id).map(|(_, conn)| conn.server) else { return };
        let now = now(self.servers[server].as_ref().unwrap());
        let Some((key, conn)) = self.socket(id) else { return };
        let Protocol::Ws(ws) = &mut conn.proto else { return };
        if ws.close(&mut conn.io, code, reason, now) && !conn.in_batch {
            self.write_out(key);
        }
    }

    /// Cuts the connection of socket `id` (JavaScript hears of it as a close with 1006).
    pub fn ws_terminate(&mut self, id: u64) {
        if let Some((key, _)) = self.socket(id) {
            self.cut(key);
        }
    }

    /// A WebSocket's connection was closed: forget its socket; if JavaScript was not told yet,
    /// it is cut (1006).
    pub(crate) fn ws_closed(&mut self, ws: &ws::Conn, calls: &mut Vec<Event>) {
        self.ws_conns.remove(&ws.id());
        ws.closed(calls);
    }
}
