//! A server's life on Node's loop: its listening socket, accepting connections, stopping,
//! cutting connections and disposing of what it held. Sockets are watched with libuv poll
//! handles (readiness only): the engine does its own reads and writes (`io::Transport`,
//! driven by `serve.rs` and `write.rs`), so no libuv stream buffers sit between the socket and
//! the parser.

use super::serve::on_conn;
use super::state::{now, with_state, Connection, Protocol, Quic, Server, Settings, State};
use super::timers::on_timer;
use crate::events::Event;
use crate::h1;
use crate::h2;
use crate::h3;
use crate::io::socket::{self, OutOfDescriptors};
use crate::io::tls::{TlsConn, TlsServer};
use crate::io::Transport;
use crate::js;
use crate::uv::*;
use std::os::raw::{c_int, c_void};

/// Where a server listens: a TCP port on a host (`reuse_port`: shared with other processes), or
/// a Unix domain socket's path.
pub enum ListenAt<'a> {
    Tcp { host: &'a str, port: u16, reuse_port: bool },
    Unix(&'a str),
}

pub fn listen(js: js::ServerJs, at: ListenAt, mut settings: Settings, tls: Option<std::sync::Arc<TlsServer>>) -> Result<(usize, u16), String> {
    let (fd, bound, unix_path, host) = match at {
        ListenAt::Tcp { host, port, reuse_port } => {
            let (fd, bound) = socket::open(host, port, reuse_port)?;
            (fd, bound, None, host)
        }
        ListenAt::Unix(path) => (socket::open_unix(path)?, 0, Some(path.to_string()), ""),
    };
    let uv_loop = js.uv_loop();
    // The server's slot: its id is the data of its handles, the UDP socket's among them.
    let id = with_state(|s| s.servers.iter().position(Option::is_none).unwrap_or(s.servers.len()));
    // HTTP/3: a UDP socket on the port number the TCP listener got, with its TLS configuration.
    let quic = match (settings.h3.take(), &tls) {
        (None, _) => None,
        (Some(h3), Some(tls)) if unix_path.is_none() => {
            let opened = socket::resolve(host, bound).and_then(|local| Quic::open(uv_loop, id, local, h3::Endpoint::new(id, h3, tls.rustls_config())?));
            Some(opened.inspect_err(|_| socket::close(fd))?)
        }
        (Some(_), _) => {
            socket::close(fd);
            return Err("http3 needs the tls option (QUIC is always encrypted) and a TCP port, not a Unix domain socket: new Cog({ engine: \"native\", tls }).listen({ port, http3: true })".into());
        }
    };
    let listen_poll = alloc_handle(UV_POLL);
    let timer = alloc_handle(UV_TIMER);
    let kick = alloc_handle(UV_TIMER);
    let check = alloc_handle(UV_CHECK);
    let idle = alloc_handle(UV_IDLE);
    let interval = settings.check_interval.max(1);
    with_state(|s| {
        if s.reserve.is_none() {
            s.reserve = socket::reserve_descriptor();
        }
        if id == s.servers.len() {
            s.servers.push(None);
        }
        s.servers[id] = Some(Server {
            js,
            listen_fd: fd,
            listen_poll,
            timer,
            kick,
            kick_armed: false,
            check,
            check_armed: false,
            idle,
            idle_armed: false,
            ready: Vec::new(),
            batch: Vec::new(),
            touched: Vec::new(),
            settings,
            deferred: Vec::new(),
            stopped: false,
            sweep_every: interval,
            tls,
            unix_path,
            ran_out: false,
            accept_paused: false,
            quic,
        });
    });
    // SAFETY: the handles were just allocated for their kinds (`alloc_handle`) and are initialised
    // here, once, on Node's loop; `fd` is the listening socket, which `listen_poll` watches until
    // `stop_listening` closes both; the handles' data is the server's id (no pointer).
    unsafe {
        socket::watch(uv_loop, listen_poll, fd);
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
        uv_idle_init(uv_loop, idle);
        uv_unref(idle);
    }
    Ok((id, bound))
}

impl State {
    /// Whether the server serves HTTP/2.
    pub(crate) fn serves_h2(&self, id: usize) -> bool {
        self.server(id).is_some_and(|server| server.settings.h2.is_some())
    }

    /// Replaces a TLS server's configuration: connections made from now on use it, open ones keep theirs.
    pub(crate) fn set_tls(&mut self, id: usize, config: std::sync::Arc<TlsServer>) -> Result<(), &'static str> {
        match self.servers.get_mut(id).and_then(Option::as_mut) {
            Some(server) if server.tls.is_some() => {
                server.tls = Some(config);
                Ok(())
            }
            _ => Err("setSecureContext: this server was not started with tls"),
        }
    }
}

