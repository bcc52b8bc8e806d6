//! The state of one HTTP/1.1 connection, as two enums where six booleans were: what it reads
//! next (`Reading`) and whether it outlives the responses in flight (`Persistence`), with the
//! queue of those responses. Whether the client ended its side is the socket's to say
//! (`Transport::ended`). `read.rs` turns input into requests and `write.rs` answers into output;
//! this file holds the transitions they share and the questions the engine asks (what to poll
//! for, whether to close, what the timeout sweep finds).

use super::body::BodyState;
use crate::events::Event;
use crate::io::in_place::InPlaceSend;
use crate::io::{Input, Transport};
use crate::queue::Queue;
use crate::request::Requests;

/// What the connection reads next.
pub(super) enum Reading {
    /// Request heads: the connection serves requests as they come.
    Heads,
    /// A request's body; after it, heads again, unless it is the `last` request. Boxed: its
    /// state (176 bytes) would otherwise make every connection that large while it reads heads
    /// or waits for an answer, which is most of a connection's life.
    Body { body: Box<BodyState>, last: bool },
    /// An upgrade request waits for the app's answer: nothing is read meanwhile.
    Upgrade,
    /// No more requests: the last one asked to close, was refused, or its answer closes the
    /// connection. What still arrives is dropped.
    Done,
}

/// What becomes of the connection once every response in flight is written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Persistence {
    /// It stays open for the next request (keep-alive).
    KeepAlive,
    /// It closes: a response or the server said so, or the client ended its side.
    CloseWhenDone,
    /// Its last answer is out and its write side shut, while the client may still be sending (the
    /// body of a request answered before it was read): what arrives is read and dropped until the
    /// client ends its side, or for `LINGER_MS` from `since`, then it closes (RFC 9112 9.6).
    /// Closed at once instead, the socket would be reset over the unread bytes, and the client,
    /// still writing, would meet EPIPE or ECONNRESET before it read the answer.
    /// `since` is the low 32 bits of the loop's clock (ms), compared by `wrapping_sub`: a linger
    /// lasts seconds, the clock wraps every 49 days, and a u64 here made every connection's slot
    /// 16 bytes larger (issue #49's held connections).
    Lingering { since: u32 },
}

/// How long a connection lingers after its last answer for a client still sending (ms; nginx's
/// lingering_timeout; the node engine's `LINGER_MS` in src/engines/node/linger.ts).
pub(crate) const LINGER_MS: u64 = 5_000;

/// How a streamed response's body is framed (HTTP/1.1's part of a queued response).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    /// By the request's version: chunked on HTTP/1.1, until the connection closes on HTTP/1.0.
    Open,
    /// By the Content-Length the app declared: the bytes still due.
    Length(u64),
    /// The status has no body (1xx, 204, 304): what the app writes is dropped.
    NoBody,
}

/// What the timeout sweep found on a connection (`Conn::sweep`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Swept {
    /// A request is in flight: the connection is active.
    Busy,
    /// Nothing in flight, nor arriving: the keep-alive timeout applies.
    Idle,
    /// Nothing to do now.
    Wait,
    /// The connection must close now (what could be said before is said).
    Close,
    /// JavaScript must answer: a body did not arrive within its requestTimeout.
    Tell(Event),
}

/// The timeouts the sweep applies (ms).
pub(crate) struct Timeouts {
    pub(crate) headers: u64,
    pub(crate) request: u64,
}

pub(crate) struct Conn {
    pub(super) reading: Reading,
    pub(super) persistence: Persistence,
    /// The responses to the requests handed to JavaScript, in arrival order.
    pub(super) queue: Queue<Stream>,
    /// When the head being read began to arrive (the headers timeout counts from it).
    pub(super) head_started: Option<u64>,
    /// How the connection closes once its last answer is out (see `linger`).
    pub(super) close_by: CloseBy,
}

