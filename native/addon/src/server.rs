//! Listening sockets and connections, driven by libuv poll handles on Node's own loop.
//!
//! Everything runs on the JavaScript thread: libuv calls `on_listen`/`on_conn` when a socket is
//! ready. Readable connections are read a slice at a time (`serve`: during the poll phase as soon
//! as a slice is ready, the rest after it in `on_check`), and one call into JavaScript delivers
//! the slice's requests (see `js.rs`); the answers come back through `respond`/`stream_*` and
//! are written in request order, corked until the slice has been answered.
//! State lives in one thread-local `State`, never borrowed across a call into JavaScript
//! (JavaScript calls back into it).

use crate::js::{self, Call};
use crate::listener;
use crate::uv::*;
use cog_framing::response::{refusal, write_head, AppHead, BodyFraming, HeadOptions};
use cog_framing::rules::{self, Rules};
use cog_framing::{parse_head_reusing, ChunkedDecoder, Framing, Head, Limits};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::os::raw::{c_int, c_void};

/// Past this many unsent bytes on a connection, stop reading from it (and tell streams to wait).
const HIGH_WATER: usize = 256 * 1024;
/// Most bytes read from one connection per readiness event, so one client can't starve others.
const READ_BUDGET: usize = 256 * 1024;
/// The shared read buffer's size: one read takes at most this much.
const RX_SIZE: usize = 64 * 1024;

pub const FLAG_HTTP11: u32 = 1;
pub const FLAG_TOO_LARGE: u32 = 2;
/// The request broke one of Cog's rules: the status is in the high 16 bits, the message is passed along.
pub const FLAG_REFUSED: u32 = 4;
pub const EVENT_ABORT: u32 = 1;
pub const EVENT_DRAIN: u32 = 2;

pub struct Settings {
    pub head: Limits,
    pub rules: Rules,
    pub body_limit: u64,
    pub headers_timeout: u64,
    pub request_timeout: u64,
    pub keep_alive_timeout: u64,
    pub check_interval: u64,
}

pub struct Server {
    pub js: js::ServerJs,
    listen_fd: c_int,
    listen_poll: *mut uv_handle_t,
    timer: *mut uv_handle_t,
    kick: *mut uv_handle_t,
    kick_armed: bool,
    /// Runs after the poll phase while `ready`, `batch` or `touched` hold anything.
    check: *mut uv_handle_t,
    check_armed: bool,
    /// Connections the poll phase found readable, read by `serve` a slice at a time.
    ready: Vec<(usize, u32)>,
    /// Calls for JavaScript gathered since the last delivery, delivered together by `serve`.
    batch: Vec<Call>,
    /// Connections parsed since the last delivery, to write out after it: (key, generation,
    /// whether the parse found a request, so that another parse may find more).
    touched: Vec<(usize, u32, bool)>,
    pub settings: Settings,
    /// Events for JavaScript raised outside a batch (an abort found while answering), sent soon.
    pub deferred: Vec<Call>,
    stopped: bool,
}

struct BodyState {
    id: u64,
    framing: Framing,
    remaining: u64,
    decoder: ChunkedDecoder,
    buf: Vec<u8>,
}

struct Conn {
    server: usize,
    fd: c_int,
    poll: *mut uv_handle_t,
    gen: u32,
    remote: String,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
    /// Requests handed to JavaScript whose responses are not fully queued yet, in arrival order.
    queue: VecDeque<u64>,
    body: Option<BodyState>,
    in_batch: bool,
    /// Waiting in the server's `ready` list to be read.
    read_queued: bool,
    /// Parse nothing more: a request asked to close, was refused, or the peer ended.
    no_more_requests: bool,
    /// Close once the queue is empty and the output written.
    close_when_done: bool,
    /// The client ended its side: answer what arrived whole, then close.
    peer_ended: bool,
    polling: c_int,
    head_started: Option<u64>,
    body_started: u64,
    idle_since: u64,
}

enum ReqState {
    Waiting,
    Streaming,
    Finished,
}

pub struct Req {
    conn: usize,
    gen: u32,
    head: Vec<u8>,
    method_index: usize,
    target: Range<usize>,
    /// The path an absolute-form target names, when it is not the target itself.
    path: Option<Vec<u8>>,
    headers: Vec<(Range<usize>, Range<usize>)>,
    minor: u8,
    keep_alive: bool,
    is_head: bool,
    /// The response's bytes while an earlier response on the connection is unfinished.
    held: Vec<u8>,
    /// Bytes that go out once this response is finished (the engine's answer to a refused request behind it).
    after: Vec<u8>,
    state: ReqState,
    wants_drain: bool,
    /// Its response closes the connection: nothing queued behind it is answered.
    closes: bool,
}

type Requests = HashMap<u64, Req, std::hash::BuildHasherDefault<IdHasher>>;

/// Request ids are sequential: a multiply spreads them well enough, far cheaper than SipHash.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[derive(Default)]
pub struct State {
    servers: Vec<Option<Server>>,
    conns: Vec<Option<Conn>>,
    free_conns: Vec<usize>,
    next_gen: u32,
    pub reqs: Requests,
    next_id: u64,
    /// Where every connection's reads land first (see `read`).
    rx: Vec<u8>,
    /// The buffers of finished requests, for the next ones to fill (malloc and free cost ~150
    /// instructions a buffer, and a request has two), and output buffers between writes.
    spare: Spare,
}

