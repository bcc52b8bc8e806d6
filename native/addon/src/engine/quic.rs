//! HTTP/3 on a server: its UDP socket (the TCP listener's port number, on UDP) and one timer,
//! driving the server's `h3::Endpoint` on Node's loop. Datagrams are fed to the endpoint as
//! libuv reads them; the endpoint's events join the server's batch for JavaScript and its
//! datagrams go out once a turn, after JavaScript has answered (`serve`, in the check phase),
//! so that the answers a batch gives leave together with their acknowledgements. The timer is
//! re-armed after every turn from the endpoint's next deadline (loss detection, idle timeouts).
//! Answers given outside a batch (after an `await`) stir the server: they go out in this turn
//! of the loop's check phase, as HTTP/2's corked answers do.

use super::state::{with_state, Quic, State};
use crate::events::Event;
use crate::h3;
use crate::io::udp::{self, Udp};
use crate::request::{H3Stream, Req};
use crate::uv::*;
use std::net::SocketAddr;
use std::os::raw::{c_uint, c_void};
use std::time::Instant;

impl Quic {
    /// Binds the UDP socket of server `id` at `local` and makes its timer.
    pub(super) fn open(uv_loop: *mut uv_loop_t, id: usize, local: SocketAddr, endpoint: h3::Endpoint) -> Result<Quic, String> {
        let udp = Udp::bind(uv_loop, &local, id, on_datagram)?;
        let timer = alloc_handle(UV_TIMER);
        // SAFETY: `timer` was just allocated for a timer and is initialised once, on Node's loop;
        // its data is the server's id (no pointer); `close` closes it.
        unsafe {
            uv_timer_init(uv_loop, timer);
            uv_handle_set_data(timer, id as *mut c_void);
            uv_unref(timer);
        }
        Ok(Quic { endpoint, udp: Some(udp), local, timer, dirty: false })
    }

    /// Closes the socket and the timer; returns abort events for the requests JavaScript held.
    pub(super) fn close(mut self, reqs: &mut crate::request::Requests) -> Vec<Event> {
        if let Some(udp) = self.udp.take() {
            udp.close();
        }
        // SAFETY: the timer, initialised in `open`, is stopped and closed once (`self` is taken).
        unsafe {
            uv_timer_stop(self.timer);
            uv_close(self.timer, Some(free_handle));
        }
        self.endpoint.forget_all(reqs)
    }
}

/// A datagram came (or libuv has no more for now).
///
/// # Safety
///
/// Called by libuv only, on Node's loop, with a socket `Quic::open` bound (its data the server's id).
unsafe extern "C" fn on_datagram(handle: *mut uv_handle_t, nread: isize, buf: *const uv_buf_t, addr: *const c_void, _flags: c_uint) {
    // SAFETY: libuv passes the arguments of a read of the engine's socket (see the Safety above).
    let Some((from, datagram)) = (unsafe { udp::datagram(nread, buf, addr) }) else { return };
    // SAFETY: `handle` is one of the engine's, which libuv passes back.
    let id = unsafe { uv_handle_get_data(handle) } as usize;
    with_state(|s| {
        let Some(quic) = s.quic(id) else { return };
        quic.endpoint.recv(Instant::now(), from, datagram);
        s.stir(id);
    });
}

/// The endpoint's timer is due.
///
/// # Safety
///
/// Called by libuv only, on Node's loop, with a timer `Quic::open` made (its data the server's id).
unsafe extern "C" fn on_quic_timer(handle: *mut uv_handle_t) {
    // SAFETY: `handle` is one of the engine's, which libuv passes back (see the Safety above).
    let id = unsafe { uv_handle_get_data(handle) } as usize;
    with_state(|s| {
        let Some(quic) = s.quic(id) else { return };
        quic.endpoint.handle_timeout(Instant::now());
        s.stir(id);
    });
}

impl State {
    fn quic(&mut self, id: usize) -> Option<&mut Quic> {
        self.servers.get_mut(id)?.as_mut()?.quic.as_mut()
    }