/// How a connection closes once its last answer is out.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum CloseBy {
    /// In stages if the client is still sending (bytes wait unread), else at once.
    Default,
    /// In stages: a request's body was still arriving when the connection stopped reading
    /// requests (its answer closes the connection, or it was refused).
    Stages,
    /// At once: a request's body broke its requestTimeout, and a client that slow is not waited
    /// for (nginx closes such a connection at once too).
    AtOnce,
}

impl Conn {
    /// A connection's state at its accept; `head_started` bounds a TLS handshake with the headers timeout.
    pub(crate) fn new(head_started: Option<u64>) -> Conn {
        Conn { reading: Reading::Heads, persistence: Persistence::KeepAlive, queue: Queue::default(), head_started, close_by: CloseBy::Default }
    }

    /// No more requests are read: the last is in (a body still arriving is still read).
    pub(super) fn stop_requests(&mut self) {
        match &mut self.reading {
            Reading::Heads => self.reading = Reading::Done,
            Reading::Body { last, .. } => *last = true,
            Reading::Upgrade | Reading::Done => {}
        }
    }

    /// No more requests, and the connection closes once what is queued on it is written.
    pub(super) fn close_after_answers(&mut self) {
        self.stop_requests();
        self.persistence = Persistence::CloseWhenDone;
    }

    /// Drops the body being read (its request is gone, or can never be whole); returns it.
    pub(super) fn drop_body(&mut self) -> Option<BodyState> {
        self.reading.take_body()
    }

    fn has_body(&self) -> bool {
        matches!(self.reading, Reading::Body { .. })
    }

    /// What to do with the socket's input now.
    pub(crate) fn input(&self) -> Input {
        match &self.reading {
            Reading::Upgrade => Input::Wait,
            Reading::Body { body, .. } if body.paused => Input::Wait,
            Reading::Done => Input::Drop,
            _ => Input::Read,
        }
    }

    /// Whether the next bytes are read as request heads (not a body, an upgrade, or nothing).
    pub(crate) fn reads_heads(&self) -> bool {
        matches!(self.reading, Reading::Heads)
    }

    /// Whether requests are still read from the input (what is in it may hold another).
    pub(crate) fn reads_requests(&self) -> bool {
        matches!(self.reading, Reading::Heads | Reading::Body { last: false, .. })
    }

    /// The client ended its side: the connection closes once answered. Returns whether it must
    /// close now: a response is being streamed, and a stream (an event stream above all) has no
    /// end of its own to wait for (node:http takes a client that ends its side to be gone).
    pub(crate) fn input_ended(&mut self) -> bool {
        self.persistence = Persistence::CloseWhenDone;
        self.queue.any_streaming()
    }

    /// Whether the client ended its side while requests it sent wait for their answers (not an
    /// upgrade: that waits for the app's accept).
    pub(crate) fn left_unanswered(&self, io: &Transport) -> bool {
        io.ended() && !matches!(self.reading, Reading::Upgrade) && self.queue.any_unfinished()
    }

    /// Whether the socket should be polled for input (else only for output, if any waits).
    pub(crate) fn wants_input(&self, io: &Transport) -> bool {
        let paused = matches!(&self.reading, Reading::Body { body, .. } if body.paused);
        let finished = matches!(self.reading, Reading::Done) && self.persistence == Persistence::CloseWhenDone;
        !(paused || io.ended() || matches!(self.reading, Reading::Upgrade) || finished)
    }

    /// Whether the connection is done: nothing in flight, nothing arriving, and it closes.
    pub(crate) fn finished(&self) -> bool {
        self.persistence == Persistence::CloseWhenDone && self.queue.is_empty() && !self.has_body()
    }

    /// The connection is `finished` and its output written: returns whether it lingers rather
    /// than closes now, because the client may still be sending (a body cut short by the last
    /// answer, or bytes unread in the socket); its write side is then shut, so that the client
    /// reads the answer and its end, and what it still sends is read and dropped (`CloseBy`).
    pub(crate) fn linger(&mut self, io: &mut Transport, now: u64) -> bool {
        let stages = match self.close_by {
            CloseBy::Stages => true,
            CloseBy::Default => io.unread(),
            CloseBy::AtOnce => false,
        };
        if io.ended() || !stages {
            return false;
        }
        io.shut_write();
        self.persistence = Persistence::Lingering { since: now as u32 };
        true
    }