/// Buffers of finished requests, kept for reuse, up to a byte budget. A count cap (256) once
/// held too few: under 2,500 connections x 4 pipelined a loop iteration has thousands of
/// requests in flight, so most buffers were freed and allocated again each time (1.9 frees a
/// request). Small heads are the common case: the budget holds thousands of them, or a few
/// hundred browser-sized ones.
#[derive(Default)]
struct Spare {
    heads: Vec<Vec<u8>>,
    headers: Vec<Vec<(Range<usize>, Range<usize>)>>,
    /// The capacity, in bytes, of what `heads` and `headers` hold.
    bytes: usize,
    /// Output buffers of connections that wrote all they had. A connection holds one only while
    /// it has output, so thousands of idle ones hold none (a buffer each was 10 MiB at 2,500
    /// connections x 4 pipelined), and the most recently given back, still in the CPU's cache,
    /// is taken first.
    outs: Vec<Vec<u8>>,
}

impl Spare {
    const BUDGET: usize = 1 << 20;
    const MAX_HEAD: usize = 2048;
    const MAX_HEADERS: usize = 64;
    const HEADER_SIZE: usize = std::mem::size_of::<(Range<usize>, Range<usize>)>();

    fn keep(&mut self, req: Req) {
        self.keep_head(req.head);
        self.keep_headers(req.headers);
    }

    fn keep_head(&mut self, mut head: Vec<u8>) {
        let size = head.capacity();
        if size > 0 && size <= Self::MAX_HEAD && self.bytes + size <= Self::BUDGET {
            head.clear();
            self.bytes += size;
            self.heads.push(head);
        }
    }

    fn keep_headers(&mut self, headers: Vec<(Range<usize>, Range<usize>)>) {
        let size = headers.capacity() * Self::HEADER_SIZE;
        if size > 0 && headers.capacity() <= Self::MAX_HEADERS && self.bytes + size <= Self::BUDGET {
            self.bytes += size;
            self.headers.push(headers);
        }
    }

    const MAX_OUTS: usize = 16;
    const MAX_OUT: usize = 64 * 1024;

    fn keep_out(&mut self, mut out: Vec<u8>) {
        if out.capacity() > 0 && out.capacity() <= Self::MAX_OUT && self.outs.len() < Self::MAX_OUTS {
            out.clear();
            self.outs.push(out);
        }
    }

    fn out(&mut self) -> Vec<u8> {
        self.outs.pop().unwrap_or_default()
    }

    fn head(&mut self) -> Vec<u8> {
        let head = self.heads.pop().unwrap_or_default();
        self.bytes -= head.capacity();
        head
    }

    fn headers(&mut self) -> Vec<(Range<usize>, Range<usize>)> {
        let headers = self.headers.pop().unwrap_or_default();
        self.bytes -= headers.capacity() * Self::HEADER_SIZE;
        headers
    }
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Runs `f` with the state borrowed; `f` must not call into JavaScript.
pub fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

fn now(server: &Server) -> u64 {
    unsafe { uv_now(server.js.uv_loop) }
}

// ---------------------------------------------------------------------------------------------
// Listening

pub fn listen(js: js::ServerJs, host: &str, port: u16, settings: Settings) -> Result<(usize, u16), String> {
    let (fd, bound) = listener::open(host, port)?;
    let uv_loop = js.uv_loop;
    let listen_poll = alloc_handle(UV_POLL);
    let timer = alloc_handle(UV_TIMER);
    let kick = alloc_handle(UV_TIMER);
    let check = alloc_handle(UV_CHECK);
    let interval = settings.check_interval.max(1);
    let id = with_state(|s| {
        let id = s.servers.iter().position(Option::is_none).unwrap_or_else(|| {
            s.servers.push(None);
            s.servers.len() - 1
        });
        s.servers[id] = Some(Server { js, listen_fd: fd, listen_poll, timer, kick, kick_armed: false, check, check_armed: false, ready: Vec::new(), batch: Vec::new(), touched: Vec::new(), settings, deferred: Vec::new(), stopped: false });
        id
    });
    unsafe {
        uv_poll_init(uv_loop, listen_poll, fd);
        uv_handle_set_data(listen_poll, id as *mut c_void);
        uv_poll_start(listen_poll, UV_READABLE, on_listen);
        uv_timer_init(uv_loop, timer);
        uv_handle_set_data(timer, id as *mut c_void);
        uv_timer_start(timer, on_timer, interval, interval);
        uv_unref(timer);
        uv_timer_init(uv_loop, kick);
        uv_handle_set_data(kick, id as *mut c_void);
        uv_unref(kick);
        uv_check_init(uv_loop, check);
        uv_handle_set_data(check, id as *mut c_void);
        uv_unref(check);
    }
    Ok((id, bound))
}

fn remote_text(storage: &libc::sockaddr_storage) -> String {
    unsafe {
        match storage.ss_family as c_int {
            libc::AF_INET => {
                let sin = &*(storage as *const _ as *const libc::sockaddr_in);
                std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)).to_string()
            }
            libc::AF_INET6 => {
                let sin6 = &*(storage as *const _ as *const libc::sockaddr_in6);
                let ip = std::net::Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                // Node reports an IPv4 client of a dual-stack socket as "::ffff:1.2.3.4"; so do we.
                ip.to_string()
            }
            _ => String::new(),
        }
    }
}

