//! From a readable socket to requests in JavaScript. libuv reports readable connections during
//! its poll phase; they are queued on the server's ready list and read a slice at a time, each
//! slice's requests delivered to JavaScript in one call and its answers written before the next
//! slice is read (see `READ_SLICE` for why), the rest after the poll phase, in `on_check`.

use super::state::{deliver, now, with_state, Connection, Protocol, State};
use crate::events::Event;
use crate::h1::{self, Parsed, Place};
use crate::h2;
use crate::io::{Input, Read};
use crate::js::ServerJs;
use crate::uv::*;
use std::os::raw::c_int;

/// A connection's socket is ready (or failed).
///
/// # Safety
///
/// Called by libuv only, on Node's loop, with a handle this engine started (its data the connection's key).
pub(crate) unsafe extern "C" fn on_conn(handle: *mut uv_handle_t, status: c_int, events: c_int) {
    // SAFETY: `handle` is one of the engine's, which libuv passes back (see the Safety above).
    let key = unsafe { uv_handle_get_data(handle) } as usize;
    let slice_ready = with_state(|s| {
        let conn = s.conns.get(key).and_then(Option::as_ref)?;
        let (server, gen) = (conn.server, conn.gen);
        if status < 0 {
            let calls = s.close_conn(key);
            s.schedule(server, calls, None);
            return None;
        }
        let mut calls = Vec::new();
        let mut resume = false;
        if events & UV_WRITABLE != 0 {
            let (more, drained) = s.flush(key);
            calls.extend(drained);
            resume = more;
        }
        let mut slice_ready = None;
        if events & (UV_READABLE | UV_DISCONNECT) != 0 {
            // Read with other ready connections, a slice at a time (see `serve`).
            slice_ready = s.mark_ready(server, key, gen).then_some(server);
            resume = false;
        }
        let touched = if resume && s.is_conn(key, gen) { Some(s.parse_into(key, gen, &mut calls)) } else { None };
        s.schedule(server, calls, touched);
        slice_ready
    });
    if let Some(server) = slice_ready {
        serve(server, false);
    }
}

/// Connections read together, then answered and written before the next are read. One call
/// into JavaScript serves them all, where a call per connection would cost a `napi_make_callback`
/// each; and they are few enough that their requests and answers stay in the CPU's cache, and
/// that reading never runs far ahead of writing: at 2,500 connections x 4 pipelined, reading
/// every ready connection first and writing them all after sent the load generator's CPU an
/// interrupt every 32 reads (the kernel hands freed packet buffers back to the CPU that made
/// them) and held the engine to 0.8x uWS's requests, where uWS answers each connection as it
/// reads it.
/// A slice is served as soon as the poll phase has found it, not after the poll phase: libuv
/// asks epoll again while it gets a full 1,024 events, and connections left unread are ready
/// again each time (epoll reports levels); read later, they made a list of 49,151 entries, some
/// connections waiting over a second.
const READ_SLICE: usize = 16;

/// After the poll phase: serves what is left (see `serve`).
///
/// # Safety
///
/// Called by libuv only, on Node's loop, with a handle this engine started (its data the server's id).
pub(super) unsafe extern "C" fn on_check(handle: *mut uv_handle_t) {
    // SAFETY: `handle` is one of the engine's, which libuv passes back (see the Safety above).
    serve(unsafe { uv_handle_get_data(handle) } as usize, true);
}

