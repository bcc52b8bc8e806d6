//! One connection of a server that serves HTTP/2: first `Choosing` (which protocol the client
//! speaks: on TLS, as ALPN says; on cleartext, as its first bytes say), then `Open`, an HTTP/2
//! connection (`cog_http2::Connection`) with the streams JavaScript holds. A TLS client that did
//! not choose h2 is the engine's to hand to `h1` (`Parsed::Http1`); a cleartext (h2c) one speaks
//! HTTP/2 with prior knowledge, or is closed (as node:http2's h2c server closes it, and
//! HttpArena's h2c profiles ask), unless the server serves HTTP/1.1 beside h2c
//! (`Settings::http1`): then a client whose first bytes are not the preface goes to `h1`, as
//! Go's h2c handler and hyper's auto connection do.
//!
//! Input goes to nghttp2 whole (HTTP/2 multiplexes: backpressure is each stream's window, not
//! the socket), and its events become the engine's: a request (its body whole when it came with
//! its head, else in pieces), body pieces consumed as JavaScript takes them, aborts for streams
//! the client reset, drains. Frames go to the transport's output only when the engine writes the
//! connection (`write_frames`), once a batch.

use super::answer::{self, Piece};
use super::head::{self, Verdict};
use super::settings::Settings;
use super::streams::{self, Arriving, Overdue, Response, Stream, Streams};
use crate::events::{trailer_fields, Body, Event};
use crate::io::{Input, Transport};
use crate::request::{new_h2_req, Req, Requests};
use crate::spare::Spare;
use cog_framing::response::{AppHead, HeaderBlock};
use cog_http2::{code, Connection, StreamId};

/// Frames moved to the transport's output at most this far ahead of the socket: the rest waits
/// in nghttp2's streams, where flow control and backpressure see it.
const OUTPUT_AHEAD: usize = 64 * 1024;

/// Most bytes of frames one write of the connection moves, so a fast client of a large body can't
/// hold the loop: the rest goes on the next writable event.
const WRITE_BUDGET: usize = 1024 * 1024;

#[allow(clippy::large_enum_variant, reason = "one per connection, and `Open` is the state it lives in: boxing it would add a pointer chase to every read")]
enum State {
    /// Which protocol the client speaks is not known yet. `since`: the accept, when the headers
    /// timeout bounds the wait (on TLS, the handshake, as on HTTP/1.1; on cleartext beside
    /// HTTP/1.1, the first bytes); none on h2c alone, which nghttp2 reads from the first byte.
    Choosing {
        since: Option<u64>,
        tls: bool,
    },
    Open(Connection),
    /// The client did not begin with HTTP/2's preface: closed at once, as RFC 9113 §3.4 asks.
    Refused,
}

pub(crate) struct Conn {
    state: State,
    streams: Streams,
    /// Requests with a body, handed over in this parse, whose body is gathered while it arrives
    /// with them: (stream, the request's place in the events, the bytes so far). A body whole in
    /// the same read goes with its request, as on HTTP/1.1.
    gathering: Vec<(StreamId, usize, Vec<u8>)>,
}

/// What `parse` found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    Open,
    /// The client speaks HTTP/1.1: the engine serves it as such, from the input as it is.
    /// `head_started`: when its first head began (the accept, on TLS).
    Http1 {
        head_started: Option<u64>,
    },
}

/// What the timeout sweep found (`Conn::sweep`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Swept {
    /// Streams are in flight.
    Busy,
    /// Nothing in flight: the keep-alive timeout applies (`go_away`).
    Idle,
    /// The connection must close now.
    Close,
}

impl Conn {
    /// A connection just accepted; `since`: the accept's time, when the headers timeout bounds
    /// the choice of protocol (see `State::Choosing`).
    pub(crate) fn new(since: Option<u64>, tls: bool) -> Conn {
        Conn { state: State::Choosing { since, tls }, streams: Streams::default(), gathering: Vec::new() }
    }

    /// What to do with the socket's input now.
    pub(crate) fn input(&self) -> Input {
        match &self.state {
            State::Open(conn) if !conn.wants_read() => Input::Drop,
            _ => Input::Read,
        }
    }

    /// Whether the socket should be polled for input.
    pub(crate) fn wants_input(&self, io: &Transport) -> bool {
        !io.ended()
            && match &self.state {
                State::Choosing { .. } => true,
                State::Open(conn) => conn.wants_read(),
                State::Refused => false,
            }
    }