    /// Whether the connection closes once answered (a WebSocket it becomes closes too).
    pub(crate) fn closing(&self) -> bool {
        self.persistence != Persistence::KeepAlive
    }

    /// The server stops: the connection closes once the requests in flight are answered (those
    /// still arriving are read, for the app to answer 503). Returns whether it is idle: nothing in
    /// flight, nobody to tell, it can close now.
    pub(crate) fn close_when_idle(&mut self, io: &Transport) -> bool {
        // Lingering: its answer is out; it closes when the client is done sending, or at its deadline.
        if let Persistence::Lingering { .. } = self.persistence {
            return false;
        }
        self.persistence = Persistence::CloseWhenDone;
        // What the client sent before the drain began is read and answered (the app's 503) first:
        // closing over unread bytes resets the connection, and the client can't tell whether its
        // request ran.
        self.queue.is_empty() && !self.has_body() && io.input().is_empty() && !io.unread()
    }

    /// Whether nothing is in flight or read, but the socket holds bytes: a request sent before
    /// the server stopped, to be read and answered before the connection closes.
    pub(crate) fn waits_unread(&self, io: &Transport) -> bool {
        self.queue.is_empty() && !self.has_body() && io.input().is_empty() && io.unread()
    }

    /// Whether the answer to request `id` is the connection's last: it closes after it (it is
    /// closing, and no request behind it waits for its answer), so its head says
    /// `Connection: close` and the client sends nothing more on it.
    pub(super) fn last_answer(&self, id: u64) -> bool {
        self.persistence == Persistence::CloseWhenDone && self.queue.is_last(id)
    }

    /// Whether an upgrade request waits for the app's answer (and no body: a handshake has none).
    pub(crate) fn upgrading(&self) -> bool {
        matches!(self.reading, Reading::Upgrade)
    }

    /// The app accepted the upgrade of request `id`: its response is no HTTP one, and the
    /// connection reads no more requests.
    pub(crate) fn upgraded(&mut self, id: u64) {
        self.queue.remove(id);
        self.reading = Reading::Done;
    }

    /// The upgrade of request `id` failed (its refusal is written by the caller): the connection
    /// closes once that is out.
    pub(crate) fn upgrade_refused(&mut self, id: u64) {
        self.upgraded(id);
        self.persistence = Persistence::CloseWhenDone;
    }

    /// Sends the body in place of the oldest response, if it is due (all before it written).
    pub(crate) fn send_in_place(&mut self, io: &mut Transport) -> InPlaceSend {
        let Some(body) = self.queue.in_place_due() else { return InPlaceSend::Idle };
        let sent = io.send_in_place(body);
        if let InPlaceSend::Done = sent {
            self.queue.in_place_sent();
        }
        sent
    }

    /// Whether a body in place goes out as soon as the output is written (see `Queue::in_place_follows`).
    pub(crate) fn in_place_follows(&self) -> bool {
        self.queue.in_place_follows()
    }

    /// What is left of the body in place due next (0 if none): output still to send.
    pub(crate) fn in_place_left(&self) -> u64 {
        self.queue.in_place_left()
    }

    /// Drain events for the streams that wait for one (the output is below the high-water mark).
    pub(crate) fn drained(&mut self, events: &mut Vec<Event>) {
        self.queue.drained(|id| events.push(Event::Drain { id }));
    }

    /// Gives the body of request `id`, still arriving, its route's `requestTimeout` (ms from its
    /// start, 0: none) in place of the server's.
    pub(crate) fn set_body_timeout(&mut self, id: u64, ms: u64) {
        if let Some(body) = self.reading.body_of(id) {
            body.timeout = Some(if ms == 0 { u64::MAX } else { ms });
        }
    }