/// Stops accepting; idle connections close now, busy ones once their responses are written.
pub fn stop_listening(id: usize) {
    with_state(|s| {
        if s.server(id).is_none_or(|server| server.stopped) {
            return;
        }
        // Connections the kernel completed but nobody accepted yet are taken first: closing the
        // listening socket over them resets them, requests and all, where taken they are read
        // and each request already sent gets the app's answer (a 503 while draining).
        s.accept_all(id);
        let Some(server) = s.servers.get_mut(id).and_then(Option::as_mut) else { return };
        server.stopped = true;
        s.quic_shutdown(id);
        let Some(server) = s.servers.get_mut(id).and_then(Option::as_mut) else { return };
        // SAFETY: the listening handle and socket, closed once (`stopped` is set first, and checked above).
        unsafe { socket::close_watched(server.listen_poll, server.listen_fd) };
        if let Some(path) = &server.unix_path {
            // As Node removes its socket file when the server closes (libuv's pipe close).
            socket::unlink(path);
        }
        for key in s.conn_keys(id) {
            // Requests still arriving on busy connections are parsed: the app answers them 503.
            let conn = s.conns[key].as_mut().unwrap();
            let idle = match &mut conn.proto {
                Protocol::H1(h1) => h1.close_when_idle(&conn.io),
                // GOAWAY: the streams in flight are answered, then the final GOAWAY closes it.
                Protocol::H2(h2) => {
                    let now = h2.shutdown();
                    if !now {
                        let (server, (_, calls)) = (conn.server, s.flush(key));
                        s.defer(server, calls);
                    }
                    now
                }
                // A WebSocket is closed by the engine's JavaScript side (1001, going away); a
                // tunnel is its listener's (as node:http leaves an upgraded socket to its owner).
                Protocol::Ws(_) | Protocol::Tunnel(_) => false,
            };
            if idle {
                // Idle: no request in flight, nobody to tell.
                s.close_conn(key);
            } else if conn_unread(s, key) {
                // A request the client sent before the drain began waits unread: it is read (in
                // this turn's check phase) and answered, then the connection closes.
                let gen = s.conns[key].as_ref().map_or(0, |c| c.gen);
                s.mark_ready(id, key, gen);
            }
        }
    });
}

/// Whether an HTTP/1.1 connection has nothing queued and nothing read, but bytes waiting in the
/// socket (see `h1::Conn::close_when_idle`).
fn conn_unread(s: &State, key: usize) -> bool {
    s.conns.get(key).and_then(Option::as_ref).is_some_and(|c| matches!(&c.proto, Protocol::H1(h1) if h1.waits_unread(&c.io)))
}

/// How many of the server's connections are open: a stopping server's drain waits for the last
/// to close (one still reading the body of a request answered before it was read closes once the
/// body has come, see `h1::Conn::close_when_idle`).
pub fn open_connections(id: usize) -> usize {
    with_state(|s| s.conns.iter().filter(|c| c.as_ref().is_some_and(|c| c.server == id)).count())
}

/// Cuts every connection of the server; returns the ids of the requests that were in flight.
pub fn destroy_connections(id: usize) -> Vec<u64> {
    with_state(|s| {
        let mut ids = Vec::new();
        for key in s.conn_keys(id) {
            ids.extend(s.close_conn(key).iter().map(Event::id));
        }
        ids.extend(s.quic_forget_all(id).iter().map(Event::id));
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
        let mut server = s.servers.get_mut(id)?.take()?;
        // Requests still in flight on HTTP/3 are forgotten with it (JavaScript was told of
        // them by destroy_connections, or they were answered).
        if let Some(quic) = server.quic.take() {
            drop(quic.close(&mut s.reqs));
        }
        // SAFETY: the server's handles, initialised in `listen`, are stopped and closed once: the
        // server was just taken out of the state, so nothing reaches them again.
        unsafe {
            uv_timer_stop(server.timer);
            uv_close(server.timer, Some(free_handle));
            uv_timer_stop(server.kick);
            uv_close(server.kick, Some(free_handle));
            uv_check_stop(server.check);
            uv_close(server.check, Some(free_handle));
            uv_idle_stop(server.idle);
            uv_close(server.idle, Some(free_handle));
        }
        Some(server.js)
    })
}

/// A listening socket has connections waiting.
///
/// # Safety
///
/// Called by libuv only, on Node's loop, with a handle this engine started (its data the server's id).
unsafe extern "C" fn on_listen(handle: *mut uv_handle_t, status: c_int, _events: c_int) {
    if status < 0 {
        return;
    }
    // SAFETY: `handle` is one of the engine's, which libuv passes back (see the Safety above).
    let id = unsafe { uv_handle_get_data(handle) } as usize;
    with_state(|s| s.accept_all(id));
}

