//! Timeouts: a sweep per server every `check_interval` (a second by default) rather than a timer
//! per connection, so a request pays nothing for them. Slow heads and bodies get a 408, idle
//! keep-alive connections are closed.

use crate::js::{self, Call};
use crate::request::ReqState;
use crate::socket::send;
use crate::state::{now, with_state, State};
use crate::uv::*;
use cog_framing::response::refusal;

pub(crate) unsafe extern "C" fn on_timer(handle: *mut uv_handle_t) {
    let id = uv_handle_get_data(handle) as usize;
    let calls = with_state(|s| s.sweep(id));
    if !calls.is_empty() {
        js::call(id, calls);
    }
}

impl State {
    /// The timeout sweep: slow heads and bodies get 408, idle keep-alive connections close.
    fn sweep(&mut self, id: usize) -> Vec<Call> {
        let Some(server) = self.server(id) else { return Vec::new() };
        let now = now(server);
        let (headers_timeout, request_timeout, keep_alive_timeout, stopped) = (server.settings.headers_timeout, server.settings.request_timeout, server.settings.keep_alive_timeout, server.stopped);
        let mut calls = Vec::new();
        for key in self.conn_keys(id) {
            let conn = self.conns[key].as_mut().unwrap();
            if conn.ws.is_some() {
                if State::ws_sweep(conn, now) {
                    calls.extend(self.close_conn(key));
                } else if conn.out.len() > conn.out_pos {
                    let (_, drained) = self.flush(key);
                    calls.extend(drained);
                }
                continue;
            }
            let slow_head = conn.head_started.is_some_and(|t| now.saturating_sub(t) >= headers_timeout);
            let slow_body = conn.body.is_some() && now.saturating_sub(conn.body_started) >= request_timeout;
            if slow_head || slow_body {
                // A 408 unless a response has begun on the connection (its bytes would be cut),
                // as node:http answers. A request whose body is still arriving was handed to
                // JavaScript with its head: it is in the queue, its response not begun.
                let begun = conn.queue.front().and_then(|id| self.reqs.get(id)).is_some_and(|req| !matches!(req.state, ReqState::Waiting) || !req.held.is_empty());
                if !begun {
                    // The messages name the option, as the other refusals do (docs/limits.md).
                    let message = if slow_head {
                        format!("The request head did not arrive within headersTimeout ({headers_timeout} ms); raise the headersTimeout option for slower clients")
                    } else {
                        format!("The request body did not arrive within requestTimeout ({request_timeout} ms); raise the requestTimeout option for slower clients")
                    };
                    conn.out.extend_from_slice(&refusal(408, &message));
                    let unsent = &conn.out[conn.out_pos..];
                    match conn.tls.as_deref_mut() {
                        None => drop(unsafe { send(conn.fd, unsent) }),
                        Some(tls) => drop(tls.send(conn.fd, unsent, &mut 0)),
                    }
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
}