    /// Pauses (JavaScript's stream is full) or resumes the body of request `id` as it arrives;
    /// returns whether that changed anything.
    pub(crate) fn pause_body(&mut self, id: u64, paused: bool) -> bool {
        match self.reading.body_of(id) {
            Some(body) if body.paused != paused => {
                body.paused = paused;
                true
            }
            _ => false,
        }
    }

    /// The timeout sweep's part for the connection at `now`: slow heads and bodies, and whether it
    /// is idle. A slow body JavaScript is receiving, its response not begun, is the app's to answer
    /// (through its error handler, as every error), and the connection closes after it; one sweep
    /// later, unanswered, or when the response has not begun, it gets the engine's 408 as node:http
    /// answers (unless a response has begun: its bytes would be cut), and closes.
    pub(crate) fn sweep(&mut self, io: &mut Transport, now: u64, timeouts: &Timeouts) -> Swept {
        if let Persistence::Lingering { since } = self.persistence {
            return if u64::from((now as u32).wrapping_sub(since)) >= LINGER_MS { Swept::Close } else { Swept::Wait };
        }
        let slow_head = self.head_started.is_some_and(|t| now.saturating_sub(t) >= timeouts.headers);
        let (mut slow_body, mut body_timeout) = (false, timeouts.request);
        if let Reading::Body { body, .. } = &mut self.reading {
            // A route's own requestTimeout, once JavaScript has routed the request, else the server's.
            body_timeout = body.timeout.unwrap_or(timeouts.request);
            slow_body = now.saturating_sub(body.started) >= body_timeout;
            if slow_body && !slow_head {
                if body.delivered() && !body.timed_out && self.queue.front_untouched(body.id) {
                    body.timed_out = true;
                    return Swept::Tell(Event::BodyTimeout { id: body.id });
                }
                if body.timed_out && self.queue.front() != Some(body.id) {
                    // Answered: the connection closes once the answer is out (the body may never end).
                    return if io.unsent() == 0 { Swept::Close } else { Swept::Wait };
                }
            }
        }
        if slow_head || slow_body {
            // A request whose body is still arriving was handed to JavaScript with its head: it is
            // in the queue, its response not begun.
            if !self.queue.front_begun() {
                io.send_last(&cog_framing::response::refusal(408, &too_slow(slow_head, timeouts.headers, body_timeout)));
            }
            return Swept::Close;
        }
        if !(self.queue.is_empty() && !self.has_body() && io.input().is_empty() && io.unsent() == 0) {
            Swept::Busy
        } else if self.head_started.is_none() {
            Swept::Idle
        } else {
            Swept::Wait
        }
    }

    /// The connection closes: requests JavaScript still holds unanswered are aborted (`events`),
    /// and every request on it is forgotten.
    pub(crate) fn close(&mut self, reqs: &mut Requests, events: &mut Vec<Event>) {
        if let Some(body) = self.drop_body().filter(|b| !b.delivered()) {
            reqs.remove(body.id);
        }
        self.queue.drop_all(|id, finished| {
            if reqs.remove(id).is_some() && !finished {
                events.push(Event::Abort { id });
            }
        });
    }
}

impl Reading {
    /// The body being read, if it is request `id`'s.
    pub(super) fn body_of(&mut self, id: u64) -> Option<&mut BodyState> {
        match self {
            Reading::Body { body, .. } if body.id == id => Some(body),
            _ => None,
        }
    }

    /// Takes the body being read, if one is: nothing more is read as a request after it.
    pub(super) fn take_body(&mut self) -> Option<BodyState> {
        if !matches!(self, Reading::Body { .. }) {
            return None;
        }
        match std::mem::replace(self, Reading::Done) {
            Reading::Body { body, .. } => Some(*body),
            _ => unreachable!(),
        }
    }
}