/// Stops accepting; idle connections close now, busy ones once their responses are written.
pub fn stop_listening(id: usize) {
    with_state(|s| {
        let Some(server) = s.servers.get_mut(id).and_then(Option::as_mut) else { return };
        if server.stopped {
            return;
        }
        server.stopped = true;
        unsafe { close_fd_handle(server.listen_poll, server.listen_fd) };
        for key in s.conn_keys(id) {
            // Requests still arriving on busy connections are parsed: the app answers them 503.
            let conn = s.conns[key].as_mut().unwrap();
            conn.close_when_done = true;
            if conn.queue.is_empty() && conn.body.is_none() && conn.inbuf.is_empty() {
                // Idle: no request in flight, nobody to tell.
                s.close_conn(key);
            }
        }
    });
}

/// Cuts every connection of the server; returns the ids of the requests that were in flight.
pub fn destroy_connections(id: usize) -> Vec<u64> {
    with_state(|s| {
        let mut ids = Vec::new();
        for key in s.conn_keys(id) {
            ids.extend(s.close_conn(key).into_iter().map(|c| match c {
                Call::Event { id, .. } | Call::Request { id, .. } => id,
            }));
        }
        ids
    })
}

/// Releases the server's timers and JavaScript references (after stop_listening and the drain).
/// Connections still open are cut first: none may outlive the server it reads its limits from.
pub fn dispose(id: usize) -> Option<js::ServerJs> {
    with_state(|s| {
        for key in s.conn_keys(id) {
            s.close_conn(key);
        }
        let server = s.servers.get_mut(id)?.take()?;
        unsafe {
            uv_timer_stop(server.timer);
            uv_close(server.timer, Some(free_handle));
            uv_timer_stop(server.kick);
            uv_close(server.kick, Some(free_handle));
            uv_check_stop(server.check);
            uv_close(server.check, Some(free_handle));
        }
        Some(server.js)
    })
}

unsafe fn close_fd_handle(handle: *mut uv_handle_t, fd: c_int) {
    // uv_close stops polling and drops the descriptor from libuv's epoll set at once, so the
    // descriptor can be closed now (a port is free again as soon as close() returns); the
    // handle's memory is freed once libuv is done with it.
    uv_close(handle, Some(free_handle));
    libc::close(fd);
}

unsafe extern "C" fn on_listen(handle: *mut uv_handle_t, status: c_int, _events: c_int) {
    if status < 0 {
        return;
    }
    let id = uv_handle_get_data(handle) as usize;
    with_state(|s| s.accept_all(id));
}

// ---------------------------------------------------------------------------------------------
// Connections