    /// Whether frames wait to be written (the engine polls for writing while they do).
    pub(crate) fn wants_write(&self) -> bool {
        matches!(&self.state, State::Open(conn) if conn.wants_write())
    }

    /// Whether the connection is over (its last GOAWAY written): it closes.
    pub(crate) fn finished(&self) -> bool {
        match &self.state {
            State::Open(conn) => conn.is_done(),
            State::Choosing { .. } => false,
            State::Refused => true,
        }
    }

    /// Whether the client ended its side with nothing to decide on (no byte came): close now.
    pub(crate) fn ended_unheard(&self, io: &Transport) -> bool {
        matches!(self.state, State::Choosing { .. }) && io.input().is_empty()
    }

    /// Reads the input: HTTP/2 frames, their events added to `events` for JavaScript; or, while
    /// the protocol is not chosen, the bytes that choose it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn parse(
        &mut self,
        io: &mut Transport,
        reqs: &mut Requests,
        spare: &mut Spare,
        key: usize,
        gen: u32,
        settings: &Settings,
        now: u64,
        events: &mut Vec<Event>,
    ) -> Parsed {
        if let State::Choosing { since, tls } = self.state {
            match choose(io, tls, settings.http1) {
                Choice::Wait => return Parsed::Open,
                Choice::Http1 => return Parsed::Http1 { head_started: since },
                Choice::Http2 => match Connection::new(settings.config.clone()) {
                    Ok(conn) => self.state = State::Open(conn),
                    // nghttp2 could not allocate: nothing to answer with.
                    Err(_) => {
                        self.state = State::Refused;
                        return Parsed::Open;
                    }
                },
            }
        }
        let State::Open(conn) = &mut self.state else { return Parsed::Open };
        if io.input().is_empty() {
            return Parsed::Open;
        }
        // On an error nghttp2 has queued its GOAWAY: it is written, then the connection closes
        // (`finished`). The events before it are still the app's.
        let received = conn.receive(io.input());
        io.clear_input();
        if received == Err(cog_http2::Error::BadPreface) {
            self.close(reqs, events);
            self.state = State::Refused;
            return Parsed::Open;
        }
        let mut place = Place { reqs, spare, key, gen };
        convert(conn, &mut self.streams, &mut self.gathering, &mut place, Some(settings), now, events);
        // Bodies not whole in this read: what came of them follows their request, the rest as it arrives.
        for (stream, _, piece) in self.gathering.drain(..) {
            let Some(state) = self.streams.get_mut(stream) else { continue };
            if !piece.is_empty() {
                events.push(Event::BodyPiece { id: state.id, piece });
            }
        }
        Parsed::Open
    }

    /// Moves the frames due to the transport's output, up to `OUTPUT_AHEAD` unsent there; returns
    /// how many bytes it moved. `budget`: what this write of the connection may still move (less
    /// what it moved).
    pub(crate) fn write_frames(&mut self, io: &mut Transport, spare: &mut Spare, budget: &mut usize) -> usize {
        let State::Open(conn) = &mut self.state else { return 0 };
        let unsent = io.unsent();
        if unsent >= OUTPUT_AHEAD || *budget == 0 {
            return 0;
        }
        let room = (OUTPUT_AHEAD - unsent).min(*budget);
        let out = io.output_from(spare);
        let limit = out.len() + room;
        let moved = conn.write_output(out, limit);
        *budget = budget.saturating_sub(moved);
        moved
    }

    /// A fresh write budget (see `write_frames`).
    pub(crate) fn write_budget() -> usize {
        WRITE_BUDGET
    }

    /// What writing frames made happen: streams drained, answered whole, or reset (the client's
    /// reset found while writing, say), as events for JavaScript.
    pub(crate) fn written(&mut self, reqs: &mut Requests, spare: &mut Spare, key: usize, gen: u32, events: &mut Vec<Event>) {
        let State::Open(conn) = &mut self.state else { return };
        let mut place = Place { reqs, spare, key, gen };
        convert(conn, &mut self.streams, &mut self.gathering, &mut place, None, 0, events);
    }

    /// JavaScript's stream of request `stream`'s body is full (`paused`), or has room again: the
    /// client's window reopens only for what it took. Returns whether frames may be due.
    pub(crate) fn pause_body(&mut self, stream: StreamId, paused: bool) -> bool {
        let State::Open(conn) = &mut self.state else { return false };
        let Some(body) = self.streams.get_mut(stream).and_then(|s| s.body.as_mut()) else { return false };
        if body.paused == paused {
            return false;
        }
        body.paused = paused;
        if !paused && body.unconsumed > 0 {
            conn.consume(stream, std::mem::take(&mut body.unconsumed));
            return true;
        }
        false
    }

    /// Gives the body of the request on `stream` its route's `requestTimeout` (ms, 0: none).
    pub(crate) fn set_body_timeout(&mut self, stream: StreamId, ms: u64) {
        if let Some(body) = self.streams.get_mut(stream).and_then(|s| s.body.as_mut()) {
            body.set_timeout(ms);
        }
    }

    /// Resets the stream of a request JavaScript gave up on (its response failed half-way):
    /// RST_STREAM (CANCEL), its other streams go on. Returns whether it was in flight.
    pub(crate) fn cancel(&mut self, stream: StreamId) -> bool {
        let State::Open(conn) = &mut self.state else { return false };
        if self.streams.remove(stream).is_none() {
            return false;
        }
        let _ = conn.reset(stream, code::CANCEL);
        true
    }

    /// The server stops: GOAWAY tells the client to open no more streams; those in flight are
    /// answered, then the final GOAWAY closes the connection. Returns whether it can close now
    /// (the protocol was not chosen yet: nothing in flight).
    pub(crate) fn shutdown(&mut self) -> bool {
        match &mut self.state {
            State::Choosing { .. } | State::Refused => true,
            State::Open(conn) => {
                conn.shutdown();
                false
            }
        }
    }

    /// Closes an idle connection: GOAWAY (NO_ERROR), then the connection once it is written.
    /// Returns whether it can close at once (the protocol was not chosen yet).
    pub(crate) fn go_away(&mut self) -> bool {
        match &mut self.state {
            State::Choosing { .. } | State::Refused => true,
            State::Open(conn) => {
                conn.goaway(code::NO_ERROR);
                false
            }
        }
    }

    /// The timeout sweep's part at `now`: a TLS handshake slower than `headers_timeout`; bodies
    /// slower than their `requestTimeout` (the server's `request_timeout` unless the route set
    /// its own; 0: none). A slow body whose response has not begun is the app's to answer
    /// (`Event::BodyTimeout`: its 408, through its error handler, as on HTTP/1.1); one sweep
    /// later unanswered, or with its response begun, its stream is reset (CANCEL), as the node
    /// engine's HTTP/2 does, and its request aborted. The connection's other streams go on.
    pub(crate) fn sweep(&mut self, now: u64, headers_timeout: u64, request_timeout: u64, reqs: &mut Requests, events: &mut Vec<Event>) -> Swept {
        let conn = match &mut self.state {
            State::Choosing { since: Some(at), .. } if now.saturating_sub(*at) >= headers_timeout => return Swept::Close,
            State::Choosing { .. } => return Swept::Idle,
            State::Refused => return Swept::Close,
            State::Open(conn) => conn,
        };
        let mut cut = Vec::new();
        for (stream, state) in self.streams.iter_mut() {
            let Some(body) = state.body.as_mut() else { continue };
            match body.overdue(now, request_timeout, state.response != Response::Waiting) {
                Overdue::No => {}
                Overdue::Tell => events.push(Event::BodyTimeout { id: state.id }),
                Overdue::Cut => cut.push(stream),
            }
        }
        for stream in cut {
            let _ = conn.reset(stream, code::CANCEL);
            if let Some(state) = self.streams.remove(stream) {
                if reqs.remove(state.id).is_some() {
                    events.push(Event::Abort { id: state.id });
                }
            }
        }
        if conn.open_streams() > 0 {
            Swept::Busy
        } else {
            Swept::Idle
        }
    }

    /// The connection closes: requests JavaScript still holds are aborted (`events`), and every
    /// request on it forgotten.
    pub(crate) fn close(&mut self, reqs: &mut Requests, events: &mut Vec<Event>) {
        self.streams.drain(|state| {
            if reqs.remove(state.id).is_some() {
                events.push(Event::Abort { id: state.id });
            }
        });
    }

    /// A whole response to `req` (see `answer::respond`); its stream is then forgotten. False
    /// when its stream is not in flight here (the client reset it, or it was answered).
    pub(crate) fn respond(&mut self, req: &Req, head: &AppHead, body: &[u8]) -> bool {
        let Some((conn, state)) = self.stream(req.stream()) else { return false };
        let sent = answer::respond(conn, state, req, head, body);
        self.streams.remove(req.stream());
        sent
    }

    /// Starts a streamed response (see `answer::stream_start`).
    pub(crate) fn stream_start(&mut self, req: &Req, head: &AppHead) -> bool {
        let Some((conn, state)) = self.stream(req.stream()) else { return false };
        if answer::stream_start(conn, state, req, head) {
            return true;
        }
        self.streams.remove(req.stream());
        false
    }

    /// A piece of a streamed body.
    pub(crate) fn stream_write(&mut self, req: &Req, chunk: &[u8]) -> Piece {
        let Some((conn, state)) = self.stream(req.stream()) else { return Piece::Gone };
        answer::stream_write(conn, state, req.stream(), chunk)
    }

    /// A file's range as the streamed body's next bytes (see `answer::stream_file`).
    pub(crate) fn stream_file(&mut self, req: &Req, file: impl FnOnce() -> Option<std::fs::File>, offset: u64, length: u64) -> Piece {
        let Some((conn, state)) = self.stream(req.stream()) else { return Piece::Gone };
        answer::stream_file(conn, state, req.stream(), file, offset, length)
    }

    /// The end of a streamed body; its stream is then forgotten.
    pub(crate) fn stream_end(&mut self, req: &Req, trailers: Option<HeaderBlock>) -> bool {
        let Some((conn, state)) = self.stream(req.stream()) else { return false };
        let ended = answer::stream_end(conn, state, req.stream(), trailers);
        self.streams.remove(req.stream());
        ended
    }

    /// The HTTP/2 connection and the stream of a request in flight.
    fn stream(&mut self, stream: StreamId) -> Option<(&mut Connection, &mut Stream)> {
        let State::Open(conn) = &mut self.state else { return None };
        Some((conn, self.streams.get_mut(stream)?))
    }
}

