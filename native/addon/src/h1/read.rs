//! Bytes read into requests. Heads are parsed and checked by `cog-framing` (framing first, then
//! Cog's rules), bodies read by their Content-Length or chunk by chunk (`body.rs`). Size limits
//! are the app's, applied in JavaScript per route.
//! A request the framing refuses is answered here and closes the connection: after it, where
//! the next request starts can't be trusted. One that breaks Cog's rules goes to JavaScript
//! with its status, to be answered through the app's error handler.

use super::body::{BodyState, Handover};
use super::conn::{CloseBy, Conn, Persistence, Reading, Stream};
use crate::events::{Body, Event, ReadPiece, FLAG_ENCODED, FLAG_HTTP11, FLAG_REFUSED, FLAG_UPGRADE};
use crate::io::{Transport, HIGH_WATER};
use crate::request::{new_req, Req, Requests};
use crate::spare::Spare;
use cog_framing::response::refusal;
use cog_framing::rules::{self, Rules};
use cog_framing::{parse_head_reusing, Framing, Limits};

/// What a server's requests may be (its `listen` options).
pub(crate) struct Settings {
    pub(crate) head: Limits,
    pub(crate) rules: Rules,
    /// Requests with an Upgrade header pause their connection for the app (it has WebSocket routes).
    pub(crate) web_sockets: bool,
}

/// Where a request parsed on a connection is kept, and the connection's place (for its record).
pub(crate) struct Place<'a> {
    pub(crate) reqs: &'a mut Requests,
    pub(crate) spare: &'a mut Spare,
    /// The connection's key and generation (see `engine::Connection`).
    pub(crate) key: usize,
    pub(crate) gen: u32,
}

/// What `parse` found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// The connection goes on.
    Open,
    /// A body JavaScript is reading can never be whole (its framing broke, or the client ended
    /// its side): the connection must close, aborting its request.
    CutShort,
}

