//! Responses, from JavaScript to the socket. They go out in request order even when handlers
//! finish out of order (a response is held on its request until the ones before it are done);
//! while a batch of requests is being answered the output is corked and written once, at the
//! batch's end; and past `HIGH_WATER` unsent bytes, reading pauses and streams are told to wait
//! for a drain event: the backpressure a slow client exerts.

use crate::io::in_place::{Held, InPlaceBody, InPlaceSend};
use crate::io::Written;
use crate::events::Event;
use crate::request::{Req, ReqState, Requests};
use crate::state::{Conn, State};
use crate::uv::*;
use cog_framing::response::{write_head, AppHead, BodyFraming, HeadOptions};

/// Past this many unsent bytes on a connection, stop reading from it (and tell streams to wait).
pub(crate) const HIGH_WATER: usize = 256 * 1024;

/// The body of a whole response, as `respond` takes it.
pub(crate) enum WholeBody<'a> {
    Bytes(&'a [u8]),
    Held(Held),
}

impl WholeBody<'_> {
    fn len(&self) -> usize {
        match self {
            WholeBody::Bytes(bytes) => bytes.len(),
            WholeBody::Held(held) => (**held).as_ref().len(),
        }
    }
}

impl State {
    /// Writes pending output. Returns whether parsing may resume, and drain events for streams.
    pub(crate) fn flush(&mut self, key: usize) -> (bool, Vec<Event>) {
        let mut dropped = Vec::new();
        loop {
            let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return (false, dropped) };
            match conn.io.write() {
                Written::All => {}
                Written::Blocked => break,
                Written::Failed => {
                    dropped.extend(self.close_conn(key));
                    return (false, dropped);
                }
            }
            // All written: a body in place due next goes out now, then the responses behind it.
            match self.send_in_place(key) {
                InPlaceSend::Done => dropped.extend(self.promote(key)),
                InPlaceSend::Failed => {
                    dropped.extend(self.close_conn(key));
                    return (false, dropped);
                }
                InPlaceSend::Idle | InPlaceSend::Blocked => break,
            }
        }
        self.conns[key].as_mut().unwrap().io.settle_output(&mut self.spare, HIGH_WATER);
        let pending = self.unsent(key);
        let conn = self.conns[key].as_mut().unwrap();
        if pending == 0 && conn.close_when_done && conn.queue.is_empty() && conn.body.is_none() {
            dropped.extend(self.close_conn(key));
            return (false, dropped);
        }
        let mut calls = dropped;
        State::ws_drained(conn, &mut calls);
        if pending <= HIGH_WATER {
            for id in conn.queue.iter() {
                if let Some(req) = self.reqs.get_mut(id) {
                    if req.wants_drain {
                        req.wants_drain = false;
                        calls.push(Event::Drain { id: *id });
                    }
                }
            }
        }
        let paused = conn.body.as_ref().is_some_and(|b| b.paused);
        let reading = if paused || conn.peer_ended || conn.upgrading || (conn.no_more_requests && conn.body.is_none() && conn.close_when_done) { 0 } else { UV_READABLE | UV_DISCONNECT };
        let events = if pending > 0 { UV_WRITABLE | if pending > HIGH_WATER { 0 } else { reading } } else { reading };
        conn.io.poll_for(events);
        (pending <= HIGH_WATER, calls)
    }

    /// Output waiting on the connection: its buffer, the body in place due next (reading pauses
    /// past the high-water mark), and records rustls holds (as one byte: enough to wait for the
    /// socket to take them).
    pub(crate) fn unsent(&self, key: usize) -> usize {
        let conn = self.conns[key].as_ref().unwrap();
        conn.io.unsent() + self.in_place_left(key) as usize + conn.io.tls_pending() as usize
    }

    /// Appends a complete response for the connection, in order: straight to the output when
    /// nothing before it is unanswered, else held on the last unanswered request.
    pub(crate) fn queue_bytes(reqs: &mut Requests, conn: &mut Conn, bytes: Vec<u8>) {
        match conn.queue.back().and_then(|id| reqs.get_mut(id)) {
            Some(last) => last.after.extend_from_slice(&bytes),
            None => conn.io.output().extend_from_slice(&bytes),
        }
    }

    pub(crate) fn writable_req(&mut self, id: u64) -> Option<(&mut Req, &mut Conn)> {
        let req = self.reqs.get_mut(&id)?;
        let conn = self.conns.get_mut(req.conn)?.as_mut()?;
        if conn.gen != req.gen {
            return None;
        }
        Some((req, conn))
    }

    /// A whole response: the head (see `AppHead`), then the body: bytes copied after the head,
    /// or a Buffer held and sent in place (`in_place.rs`). Written straight into the connection's
    /// output when no earlier response is pending. Returns false when the client is gone.
    pub(crate) fn respond(&mut self, id: u64, answer: &AppHead, body: WholeBody) -> bool {
        let Some((req, _)) = self.writable_req(id) else { return false };
        let no_body = answer.status < 200 || answer.status == 204 || answer.status == 304;
        let framing = if no_body { BodyFraming::NoBody } else { BodyFraming::Length(body.len()) };
        let (sends_body, key) = (!no_body && !req.is_head, req.conn);
        let close = self.write_to(id, |out, req| {
            let close = write_head(out, &head_options(answer, req, framing));
            if let (true, WholeBody::Bytes(bytes)) = (sends_body, &body) {
                out.extend_from_slice(bytes);
            }
            close
        });
        if let (true, WholeBody::Held(held)) = (sends_body, body) {
            self.reqs.get_mut(&id).unwrap().in_place = Some(InPlaceBody::buffer(held));
            self.conns[key].as_mut().unwrap().in_place_bodies += 1;
        }
        self.finish(key, id, close, true);
        true
    }

    /// Starts a streamed response: framed by the Content-Length the app declared, if it declared
    /// one (as node:http does), else chunked on HTTP/1.1.
    pub fn stream_start(&mut self, id: u64, answer: &AppHead) -> bool {
        let Some((req, _)) = self.writable_req(id) else { return false };
        let no_body = answer.status < 200 || answer.status == 204 || answer.status == 304;
        let framing = match answer.declared_length {
            _ if no_body => BodyFraming::NoBody,
            // A HEAD answer reports the declared length and sends no body.
            Some(_) if req.is_head => BodyFraming::Length(0),
            Some(length) => BodyFraming::Length(length as usize),
            None if req.is_head => BodyFraming::NoBody,
            None => BodyFraming::Stream,
        };
        match framing {
            BodyFraming::Length(length) if !req.is_head => req.length_left = Some(length as u64),
            // 1xx, 204 and 304 have no body: what the app writes is dropped, as node:http drops it.
            BodyFraming::NoBody => req.body_dropped = true,
            _ => {}
        }
        let key = req.conn;
        let close = self.write_to(id, |out, req| write_head(out, &head_options(answer, req, framing)));
        self.finish(key, id, close, false);
        true
    }

    /// Appends bytes for request `id` where they belong: the connection's output if it is the
    /// oldest unanswered request there, else held on it until the earlier ones are answered.
    fn write_to<R>(&mut self, id: u64, write: impl FnOnce(&mut Vec<u8>, &Req) -> R) -> R {
        let req = self.reqs.get_mut(&id).unwrap();
        let conn = self.conns[req.conn].as_mut().unwrap();
        if conn.queue.front() == Some(&id) && req.held.is_empty() {
            write(conn.io.output_from(&mut self.spare), req)
        } else {
            let mut held = std::mem::take(&mut req.held);
            let result = write(&mut held, req);
            req.held = held;
            result
        }
    }

    /// After a response's head (and maybe its body) was written: note a close, mark it finished
    /// (whole responses), move what is complete to the output, and write unless a batch is on.
    fn finish(&mut self, key: usize, id: u64, close: bool, whole: bool) {
        let conn = self.conns[key].as_mut().unwrap();
        if close {
            conn.no_more_requests = true;
            conn.close_when_done = true;
        }
        let req = self.reqs.get_mut(&id).unwrap();
        req.state = if whole { ReqState::Finished } else { ReqState::Streaming };
        req.closes = close;
        self.advance(key);
    }

    /// A piece of a streamed body. Returns false when the caller should wait for a drain event
    /// (or the client is gone: then an abort event follows).
    pub fn stream_write(&mut self, id: u64, chunk: &[u8]) -> bool {
        let Some((req, _)) = self.writable_req(id) else { return false };
        if chunk.is_empty() || req.is_head || req.body_dropped {
            return true;
        }
        if let Some(left) = req.length_left {
            // Framed by the declared length: the chunk as it is, and never past the length (what
            // lies beyond would be read as the next response); a body that overruns it closes
            // the connection after what fits.
            let fits = chunk.len().min(left as usize);
            req.length_left = Some(left - fits as u64);
            let overrun = fits < chunk.len();
            let key = req.conn;
            if overrun {
                self.close_after(key);
            }
            self.append(key, id, chunk[..fits].to_vec());
            return self.below_high_water(id);
        }
        let mut bytes = Vec::with_capacity(chunk.len() + 16);
        if req.minor >= 1 {
            bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            bytes.extend_from_slice(chunk);
            bytes.extend_from_slice(b"\r\n");
        } else {
            bytes.extend_from_slice(chunk);
        }
        let key = req.conn;
        self.append(key, id, bytes);
        self.below_high_water(id)
    }

    /// Whether a stream may go on writing; if not, it is told to wait for a drain event.
    fn below_high_water(&mut self, id: u64) -> bool {
        let Some((req, conn)) = self.writable_req(id) else { return false };
        let pending = conn.io.unsent() + req.held.len();
        if pending > HIGH_WATER {
            req.wants_drain = true;
            return false;
        }
        true
    }

    pub fn stream_end(&mut self, id: u64) -> bool {
        let Some((req, _)) = self.writable_req(id) else { return false };
        req.state = ReqState::Finished;
        let key = req.conn;
        let last: &[u8] = match req.length_left {
            // Shorter than declared: the client would wait for the rest; closing tells it the body ended.
            Some(left) => {
                if left > 0 {
                    self.close_after(key);
                }
                b""
            }
            None if req.minor >= 1 && !req.is_head && !req.body_dropped => b"0\r\n\r\n",
            None => b"",
        };
        self.append(key, id, last.to_vec());
        true
    }

    /// Closes the connection once what is queued on it is written, and reads no more requests.
    fn close_after(&mut self, key: usize) {
        if let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) {
            conn.no_more_requests = true;
            conn.close_when_done = true;
        }
    }

    /// Adds response bytes for request `id`, then `advance`s.
    fn append(&mut self, key: usize, id: u64, bytes: Vec<u8>) {
        self.write_to(id, |out, _| out.extend_from_slice(&bytes));
        self.advance(key);
    }

    /// Moves every response now complete at the head of the connection's queue to its output
    /// (`promote`); writes now unless a batch is being answered (then the batch's end writes it
    /// all at once).
    pub(crate) fn advance(&mut self, key: usize) {
        let dropped = self.promote(key);
        let conn = self.conns[key].as_ref().unwrap();
        let (server, in_batch) = (conn.server, conn.in_batch);
        if !dropped.is_empty() {
            self.defer(server, dropped);
        }
        if !in_batch {
            let (_, calls) = self.flush(key);
            if !calls.is_empty() {
                self.defer(server, calls);
            }
        }
    }

    /// Moves every response complete at the head of the connection's queue to its output, up to
    /// one still being written or with a body in place due; returns abort events for requests
    /// dropped behind a response that closes the connection.
    fn promote(&mut self, key: usize) -> Vec<Event> {
        let conn = self.conns[key].as_mut().unwrap();
        let mut dropped = Vec::new();
        while let Some(&front) = conn.queue.front() {
            let req = self.reqs.get_mut(&front).unwrap();
            if !req.held.is_empty() {
                conn.io.output().extend_from_slice(&req.held);
                req.held = Vec::new();
            }
            if !matches!(req.state, ReqState::Finished) || req.in_place.is_some() {
                break;
            }
            conn.queue.pop_front();
            if let Some(body) = conn.body.as_mut().filter(|b| b.id == front) {
                // Answered before its body was read: read the rest and drop it.
                body.discard = true;
                body.paused = false;
            }
            let done = self.reqs.remove(&front).unwrap();
            let closes = done.closes;
            if !closes {
                conn.io.output().extend_from_slice(&done.after);
            }
            self.spare.keep(done);
            if closes {
                // RFC 9112 9.6: after a response that closes the connection, no later request is
                // answered (node:http drops them too). Handlers still holding one see it aborted.
                if let Some(body) = conn.body.take() {
                    if !body.delivered {
                        self.reqs.remove(&body.id);
                    }
                }
                for id in conn.queue.drain(..) {
                    if self.reqs.remove(&id).is_some_and(|req| !matches!(req.state, ReqState::Finished)) {
                        dropped.push(Event::Abort { id });
                    }
                }
            }
        }
        dropped
    }

    /// Cuts the connection of a request (a failed stream, a destroyed response); the other
    /// requests on it are told they were aborted, from the loop.
    pub fn destroy(&mut self, id: u64) {
        let Some(req) = self.reqs.get(&id) else { return };
        let key = req.conn;
        let Some(server) = self.conns.get(key).and_then(Option::as_ref).filter(|c| c.gen == req.gen).map(|c| c.server) else { return };
        let calls: Vec<Event> = self.close_conn(key).into_iter().filter(|c| !matches!(c, Event::Abort { id: other } if *other == id)).collect();
        if !calls.is_empty() {
            self.defer(server, calls);
        }
    }
}