/// Where requests are recorded, and the connection's place (for their record).
struct Place<'a> {
    reqs: &'a mut Requests,
    spare: &'a mut Spare,
    key: usize,
    gen: u32,
}

/// Which protocol the client speaks, from what it sent so far.
#[derive(Debug, PartialEq, Eq)]
enum Choice {
    Wait,
    Http1,
    Http2,
}

/// HTTP/2's connection preface (RFC 9113 §3.4): a client with prior knowledge begins with it.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// On TLS, ALPN chooses (known once the handshake is done, before any plaintext arrives): h2 or
/// else HTTP/1.1, as node:http2's `allowHTTP1` does. On cleartext (h2c) it is HTTP/2, whose
/// preface nghttp2 checks; beside HTTP/1.1 (`http1`), the first bytes choose: the whole preface
/// is HTTP/2, any byte off it HTTP/1.1 (no HTTP/1.1 request begins with it: its version is
/// 2.0), a part of it waits for more (a client that ends its side meanwhile is closed, unanswered,
/// at the end of the batch, and one that sends no more at the headers timeout: see `sweep`).
fn choose(io: &Transport, tls: bool, http1: bool) -> Choice {
    match io.alpn() {
        Some(b"h2") => Choice::Http2,
        _ if !tls && !http1 => Choice::Http2,
        _ if tls && io.input().is_empty() => Choice::Wait,
        _ if tls => Choice::Http1,
        _ => {
            let input = io.input();
            let seen = input.len().min(PREFACE.len());
            if input[..seen] != PREFACE[..seen] {
                Choice::Http1
            } else if seen == PREFACE.len() {
                Choice::Http2
            } else {
                Choice::Wait
            }
        }
    }
}

