//! The engine's state: its servers, their connections and the requests in flight, in one
//! thread-local `State`. Everything runs on the JavaScript thread, so nothing is locked; but
//! JavaScript calls back into the engine (`respond`, `header`…), so the state is borrowed only
//! for a step (`with_state`) and never across a call into JavaScript. Servers and connections
//! are slots in vectors, addressed by index from libuv handles; a connection's generation tells
//! a reused slot from the connection a request arrived on.

use crate::events::Event;
use crate::h1;
use crate::h2;
use crate::h3;
use crate::io::Transport;
use crate::js;
use crate::request::Requests;
use crate::spare::Spare;
use crate::tunnel;
use crate::uv::*;
use crate::ws;
use std::cell::RefCell;

/// A server's options (`listen`'s).
pub(crate) struct Settings {
    /// What its requests may be.
    pub(crate) requests: h1::Settings,
    /// It serves HTTP/2 (beside HTTP/1.1, told apart per connection): with what limits.
    pub(crate) h2: Option<h2::Settings>,
    /// It serves HTTP/3 on UDP, on the TCP listener's port number: with what limits (needs `tls`).
    pub(crate) h3: Option<h3::Settings>,
    pub(crate) headers_timeout: u64,
    pub(crate) request_timeout: u64,
    pub(crate) keep_alive_timeout: u64,
    /// A connection whose output has not moved for this long while some waits is closed (0: never).
    pub(crate) send_timeout: u64,
    pub(crate) check_interval: u64,
}

/// A listening server: its socket, its timers, and what its next delivery to JavaScript holds.
pub(crate) struct Server {
    pub(super) js: js::ServerJs,
    pub(super) listen_fd: crate::io::socket::Socket,
    pub(super) listen_poll: *mut uv_handle_t,
    pub(super) timer: *mut uv_handle_t,
    pub(super) kick: *mut uv_handle_t,
    pub(super) kick_armed: bool,
    /// Runs after the poll phase while `ready`, `batch` or `touched` hold anything.
    pub(super) check: *mut uv_handle_t,
    pub(super) check_armed: bool,
    /// Active while output corked outside a read slice waits for the check phase (`cork`): an
    /// active idle handle keeps the poll phase from waiting for I/O before it.
    pub(super) idle: *mut uv_handle_t,
    pub(super) idle_armed: bool,
    /// Connections the poll phase found readable, read by `serve` a slice at a time.
    pub(super) ready: Vec<(usize, u32)>,
    /// Calls for JavaScript gathered since the last delivery, delivered together by `serve`.
    pub(super) batch: Vec<Event>,
    /// Connections parsed since the last delivery, to write out after it: (key, generation,
    /// whether the parse found a request, so that another parse may find more).
    pub(super) touched: Vec<(usize, u32, bool)>,
    pub(super) settings: Settings,
    /// Events for JavaScript raised outside a batch (an abort found while answering), sent soon.
    pub(super) deferred: Vec<Event>,
    pub(super) stopped: bool,
    /// With `tls`: the configuration new connections get (`set_tls` swaps it).
    pub(super) tls: Option<std::sync::Arc<crate::io::tls::TlsServer>>,
    /// How often the timeout sweep runs (shorter than `check_interval` for a short WebSocket idleTimeout).
    pub(super) sweep_every: u64,
    /// The Unix domain socket it listens on, if not a TCP port: its file is removed when it stops.
    pub(super) unix_path: Option<String>,
    /// It ran out of descriptors once (`out_of_descriptors`): JavaScript was told.
    pub(super) ran_out: bool,
    /// The listener is not polled: out of descriptors with none in reserve, the sweep polls it again.
    pub(super) accept_paused: bool,
    /// Its HTTP/3 side, when it serves HTTP/3.
    pub(super) quic: Option<Quic>,
}

/// A server's HTTP/3 side: its endpoint, its UDP socket and its timer (driven by `quic.rs`).
pub(crate) struct Quic {
    pub(super) endpoint: h3::Endpoint,
    /// Closed once the server stopped and its connections ended.
    pub(super) udp: Option<crate::io::udp::Udp>,
    /// The address the socket is bound to.
    pub(super) local: std::net::SocketAddr,
    pub(super) timer: *mut uv_handle_t,
    /// Datagrams came, a timer ran or an answer was given since the last turn: events to take
    /// and datagrams to send.
    pub(super) dirty: bool,
}