impl Conn {
    /// Parses complete requests (and bodies) out of the input, adding them to `events` for JavaScript.
    pub(crate) fn parse(&mut self, io: &mut Transport, place: Place, settings: &Settings, now: u64, events: &mut Vec<Event>) -> Parsed {
        let Place { reqs, spare, key, gen } = place;
        let mut used = 0;
        // A body JavaScript is reading ended before it was whole: its request is aborted.
        let mut cut_short = false;
        loop {
            if io.unsent() > HIGH_WATER {
                break; // Backpressure: parse more once the client has read what it was sent.
            }
            if let Reading::Body { body, last } = &mut self.reading {
                if body.paused {
                    break; // Until JavaScript resumes it (`pause_body`).
                }
                let start = body.buf.len();
                match body.read(&io.input()[used..]) {
                    Ok((n, done)) => {
                        used += n;
                        if body.delivered() {
                            // The piece that arrived goes to JavaScript now; nothing is kept.
                            let discard = body.handover == Handover::Discard;
                            if !discard && body.buf.len() > start {
                                events.push(Event::BodyPiece { id: body.id, piece: std::mem::take(&mut body.buf) });
                            }
                            body.buf.clear();
                            if !done {
                                break; // The body needs more input.
                            }
                            let id = body.id;
                            let trailers = if discard { None } else { body.trailers() };
                            self.reading = if *last { Reading::Done } else { Reading::Heads };
                            if !discard {
                                if let Some(fields) = trailers {
                                    events.push(Event::BodyTrailers { id, fields });
                                }
                                events.push(Event::BodyEnd { id });
                            }
                            continue;
                        }
                        let flags = body_flags(reqs.get(body.id).unwrap(), body.upgrade);
                        if done {
                            let (id, whole, trailers) = (body.id, std::mem::take(&mut body.buf), body.trailers());
                            self.reading = if *last { Reading::Done } else { Reading::Heads };
                            events.push(request_event(id, Body::Whole(whole), flags));
                            if let Some(fields) = trailers {
                                events.push(Event::BodyTrailers { id, fields });
                            }
                            self.queue.push(id, Stream::Open);
                            continue;
                        }
                        // Not whole in what has arrived: hand the request over now, and the body as it comes.
                        events.push(request_event(body.id, Body::Follows(body.declared()), flags));
                        self.queue.push(body.id, Stream::Open);
                        body.handover = Handover::Pieces;
                        if !body.buf.is_empty() {
                            events.push(Event::BodyPiece { id: body.id, piece: std::mem::take(&mut body.buf) });
                        }
                        break;
                    }
                    Err(refused) => {
                        let body = self.drop_body().unwrap();
                        self.close_by = CloseBy::Stages;
                        self.close_after_answers();
                        if body.delivered() {
                            // Its request is in JavaScript's hands: the connection is cut, aborting it.
                            cut_short = true;
                        } else {
                            reqs.remove(body.id);
                            io.output().extend_from_slice(&refusal(refused.status, refused.message));
                        }
                        break;
                    }
                }
            }
            if !matches!(self.reading, Reading::Heads) || used == io.input().len() {
                break;
            }
            let mut spare_headers = spare.headers();
            let parsed = parse_head_reusing(&io.input()[used..], &settings.head, &mut spare_headers);
            spare.keep_headers(spare_headers);
            match parsed {
                Ok(None) => {
                    self.head_started.get_or_insert(now);
                    break;
                }
                Err(refused) => {
                    self.close_after_answers();
                    // Answered in order: after whatever is still being answered on this connection.
                    let (input, output) = io.buffers();
                    self.queue.write_after(output, &refusal(refused.status, refused.message));
                    used = input.len();
                    break;
                }
                Ok(Some(mut head)) => {
                    self.head_started = None;
                    let start = used;
                    used += head.len;
                    let id = reqs.next_id();
                    let head_bytes = &io.input()[start..start + head.len];
                    let checked = rules::check(&head, head_bytes, &settings.rules);
                    let mut req = new_req(key, gen, head_bytes, &mut head, spare.head());
                    if !head.keep_alive {
                        self.stop_requests();
                    }
                    if let Ok(Some(path)) = &checked {
                        req.set_path(path.clone());
                    }
                    let http11 = if req.minor() >= 1 { FLAG_HTTP11 } else { 0 };
                    if let Err(problem) = checked {
                        // Cog answers it (through the app's error handler) and closes: the body is never read.
                        self.stop_requests();
                        events.push(Event::Request {
                            id,
                            body: Body::None,
                            flags: http11 | FLAG_REFUSED | (u32::from(problem.status) << 16),
                            problem: Some(problem.message),
                        });
                        self.queue.push(id, Stream::Open);
                        reqs.insert(id, req);
                        continue;
                    }
                    let upgrade = settings.web_sockets && head.upgrade;
                    match head.framing {
                        Framing::None if upgrade => {
                            // The app answers it (a WebSocket route accepts it): read nothing more meanwhile.
                            self.reading = Reading::Upgrade;
                            events.push(request_event(id, Body::None, http11 | FLAG_UPGRADE));
                            self.queue.push(id, Stream::Open);
                        }
                        Framing::None => {
                            events.push(request_event(id, Body::None, http11));
                            self.queue.push(id, Stream::Open);
                        }
                        framing => {
                            if head.expect_continue {
                                io.output().extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                            }
                            if upgrade {
                                // Nothing after its body is read as a request (node:http hands the
                                // rest of the socket to the upgrade too).
                                self.persistence = Persistence::CloseWhenDone;
                            }
                            let last = !matches!(self.reading, Reading::Heads) || upgrade;
                            self.reading = Reading::Body { body: Box::new(BodyState::new(id, framing, now, upgrade)), last };
                        }
                    }
                    reqs.insert(id, req);
                }
            }
        }
        io.consume(used);
        if io.ended() {
            // What is left can never complete: a partial head, or a body cut short.
            self.stop_requests();
            io.clear_input();
            self.head_started = None;
            if let Some(body) = self.drop_body() {
                match body.handover {
                    Handover::Collecting => drop(reqs.remove(body.id)),
                    Handover::Pieces => cut_short = true,
                    Handover::Discard => {}
                }
            }
        }
        if cut_short {
            Parsed::CutShort
        } else {
            Parsed::Open
        }
    }

    /// How much of a body may be read next straight from the socket into a buffer of its own,
    /// to be handed to JavaScript as it is (`took_piece`): the bytes its Content-Length still
    /// expects, when JavaScript reads it as it arrives, its stream has room, nothing waits in
    /// the input (what arrives next is all body) and the client reads what it was sent. None
    /// otherwise: such bytes are read into the input and parsed (`parse`).
    pub(crate) fn piece_room(&self, io: &Transport) -> Option<u64> {
        let Reading::Body { body, .. } = &self.reading else { return None };
        if body.handover != Handover::Pieces || body.paused || !io.input().is_empty() || io.unsent() > HIGH_WATER {
            return None;
        }
        body.left().filter(|&left| left > 0)
    }

