//! Bytes read into requests. Heads are parsed and checked by `cog-framing` (framing first, then
//! Cog's rules), bodies read by their Content-Length or chunk by chunk. A body that is whole in
//! the input read with its head goes to JavaScript with the request; a longer one is handed over
//! as it arrives (the request first, then its pieces), with backpressure: JavaScript pauses it
//! while its stream is full, and the connection is not read meanwhile. Size limits are the app's,
//! applied in JavaScript per route.
//! A request the framing refuses is answered here and closes the connection: after it, where
//! the next request starts can't be trusted. One that breaks Cog's rules goes to JavaScript
//! with its status, to be answered through the app's error handler.

use crate::events::{Body, Event, FLAG_ENCODED, FLAG_HTTP11, FLAG_REFUSED, FLAG_UPGRADE};
use crate::request::{new_req, Req};
use crate::state::{now, State};
use crate::write::{Stream, HIGH_WATER};
use cog_framing::response::refusal;
use cog_framing::rules;
use cog_framing::{parse_head_reusing, ChunkedDecoder, Framing};

/// The body being read on a connection, for the request it belongs to.
pub(crate) struct BodyState {
    pub(crate) id: u64,
    pub(crate) framing: Framing,
    pub(crate) remaining: u64,
    pub(crate) decoder: ChunkedDecoder,
    pub(crate) buf: Vec<u8>,
    /// The request went to JavaScript before its body was whole: the body follows in pieces.
    pub(crate) delivered: bool,
    /// JavaScript's stream is full: read and parse nothing more on the connection until it resumes.
    pub(crate) paused: bool,
    /// The request was answered before its body was read: the rest is read and dropped (as
    /// node:http dumps it), so that the next request on the connection can be parsed.
    pub(crate) discard: bool,
    /// The route's own `requestTimeout` (ms, 0: none), set by JavaScript once it has routed the
    /// request (`set_body_timeout`); the server's otherwise.
    pub(crate) timeout: Option<u64>,
    /// Its requestTimeout passed and JavaScript was told (`EVENT_BODY_TIMEOUT`) to answer the 408.
    pub(crate) timed_out: bool,
    /// The request asks to change protocols: its connection closes after the answer (a
    /// handshake with a body is refused, never accepted: `ws_accept`).
    pub(crate) upgrade: bool,
}