/// Reads ready connections a slice at a time, delivers their requests to JavaScript and writes
/// what it answered, and parses what waited behind backpressure. During the poll phase only
/// whole slices are served; the check phase (`everything`) serves the rest, until nothing is left.
fn serve(id: usize, everything: bool) {
    loop {
        let Some((calls, touched)) = with_state(|s| {
            // HTTP/3's events join the batch; its datagrams go out once it is answered.
            let quic_turn = s.quic_events(id);
            let server = s.servers.get_mut(id).and_then(Option::as_mut)?;
            if server.batch.is_empty() && server.touched.is_empty() {
                // Nothing waits to be delivered: read the next slice, if one is due.
                let due = server.ready.len() >= READ_SLICE || (everything && !server.ready.is_empty());
                if !due {
                    if quic_turn {
                        return Some((Vec::new(), Vec::new()));
                    }
                    if everything {
                        server.check_armed = false;
                        // SAFETY: the server's check handle, initialised in `listen`, closed only in `dispose`.
                        unsafe { uv_check_stop(server.check) };
                        if std::mem::take(&mut server.idle_armed) {
                            // SAFETY: the server's idle handle, initialised in `listen`, closed only in `dispose`.
                            unsafe { uv_idle_stop(server.idle) };
                        }
                    }
                    return None;
                }
                let slice: Vec<_> = server.ready.drain(..server.ready.len().min(READ_SLICE)).collect();
                for (key, gen) in slice {
                    if s.is_conn(key, gen) {
                        let mut calls = s.read(key);
                        let touched = s.is_conn(key, gen).then(|| s.parse_into(key, gen, &mut calls));
                        s.schedule(id, calls, touched);
                    }
                }
            }
            let server = s.servers.get_mut(id).and_then(Option::as_mut)?;
            Some((std::mem::take(&mut server.batch), std::mem::take(&mut server.touched)))
        }) else {
            return;
        };
        if !calls.is_empty() {
            deliver(id, calls);
        }
        with_state(|s| {
            for (key, gen, found_request) in touched {
                if !s.is_conn(key, gen) {
                    continue;
                }
                let (mut calls, more) = s.end_batch(key);
                let again = if more && found_request { Some(s.parse_into(key, gen, &mut calls)) } else { None };
                s.schedule(id, calls, again);
            }
            s.quic_transmit(id);
        });
    }
}

/// Nothing to do: the idle handle only keeps the poll phase from blocking (see `cork`).
///
/// # Safety
///
/// None: it does nothing (unsafe only as libuv's callback type is).
pub(super) unsafe extern "C" fn on_idle(_handle: *mut uv_handle_t) {}

/// Delivers what was deferred (see `defer`).
///
/// # Safety
///
/// Called by libuv only, on Node's loop, with a handle this engine started (its data the server's id).
unsafe extern "C" fn on_kick(handle: *mut uv_handle_t) {
    // SAFETY: `handle` is one of the engine's, which libuv passes back (see the Safety above).
    let id = unsafe { uv_handle_get_data(handle) } as usize;
    let calls = with_state(|s| match s.servers.get_mut(id).and_then(Option::as_mut) {
        Some(server) => {
            server.kick_armed = false;
            std::mem::take(&mut server.deferred)
        }
        None => Vec::new(),
    });
    if !calls.is_empty() {
        deliver(id, calls);
    }
}

/// A body's pieces are read straight into a Buffer of their own (`h1::Conn::piece_room`) once
/// this much waits in the socket; less is read into the input and copied out, as a head is.
const PIECE_FROM: usize = 16 * 1024;
/// The most one read takes of a body at once: the app's stream gets pieces of at most this much.
/// Larger pieces would mean fewer calls, but on Node 20 pieces of 512 KiB and 1 MiB threw V8
/// into a mark-compact collection every 50-100 ms under the arena's uploads (5-7 ms of CPU a
/// request instead of 2.4; `--trace-gc`), where 64-256 KiB cost alike.
const PIECE_MAX: usize = crate::js::blocks::BLOCK;

/// Reads the next piece of a body (at most `left` bytes, all of them body) from the socket
/// straight into a Buffer made for it, and hands it over: the bytes are never copied on their way
/// to JavaScript. None when too little waits in the socket to be worth a Buffer of its own (or
/// none could be made): the socket is then read as usual.
fn read_piece(h1: &mut h1::Conn, io: &mut crate::io::Transport, left: u64, js: &ServerJs, calls: &mut Vec<Event>) -> Option<Read> {
    let waiting = io.waiting();
    if waiting < PIECE_FROM {
        return None;
    }
    let len = waiting.min(PIECE_MAX).min(usize::try_from(left).unwrap_or(usize::MAX));
    let (piece, data) = js.new_piece(len)?;
    // SAFETY: the piece's Buffer has `len` bytes at `data`, held (and unseen by JavaScript) until delivered.
    let dest = unsafe { std::slice::from_raw_parts_mut(data, len) };
    match io.read_into(dest) {
        Ok(n) if n == len => {
            h1.took_piece(n, piece, calls);
            Some(Read::Open)
        }
        // The socket gave less than it said it had (it shouldn't): those bytes go as a copy.
        Ok(n) => {
            io.buffers().0.extend_from_slice(&dest[..n]);
            Some(Read::Open)
        }
        Err(read) => Some(read),
    }
}