    /// `piece` holds the body's next `n` bytes (at most `piece_room`'s), read from the socket:
    /// it goes to JavaScript, and the body's end after it once it is whole.
    pub(crate) fn took_piece(&mut self, n: usize, piece: ReadPiece, events: &mut Vec<Event>) {
        let Reading::Body { body, last } = &mut self.reading else { unreachable!("took_piece without a body") };
        let id = body.id;
        events.push(Event::BodyRead { id, piece });
        if body.took(n) {
            self.reading = if *last { Reading::Done } else { Reading::Heads };
            events.push(Event::BodyEnd { id });
        }
    }
}

/// The flags of a request with a body: HTTP/1.1, whether it asks to change protocols, and whether
/// it names a Content-Encoding (so that JavaScript asks for the header only then: most bodies
/// have none, and each ask is a call).
fn body_flags(req: &Req, upgrade: bool) -> u32 {
    let encoded = req.has_header(b"content-encoding");
    (if req.minor() >= 1 { FLAG_HTTP11 } else { 0 }) | if encoded { FLAG_ENCODED } else { 0 } | if upgrade { FLAG_UPGRADE } else { 0 }
}

fn request_event(id: u64, body: Body, flags: u32) -> Event {
    Event::Request { id, body, flags, problem: None }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{requests, Harness};
    use super::*;
    use crate::io::Input;

    #[test]
    fn a_request_goes_to_javascript_and_waits_in_the_queue() {
        let mut h = Harness::new();
        let (events, parsed) = h.send(b"GET /a?b HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(parsed, Parsed::Open);
        assert_eq!(events, [Event::Request { id: 1, body: Body::None, flags: FLAG_HTTP11, problem: None }]);
        assert_eq!(h.conn.queue.front(), Some(1));
        let req = h.reqs.get(1).unwrap();
        assert_eq!((req.minor(), req.keep_alive(), req.is_head()), (1, true, false));
        assert!(h.io.input().is_empty(), "the head was consumed");
    }

    #[test]
    fn pipelined_requests_come_out_together_and_a_partial_one_waits() {
        let mut h = Harness::new();
        let (events, _) = h.send(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.0\r\n\r\nGET /3 HT");
        assert_eq!(requests(&events), [1, 2]);
        assert_eq!(h.conn.input(), Input::Drop, "an HTTP/1.0 request without keep-alive is the last");
        assert_eq!(h.conn.head_started, None);
        let mut h = Harness::new();
        let (events, _) = h.send(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HT");
        assert_eq!(requests(&events), [1]);
        assert_eq!(h.conn.head_started, Some(h.now), "the headers timeout runs for the partial head");
        assert_eq!(h.io.input(), b"GET /3 HT");
        let (events, _) = h.send(b"TP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(requests(&events), [2]);
    }

    #[test]
    fn a_body_whole_on_arrival_goes_with_its_request() {
        let mut h = Harness::new();
        let (events, _) = h.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(events[0], Event::Request { id: 1, body: Body::Whole(b"hello".to_vec()), flags: FLAG_HTTP11, problem: None });
        assert_eq!(requests(&events), [1, 2]);
    }

    #[test]
    fn a_longer_body_follows_its_request_in_pieces() {
        let mut h = Harness::new();
        let (events, _) = h.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nContent-Encoding: gzip\r\n\r\nhel");
        assert_eq!(
            events,
            [
                Event::Request { id: 1, body: Body::Follows(Some(10)), flags: FLAG_HTTP11 | FLAG_ENCODED, problem: None },
                Event::BodyPiece { id: 1, piece: b"hel".to_vec() }
            ]
        );
        let (events, _) = h.send(b"lo worlGET");
        assert_eq!(events, [Event::BodyPiece { id: 1, piece: b"lo worl".to_vec() }, Event::BodyEnd { id: 1 }]);
        assert_eq!(h.io.input(), b"GET", "the next request's bytes stay");
    }

    #[test]
    fn a_long_body_by_its_length_is_handed_over_as_it_was_read() {
        let mut h = Harness::new();
        let (events, _) = h.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n0123456789");
        assert_eq!(events[1], Event::BodyPiece { id: 1, piece: b"0123456789".to_vec() });
        let first: Vec<u8> = (0..60_000u32).map(|i| (i % 251) as u8).collect();
        let (events, _) = h.send(&first);
        assert_eq!(events, [Event::BodyPiece { id: 1, piece: first }]);
        assert!(h.io.input().is_empty());
        let (events, _) = h.send(&[7u8; 39_990]);
        assert_eq!(events, [Event::BodyPiece { id: 1, piece: vec![7u8; 39_990] }, Event::BodyEnd { id: 1 }]);
        let (events, _) = h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(requests(&events), [2], "the next request is read as ever");
    }

    #[test]
    fn a_paused_body_is_not_read_until_resumed() {
        let mut h = Harness::new();
        h.send(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
        assert!(h.conn.pause_body(1, true));
        assert!(!h.conn.pause_body(1, true), "already paused");
        assert_eq!(h.conn.input(), Input::Wait);
        let (events, _) = h.send(b"0\r\n\r\n");
        assert!(events.is_empty());
        h.conn.pause_body(1, false);
        let (events, _) = h.parse();
        assert_eq!(events, [Event::BodyEnd { id: 1 }]);
    }

    #[test]
    fn a_body_answered_before_it_arrived_is_read_and_dropped() {
        let mut h = Harness::new();
        h.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nab");
        h.respond(1, 413, b"too large");
        let (events, _) = h.send(b"cdefGET /next HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(requests(&events), [2], "no piece, no end: only the next request");
        assert_eq!(events.len(), 1);
    }

    #[test]
    fn bad_framing_is_answered_here_and_closes() {
        let mut h = Harness::new();
        let (events, _) = h.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(events.is_empty());
        assert!(h.received().starts_with("HTTP/1.1 400 Bad Request\r\n"));
        assert_eq!(h.conn.input(), Input::Drop);
        assert!(h.conn.finished());
    }

    #[test]
    fn a_refusal_waits_for_the_answers_before_it() {
        let mut h = Harness::new();
        let (events, _) = h.send(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n");
        assert_eq!(requests(&events), [1]);
        assert_eq!(h.received(), "", "the 400 waits for 1's answer");
        h.respond(1, 200, b"one");
        let out = h.received();
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n") && out.contains("\r\n\r\noneHTTP/1.1 400 Bad Request\r\n"), "{out}");
    }

    #[test]
    fn a_request_that_breaks_cogs_rules_goes_to_the_app_with_its_status() {
        let mut h = Harness::new();
        let long = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(300));
        let (events, _) = h.send(long.as_bytes());
        let [Event::Request { id: 1, flags, problem: Some(_), .. }] = events.as_slice() else { panic!("{events:?}") };
        assert_eq!((flags & FLAG_REFUSED, flags >> 16), (FLAG_REFUSED, 414));
        assert_eq!(h.conn.input(), Input::Drop, "nothing after it is read");
    }

    #[test]
    fn an_upgrade_waits_for_the_app_and_nothing_more_is_read() {
        let mut h = Harness::new();
        let (events, _) = h.send(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x80");
        assert_eq!(events, [Event::Request { id: 1, body: Body::None, flags: FLAG_HTTP11 | FLAG_UPGRADE, problem: None }]);
        assert!(h.conn.upgrading());
        assert_eq!(h.conn.input(), Input::Wait);
        assert_eq!(h.io.input(), b"\x81\x80", "what follows the handshake is kept for the WebSocket");
        h.conn.upgraded(1);
        assert!(h.conn.queue.is_empty() && !h.conn.upgrading());
    }

    #[test]
    fn an_upgrade_with_a_body_is_the_last_request_and_closes() {
        let mut h = Harness::new();
        let (events, _) = h
            .send(b"POST /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: 2\r\n\r\nokGET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(requests(&events), [1]);
        assert!(!h.conn.upgrading());
        h.respond(1, 400, b"");
        assert!(h.conn.finished());
    }

    #[test]
    fn the_end_of_input_cuts_a_body_javascript_is_reading() {
        let mut h = Harness::new();
        h.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
        h.client_ends();
        let (events, parsed) = h.read();
        assert!(events.is_empty());
        assert_eq!(parsed, Parsed::CutShort);
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /partial HT");
        h.client_ends();
        let (_, parsed) = h.read();
        assert_eq!(parsed, Parsed::Open, "a partial head is dropped; the request before it is answered");
        assert!(h.io.input().is_empty() && h.conn.head_started.is_none());
        assert!(h.conn.left_unanswered(&h.io));
    }

    #[test]
    fn expect_continue_is_answered_before_the_body() {
        let mut h = Harness::new();
        h.send(b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
        assert_eq!(h.received(), "HTTP/1.1 100 Continue\r\n\r\n");
    }

    #[test]
    fn parsing_stops_past_the_high_water_mark() {
        let mut h = Harness::new();
        h.io.output().resize(crate::io::HIGH_WATER + 1, b'x');
        let (events, _) = h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(events.is_empty(), "parsed once the client has read what it was sent");
        h.io.write();
        crate::io::socket::read_all(h.client);
        h.io.settle_output(&mut h.spare, crate::io::HIGH_WATER);
        assert_eq!(requests(&h.parse().0), [1]);
    }
}