impl State {
    fn accept_all(&mut self, id: usize) {
        let Some(server) = self.server(id) else { return };
        let (listen_fd, uv_loop, now) = (server.listen_fd, server.js.uv_loop(), now(server));
        let tls_config = server.tls.clone();
        // Whether the server serves HTTP/2, and HTTP/1.1 beside h2c (its first bytes then decide).
        let (serves_h2, h2c_or_http1) = match &server.settings.h2 {
            Some(h2) => (true, h2.http1 && tls_config.is_none()),
            None => (false, false),
        };
        loop {
            // EAGAIN, or an error on a connection that went away: try again on the next event.
            let (fd, (remote, remote_port)) = match socket::accept(listen_fd) {
                Ok(Some(accepted)) => accepted,
                Ok(None) => return,
                Err(OutOfDescriptors) => return self.out_of_descriptors(id),
            };
            let tls = match &tls_config {
                None => None,
                Some(config) => match TlsConn::new(config) {
                    Some(tls) => Some(tls),
                    None => {
                        socket::close(fd);
                        continue;
                    }
                },
            };
            let poll = alloc_handle(UV_POLL);
            let tls_conn = tls.is_some();
            self.next_gen = self.next_gen.wrapping_add(1);
            let conn = Connection {
                server: id,
                io: Transport::new(fd, poll, on_conn, tls),
                gen: self.next_gen,
                remote,
                remote_port,
                // On TLS, the headers timeout runs from the start: it bounds the handshake too.
                // A server that serves HTTP/2 learns which protocol each client speaks from its
                // first bytes or TLS's ALPN (`h2::Conn`); HTTP/1.1 clients then go to `h1`. Until
                // the first bytes decide, the headers timeout bounds the wait, as on TLS.
                proto: if serves_h2 {
                    Protocol::H2(Box::new(h2::Conn::new((tls_conn || h2c_or_http1).then_some(now), tls_conn)))
                } else {
                    Protocol::H1(h1::Conn::new(tls_conn.then_some(now)))
                },
                in_batch: false,
                read_queued: false,
                sent_seen: 0,
                stalled_since: None,
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
            // SAFETY: `poll` was just allocated for a poll handle and is initialised once, on Node's
            // loop, for the accepted socket `fd`; the connection closes both (`Transport::close`).
            unsafe {
                socket::watch(uv_loop, poll, fd);
                uv_handle_set_data(poll, key as *mut c_void);
                uv_poll_start(poll, UV_READABLE | UV_DISCONNECT, on_conn);
            }
        }
    }

    /// Accepting failed for want of a descriptor, with connections waiting: they are closed
    /// (`shed_queue`), and JavaScript is told the first time (it warns). Without a reserve
    /// descriptor the listener is not polled until the next sweep (`resume_accepting`), as nginx
    /// pauses accepting: polled, it would wake the loop again at once.
    fn out_of_descriptors(&mut self, id: usize) {
        let shed = {
            let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return };
            socket::shed_queue(server.listen_fd, &mut self.reserve)
        };
        let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return };
        let first = !std::mem::replace(&mut server.ran_out, true);
        if shed.is_none() && !server.accept_paused {
            server.accept_paused = true;
            // SAFETY: the server's listening handle, started in `listen`, closed only by `stop_listening`.
            unsafe { uv_poll_stop(server.listen_poll) };
        }
        if first {
            self.defer(id, vec![Event::OutOfDescriptors]);
        }
    }

    /// Polls the listener again after a pause for want of descriptors (the sweep calls it). The
    /// reserve is taken again first if it was lost: another thread of the process (a file written
    /// on libuv's pool) can take the descriptor `shed_queue` freed before it is reopened, and
    /// without a reserve the connections past the limit would wait instead of being closed.
    pub(super) fn resume_accepting(&mut self, id: usize) {
        if !self.servers.get(id).and_then(Option::as_ref).is_some_and(|s| s.accept_paused && !s.stopped) {
            return;
        }
        if self.reserve.is_none() {
            self.reserve = socket::reserve_descriptor();
        }
        let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return };
        server.accept_paused = false;
        // SAFETY: the server's listening handle, started in `listen` and stopped by `out_of_descriptors`.
        unsafe { uv_poll_start(server.listen_poll, UV_READABLE, on_listen) };
    }

    /// Closes the connection; returns abort events for requests JavaScript still holds.
    pub(crate) fn close_conn(&mut self, key: usize) -> Vec<Event> {
        let mut calls = Vec::new();
        if let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.in_batch) {
            // The batch being served corks the connection's output until it ends: what was
            // answered meanwhile goes out first, as far as the socket takes it now, as it would
            // have without the cork. (The drain ends, and cuts the connections left, inside the
            // batch whose answer was the last one in flight: that answer was lost with them.)
            // The flush may close the connection itself, once all is written.
            conn.in_batch = false;
            let (_, written) = self.flush(key);
            calls.extend(written.into_iter().filter(|e| matches!(e, Event::Abort { .. })));
        }
        let Some(mut conn) = self.conns.get_mut(key).and_then(Option::take) else { return calls };
        self.free_conns.push(key);
        // Asked before the close: a tunnel's JavaScript side hears why (a reset, say), as a Node socket does.
        let failure = if matches!(conn.proto, Protocol::Tunnel(_)) { conn.io.failure() } else { None };
        conn.io.close();
        match &mut conn.proto {
            Protocol::H1(h1) => h1.close(&mut self.reqs, &mut calls),
            Protocol::H2(h2) => h2.close(&mut self.reqs, &mut calls),
            Protocol::Ws(ws) => self.ws_closed(ws, &mut calls),
            Protocol::Tunnel(tunnel) => {
                self.tunnels.remove(&tunnel.id());
                tunnel.closed(failure, &mut calls);
            }
        }
        calls
    }
}