    /// Something happened on the server's endpoint: its turn comes in this turn of the loop's
    /// check phase (the poll phase won't wait for I/O before it).
    pub(super) fn stir(&mut self, id: usize) {
        let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return };
        let Some(quic) = server.quic.as_mut() else { return };
        quic.dirty = true;
        if !std::mem::replace(&mut server.check_armed, true) {
            // SAFETY: the server's check handle, initialised in `listen`, closed only in `dispose`.
            unsafe { uv_check_start(server.check, super::serve::on_check) };
        }
        if !std::mem::replace(&mut server.idle_armed, true) {
            // SAFETY: the server's idle handle, initialised in `listen`, closed only in `dispose`.
            unsafe { uv_idle_start(server.idle, super::serve::on_idle) };
        }
    }

    /// A turn's first half: the endpoint's events join the server's batch. Returns whether the
    /// endpoint has a turn due (datagrams to send).
    pub(super) fn quic_events(&mut self, id: usize) -> bool {
        let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return false };
        let now = super::state::now(server);
        let Some(quic) = server.quic.as_mut().filter(|q| q.dirty) else { return false };
        let mut calls = Vec::new();
        quic.endpoint.events(now, &mut self.reqs, &mut self.spare, &mut calls);
        self.schedule(id, calls, None);
        true
    }

    /// A turn's second half, once JavaScript has answered: the datagrams due go out, the
    /// events that makes join the next batch, and the timer is re-armed. A stopped server's
    /// socket closes once its connections have ended.
    pub(super) fn quic_transmit(&mut self, id: usize) {
        let Some(server) = self.servers.get_mut(id).and_then(Option::as_mut) else { return };
        let stopped = server.stopped;
        let clock = super::state::now(server);
        let Some(quic) = server.quic.as_mut().filter(|q| q.dirty) else { return };
        quic.dirty = false;
        let now = Instant::now();
        if let Some(udp) = &quic.udp {
            quic.endpoint.transmit(now, |to, datagram| udp.send(to, datagram));
        }
        let mut calls = Vec::new();
        quic.endpoint.events(clock, &mut self.reqs, &mut self.spare, &mut calls);
        if stopped && quic.endpoint.connections() == 0 {
            if let Some(udp) = quic.udp.take() {
                udp.close();
            }
        }
        let wait = quic.endpoint.poll_timeout().map(|due| due.saturating_duration_since(now).as_micros().div_ceil(1000) as u64);
        // SAFETY: the endpoint's timer, initialised in `Quic::open`, closed only with it.
        unsafe {
            match wait {
                Some(ms) => uv_timer_start(quic.timer, on_quic_timer, ms, 0),
                None => uv_timer_stop(quic.timer),
            };
        }
        self.schedule(id, calls, None);
    }

    /// Cuts the server's HTTP/3 connections (CONNECTION_CLOSE, H3_NO_ERROR, sent now); returns
    /// aborts for the requests that were in flight on them.
    pub(super) fn quic_forget_all(&mut self, id: usize) -> Vec<Event> {
        let Some(quic) = self.servers.get_mut(id).and_then(Option::as_mut).and_then(|s| s.quic.as_mut()) else { return Vec::new() };
        quic.endpoint.close_all();
        let aborts = quic.endpoint.forget_all(&mut self.reqs);
        self.stir(id);
        self.quic_transmit(id);
        aborts
    }

    /// HTTP/3 connections still open on the server (a drain waits for them to close).
    pub(crate) fn quic_connections(&self, id: usize) -> usize {
        self.server(id).and_then(|s| s.quic.as_ref()).map_or(0, |q| q.endpoint.connections())
    }

    /// Graceful shutdown of the server's HTTP/3 side (GOAWAY on every connection).
    pub(super) fn quic_shutdown(&mut self, id: usize) {
        if let Some(quic) = self.quic(id) {
            quic.endpoint.shutdown();
            self.stir(id);
        }
    }

    /// The HTTP/3 endpoint of request `id`, if it came over HTTP/3: the answer goes to it
    /// (`with`, which says whether the request is done with: then it is forgotten), and the
    /// endpoint has a turn. None for a request of a TCP connection.
    pub(super) fn h3_answer<R>(&mut self, id: u64, fail: R, with: impl FnOnce(&mut h3::Endpoint, &Req) -> (R, bool)) -> Option<R> {
        let req = self.reqs.get(id)?;
        let at = req.h3()?;
        let Some(quic) = self.servers.get_mut(at.server).and_then(Option::as_mut).and_then(|s| s.quic.as_mut()) else { return Some(fail) };
        let (result, done) = with(&mut quic.endpoint, req);
        if done {
            self.forget(id);
        }
        self.stir(at.server);
        Some(result)
    }

    /// Where request `id` came, if it came over HTTP/3.
    pub(super) fn h3_stream(&self, id: u64) -> Option<H3Stream> {
        self.reqs.get(id)?.h3()
    }

    /// The timeout sweep of the server's HTTP/3 requests (see `h3::Endpoint::sweep`).
    pub(super) fn quic_sweep(&mut self, id: usize, now: u64, request_timeout: u64, calls: &mut Vec<Event>) {
        let Some(quic) = self.servers.get_mut(id).and_then(Option::as_mut).and_then(|s| s.quic.as_mut()) else { return };
        let before = calls.len();
        quic.endpoint.sweep(now, request_timeout, &mut self.reqs, calls);
        if calls.len() > before {
            self.stir(id);
        }
    }

    /// Gives an HTTP/3 request's body its route's `requestTimeout`.
    pub(super) fn h3_body_timeout(&mut self, at: H3Stream, ms: u64) {
        if let Some(quic) = self.quic(at.server) {
            quic.endpoint.set_body_timeout(at, ms);
        }
    }

    /// Pauses or resumes an HTTP/3 request's body.
    pub(super) fn h3_pause_body(&mut self, at: H3Stream, paused: bool) {
        if let Some(quic) = self.quic(at.server) {
            quic.endpoint.pause_body(at, paused);
            self.stir(at.server);
        }
    }

    /// Cuts an HTTP/3 request's stream; the request is forgotten.
    pub(super) fn h3_cancel(&mut self, id: u64, at: H3Stream) {
        if let Some(quic) = self.quic(at.server) {
            quic.endpoint.cancel(at);
            self.stir(at.server);
        }
        self.forget(id);
    }

    /// An HTTP/3 request's client address, and the address it reached.
    pub(super) fn h3_endpoints(&self, at: H3Stream) -> Option<(SocketAddr, SocketAddr)> {
        let quic = self.server(at.server)?.quic.as_ref()?;
        Some((quic.endpoint.remote(at.conn)?, quic.local))
    }
}
