//! Timeouts: a sweep per server every `check_interval` (a second by default) rather than a timer
//! per connection, so a request pays nothing for them. Slow heads and bodies get a 408, idle
//! keep-alive connections are closed, and so are those whose client stopped reading an answer.

use crate::events::Event;
use crate::state::{deliver, now, with_state, State};
use crate::uv::*;
use cog_framing::response::refusal;

pub(crate) unsafe extern "C" fn on_timer(handle: *mut uv_handle_t) {
    let id = uv_handle_get_data(handle) as usize;
    let calls = with_state(|s| s.sweep(id));
    if !calls.is_empty() {
        deliver(id, calls);
    }
}

impl State {
    /// The timeout sweep: slow heads and bodies get 408, idle keep-alive connections close.
    fn sweep(&mut self, id: usize) -> Vec<Event> {
        let Some(server) = self.server(id) else { return Vec::new() };
        let now = now(server);
        let (headers_timeout, request_timeout, keep_alive_timeout, stopped) = (server.settings.headers_timeout, server.settings.request_timeout, server.settings.keep_alive_timeout, server.stopped);
        let send_timeout = server.settings.send_timeout;
        let mut calls = Vec::new();
        for key in self.conn_keys(id) {
            let conn = self.conns[key].as_mut().unwrap();
            if conn.ws.is_some() {
                if State::ws_sweep(conn, now) {
                    calls.extend(self.close_conn(key));
                } else if conn.io.unsent() > 0 {
                    let (_, drained) = self.flush(key);
                    calls.extend(drained);
                }
                continue;
            }
            if send_timeout > 0 && self.send_stalled(key, now, send_timeout) {
                self.conns[key].as_ref().unwrap().io.reset_on_close();
                calls.extend(self.close_conn(key));
                continue;
            }
            let conn = self.conns[key].as_mut().unwrap();
            let slow_head = conn.head_started.is_some_and(|t| now.saturating_sub(t) >= headers_timeout);
            // A route's own requestTimeout, once JavaScript has routed the request, else the server's.
            let body_timeout = conn.body.as_ref().map_or(request_timeout, |b| b.timeout.unwrap_or(request_timeout));
            let slow_body = conn.body.is_some() && now.saturating_sub(conn.body_started) >= body_timeout;
            if slow_body && !slow_head {
                // A body JavaScript is receiving, its response not begun: the app answers the 408
                // (through its error handler, as every error) and closes the connection after it.
                // One sweep later, unanswered, it gets the engine's 408 below.
                let front = conn.queue.front();
                let body = conn.body.as_mut().unwrap();
                if body.delivered && !body.timed_out && conn.queue.front_untouched(body.id) {
                    body.timed_out = true;
                    calls.push(Event::BodyTimeout { id: body.id });
                    continue;
                }
                if body.timed_out && front != Some(body.id) {
                    // Answered: the connection closes once the answer is out (the body may never end).
                    if conn.io.unsent() == 0 {
                        calls.extend(self.close_conn(key));
                    }
                    continue;
                }
            }
            if slow_head || slow_body {
                // A 408 unless a response has begun on the connection (its bytes would be cut),
                // as node:http answers. A request whose body is still arriving was handed to
                // JavaScript with its head: it is in the queue, its response not begun.
                let begun = conn.queue.front_begun();
                if !begun {
                    conn.io.send_last(&refusal(408, &too_slow(slow_head, headers_timeout, body_timeout)));
                }
                calls.extend(self.close_conn(key));
                continue;
            }
            let idle = conn.queue.is_empty() && conn.body.is_none() && conn.io.input().is_empty() && conn.io.unsent() == 0;
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

/// The 408's message, naming the limit the request broke: the node engine sends the same words
/// (`tooSlow` in src/limits.ts).
fn too_slow(slow_head: bool, headers_timeout: u64, request_timeout: u64) -> String {
    let (part, limit, ms) = if slow_head { ("head", "headersTimeout", headers_timeout) } else { ("body", "requestTimeout", request_timeout) };
    format!("The request {part} did not arrive within {limit} ({ms} ms); raise the {limit} option for slower clients")
}