/// The connection's events, as the engine's: requests (with `settings`, only while parsing),
/// body pieces, aborts, drains; streams done are forgotten.
fn convert(
    conn: &mut Connection,
    streams: &mut Streams,
    gathering: &mut Vec<(StreamId, usize, Vec<u8>)>,
    place: &mut Place,
    settings: Option<&Settings>,
    now: u64,
    events: &mut Vec<Event>,
) {
    use cog_http2::Event as H2;
    let taken = conn.take_events();
    for event in taken.iter() {
        match event {
            H2::Request(req) => {
                let Some(settings) = settings else { continue };
                let stream = req.stream;
                match head::check(&req, settings) {
                    Verdict::Refuse { status, message } => answer::refuse(conn, stream, status, message),
                    Verdict::App { method, body, flags, problem } => {
                        let id = place.reqs.next_id();
                        let fields = req.pseudo_headers().chain(req.headers.iter());
                        let record = new_h2_req(place.key, place.gen, stream, method, req.path, fields, (place.spare.head(), place.spare.headers()));
                        place.reqs.insert(id, record);
                        let arriving = matches!(body, Body::Follows(_));
                        if arriving {
                            gathering.push((stream, events.len(), Vec::new()));
                        }
                        streams.insert(stream, Stream { id, body: arriving.then(|| Arriving::new(now)), response: Response::Waiting });
                        events.push(Event::Request { id, body, flags, problem });
                    }
                }
            }
            H2::Data { stream, data, end_stream } => body_bytes(conn, streams, gathering, stream, data, end_stream, events),
            // Trailer fields end the body; the app reads them (`req.trailers`) once it has ended:
            // they go before the body's end, or after its request when the body came whole with it.
            H2::Trailers { stream, headers } => {
                let reading = streams.get_mut(stream).filter(|state| state.body.is_some()).map(|state| state.id);
                let gathered = gathering.iter().any(|g| g.0 == stream);
                let trailers = reading.map(|id| Event::BodyTrailers { id, fields: trailer_fields(headers.iter()) });
                let (before, after) = if gathered { (None, trailers) } else { (trailers, None) };
                events.extend(before);
                body_bytes(conn, streams, gathering, stream, &[], true, events);
                events.extend(after);
            }
            H2::Closed { stream } => drop(streams.remove(stream)),
            H2::Reset { stream, .. } => {
                if let Some(state) = streams.remove(stream) {
                    if place.reqs.remove(state.id).is_some() {
                        events.push(Event::Abort { id: state.id });
                    }
                }
            }
            H2::Drained { stream } => {
                if let Some(state) = streams.get_mut(stream) {
                    events.push(Event::Drain { id: state.id });
                }
            }
            H2::GoAway { .. } | H2::Ping => {}
        }
    }
    conn.recycle(taken);
}

