//! Responses, from JavaScript to the socket. They go out in request order even when handlers
//! finish out of order (a response is held on its request until the ones before it are done);
//! while a batch of requests is being answered the output is corked and written once, at the
//! batch's end; and past `HIGH_WATER` unsent bytes, reading pauses and streams are told to wait
//! for a drain event: the backpressure a slow client exerts.

use crate::events::Event;
use crate::io::in_place::{Held, InPlaceBody, InPlaceSend};
use crate::io::Written;
use crate::queue::{Progress, Promoted, Target};
use crate::request::Req;
use crate::spare::Spare;
use crate::state::{Conn, State};
use crate::uv::*;
use cog_framing::response::{write_head, AppHead, BodyFraming, HeadOptions};

/// Past this many unsent bytes on a connection, stop reading from it (and tell streams to wait).
pub(crate) const HIGH_WATER: usize = 256 * 1024;

/// How a streamed response's body is framed (HTTP/1.1's part of a queued response).
#[derive(Clone, Copy)]
pub(crate) enum Stream {
    /// By the request's version: chunked on HTTP/1.1, until the connection closes on HTTP/1.0.
    Open,
    /// By the Content-Length the app declared: the bytes still due.
    Length(u64),
    /// The status has no body (1xx, 204, 304): what the app writes is dropped.
    NoBody,
}

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
            let sent = match conn.queue.in_place_due() {
                None => InPlaceSend::Idle,
                Some(body) => conn.io.send_in_place(body),
            };
            match sent {
                InPlaceSend::Done => {
                    conn.queue.in_place_sent();
                    dropped.extend(self.promote(key));
                }
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
            conn.queue.drained(|id| calls.push(Event::Drain { id }));
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
        conn.io.unsent() + conn.queue.in_place_left() as usize + conn.io.tls_pending() as usize
    }

    pub(crate) fn writable_req(&mut self, id: u64) -> Option<(&mut Req, &mut Conn)> {
        writable(&mut self.reqs, &mut self.conns, id)
    }

    /// A whole response: the head (see `AppHead`), then the body: bytes copied after the head,
    /// or a Buffer held and sent in place (`io::in_place`). Written straight into the connection's
    /// output when no earlier response is pending. Returns false when the client is gone.
    pub(crate) fn respond(&mut self, id: u64, answer: &AppHead, body: WholeBody) -> bool {
        let State { reqs, conns, spare, .. } = self;
        let Some((req, conn)) = writable(reqs, conns, id) else { return false };
        let no_body = answer.status < 200 || answer.status == 204 || answer.status == 304;
        let framing = if no_body { BodyFraming::NoBody } else { BodyFraming::Length(body.len()) };
        let sends_body = !no_body && !req.is_head;
        let (key, options) = (req.conn, head_options(answer, req, framing));
        let Some(close) = write_response(conn, spare, id, |out, _| {
            let close = write_head(out, &options);
            if let (true, WholeBody::Bytes(bytes)) = (sends_body, &body) {
                out.extend_from_slice(bytes);
            }
            close
        }) else {
            return false;
        };
        if let (true, WholeBody::Held(held)) = (sends_body, body) {
            conn.queue.put_in_place(id, InPlaceBody::buffer(held));
        }
        self.finish(key, id, close, true);
        true
    }

    /// Starts a streamed response: framed by the Content-Length the app declared, if it declared
    /// one (as node:http does), else chunked on HTTP/1.1.
    pub fn stream_start(&mut self, id: u64, answer: &AppHead) -> bool {
        let State { reqs, conns, spare, .. } = self;
        let Some((req, conn)) = writable(reqs, conns, id) else { return false };
        let no_body = answer.status < 200 || answer.status == 204 || answer.status == 304;
        let framing = match answer.declared_length {
            _ if no_body => BodyFraming::NoBody,
            // A HEAD answer reports the declared length and sends no body.
            Some(_) if req.is_head => BodyFraming::Length(0),
            Some(length) => BodyFraming::Length(length as usize),
            None if req.is_head => BodyFraming::NoBody,
            None => BodyFraming::Stream,
        };
        let stream = match framing {
            BodyFraming::Length(length) if !req.is_head => Stream::Length(length as u64),
            // 1xx, 204 and 304 have no body: what the app writes is dropped, as node:http drops it.
            BodyFraming::NoBody => Stream::NoBody,
            _ => Stream::Open,
        };
        let (key, options) = (req.conn, head_options(answer, req, framing));
        let Some(close) = write_response(conn, spare, id, |out, framed| {
            *framed = stream;
            write_head(out, &options)
        }) else {
            return false;
        };
        self.finish(key, id, close, false);
        true
    }

    /// After a response's head (and maybe its body) was written: note a close, mark it finished
    /// (whole responses) or streaming, move what is complete to the output, and write unless a batch is on.
    fn finish(&mut self, key: usize, id: u64, close: bool, whole: bool) {
        let conn = self.conns[key].as_mut().unwrap();
        if close {
            conn.no_more_requests = true;
            conn.close_when_done = true;
        }
        conn.queue.set_progress(id, if whole { Progress::Finished } else { Progress::Streaming }, close);
        self.advance(key);
    }

    /// A piece of a streamed body. Returns false when the caller should wait for a drain event
    /// (or the client is gone: then an abort event follows).
    pub fn stream_write(&mut self, id: u64, chunk: &[u8]) -> bool {
        let Some((req, conn)) = self.writable_req(id) else { return false };
        let (key, minor, is_head) = (req.conn, req.minor, req.is_head);
        let Some(entry) = conn.queue.get(id) else { return false };
        if chunk.is_empty() || is_head || matches!(entry.proto, Stream::NoBody) {
            return true;
        }
        if let Stream::Length(left) = entry.proto {
            // Framed by the declared length: the chunk as it is, and never past the length (what
            // lies beyond would be read as the next response); a body that overruns it closes
            // the connection after what fits.
            let fits = chunk.len().min(left as usize);
            entry.proto = Stream::Length(left - fits as u64);
            if fits < chunk.len() {
                self.close_after(key);
            }
            self.append(key, id, &chunk[..fits]);
            return self.below_high_water(id);
        }
        let mut bytes = Vec::with_capacity(chunk.len() + 16);
        if minor >= 1 {
            bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            bytes.extend_from_slice(chunk);
            bytes.extend_from_slice(b"\r\n");
        } else {
            bytes.extend_from_slice(chunk);
        }
        self.append(key, id, &bytes);
        self.below_high_water(id)
    }

    /// Whether a stream may go on writing; if not, it is told to wait for a drain event.
    fn below_high_water(&mut self, id: u64) -> bool {
        let Some((_, conn)) = self.writable_req(id) else { return false };
        let unsent = conn.io.unsent();
        let Some(entry) = conn.queue.get(id) else { return false };
        if unsent + entry.held() > HIGH_WATER {
            entry.want_drain();
            return false;
        }
        true
    }

    pub fn stream_end(&mut self, id: u64) -> bool {
        let Some((req, conn)) = self.writable_req(id) else { return false };
        let (key, minor, is_head) = (req.conn, req.minor, req.is_head);
        let Some(entry) = conn.queue.get(id) else { return false };
        let stream = entry.proto;
        conn.queue.finish(id);
        let last: &[u8] = match stream {
            // Shorter than declared: the client would wait for the rest; closing tells it the body ended.
            Stream::Length(left) => {
                if left > 0 {
                    self.close_after(key);
                }
                b""
            }
            Stream::Open if minor >= 1 && !is_head => b"0\r\n\r\n",
            _ => b"",
        };
        self.append(key, id, last);
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
    fn append(&mut self, key: usize, id: u64, bytes: &[u8]) {
        let conn = self.conns[key].as_mut().unwrap();
        write_response(conn, &mut self.spare, id, |out, _| out.extend_from_slice(bytes));
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
        let State { conns, reqs, spare, .. } = self;
        let Conn { queue, io, body, .. } = conns[key].as_mut().unwrap();
        let mut dropped = Vec::new();
        queue.promote(io.output(), |promoted| match promoted {
            Promoted::Done { id, closes } => {
                if let Some(body) = body.as_mut().filter(|b| b.id == id) {
                    // Answered before its body was read: read the rest and drop it.
                    body.discard = true;
                    body.paused = false;
                }
                if let Some(done) = reqs.remove(&id) {
                    spare.keep(done);
                }
                if closes {
                    // RFC 9112 9.6: after a response that closes the connection, no later request is
                    // answered (node:http drops them too). Handlers still holding one see it aborted.
                    if let Some(body) = body.take() {
                        if !body.delivered {
                            reqs.remove(&body.id);
                        }
                    }
                }
            }
            Promoted::Dropped { id, finished } => {
                if reqs.remove(&id).is_some() && !finished {
                    dropped.push(Event::Abort { id });
                }
            }
        });
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

    /// Sends `length` bytes of the open file `fd` from `offset` as the next piece of a streamed
    /// body framed by its declared Content-Length. Returns false when it can't: the client is
    /// gone, or the body is chunked (the caller streams it instead).
    pub fn stream_file(&mut self, id: u64, fd: std::os::raw::c_int, offset: u64, length: u64) -> bool {
        let Some((req, conn)) = self.writable_req(id) else { return false };
        let (key, is_head) = (req.conn, req.is_head);
        let Some(entry) = conn.queue.get(id) else { return false };
        let Stream::Length(due) = entry.proto else { return is_head || matches!(entry.proto, Stream::NoBody) };
        if length == 0 || is_head {
            return true;
        }
        // Never past the declared length (what lies beyond would be read as the next response).
        let length = length.min(due);
        // SAFETY: fcntl on a descriptor the caller holds open; the duplicate is ours alone.
        let own = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if own < 0 {
            return false;
        }
        entry.proto = Stream::Length(due - length);
        conn.queue.put_in_place(id, InPlaceBody::file(unsafe { std::os::fd::FromRawFd::from_raw_fd(own) }, offset, length));
        self.advance(key);
        true
    }
}

/// Request `id` and its connection, if the connection it came on is still open.
fn writable<'a>(reqs: &'a mut crate::request::Requests, conns: &'a mut [Option<Conn>], id: u64) -> Option<(&'a mut Req, &'a mut Conn)> {
    let req = reqs.get_mut(&id)?;
    let conn = conns.get_mut(req.conn)?.as_mut()?;
    if conn.gen != req.gen {
        return None;
    }
    Some((req, conn))
}

/// Writes bytes of response `id` where they belong now (`Queue::target`): the connection's output
/// (a buffer from `spare` if it has none), or what the response holds. None if it isn't queued.
fn write_response<R>(conn: &mut Conn, spare: &mut Spare, id: u64, write: impl FnOnce(&mut Vec<u8>, &mut Stream) -> R) -> Option<R> {
    Some(match conn.queue.target(id)? {
        Target::Output(stream) => write(conn.io.output_from(spare), stream),
        Target::Held(held, stream) => write(held, stream),
    })
}

/// The head options for the app's answer to `req`.
fn head_options<'a>(app: &'a AppHead<'a>, req: &Req, framing: BodyFraming) -> HeadOptions<'a> {
    HeadOptions { app, framing, minor: req.minor, request_close: !req.keep_alive, head_request: req.is_head }
}