impl State {
    /// Parses complete requests out of the input, adding them to `calls` for JavaScript.
    pub(crate) fn parse(&mut self, key: usize, calls: &mut Vec<Event>) {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return };
        if conn.ws.is_some() {
            conn.in_batch = true;
            return self.parse_frames(key, calls);
        }
        let server = self.servers[conn.server].as_ref().unwrap();
        let now = now(server);
        let limits = server.settings.head;
        let rules = server.settings.rules;
        let web_sockets = server.settings.web_sockets;
        conn.in_batch = true;
        let mut used = 0;
        // A body JavaScript is reading ended before it was whole: its request is aborted.
        let mut cut_short = false;
        loop {
            if conn.io.unsent() > HIGH_WATER {
                break; // Backpressure: parse more once the client has read what it was sent.
            }
            if let Some(body) = conn.body.as_mut() {
                if body.paused {
                    break; // Until JavaScript resumes it (`pause_body`).
                }
                let input = &conn.io.input()[used..];
                let start = body.buf.len();
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
                        if body.delivered {
                            // The piece that arrived goes to JavaScript now; nothing is kept.
                            if !body.discard && body.buf.len() > start {
                                calls.push(Event::BodyPiece { id: body.id, piece: std::mem::take(&mut body.buf) });
                            }
                            body.buf.clear();
                            if done {
                                let id = body.id;
                                let discard = body.discard;
                                conn.body = None;
                                if !discard {
                                    calls.push(Event::BodyEnd { id });
                                }
                                continue;
                            }
                            break; // The body needs more input.
                        }
                        if done {
                            let body = conn.body.take().unwrap();
                            let flags = body_flags(self.reqs.get(&body.id).unwrap(), body.upgrade);
                            calls.push(request_call(body.id, Body::Whole(body.buf), flags));
                            conn.queue.push(body.id, Stream::Open);
                            continue;
                        }
                        // Not whole in what has arrived: hand the request over now, and the body as it comes.
                        let flags = body_flags(self.reqs.get(&body.id).unwrap(), body.upgrade);
                        let declared = if let Framing::Length(total) = body.framing { Some(total) } else { None };
                        calls.push(request_call(body.id, Body::Follows(declared), flags));
                        conn.queue.push(body.id, Stream::Open);
                        body.delivered = true;
                        if !body.buf.is_empty() {
                            calls.push(Event::BodyPiece { id: body.id, piece: std::mem::take(&mut body.buf) });
                        }
                        break;
                    }
                    Err(refused) => {
                        let id = body.id;
                        let delivered = body.delivered;
                        conn.body = None;
                        if !delivered {
                            self.reqs.remove(&id);
                        }
                        conn.no_more_requests = true;
                        conn.close_when_done = true;
                        if delivered {
                            // Its request is in JavaScript's hands: the connection is cut, aborting it.
                            cut_short = true;
                        } else {
                            conn.io.output().extend_from_slice(&refusal(refused.status, refused.message));
                        }
                        break;
                    }
                }
            }
            if conn.no_more_requests || used == conn.io.input().len() {
                break;
            }
            let mut spare_headers = self.spare.headers();
            let parsed = parse_head_reusing(&conn.io.input()[used..], &limits, &mut spare_headers);
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
                    let (input, out) = conn.io.buffers();
                    conn.queue.write_after(out, &refusal(refused.status, refused.message));
                    used = input.len();
                    break;
                }
                Ok(Some(mut head)) => {
                    conn.head_started = None;
                    let start = used;
                    used += head.len;
                    self.next_id += 1;
                    let id = self.next_id;
                    let head_bytes = &conn.io.input()[start..start + head.len];
                    let checked = rules::check(&head, head_bytes, &rules);
                    let mut req = new_req(key, conn.gen, head_bytes, &mut head, self.spare.head());
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
                        calls.push(Event::Request { id, body: Body::None, flags: http11 | FLAG_REFUSED | (u32::from(problem.status) << 16), problem: Some(problem.message) });
                        conn.queue.push(id, Stream::Open);
                        self.reqs.insert(id, req);
                        continue;
                    }
                    match head.framing {
                        Framing::None if web_sockets && head.upgrade => {
                            // The app answers it (a WebSocket route accepts it): read nothing more meanwhile.
                            conn.no_more_requests = true;
                            conn.upgrading = true;
                            calls.push(request_call(id, Body::None, http11 | FLAG_UPGRADE));
                            conn.queue.push(id, Stream::Open);
                        }
                        Framing::None => {
                            calls.push(request_call(id, Body::None, http11));
                            conn.queue.push(id, Stream::Open);
                        }
                        framing => {
                            if head.expect_continue {
                                conn.io.output().extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                            }
                            let remaining = if let Framing::Length(n) = framing { n } else { 0 };
                            let upgrade = web_sockets && head.upgrade;
                            if upgrade {
                                // Nothing after its body is read as a request (node:http hands the
                                // rest of the socket to the upgrade too).
                                conn.no_more_requests = true;
                                conn.close_when_done = true;
                            }
                            conn.body = Some(BodyState { id, framing, remaining, decoder: ChunkedDecoder::new(), buf: Vec::new(), delivered: false, paused: false, discard: false, timeout: None, timed_out: false, upgrade });
                            conn.body_started = now;
                        }
                    }
                    self.reqs.insert(id, req);
                }
            }
        }
        conn.io.consume(used);
        if conn.peer_ended {
            // What is left can never complete: a partial head, or a body cut short.
            conn.no_more_requests = true;
            conn.io.clear_input();
            conn.head_started = None;
            if let Some(body) = conn.body.take() {
                if body.delivered {
                    cut_short = !body.discard;
                } else {
                    self.reqs.remove(&body.id);
                }
            }
        }
        if cut_short {
            // JavaScript is reading a body that can't be whole: close, aborting what it holds.
            calls.extend(self.close_conn(key));
        }
    }

    /// Gives the body of request `id`, still arriving, its route's `requestTimeout` (ms from its
    /// start, 0: none) in place of the server's.
    pub fn set_body_timeout(&mut self, id: u64, ms: u64) {
        let Some(req) = self.reqs.get(&id) else { return };
        let (key, gen) = (req.conn, req.gen);
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen) else { return };
        if let Some(body) = conn.body.as_mut().filter(|b| b.id == id) {
            body.timeout = Some(if ms == 0 { u64::MAX } else { ms });
        }
    }

    /// Pauses (JavaScript's stream is full) or resumes the body of request `id` as it arrives.
    pub fn pause_body(&mut self, id: u64, paused: bool) {
        let Some(req) = self.reqs.get(&id) else { return };
        let (key, gen) = (req.conn, req.gen);
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen) else { return };
        let Some(body) = conn.body.as_mut().filter(|b| b.id == id) else { return };
        if body.paused == paused {
            return;
        }
        body.paused = paused;
        let server = conn.server;
        // Reading stops or starts with it (`flush` sets what the connection polls for).
        let (_, drained) = self.flush(key);
        if !drained.is_empty() {
            self.defer(server, drained);
        }
        if !paused && self.is_conn(key, gen) {
            // Parse what waits in the input, from the loop (this runs inside JavaScript).
            self.mark_ready(server, key, gen);
        }
    }
}

/// The flags of a request with a body: HTTP/1.1, whether it asks to change protocols, and whether
/// it names a Content-Encoding (so that JavaScript asks for the header only then: most bodies
/// have none, and each ask is a call).
fn body_flags(req: &Req, upgrade: bool) -> u32 {
    let encoded = req.headers.iter().any(|(name, _)| req.head[name.clone()].eq_ignore_ascii_case(b"content-encoding"));
    (if req.minor >= 1 { FLAG_HTTP11 } else { 0 }) | if encoded { FLAG_ENCODED } else { 0 } | if upgrade { FLAG_UPGRADE } else { 0 }
}

fn request_call(id: u64, body: Body, flags: u32) -> Event {
    Event::Request { id, body, flags, problem: None }
}