impl State {
    /// Queues calls (and a parsed connection) for the end of the poll phase.
    pub(crate) fn schedule(&mut self, id: usize, calls: Vec<Event>, touched: Option<(usize, u32, bool)>) {
        let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return };
        if calls.is_empty() && touched.is_none() {
            return;
        }
        // The first calls of a batch become the batch (no copy); later ones join it.
        if server.batch.is_empty() {
            server.batch = calls;
        } else {
            server.batch.extend(calls);
        }
        server.touched.extend(touched);
        if !server.check_armed {
            server.check_armed = true;
            // SAFETY: the server's check handle, initialised in `listen`, closed only in `dispose`.
            unsafe { uv_check_start(server.check, on_check) };
        }
    }

    /// Corks a connection's output outside a read slice (an answer after an `await`, from a
    /// timer): it is written once, after this turn of the loop's poll phase, with whatever else
    /// the connection's streams answer meanwhile, as a slice's answers are. The poll phase won't
    /// wait for I/O first (an idle handle is active), so the answer is not delayed.
    pub(crate) fn cork(&mut self, key: usize) {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return };
        if std::mem::replace(&mut conn.in_batch, true) {
            return;
        }
        let (id, gen) = (conn.server, conn.gen);
        self.schedule(id, Vec::new(), Some((key, gen, false)));
        let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return };
        if !std::mem::replace(&mut server.idle_armed, true) {
            // SAFETY: the server's idle handle, initialised in `listen`, closed only in `dispose`.
            unsafe { uv_idle_start(server.idle, on_idle) };
        }
    }

    /// Notes a readable connection for `serve` to read; returns whether a whole slice is ready.
    pub(crate) fn mark_ready(&mut self, id: usize, key: usize, gen: u32) -> bool {
        let Some(conn) = self.conns[key].as_mut() else { return false };
        let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return false };
        if !std::mem::replace(&mut conn.read_queued, true) {
            server.ready.push((key, gen));
        }
        if !server.check_armed {
            server.check_armed = true;
            // SAFETY: the server's check handle, initialised in `listen`, closed only in `dispose`.
            unsafe { uv_check_start(server.check, on_check) };
        }
        server.ready.len() >= READ_SLICE
    }

    /// Reads what the socket has (up to the budget). On end of input, no more requests are parsed.
    fn read(&mut self, key: usize) -> Vec<Event> {
        let conn = self.conns[key].as_mut().unwrap();
        conn.read_queued = false;
        let input = match &conn.proto {
            Protocol::H1(h1) => h1.input(),
            Protocol::H2(h2) => h2.input(),
            Protocol::Ws(ws) => ws.input(),
            Protocol::Tunnel(tunnel) => tunnel.input(),
        };
        match input {
            // Read once the app has answered the upgrade request, or JavaScript's stream of the
            // body has room: the input waits in the socket.
            Input::Wait => return Vec::new(),
            // Nothing more will be parsed: drop input (a client still sending after a refusal).
            Input::Drop => return if conn.io.read_and_drop() { Vec::new() } else { self.close_conn(key) },
            Input::Read => {}
        }
        // Activity: the keep-alive timeout counts from the last request, not from the last sweep.
        conn.idle_since = self.servers[conn.server].as_ref().unwrap().js.now();
        if let Protocol::Ws(ws) = &mut conn.proto {
            ws.heard(conn.idle_since);
        }
        let mut calls = Vec::new();
        // Given back after the parse (`parse_into`) once all of it is consumed.
        conn.io.input_from(&mut self.spare);
        let read = match &mut conn.proto {
            Protocol::H1(h1) => match h1.piece_room(&conn.io) {
                Some(left) => read_piece(h1, &mut conn.io, left, &self.servers[conn.server].as_ref().unwrap().js, &mut calls),
                // Heads: one read, so that a long body's first bytes are not drawn through the input.
                None if h1.reads_heads() => Some(conn.io.read_once(&mut self.rx)),
                None => None,
            },
            _ => None,
        };
        match read.unwrap_or_else(|| conn.io.read(&mut self.rx)) {
            Read::Open => {}
            // The client ended its side: what arrived whole is answered, then the connection
            // closes (at once if a response is being streamed: see `h1::Conn::input_ended`).
            Read::Ended => {
                let streaming = match &mut conn.proto {
                    Protocol::H1(h1) => h1.input_ended(),
                    // What arrived is read; then, if streams are left unanswered, the connection
                    // closes (`end_batch`), as on HTTP/1.1. A client that sent nothing is gone.
                    Protocol::H2(h2) => h2.ended_unheard(&conn.io),
                    Protocol::Ws(ws) => {
                        ws.input_ended();
                        false
                    }
                    // Told to JavaScript as the tunnel's input is parsed.
                    Protocol::Tunnel(_) => false,
                };
                if streaming {
                    calls.extend(self.close_conn(key));
                    return calls;
                }
            }
            Read::Failed => {
                calls.extend(self.close_conn(key));
                return calls;
            }
        }
        calls
    }

    /// Parses the connection's input into `calls`; returns what `touched` records of it.
    fn parse_into(&mut self, key: usize, gen: u32, calls: &mut Vec<Event>) -> (usize, u32, bool) {
        let start = calls.len();
        self.parse(key, calls);
        if let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) {
            conn.io.release_input(&mut self.spare);
        }
        let found_request = calls[start..].iter().any(|c| matches!(c, Event::Request { .. }));
        (key, gen, found_request)
    }

    /// Parses what the connection's input holds: requests, or WebSocket frames.
    pub(crate) fn parse(&mut self, key: usize, calls: &mut Vec<Event>) {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return };
        conn.in_batch = true;
        let server = self.servers[conn.server].as_ref().unwrap();
        let h1 = match &mut conn.proto {
            Protocol::H1(h1) => h1,
            Protocol::Ws(ws) => return ws.parse(&mut conn.io, calls),
            Protocol::Tunnel(tunnel) => return tunnel.parse(&mut conn.io, calls),
            Protocol::H2(h2) => {
                let settings = server.settings.h2.as_ref().expect("an HTTP/2 connection on a server that serves HTTP/2");
                let h2::Parsed::Http1 { head_started } = h2.parse(&mut conn.io, &mut self.reqs, &mut self.spare, key, conn.gen, settings, now(server), calls)
                else {
                    return;
                };
                // The client speaks HTTP/1.1: served as any HTTP/1.1 client, from its first byte.
                let mut h1 = h1::Conn::new(head_started);
                if conn.io.ended() {
                    h1.input_ended();
                }
                conn.proto = Protocol::H1(h1);
                let Protocol::H1(h1) = &mut conn.proto else { unreachable!() };
                h1
            }
        };
        let place = Place { reqs: &mut self.reqs, spare: &mut self.spare, key, gen: conn.gen };
        if let Parsed::CutShort = h1.parse(&mut conn.io, place, &server.settings.requests, now(server), calls) {
            // JavaScript is reading a body that can't be whole: close, aborting what it holds.
            calls.extend(self.close_conn(key));
        }
    }

    /// After a batch: write what it produced; returns drain events and whether to parse again.
    fn end_batch(&mut self, key: usize) -> (Vec<Event>, bool) {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return (Vec::new(), false) };
        conn.in_batch = false;
        if let Protocol::Ws(ws) = &mut conn.proto {
            ws.end_batch(&mut conn.io);
        }
        let (more, mut calls) = self.flush(key);
        let left_unanswered = |c: &Connection| match &c.proto {
            Protocol::H1(h1) => h1.left_unanswered(&c.io),
            // An HTTP/2 client that ended its side can't be answered on the streams it left open.
            Protocol::H2(_) => c.io.ended(),
            Protocol::Ws(_) | Protocol::Tunnel(_) => false,
        };
        if self.conns.get(key).and_then(Option::as_ref).is_some_and(left_unanswered) {
            // The client ended its side with requests still unanswered: as node:http takes it
            // (its servers don't allow half-open connections), the client is gone. Their
            // responses are aborted (`req` and `res` see 'close', `req.signal` aborts), and the
            // connection closes after the flush above wrote what was answered before them.
            calls.extend(self.close_conn(key));
            return (calls, false);
        }
        // A connection that became a WebSocket in this batch decodes the frames that came with its
        // handshake now (no more requests, but frames).
        let more = more
            && self.conns.get(key).and_then(Option::as_ref).is_some_and(|c| {
                !c.io.input().is_empty()
                    && match &c.proto {
                        Protocol::H1(h1) => h1.reads_requests(),
                        // HTTP/2 reads all of its input at once, and so does a tunnel.
                        Protocol::H2(_) | Protocol::Tunnel(_) => false,
                        Protocol::Ws(_) => true,
                    }
            });
        (calls, more)
    }

    /// Gives the body of request `id`, still arriving, its route's `requestTimeout` (ms from its
    /// start, 0: none) in place of the server's.
    pub fn set_body_timeout(&mut self, id: u64, ms: u64) {
        if let Some(at) = self.h3_stream(id) {
            return self.h3_body_timeout(at, ms);
        }
        let Some(req) = self.reqs.get(id) else { return };
        let (key, gen) = req.conn();
        let stream = req.stream();
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen) else { return };
        match &mut conn.proto {
            Protocol::H1(h1) => h1.set_body_timeout(id, ms),
            Protocol::H2(h2) => h2.set_body_timeout(stream, ms),
            Protocol::Ws(_) | Protocol::Tunnel(_) => {}
        }
    }

    /// Pauses (JavaScript's stream is full) or resumes the body of request `id` as it arrives.
    pub fn pause_body(&mut self, id: u64, paused: bool) {
        if let Some(at) = self.h3_stream(id) {
            return self.h3_pause_body(at, paused);
        }
        let Some(req) = self.reqs.get(id) else { return };
        let (key, gen) = req.conn();
        let stream = req.stream();
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen) else { return };
        let h1 = match &mut conn.proto {
            Protocol::H1(h1) => h1,
            // HTTP/2's streams share the socket: the stream's window stays shut instead (what the
            // client sends within it is handed over), and reopens when it resumes.
            Protocol::H2(h2) => {
                if h2.pause_body(stream, paused) {
                    self.advance(key);
                }
                return;
            }
            Protocol::Ws(_) | Protocol::Tunnel(_) => return,
        };
        if !h1.pause_body(id, paused) {
            return;
        }
        if paused {
            // Nothing is read from now on (`read` leaves the socket alone), but the socket is
            // still polled until it next turns readable: the parse that follows then stops
            // polling it (`flush`). A stream that resumes first, as one read as fast as it
            // arrives does after nearly every piece (a piece past the stream's high-water
            // mark pauses it), costs no system call: stopping and starting the poll at once
            // cost ~65 epoll_ctl calls a 20 MB upload.
            return;
        }
        let server = conn.server;
        let waiting = !conn.io.input().is_empty();
        // Reading starts again (`flush` sets what the connection polls for).
        let (_, drained) = self.flush(key);
        if !drained.is_empty() {
            self.defer(server, drained);
        }
        if waiting && self.is_conn(key, gen) {
            // Parse what waits in the input, from the loop (this runs inside JavaScript).
            self.mark_ready(server, key, gen);
        }
    }

    /// Queues events for JavaScript to be delivered from the loop, not from inside a call.
    pub(crate) fn defer(&mut self, server: usize, calls: Vec<Event>) {
        let Some(s) = self.servers.get_mut(server).and_then(Option::as_mut) else { return };
        s.deferred.extend(calls);
        if !s.kick_armed {
            s.kick_armed = true;
            // SAFETY: the server's kick timer, initialised in `listen`, closed only in `dispose`.
            unsafe { uv_timer_start(s.kick, on_kick, 0, 0) };
        }
    }
}