/// A client connection: its socket, its unparsed input and unsent output, and its requests.
pub(crate) struct Connection {
    pub(super) server: usize,
    pub(super) gen: u32,
    pub(super) remote: String,
    pub(super) remote_port: u16,
    /// The socket and its bytes.
    pub(super) io: Transport,
    /// What it speaks, and where that stands.
    pub(super) proto: Protocol,
    /// Its output is corked: a batch of its requests is being answered, written at the batch's end.
    pub(super) in_batch: bool,
    /// Waiting in the server's `ready` list to be read.
    pub(super) read_queued: bool,
    /// When it was last active (the keep-alive timeout counts from it).
    pub(super) idle_since: u64,
    /// `io.sent()` when the timeout sweep last saw output waiting, and since when it saw it not move.
    pub(super) sent_seen: u64,
    pub(super) stalled_since: Option<u64>,
}

/// What a connection speaks: HTTP/1.1 from its accept, a WebSocket once the app accepted an
/// upgrade, a tunnel once the app took an upgrade's connection raw (node:http's 'upgrade'); on a server that serves HTTP/2, `H2` from its accept, which stays HTTP/2 or hands
/// the connection to HTTP/1.1 once the client's first bytes (or TLS's ALPN) tell. HTTP/1.1 is
/// held inline, the common case reached on every request without a pointer to follow; the
/// others are boxed.
#[allow(clippy::large_enum_variant)]
pub(super) enum Protocol {
    H1(h1::Conn),
    H2(Box<h2::Conn>),
    Ws(Box<ws::Conn>),
    Tunnel(Box<tunnel::Conn>),
}

#[derive(Default)]
pub(crate) struct State {
    pub(super) servers: Vec<Option<Server>>,
    pub(super) conns: Vec<Option<Connection>>,
    pub(super) free_conns: Vec<usize>,
    pub(super) next_gen: u32,
    pub(super) reqs: Requests,
    /// Where every connection's reads land first (see `read`).
    pub(super) rx: Vec<u8>,
    /// The buffers of finished requests, for the next ones to fill (malloc and free cost ~150
    /// instructions a buffer, and a request has two), and output buffers between writes.
    pub(super) spare: Spare,
    /// Open WebSockets: their connection (key, generation), by socket id.
    pub(super) ws_conns: std::collections::HashMap<u64, (usize, u32)>,
    /// Tunnelled connections: their connection (key, generation), by id.
    pub(super) tunnels: std::collections::HashMap<u64, (usize, u32)>,
    /// A descriptor kept for when the process runs out of them (`socket::shed_queue`), one per
    /// loop as libuv keeps one; taken when the first server listens.
    pub(super) reserve: Option<crate::io::socket::Socket>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Runs `f` with the state borrowed; `f` must not call into JavaScript.
pub(crate) fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

/// Delivers events to the server's JavaScript, from the loop (the state is not borrowed meanwhile:
/// JavaScript calls back into the engine).
pub(crate) fn deliver(server: usize, events: Vec<Event>) {
    let Some(js) = with_state(|s| s.server(server).map(|s| s.js)) else { return };
    js::deliver(&js, events, request_line);
}

/// How `js::deliver` reads a request's method and URL as it hands the request over.
fn request_line(id: u64, found: &mut dyn FnMut(usize, &[u8])) -> bool {
    with_state(|s| s.request_line(id).map(|(method, url)| found(method, url)).is_some())
}

pub(crate) fn now(server: &Server) -> u64 {
    server.js.now()
}

impl State {
    pub(crate) fn server(&self, id: usize) -> Option<&Server> {
        self.servers.get(id).and_then(Option::as_ref)
    }

    /// Whether `key` still holds the connection of that generation (not closed, not reused).
    pub(crate) fn is_conn(&self, key: usize, gen: u32) -> bool {
        self.conns.get(key).and_then(Option::as_ref).is_some_and(|c| c.gen == gen)
    }

    pub(crate) fn conn_keys(&self, server: usize) -> Vec<usize> {
        self.conns.iter().enumerate().filter(|(_, c)| c.as_ref().is_some_and(|c| c.server == server)).map(|(k, _)| k).collect()
    }
}