unsafe extern "C" fn on_conn(handle: *mut uv_handle_t, status: c_int, events: c_int) {
    let key = uv_handle_get_data(handle) as usize;
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
unsafe extern "C" fn on_check(handle: *mut uv_handle_t) {
    serve(uv_handle_get_data(handle) as usize, true);
}

/// Reads ready connections a slice at a time, delivers their requests to JavaScript and writes
/// what it answered, and parses what waited behind backpressure. During the poll phase only
/// whole slices are served; the check phase (`everything`) serves the rest, until nothing is left.
unsafe fn serve(id: usize, everything: bool) {
    loop {
        let Some((calls, touched)) = with_state(|s| {
            let server = s.servers.get_mut(id).and_then(Option::as_mut)?;
            if server.batch.is_empty() && server.touched.is_empty() {
                // Nothing waits to be delivered: read the next slice, if one is due.
                let due = server.ready.len() >= READ_SLICE || (everything && !server.ready.is_empty());
                if !due {
                    if everything {
                        server.check_armed = false;
                        unsafe { uv_check_stop(server.check) };
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
            js::call(id, calls);
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
        });
    }
}

unsafe extern "C" fn on_timer(handle: *mut uv_handle_t) {
    let id = uv_handle_get_data(handle) as usize;
    let calls = with_state(|s| s.sweep(id));
    if !calls.is_empty() {
        js::call(id, calls);
    }
}

unsafe extern "C" fn on_kick(handle: *mut uv_handle_t) {
    let id = uv_handle_get_data(handle) as usize;
    let calls = with_state(|s| match s.servers.get_mut(id).and_then(Option::as_mut) {
        Some(server) => {
            server.kick_armed = false;
            std::mem::take(&mut server.deferred)
        }
        None => Vec::new(),
    });
    if !calls.is_empty() {
        js::call(id, calls);
    }
}

impl State {
    pub fn server(&self, id: usize) -> Option<&Server> {
        self.servers.get(id).and_then(Option::as_ref)
    }

    /// Whether `key` still holds the connection of that generation (not closed, not reused).
    fn is_conn(&self, key: usize, gen: u32) -> bool {
        self.conns.get(key).and_then(Option::as_ref).is_some_and(|c| c.gen == gen)
    }

    /// Parses the connection's input into `calls`; returns what `touched` records of it.
    fn parse_into(&mut self, key: usize, gen: u32, calls: &mut Vec<Call>) -> (usize, u32, bool) {
        let start = calls.len();
        self.parse(key, calls);
        let found_request = calls[start..].iter().any(|c| matches!(c, Call::Request { .. }));
        (key, gen, found_request)
    }

    /// Queues calls (and a parsed connection) for the end of the poll phase.
    fn schedule(&mut self, id: usize, calls: Vec<Call>, touched: Option<(usize, u32, bool)>) {
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
            unsafe { uv_check_start(server.check, on_check) };
        }
    }

    /// Notes a readable connection for `serve` to read; returns whether a whole slice is ready.
    fn mark_ready(&mut self, id: usize, key: usize, gen: u32) -> bool {
        let Some(conn) = self.conns[key].as_mut() else { return false };
        let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return false };
        if !std::mem::replace(&mut conn.read_queued, true) {
            server.ready.push((key, gen));
        }
        if !server.check_armed {
            server.check_armed = true;
            unsafe { uv_check_start(server.check, on_check) };
        }
        server.ready.len() >= READ_SLICE
    }

    fn conn_keys(&self, server: usize) -> Vec<usize> {
        self.conns.iter().enumerate().filter(|(_, c)| c.as_ref().is_some_and(|c| c.server == server)).map(|(k, _)| k).collect()
    }

    fn accept_all(&mut self, id: usize) {
        let Some(server) = self.server(id) else { return };
        let (listen_fd, uv_loop, now) = (server.listen_fd, server.js.uv_loop, now(server));
        loop {
            let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            let fd = unsafe { libc::accept4(listen_fd, &mut storage as *mut _ as *mut libc::sockaddr, &mut len, libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
            if fd < 0 {
                return; // EAGAIN, or an error on a connection that went away: try again on the next event.
            }
            unsafe { listener::set_option(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1) };
            let poll = alloc_handle(UV_POLL);
            self.next_gen = self.next_gen.wrapping_add(1);
            let conn = Conn {
                server: id,
                fd,
                poll,
                gen: self.next_gen,
                remote: remote_text(&storage),
                inbuf: Vec::new(),
                out: Vec::new(),
                out_pos: 0,
                queue: VecDeque::new(),
                body: None,
                in_batch: false,
                read_queued: false,
                no_more_requests: false,
                close_when_done: false,
                peer_ended: false,
                polling: UV_READABLE | UV_DISCONNECT,
                head_started: None,
                body_started: 0,
                idle_since: now,
            };
            let key = match self.free_conns.pop() {
                Some(key) => {
                    self.conns[key] = Some(conn);
                    key
                }
                None => {
                    self.conns.push(Some(conn));
                    self.conns.len() - 1
                }
            };
            unsafe {
                uv_poll_init(uv_loop, poll, fd);
                uv_handle_set_data(poll, key as *mut c_void);
                uv_poll_start(poll, UV_READABLE | UV_DISCONNECT, on_conn);
            }
        }
    }

    /// Reads what the socket has (up to the budget). On end of input, no more requests are parsed.
    fn read(&mut self, key: usize) -> Vec<Call> {
        let conn = self.conns[key].as_mut().unwrap();
        conn.read_queued = false;
        if conn.no_more_requests && conn.body.is_none() {
            // Nothing more will be parsed: drop input (a client still sending after a refusal).
            let mut scratch = [0u8; 16 * 1024];
            let n = unsafe { recv(conn.fd, &mut scratch) };
            return if n == 0 || (n < 0 && !would_block()) { self.peer_gone(key) } else { Vec::new() };
        }
        // Activity: the keep-alive timeout counts from the last request, not from the last sweep.
        conn.idle_since = unsafe { uv_now(self.servers[conn.server].as_ref().unwrap().js.uv_loop) };
        // Read into one buffer all connections share, then keep just what arrived: with thousands
        // of connections, a large read buffer each (64 KiB) spread reads over that much memory, and
        // the cache misses cost more than copying a few hundred bytes.
        let rx = &mut self.rx;
        if rx.len() < RX_SIZE {
            rx.resize(RX_SIZE, 0);
        }
        let mut total = 0;
        while total < READ_BUDGET {
            let n = unsafe { recv(conn.fd, &mut rx[..RX_SIZE]) };
            if n > 0 {
                conn.inbuf.extend_from_slice(&rx[..n as usize]);
                total += n as usize;
                if (n as usize) < RX_SIZE {
                    break;
                }
            } else if n == 0 {
                conn.peer_ended = true;
                conn.close_when_done = true;
                break;
            } else if would_block() {
                break;
            } else {
                return self.close_conn(key);
            }
        }
        Vec::new()
    }

    /// The peer closed while nothing more is to be parsed: finish what is queued, then close.
    fn peer_gone(&mut self, key: usize) -> Vec<Call> {
        let conn = self.conns[key].as_mut().unwrap();
        conn.close_when_done = true;
        conn.peer_ended = true;
        if conn.queue.is_empty() {
            return self.close_conn(key);
        }
        self.set_polling(key, 0);
        Vec::new()
    }

    /// Parses complete requests out of the input, adding them to `calls` for JavaScript.
    fn parse(&mut self, key: usize, calls: &mut Vec<Call>) {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return };
        let server = self.servers[conn.server].as_ref().unwrap();
        let now = now(server);
        let limits = server.settings.head;
        let rules = server.settings.rules;
        let body_limit = server.settings.body_limit;
        conn.in_batch = true;
        let mut used = 0;
        loop {
            if conn.out.len() - conn.out_pos > HIGH_WATER {
                break; // Backpressure: parse more once the client has read what it was sent.
            }
            if let Some(body) = conn.body.as_mut() {
                let input = &conn.inbuf[used..];
                let result = match body.framing {
                    Framing::Length(_) => {
                        let take = (body.remaining.min(input.len() as u64)) as usize;
                        body.buf.extend_from_slice(&input[..take]);
                        body.remaining -= take as u64;
                        Ok((take, body.remaining == 0))
                    }
                    _ => body.decoder.decode(input, &mut body.buf).map(|n| (n, body.decoder.is_done())),
                };
                match result {
                    Ok((n, done)) => {
                        used += n;
                        let too_large = body.buf.len() as u64 > body_limit;
                        if too_large || done {
                            let body = conn.body.take().unwrap();
                            let req = self.reqs.get(&body.id).unwrap();
                            let flags = if req.minor >= 1 { FLAG_HTTP11 } else { 0 } | if too_large { FLAG_TOO_LARGE } else { 0 };
                            if too_large {
                                conn.no_more_requests = true;
                            }
                            calls.push(request_call(body.id, Some(body.buf).filter(|_| !too_large), flags));
                            conn.queue.push_back(body.id);
                            if too_large {
                                break;
                            }
                            continue;
                        }
                        break; // The body needs more input.
                    }
                    Err(refused) => {
                        let id = body.id;
                        conn.body = None;
                        self.reqs.remove(&id);
                        conn.no_more_requests = true;
                        conn.close_when_done = true;
                        conn.out.extend_from_slice(&refusal(refused.status, refused.message));
                        break;
                    }
                }
            }
            if conn.no_more_requests || used == conn.inbuf.len() {
                break;
            }
            let mut spare_headers = self.spare.headers();
            let parsed = parse_head_reusing(&conn.inbuf[used..], &limits, &mut spare_headers);
            self.spare.keep_headers(spare_headers);
            match parsed {
                Ok(None) => {
                    conn.head_started.get_or_insert(now);
                    break;
                }
                Err(refused) => {
                    conn.no_more_requests = true;
                    conn.close_when_done = true;
                    // Answered in order: after whatever is still being answered on this connection.
                    Self::queue_bytes(&mut self.reqs, conn, refusal(refused.status, refused.message));
                    used = conn.inbuf.len();
                    break;
                }
                Ok(Some(mut head)) => {
                    conn.head_started = None;
                    let start = used;
                    used += head.len;
                    self.next_id += 1;
                    let id = self.next_id;
                    let checked = rules::check(&head, &conn.inbuf[start..start + head.len], &rules);
                    let mut req = new_req(key, conn.gen, &conn.inbuf[start..start + head.len], &mut head, self.spare.head());
                    if !head.keep_alive {
                        conn.no_more_requests = true;
                    }
                    if let Ok(Some(path)) = &checked {
                        let path = &req.head[path.clone()];
                        req.path = Some(if path.first() == Some(&b'/') { path.to_vec() } else { [b"/", path].concat() });
                    }
                    let http11 = if req.minor >= 1 { FLAG_HTTP11 } else { 0 };
                    if let Err(problem) = checked {
                        // Cog answers it (through the app's error handler) and closes: the body is never read.
                        conn.no_more_requests = true;
                        calls.push(Call::Request { id, body: None, flags: http11 | FLAG_REFUSED | (u32::from(problem.status) << 16), problem: Some(problem.message) });
                        conn.queue.push_back(id);
                        self.reqs.insert(id, req);
                        continue;
                    }
                    match head.framing {
                        Framing::None => {
                            calls.push(request_call(id, None, http11));
                            conn.queue.push_back(id);
                        }
                        Framing::Length(n) if n > body_limit => {
                            // Refused without reading the body: the connection closes after the answer.
                            conn.no_more_requests = true;
                            calls.push(request_call(id, None, FLAG_TOO_LARGE | http11));
                            conn.queue.push_back(id);
                        }
                        framing => {
                            if head.expect_continue {
                                conn.out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                            }
                            let remaining = if let Framing::Length(n) = framing { n } else { 0 };
                            conn.body = Some(BodyState { id, framing, remaining, decoder: ChunkedDecoder::new(), buf: Vec::new() });
                            conn.body_started = now;
                        }
                    }
                    self.reqs.insert(id, req);
                }
            }
        }
        conn.inbuf.drain(..used);
        if conn.inbuf.is_empty() && conn.inbuf.capacity() > 16 * 1024 {
            // A large body or a burst grew it: don't hold that much per idle connection.
            conn.inbuf = Vec::new();
        }
        if conn.peer_ended {
            // What is left can never complete: a partial head, or a body cut short.
            conn.no_more_requests = true;
            conn.inbuf.clear();
            conn.head_started = None;
            if let Some(body) = conn.body.take() {
                self.reqs.remove(&body.id);
            }
        }
    }

    /// After a batch: write what it produced; returns drain events and whether to parse again.
    fn end_batch(&mut self, key: usize) -> (Vec<Call>, bool) {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return (Vec::new(), false) };
        conn.in_batch = false;
        let (more, calls) = self.flush(key);
        let more = more && self.conns.get(key).and_then(Option::as_ref).is_some_and(|c| !c.inbuf.is_empty() && !c.no_more_requests);
        (calls, more)
    }

    /// Writes pending output. Returns whether parsing may resume, and drain events for streams.
    fn flush(&mut self, key: usize) -> (bool, Vec<Call>) {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return (false, Vec::new()) };
        while conn.out_pos < conn.out.len() {
            let rest = &conn.out[conn.out_pos..];
            let n = unsafe { send(conn.fd, rest) };
            if n > 0 {
                conn.out_pos += n as usize;
            } else if n < 0 && would_block() {
                break;
            } else {
                return (false, self.close_conn(key));
            }
        }
        if conn.out_pos == conn.out.len() {
            self.spare.keep_out(std::mem::take(&mut conn.out));
            conn.out_pos = 0;
        } else if conn.out_pos > HIGH_WATER {
            conn.out.drain(..conn.out_pos);
            conn.out_pos = 0;
        }
        let pending = conn.out.len() - conn.out_pos;
        if pending == 0 && conn.close_when_done && conn.queue.is_empty() && conn.body.is_none() {
            return (false, self.close_conn(key));
        }
        let mut calls = Vec::new();
        if pending <= HIGH_WATER {
            for id in conn.queue.iter() {
                if let Some(req) = self.reqs.get_mut(id) {
                    if req.wants_drain {
                        req.wants_drain = false;
                        calls.push(Call::Event { kind: EVENT_DRAIN, id: *id });
                    }
                }
            }
        }
        let reading = if conn.peer_ended || (conn.no_more_requests && conn.body.is_none() && conn.close_when_done) { 0 } else { UV_READABLE | UV_DISCONNECT };
        let events = if pending > 0 { UV_WRITABLE | if pending > HIGH_WATER { 0 } else { reading } } else { reading };
        self.set_polling(key, events);
        (pending <= HIGH_WATER, calls)
    }

    fn set_polling(&mut self, key: usize, events: c_int) {
        let conn = self.conns[key].as_mut().unwrap();
        if conn.polling == events {
            return;
        }
        conn.polling = events;
        unsafe {
            if events == 0 {
                uv_poll_stop(conn.poll);
            } else {
                uv_poll_start(conn.poll, events, on_conn);
            }
        }
    }

    /// Closes the connection; returns abort events for requests JavaScript still holds.
    fn close_conn(&mut self, key: usize) -> Vec<Call> {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::take) else { return Vec::new() };
        self.free_conns.push(key);
        unsafe { close_fd_handle(conn.poll, conn.fd) };
        let mut calls = Vec::new();
        if let Some(body) = conn.body {
            self.reqs.remove(&body.id);
        }
        for id in conn.queue {
            if let Some(req) = self.reqs.remove(&id) {
                if !matches!(req.state, ReqState::Finished) {
                    calls.push(Call::Event { kind: EVENT_ABORT, id });
                }
            }
        }
        calls
    }

    /// Appends a complete response for the connection, in order: straight to the output when
    /// nothing before it is unanswered, else held on the last unanswered request.
    fn queue_bytes(reqs: &mut Requests, conn: &mut Conn, bytes: Vec<u8>) {
        match conn.queue.back().and_then(|id| reqs.get_mut(id)) {
            Some(last) => last.after.extend_from_slice(&bytes),
            None => conn.out.extend_from_slice(&bytes),
        }
    }

    /// The timeout sweep: slow heads and bodies get 408, idle keep-alive connections close.
    fn sweep(&mut self, id: usize) -> Vec<Call> {
        let Some(server) = self.server(id) else { return Vec::new() };
        let now = now(server);
        let (headers_timeout, request_timeout, keep_alive_timeout, stopped) = (server.settings.headers_timeout, server.settings.request_timeout, server.settings.keep_alive_timeout, server.stopped);
        let mut calls = Vec::new();
        for key in self.conn_keys(id) {
            let conn = self.conns[key].as_mut().unwrap();
            let slow_head = conn.head_started.is_some_and(|t| now.saturating_sub(t) >= headers_timeout);
            let slow_body = conn.body.is_some() && now.saturating_sub(conn.body_started) >= request_timeout;
            if slow_head || slow_body {
                if conn.queue.is_empty() {
                    conn.out.extend_from_slice(&refusal(408, "The request took too long to arrive"));
                    let _ = unsafe { send(conn.fd, &conn.out) };
                }
                calls.extend(self.close_conn(key));
                continue;
            }
            let idle = conn.queue.is_empty() && conn.body.is_none() && conn.inbuf.is_empty() && conn.out.is_empty();
            if idle {
                if conn.head_started.is_none() && (stopped || now.saturating_sub(conn.idle_since) >= keep_alive_timeout) {
                    calls.extend(self.close_conn(key));
                }
            } else {
                conn.idle_since = now;
            }
        }
        calls
    }

    // -----------------------------------------------------------------------------------------
    // Responses, called from JavaScript

    fn writable_req(&mut self, id: u64) -> Option<(&mut Req, &mut Conn)> {
        let req = self.reqs.get_mut(&id)?;
        let conn = self.conns.get_mut(req.conn)?.as_mut()?;
        if conn.gen != req.gen {
            return None;
        }
        Some((req, conn))
    }

    /// A whole response: the head (see `AppHead`), then the body `write_body` appends (`body_len`
    /// bytes). Written straight into the connection's output when no earlier response is pending.
    /// Returns false when the client is gone.
    pub fn respond(&mut self, id: u64, answer: &AppHead, body_len: usize, write_body: impl FnOnce(&mut Vec<u8>)) -> bool {
        let Some((req, _)) = self.writable_req(id) else { return false };
        let no_body = answer.status < 200 || answer.status == 204 || answer.status == 304;
        let framing = if no_body { BodyFraming::NoBody } else { BodyFraming::Length(body_len) };
        let (is_head, key) = (req.is_head, req.conn);
        let close = self.write_to(id, |out, req| {
            let close = write_head(out, &head_options(answer, req, framing));
            if !no_body && !is_head {
                write_body(out);
            }
            close
        });
        self.finish(key, id, close, true);
        true
    }

    /// Starts a streamed response (chunked on HTTP/1.1).
    pub fn stream_start(&mut self, id: u64, answer: &AppHead) -> bool {
        let Some((req, _)) = self.writable_req(id) else { return false };
        let framing = if req.is_head { BodyFraming::NoBody } else { BodyFraming::Stream };
        let key = req.conn;
        let close = self.write_to(id, |out, req| write_head(out, &head_options(answer, req, framing)));
        self.finish(key, id, close, false);
        true
    }

    /// Appends bytes for request `id` where they belong: the connection's output if it is the
    /// oldest unanswered request there, else held on it until the earlier ones are answered.
    fn write_to<R>(&mut self, id: u64, write: impl FnOnce(&mut Vec<u8>, &Req) -> R) -> R {
        let req = self.reqs.get_mut(&id).unwrap();
        let conn = self.conns[req.conn].as_mut().unwrap();
        if conn.queue.front() == Some(&id) && req.held.is_empty() {
            if conn.out.capacity() == 0 {
                conn.out = self.spare.out();
            }
            write(&mut conn.out, req)
        } else {
            let mut held = std::mem::take(&mut req.held);
            let result = write(&mut held, req);
            req.held = held;
            result
        }
    }

    /// After a response's head (and maybe its body) was written: note a close, mark it finished
    /// (whole responses), move what is complete to the output, and write unless a batch is on.
    fn finish(&mut self, key: usize, id: u64, close: bool, whole: bool) {
        let conn = self.conns[key].as_mut().unwrap();
        if close {
            conn.no_more_requests = true;
            conn.close_when_done = true;
        }
        let req = self.reqs.get_mut(&id).unwrap();
        req.state = if whole { ReqState::Finished } else { ReqState::Streaming };
        req.closes = close;
        self.advance(key);
    }

    /// A piece of a streamed body. Returns false when the caller should wait for a drain event
    /// (or the client is gone: then an abort event follows).
    pub fn stream_write(&mut self, id: u64, chunk: &[u8]) -> bool {
        let Some((req, _)) = self.writable_req(id) else { return false };
        if chunk.is_empty() || req.is_head {
            return true;
        }
        let mut bytes = Vec::with_capacity(chunk.len() + 16);
        if req.minor >= 1 {
            bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            bytes.extend_from_slice(chunk);
            bytes.extend_from_slice(b"\r\n");
        } else {
            bytes.extend_from_slice(chunk);
        }
        let key = req.conn;
        self.append(key, id, bytes);
        let Some((req, conn)) = self.writable_req(id) else { return false };
        let pending = conn.out.len() - conn.out_pos + req.held.len();
        if pending > HIGH_WATER {
            req.wants_drain = true;
            return false;
        }
        true
    }

    pub fn stream_end(&mut self, id: u64) -> bool {
        let Some((req, _)) = self.writable_req(id) else { return false };
        req.state = ReqState::Finished;
        let last: &[u8] = if req.minor >= 1 && !req.is_head { b"0\r\n\r\n" } else { b"" };
        let key = req.conn;
        self.append(key, id, last.to_vec());
        true
    }

    /// Adds response bytes for request `id`, then `advance`s.
    fn append(&mut self, key: usize, id: u64, bytes: Vec<u8>) {
        self.write_to(id, |out, _| out.extend_from_slice(&bytes));
        self.advance(key);
    }

    /// Moves every response now complete at the head of the connection's queue to its output;
    /// writes now unless a batch is being answered (then the batch's end writes it all at once).
    fn advance(&mut self, key: usize) {
        let conn = self.conns[key].as_mut().unwrap();
        let mut dropped = Vec::new();
        while let Some(&front) = conn.queue.front() {
            let req = self.reqs.get_mut(&front).unwrap();
            if !req.held.is_empty() {
                conn.out.extend_from_slice(&req.held);
                req.held = Vec::new();
            }
            if !matches!(req.state, ReqState::Finished) {
                break;
            }
            conn.queue.pop_front();
            let done = self.reqs.remove(&front).unwrap();
            let closes = done.closes;
            if !closes {
                conn.out.extend_from_slice(&done.after);
            }
            self.spare.keep(done);
            if closes {
                // RFC 9112 9.6: after a response that closes the connection, no later request is
                // answered (node:http drops them too). Handlers still holding one see it aborted.
                if let Some(body) = conn.body.take() {
                    self.reqs.remove(&body.id);
                }
                for id in conn.queue.drain(..) {
                    if self.reqs.remove(&id).is_some_and(|req| !matches!(req.state, ReqState::Finished)) {
                        dropped.push(Call::Event { kind: EVENT_ABORT, id });
                    }
                }
            }
        }
        let (server, in_batch) = (conn.server, conn.in_batch);
        if !dropped.is_empty() {
            self.defer(server, dropped);
        }
        if !in_batch {
            let (_, calls) = self.flush(key);
            if !calls.is_empty() {
                self.defer(server, calls);
            }
        }
    }

    /// Queues events for JavaScript to be delivered from the loop, not from inside a call.
    fn defer(&mut self, server: usize, calls: Vec<Call>) {
        let Some(s) = self.servers.get_mut(server).and_then(Option::as_mut) else { return };
        s.deferred.extend(calls);
        if !s.kick_armed {
            s.kick_armed = true;
            unsafe { uv_timer_start(s.kick, on_kick, 0, 0) };
        }
    }

    /// The method (its place in `METHODS`) and the URL the app sees (the path of an absolute-form target).
    pub fn request_line(&self, id: u64) -> Option<(usize, &[u8])> {
        let req = self.reqs.get(&id)?;
        Some((req.method_index, req.path.as_deref().unwrap_or(&req.head[req.target.clone()])))
    }

    /// The value of the header named `name` (case-insensitive), repeats joined as Node joins
    /// them (cookies with "; ", others with ", "), or only the first one.
    pub fn header(&self, id: u64, name: &[u8], first: bool) -> Option<Vec<u8>> {
        let req = self.reqs.get(&id)?;
        if first {
            let (_, value) = req.headers.iter().find(|(n, _)| req.head[n.clone()].eq_ignore_ascii_case(name))?;
            return Some(req.head[value.clone()].to_vec());
        }
        let separator: &[u8] = if name.eq_ignore_ascii_case(b"cookie") { b"; " } else { b", " };
        let mut joined: Option<Vec<u8>> = None;
        for (n, v) in &req.headers {
            if req.head[n.clone()].eq_ignore_ascii_case(name) {
                let value = &req.head[v.clone()];
                match joined.as_mut() {
                    Some(all) => {
                        all.extend_from_slice(separator);
                        all.extend_from_slice(value);
                    }
                    None => joined = Some(value.to_vec()),
                }
            }
        }
        joined
    }

    pub fn headers(&self, id: u64) -> Option<Vec<(&[u8], &[u8])>> {
        let req = self.reqs.get(&id)?;
        Some(req.headers.iter().map(|(n, v)| (&req.head[n.clone()], &req.head[v.clone()])).collect())
    }

    pub fn remote_address(&self, id: u64) -> Option<&str> {
        let req = self.reqs.get(&id)?;
        let conn = self.conns.get(req.conn)?.as_ref()?;
        (conn.gen == req.gen).then_some(conn.remote.as_str())
    }

    /// Cuts the connection of a request (a failed stream, a destroyed response); the other
    /// requests on it are told they were aborted, from the loop.
    pub fn destroy(&mut self, id: u64) {
        let Some(req) = self.reqs.get(&id) else { return };
        let key = req.conn;
        let Some(server) = self.conns.get(key).and_then(Option::as_ref).filter(|c| c.gen == req.gen).map(|c| c.server) else { return };
        let calls: Vec<Call> = self.close_conn(key).into_iter().filter(|c| !matches!(c, Call::Event { id: other, .. } if *other == id)).collect();
        if !calls.is_empty() {
            self.defer(server, calls);
        }
    }
}