/// Request body bytes on `stream` (see `streams::body_bytes`).
fn body_bytes(
    conn: &mut Connection,
    streams: &mut Streams,
    gathering: &mut Vec<(StreamId, usize, Vec<u8>)>,
    stream: StreamId,
    data: &[u8],
    end_stream: bool,
    events: &mut Vec<Event>,
) {
    let state = streams.get_mut(stream).map(|s| (s.id, &mut s.body));
    streams::body_bytes(gathering, stream, state, data, end_stream, events, |n| conn.consume(stream, n));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_cleartext_it_is_http2_and_on_tls_alpn_chooses() {
        let (mut io, client) = Transport::pair();
        assert_eq!(choose(&io, false, false), Choice::Http2, "h2c: HTTP/2 from the first byte (nghttp2 checks the preface)");
        assert_eq!(choose(&io, true, false), Choice::Wait, "TLS: nothing yet, the handshake under way");
        io.buffers().0.extend_from_slice(b"GET / HTTP/1.1\r\n");
        assert_eq!(choose(&io, true, false), Choice::Http1, "TLS without h2: HTTP/1.1");
        assert_eq!(choose(&io, false, false), Choice::Http2, "h2c: an HTTP/1.1 request is a bad preface");
        io.close_pair(client);
    }

    #[test]
    fn beside_http1_on_cleartext_the_first_bytes_choose() {
        let (mut io, client) = Transport::pair();
        assert_eq!(choose(&io, false, true), Choice::Wait, "nothing yet");
        io.buffers().0.extend_from_slice(&PREFACE[..1]);
        assert_eq!(choose(&io, false, true), Choice::Wait, "one byte of the preface");
        io.buffers().0.extend_from_slice(&PREFACE[1..23]);
        assert_eq!(choose(&io, false, true), Choice::Wait, "all but its last byte");
        io.buffers().0.extend_from_slice(&PREFACE[23..]);
        assert_eq!(choose(&io, false, true), Choice::Http2, "the whole preface");
        io.buffers().0.extend_from_slice(b"\x00\x00\x00\x04");
        assert_eq!(choose(&io, false, true), Choice::Http2, "the preface and a frame after it");
        io.clear_input();
        io.buffers().0.extend_from_slice(b"PRI * HTTP/1.1\r\n");
        assert_eq!(choose(&io, false, true), Choice::Http1, "a byte off the preface");
        io.clear_input();
        io.buffers().0.extend_from_slice(b"G");
        assert_eq!(choose(&io, false, true), Choice::Http1, "an HTTP/1.1 request, from its first byte");
        io.close_pair(client);
    }
}
