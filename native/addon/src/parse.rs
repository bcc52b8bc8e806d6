//! Bytes read into requests. Heads are parsed and checked by `cog-framing` (framing first, then
//! Cog's rules), bodies read by their Content-Length or chunk by chunk up to the body limit.
//! A request the framing refuses is answered here and closes the connection: after it, where
//! the next request starts can't be trusted. One that breaks Cog's rules goes to JavaScript
//! with its status, to be answered through the app's error handler.

use crate::js::{Call, FLAG_HTTP11, FLAG_REFUSED, FLAG_TOO_LARGE, FLAG_UPGRADE};
use crate::websocket::asks_upgrade;
use crate::request::new_req;
use crate::state::{now, State};
use crate::write::HIGH_WATER;
use cog_framing::response::refusal;
use cog_framing::rules;
use cog_framing::{parse_head_reusing, ChunkedDecoder, Framing};

/// The body being read on a connection, for the request it belongs to (not handed to
/// JavaScript until the body is whole).
pub(crate) struct BodyState {
    pub(crate) id: u64,
    pub(crate) framing: Framing,
    pub(crate) remaining: u64,
    pub(crate) decoder: ChunkedDecoder,
    pub(crate) buf: Vec<u8>,
}

impl State {
    /// Parses complete requests out of the input, adding them to `calls` for JavaScript.
    pub(crate) fn parse(&mut self, key: usize, calls: &mut Vec<Call>) {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return };
        if conn.ws.is_some() {
            conn.in_batch = true;
            return self.parse_frames(key, calls);
        }
        let server = self.servers[conn.server].as_ref().unwrap();
        let now = now(server);
        let limits = server.settings.head;
        let rules = server.settings.rules;
        let body_limit = server.settings.body_limit;
        let web_sockets = server.settings.web_sockets;
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
                        Framing::None if web_sockets && asks_upgrade(&req) => {
                            // The app answers it (a WebSocket route accepts it): read nothing more meanwhile.
                            conn.no_more_requests = true;
                            conn.upgrading = true;
                            calls.push(request_call(id, None, http11 | FLAG_UPGRADE));
                            conn.queue.push_back(id);
                        }
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
}

fn request_call(id: u64, body: Option<Vec<u8>>, flags: u32) -> Call {
    Call::Request { id, body, flags, problem: None }
}