impl State {
    /// What is left of the body in place due next on the connection (0 if none): unsent output.
    pub(crate) fn in_place_left(&self, key: usize) -> u64 {
        let conn = self.conns[key].as_ref().unwrap();
        if conn.in_place_bodies == 0 {
            return 0;
        }
        conn.queue.front().and_then(|id| self.reqs.get(id)).and_then(|req| req.in_place.as_ref()).map_or(0, InPlaceBody::left)
    }

    /// Sends `length` bytes of the open file `fd` from `offset` as the next piece of a streamed
    /// body framed by its declared Content-Length. Returns false when it can't: the client is
    /// gone, or the body is chunked (the caller streams it instead).
    pub fn stream_file(&mut self, id: u64, fd: std::os::raw::c_int, offset: u64, length: u64) -> bool {
        let Some((req, _)) = self.writable_req(id) else { return false };
        let Some(due) = req.length_left else { return req.is_head || req.body_dropped };
        if length == 0 || req.is_head || req.body_dropped {
            return true;
        }
        // Never past the declared length (what lies beyond would be read as the next response).
        let length = length.min(due);
        // SAFETY: fcntl on a descriptor the caller holds open; the duplicate is ours alone.
        let own = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if own < 0 {
            return false;
        }
        req.length_left = Some(due - length);
        req.in_place = Some(InPlaceBody::file(unsafe { std::os::fd::FromRawFd::from_raw_fd(own) }, offset, length));
        let key = req.conn;
        self.conns[key].as_mut().unwrap().in_place_bodies += 1;
        self.advance(key);
        true
    }

    /// Sends the body in place of the connection's oldest request, if it is due (all before it written).
    pub(crate) fn send_in_place(&mut self, key: usize) -> InPlaceSend {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return InPlaceSend::Idle };
        if conn.in_place_bodies == 0 {
            return InPlaceSend::Idle;
        }
        let Some(body) = conn.queue.front().and_then(|id| self.reqs.get_mut(id)).and_then(|req| req.held.is_empty().then_some(req.in_place.as_mut()).flatten()) else {
            return InPlaceSend::Idle;
        };
        match conn.io.send_in_place(body) {
            InPlaceSend::Done => {}
            other => return other,
        }
        conn.in_place_bodies -= 1;
        let front = *conn.queue.front().unwrap();
        self.reqs.get_mut(&front).unwrap().in_place = None;
        InPlaceSend::Done
    }
}

/// The head options for the app's answer to `req`.
fn head_options<'a>(app: &'a AppHead<'a>, req: &Req, framing: BodyFraming) -> HeadOptions<'a> {
    HeadOptions { app, framing, minor: req.minor, request_close: !req.keep_alive, head_request: req.is_head }
}
