//! Timeouts: a sweep per server every `check_interval` (a second by default) rather than a timer
//! per connection, so a request pays nothing for them. Slow heads and bodies get a 408 (the
//! protocol's part: `h1::Conn::sweep`), idle keep-alive connections are closed, and so are those
//! whose client stopped reading an answer.

use super::state::{deliver, now, with_state, Protocol, State};
use crate::events::Event;
use crate::h1::{Swept, Timeouts};
use crate::h2;
use crate::uv::*;

/// A server's sweep is due.
///
/// # Safety
///
/// Called by libuv only, on Node's loop, with a handle this engine started (its data the server's id).
pub(crate) unsafe extern "C" fn on_timer(handle: *mut uv_handle_t) {
    // SAFETY: `handle` is one of the engine's, which libuv passes back (see the Safety above).
    let id = unsafe { uv_handle_get_data(handle) } as usize;
    let calls = with_state(|s| s.sweep(id));
    if !calls.is_empty() {
        deliver(id, calls);
    }
}

impl State {
    /// The timeout sweep: slow heads and bodies get 408, idle keep-alive connections close.
    fn sweep(&mut self, id: usize) -> Vec<Event> {
        self.resume_accepting(id);
        let Some(server) = self.server(id) else { return Vec::new() };
        let now = now(server);
        let timeouts = Timeouts { headers: server.settings.headers_timeout, request: server.settings.request_timeout };
        let (keep_alive_timeout, stopped) = (server.settings.keep_alive_timeout, server.stopped);
        let send_timeout = server.settings.send_timeout;
        let mut calls = Vec::new();
        self.quic_sweep(id, now, timeouts.request, &mut calls);
        for key in self.conn_keys(id) {
            let conn = self.conns[key].as_mut().unwrap();
            if let Protocol::Ws(ws) = &mut conn.proto {
                if ws.sweep(&mut conn.io, now) {
                    calls.extend(self.close_conn(key));
                } else if conn.io.unsent() > 0 {
                    let (_, drained) = self.flush(key);
                    calls.extend(drained);
                }
                continue;
            }
            // A tunnel's timeouts are its listener's (Node's socket.setTimeout), not the server's.
            if matches!(conn.proto, Protocol::Tunnel(_)) {
                continue;
            }
            if send_timeout > 0 && self.send_stalled(key, now, send_timeout) {
                self.conns[key].as_ref().unwrap().io.reset_on_close();
                calls.extend(self.close_conn(key));
                continue;
            }
            let conn = self.conns[key].as_mut().unwrap();
            if let Protocol::H2(h2) = &mut conn.proto {
                match h2.sweep(now, timeouts.headers, timeouts.request, &mut self.reqs, &mut calls) {
                    h2::Swept::Busy => conn.idle_since = now,
                    // Idle past the keep-alive timeout: GOAWAY, then closed once it is written.
                    h2::Swept::Idle if stopped || now.saturating_sub(conn.idle_since) >= keep_alive_timeout => {
                        if h2.go_away() {
                            calls.extend(self.close_conn(key));
                            continue;
                        }
                    }
                    h2::Swept::Idle => {}
                    h2::Swept::Close => {
                        calls.extend(self.close_conn(key));
                        continue;
                    }
                }
                // Resets and GOAWAYs of the sweep go out.
                let (_, drained) = self.flush(key);
                calls.extend(drained);
                continue;
            }
            let Protocol::H1(h1) = &mut conn.proto else { continue };
            match h1.sweep(&mut conn.io, now, &timeouts) {
                Swept::Busy => conn.idle_since = now,
                Swept::Idle if stopped || now.saturating_sub(conn.idle_since) >= keep_alive_timeout => calls.extend(self.close_conn(key)),
                Swept::Idle | Swept::Wait => {}
                Swept::Close => calls.extend(self.close_conn(key)),
                Swept::Tell(event) => calls.push(event),
            }
        }
        calls
    }

    /// Whether output has waited on the connection for `send_timeout` ms with no byte of it
    /// taken by the socket: its client stopped reading. Seen from the sweep, by the count of
    /// bytes sent, so that writing pays nothing for it; a stall is timed from the first sweep
    /// that saw it, so it is cut `send_timeout` to `send_timeout + check_interval` after it began.
    fn send_stalled(&mut self, key: usize, now: u64, send_timeout: u64) -> bool {
        let waiting = self.unsent(key) > 0;
        let conn = self.conns[key].as_mut().unwrap();
        match conn.stalled_since {
            _ if !waiting => {
                conn.stalled_since = None;
                false
            }
            Some(since) if conn.io.sent() == conn.sent_seen => now.saturating_sub(since) >= send_timeout,
            _ => {
                conn.sent_seen = conn.io.sent();
                conn.stalled_since = Some(now);
                false
            }
        }
    }
}