/// The head options for the app's answer to `req`.
fn head_options<'a>(app: &'a AppHead<'a>, req: &Req, framing: BodyFraming) -> HeadOptions<'a> {
    HeadOptions { app, framing, minor: req.minor, request_close: !req.keep_alive, head_request: req.is_head }
}

/// The engine's record of a request; takes the head's header list (the rules have read it).
/// A request for a parsed head; `buffer` (empty) receives a copy of the head's bytes.
fn new_req(key: usize, gen: u32, head_bytes: &[u8], head: &mut Head, mut buffer: Vec<u8>) -> Req {
    let method = &head_bytes[head.method.clone()];
    buffer.extend_from_slice(head_bytes);
    Req {
        conn: key,
        gen,
        head: buffer,
        method_index: head.method_index,
        target: head.target.clone(),
        path: None,
        headers: std::mem::take(&mut head.headers),
        minor: head.minor,
        keep_alive: head.keep_alive,
        is_head: method == b"HEAD",
        held: Vec::new(),
        after: Vec::new(),
        state: ReqState::Waiting,
        wants_drain: false,
        closes: false,
    }
}

fn request_call(id: u64, body: Option<Vec<u8>>, flags: u32) -> Call {
    Call::Request { id, body, flags, problem: None }
}

/// `recv` and `send` rather than `read` and `write`: on a socket they skip the VFS layer (about
/// 0.1 µs of kernel time a request at 2,500 connections x 4 pipelined), and `MSG_NOSIGNAL`
/// keeps a peer that went away from raising SIGPIPE.
unsafe fn recv(fd: c_int, buf: &mut [u8]) -> isize {
    libc::recv(fd, buf.as_mut_ptr() as *mut c_void, buf.len(), 0)
}

unsafe fn send(fd: c_int, bytes: &[u8]) -> isize {
    libc::send(fd, bytes.as_ptr() as *const c_void, bytes.len(), libc::MSG_NOSIGNAL)
}

fn would_block() -> bool {
    let err = std::io::Error::last_os_error().raw_os_error();
    err == Some(libc::EAGAIN) || err == Some(libc::EWOULDBLOCK) || err == Some(libc::EINTR)
}