/// The 408's message, naming the limit the request broke: the node engine sends the same words
/// (`tooSlow` in src/base/limits.ts).
fn too_slow(slow_head: bool, headers_timeout: u64, request_timeout: u64) -> String {
    let (part, limit, ms) = if slow_head { ("head", "headersTimeout", headers_timeout) } else { ("body", "requestTimeout", request_timeout) };
    format!("The request {part} did not arrive within {limit} ({ms} ms); raise the {limit} option for slower clients")
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use super::*;

    const TIMEOUTS: Timeouts = Timeouts { headers: 100, request: 300 };

    #[test]
    fn a_new_connection_reads_requests_and_is_kept_alive() {
        let h = Harness::new();
        assert_eq!(h.conn.input(), Input::Read);
        assert!(h.conn.reads_requests() && h.conn.wants_input(&h.io));
        assert!(!h.conn.finished() && !h.conn.upgrading());
    }

    #[test]
    fn the_last_request_stops_reading_and_its_answer_closes() {
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert_eq!(h.conn.input(), Input::Drop);
        assert!(!h.conn.reads_requests());
        assert!(h.conn.wants_input(&h.io), "still polled: a client that goes away aborts the request");
        h.respond(1, 200, b"");
        assert!(h.conn.finished() && !h.conn.wants_input(&h.io));
    }

    #[test]
    fn an_answer_that_closes_while_the_body_arrives_lingers_until_the_client_is_done() {
        let mut h = Harness::new();
        h.send(b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 100000\r\n\r\nabc");
        h.respond(1, 400, b"no");
        assert!(h.conn.finished(), "answered, and nothing more is read as requests");
        assert!(h.received().starts_with("HTTP/1.1 400 Bad Request\r\n"));
        assert!(h.conn.linger(&mut h.io, h.now), "the client is still sending the body");
        assert!(!h.conn.finished() && h.conn.closing());
        assert!(h.conn.wants_input(&h.io) && h.conn.input() == Input::Drop, "what arrives is read and dropped");
        assert!(!h.conn.close_when_idle(&h.io), "a stopping server lets it linger");
        assert_eq!(h.conn.sweep(&mut h.io, h.now + LINGER_MS - 1, &TIMEOUTS), Swept::Wait);
        assert_eq!(h.conn.sweep(&mut h.io, h.now + LINGER_MS, &TIMEOUTS), Swept::Close, "at most LINGER_MS");
    }

    #[test]
    fn an_answer_that_closes_after_the_whole_request_closes_at_once() {
        let mut h = Harness::new();
        h.send(b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc");
        h.respond(1, 200, b"");
        h.received();
        assert!(h.conn.finished() && !h.conn.linger(&mut h.io, h.now), "the client sent all it had to");
        let mut h = Harness::new();
        h.send(b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 100000\r\n\r\nabc");
        h.client_ends();
        h.read();
        h.respond(1, 400, b"");
        h.received();
        assert!(!h.conn.linger(&mut h.io, h.now), "the client ended its side: nothing more will come");
    }

    #[test]
    fn a_body_past_its_request_timeout_is_not_waited_for() {
        let mut h = Harness::new();
        h.send(b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 10\r\n\r\nab");
        assert_eq!(h.conn.sweep(&mut h.io, h.now + 300, &TIMEOUTS), Swept::Tell(Event::BodyTimeout { id: 1 }));
        h.respond(1, 408, b"");
        assert!(h.received().starts_with("HTTP/1.1 408 "));
        assert!(h.conn.finished() && !h.conn.linger(&mut h.io, h.now + 300), "closed at once");
    }

    #[test]
    fn a_stopping_server_closes_idle_connections_now_and_busy_ones_when_answered() {
        let mut h = Harness::new();
        assert!(h.conn.close_when_idle(&h.io));
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(!h.conn.close_when_idle(&h.io));
        assert!(h.conn.reads_requests(), "requests still arriving are read, for the app to answer 503");
        h.respond(1, 200, b"");
        assert!(h.conn.finished());
    }

    #[test]
    fn a_client_that_ends_its_side_is_answered_then_closed_unless_streaming() {
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        h.client_ends();
        h.read();
        assert!(!h.conn.input_ended(), "nothing streams: answer, then close");
        assert!(h.conn.left_unanswered(&h.io) && !h.conn.wants_input(&h.io));
        h.respond(1, 200, b"");
        assert!(h.conn.finished() && !h.conn.left_unanswered(&h.io));
        let mut h = Harness::new();
        h.send(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        let req = h.reqs.get(1).unwrap();
        let head = cog_framing::response::AppHead {
            status: 200,
            reason: None,
            block: cog_framing::response::HeaderBlock::new(b"").unwrap(),
            has_date: true,
            declared_length: None,
            close: false,
            request_id: None,
        };
        h.conn.stream_start(&mut h.io, &mut h.spare, req, 1, &head);
        assert!(h.conn.input_ended(), "a stream has no end of its own to wait for: close now");
    }

    #[test]
    fn an_upgrade_refused_closes() {
        let mut h = Harness::new();
        h.send(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
        assert!(!h.conn.wants_input(&h.io), "nothing is read while the app decides");
        h.conn.upgrade_refused(1);
        assert!(h.conn.finished());
    }

    #[test]
    fn the_sweep_answers_a_slow_head_408_and_closes() {
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost:");
        assert_eq!(h.conn.sweep(&mut h.io, h.now + 99, &TIMEOUTS), Swept::Busy, "a head is arriving");
        assert_eq!(h.conn.sweep(&mut h.io, h.now + 100, &TIMEOUTS), Swept::Close);
        let out = h.received();
        assert!(out.starts_with("HTTP/1.1 408 Request Timeout\r\n") && out.contains("headersTimeout (100 ms)"), "{out}");
    }

    #[test]
    fn the_sweep_tells_javascript_of_a_slow_body_then_cuts_it() {
        let mut h = Harness::new();
        h.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab");
        assert_eq!(h.conn.sweep(&mut h.io, h.now + 10, &TIMEOUTS), Swept::Busy);
        assert_eq!(h.conn.sweep(&mut h.io, h.now + 300, &TIMEOUTS), Swept::Tell(Event::BodyTimeout { id: 1 }));
        assert_eq!(h.conn.sweep(&mut h.io, h.now + 301, &TIMEOUTS), Swept::Close, "unanswered a sweep later: the engine's 408");
        assert!(h.received().starts_with("HTTP/1.1 408 Request Timeout\r\n"));
    }

    #[test]
    fn a_routes_own_request_timeout_replaces_the_servers() {
        let mut h = Harness::new();
        h.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab");
        h.conn.set_body_timeout(1, 0);
        assert_eq!(h.conn.sweep(&mut h.io, h.now + 1_000_000, &TIMEOUTS), Swept::Busy, "0: none");
        h.conn.set_body_timeout(1, 50);
        assert_eq!(h.conn.sweep(&mut h.io, h.now + 50, &TIMEOUTS), Swept::Tell(Event::BodyTimeout { id: 1 }));
    }

    #[test]
    fn an_idle_connection_is_for_the_keep_alive_timeout() {
        let mut h = Harness::new();
        assert_eq!(h.conn.sweep(&mut h.io, h.now, &TIMEOUTS), Swept::Idle);
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(h.conn.sweep(&mut h.io, h.now, &TIMEOUTS), Swept::Busy);
        h.respond(1, 200, b"");
        h.received();
        h.io.settle_output(&mut h.spare, crate::io::HIGH_WATER);
        assert_eq!(h.conn.sweep(&mut h.io, h.now, &TIMEOUTS), Swept::Idle);
        let mut tls = Harness::new();
        tls.conn = Conn::new(Some(tls.now));
        assert_eq!(tls.conn.sweep(&mut tls.io, tls.now, &TIMEOUTS), Swept::Wait, "a handshake under way is for the headers timeout");
    }

    #[test]
    fn closing_aborts_what_javascript_holds_unanswered() {
        let mut h = Harness::new();
        h.send(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nPOST /3 HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nab");
        h.respond(2, 200, b"");
        let mut events = Vec::new();
        h.conn.close(&mut h.reqs, &mut events);
        assert_eq!(events, [Event::Abort { id: 1 }, Event::Abort { id: 3 }], "2 was answered");
        assert!((1..=3).all(|id| h.reqs.get(id).is_none()), "every request on it is forgotten");
    }
}
