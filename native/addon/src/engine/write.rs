//! Writing connections: the output a connection's protocol produced goes to its socket, then what
//! the protocol holds behind it (bodies in place, responses now complete), and the socket is
//! polled for what the connection waits for. Past `HIGH_WATER` unsent bytes, reading pauses
//! and streams are told to wait for a drain event: the backpressure a slow client exerts.
//! The answers JavaScript gives go to the connection's HTTP/1.1 state machine (`h1`), then the
//! connection is advanced: written now, or at the end of the batch being answered.

use super::state::{Protocol, State};
use crate::events::Event;
use crate::h1::{self, Piece, WholeBody};
use crate::h2;
use crate::h3;
use crate::io::in_place::InPlaceSend;
use crate::io::{Transport, Written, HIGH_WATER};
use crate::request::Req;
use crate::spare::Spare;
use crate::uv::*;
use cog_framing::response::{AppHead, HeaderBlock};
use std::cell::Cell;

/// What an answer came to on HTTP/2.
enum Answered {
    /// Its stream is not in flight (reset, or answered already).
    Gone,
    /// Queued; the response goes on.
    Written,
    /// Queued, and the response is done: the request is forgotten.
    Done,
}

impl State {
    /// Writes pending output. Returns whether parsing may resume, and drain events for streams.
    pub(crate) fn flush(&mut self, key: usize) -> (bool, Vec<Event>) {
        let mut dropped = Vec::new();
        let mut budget = h2::Conn::write_budget();
        loop {
            let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return (false, dropped) };
            // A body in place sent next, in this loop: its head waits for its first bytes.
            let more = matches!(&conn.proto, Protocol::H1(h1) if h1.in_place_follows());
            match conn.io.write_then(more) {
                Written::All => {}
                Written::Blocked => break,
                Written::Failed => {
                    dropped.extend(self.close_conn(key));
                    return (false, dropped);
                }
            }
            match &mut conn.proto {
                // All written: a body in place due next goes out now, then the responses behind it.
                Protocol::H1(h1) => match h1.send_in_place(&mut conn.io) {
                    InPlaceSend::Done => dropped.extend(h1.promote(&mut conn.io, &mut self.reqs, &mut self.spare)),
                    InPlaceSend::Failed => {
                        dropped.extend(self.close_conn(key));
                        return (false, dropped);
                    }
                    InPlaceSend::Idle | InPlaceSend::Blocked => break,
                },
                // All written: the frames due next (nghttp2's output is taken here only, once a
                // batch: corked).
                Protocol::H2(h2) => {
                    if h2.write_frames(&mut conn.io, &mut self.spare, &mut budget) == 0 {
                        break;
                    }
                }
                Protocol::Ws(_) | Protocol::Tunnel(_) => break,
            }
        }
        self.conns[key].as_mut().unwrap().io.settle_output(&mut self.spare, HIGH_WATER);
        let pending = self.unsent(key);
        let conn = self.conns[key].as_mut().unwrap();
        let mut calls = dropped;
        if let (Protocol::Tunnel(tunnel), 0) = (&mut conn.proto, pending) {
            tunnel.written(&mut conn.io, &mut calls);
        }
        if let Protocol::H2(h2) = &mut conn.proto {
            // Writing frames drains streams and closes those answered whole.
            h2.written(&mut self.reqs, &mut self.spare, key, conn.gen, &mut calls);
        }
        let finished = match &conn.proto {
            Protocol::H1(h1) => h1.finished(),
            Protocol::H2(h2) => h2.finished(),
            Protocol::Ws(ws) => ws.closing(),
            Protocol::Tunnel(tunnel) => tunnel.finished(&conn.io),
        };
        if pending == 0 && finished {
            // The client may still be sending: the connection closes in stages (h1::Conn::linger).
            let now = self.servers[conn.server].as_ref().unwrap().js.now();
            let lingers = match &mut conn.proto {
                Protocol::H1(h1) => h1.linger(&mut conn.io, now),
                _ => false,
            };
            if !lingers {
                calls.extend(self.close_conn(key));
                return (false, calls);
            }
        }
        let wants_input = match &mut conn.proto {
            Protocol::H1(h1) => {
                if pending <= HIGH_WATER {
                    h1.drained(&mut calls);
                }
                h1.wants_input(&conn.io)
            }
            Protocol::H2(h2) => h2.wants_input(&conn.io),
            Protocol::Ws(ws) => {
                ws.drained(&conn.io, &mut calls);
                ws.wants_input(&conn.io)
            }
            Protocol::Tunnel(tunnel) => {
                tunnel.drained(&conn.io, &mut calls);
                tunnel.wants_input(&conn.io)
            }
        };
        let reading = if wants_input { UV_READABLE | UV_DISCONNECT } else { 0 };
        let events = if pending > 0 { UV_WRITABLE | if pending > HIGH_WATER { 0 } else { reading } } else { reading };
        conn.io.poll_for(events);
        (pending <= HIGH_WATER, calls)
    }

    /// Output waiting on the connection: its buffer, the body in place due next (reading pauses
    /// past the high-water mark), and records rustls holds (as one byte: enough to wait for the
    /// socket to take them).
    pub(crate) fn unsent(&self, key: usize) -> usize {
        let conn = self.conns[key].as_ref().unwrap();
        let held = match &conn.proto {
            Protocol::H1(h1) => h1.in_place_left() as usize,
            // Frames nghttp2 has ready (as one byte: enough to poll for writing).
            Protocol::H2(h2) => h2.wants_write() as usize,
            Protocol::Ws(_) | Protocol::Tunnel(_) => 0,
        };
        conn.io.unsent() + held + conn.io.tls_pending() as usize
    }

    /// Request `id`, its connection, and where buffers are reused from, if its connection is
    /// still open; the answer (with `with`) goes to the connection's protocol (`h1`, or `h2`,
    /// which says whether the request is done with), then the connection `advance`s if it wrote
    /// anything.
    fn answer<T>(
        &mut self,
        id: u64,
        with: T,
        h1: impl FnOnce(&mut h1::Conn, &mut Transport, &Req, &mut Spare, T) -> bool,
        h2: impl FnOnce(&mut h2::Conn, &Req, T) -> Answered,
    ) -> bool {
        let Some(req) = self.reqs.get(id) else { return false };
        let (key, gen) = req.conn();
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen) else { return false };
        match &mut conn.proto {
            Protocol::H1(c) => {
                if !h1(c, &mut conn.io, req, &mut self.spare, with) {
                    return false;
                }
            }
            Protocol::H2(c) => match h2(c, req, with) {
                Answered::Gone => return false,
                Answered::Written => {}
                Answered::Done => self.forget(id),
            },
            Protocol::Ws(_) | Protocol::Tunnel(_) => return false,
        }
        self.advance(key);
        true
    }

    /// A request answered whole on HTTP/2: its record goes, its buffers to the next request.
    pub(super) fn forget(&mut self, id: u64) {
        if let Some(req) = self.reqs.remove(id) {
            let (head, headers) = req.into_buffers();
            self.spare.keep(head, headers);
        }
    }

    /// A whole response (see `h1::Conn::respond`). Returns false when the client is gone.
    pub(crate) fn respond(&mut self, id: u64, answer: &AppHead, body: WholeBody) -> bool {
        let body = match self.h3_respond(id, answer, body) {
            Ok(answered) => return answered,
            Err(body) => body,
        };
        self.answer(
            id,
            body,
            |h1, io, req, spare, body| h1.respond(io, spare, req, id, answer, body),
            |h2, req, body| {
                let bytes: &[u8] = match &body {
                    WholeBody::Bytes(bytes) => bytes,
                    WholeBody::Held(held) => (**held).as_ref(),
                    WholeBody::File { .. } => return h2_file_response(h2, req, answer, body),
                };
                if h2.respond(req, answer, bytes) {
                    Answered::Done
                } else {
                    Answered::Gone
                }
            },
        )
    }

    /// Starts a streamed response (see `h1::Conn::stream_start`).
    pub fn stream_start(&mut self, id: u64, answer: &AppHead) -> bool {
        if let Some(started) = self.h3_answer(id, false, |h3, req| (h3.stream_start(req, answer), false)) {
            return started;
        }
        self.answer(
            id,
            (),
            |h1, io, req, spare, ()| h1.stream_start(io, spare, req, id, answer),
            |h2, req, ()| if h2.stream_start(req, answer) { Answered::Written } else { Answered::Gone },
        )
    }

    /// A piece of a streamed body. Returns false when the caller should wait for a drain event
    /// (or the client is gone: then an abort event follows).
    pub fn stream_write(&mut self, id: u64, chunk: &[u8]) -> bool {
        let on_h3 = self.h3_answer(id, false, |h3, req| match h3.stream_write(req, chunk) {
            h3::Piece::Written { more } => (more, false),
            h3::Piece::Dropped => (true, false),
            h3::Piece::Gone => (false, false),
        });
        if let Some(more) = on_h3 {
            return more;
        }
        let piece = Cell::new(Piece::Gone);
        // On HTTP/2: whether the stream's buffer is under its high-water mark.
        let more = Cell::new(false);
        self.answer(
            id,
            (),
            |h1, io, req, spare, ()| {
                piece.set(h1.stream_write(io, spare, req, id, chunk));
                piece.get() == Piece::Written
            },
            |h2, req, ()| match h2.stream_write(req, chunk) {
                h2::Piece::Written { more: under } => {
                    piece.set(Piece::Written);
                    more.set(under);
                    Answered::Written
                }
                h2::Piece::Dropped => {
                    piece.set(Piece::Dropped);
                    Answered::Gone
                }
                h2::Piece::Gone => Answered::Gone,
            },
        );
        match piece.get() {
            Piece::Gone => false,
            Piece::Dropped => true,
            Piece::Written => {
                let Some(req) = self.reqs.get(id) else { return false };
                let (key, gen) = req.conn();
                let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen) else { return false };
                match &mut conn.proto {
                    Protocol::H1(h1) => h1.below_high_water(&conn.io, id),
                    Protocol::H2(_) => more.get(),
                    Protocol::Ws(_) | Protocol::Tunnel(_) => false,
                }
            }
        }
    }

    /// The end of a streamed body, with the app's trailer fields (`res.addTrailers`), if any:
    /// on HTTP/2 a last HEADERS frame after the DATA, on HTTP/1.1 lines after the last chunk
    /// of a chunked body (a body framed by its length, or HTTP/1.0's, has no room for them).
    pub fn stream_end(&mut self, id: u64, trailers: Option<HeaderBlock>) -> bool {
        let mut trailers = Some(trailers);
        if let Some(ended) = self.h3_answer(id, false, |h3, req| {
            let ended = h3.stream_end(req, trailers.take().flatten());
            (ended, ended)
        }) {
            return ended;
        }
        let trailers = trailers.flatten();
        self.answer(
            id,
            (),
            |h1, io, req, spare, ()| h1.stream_end(io, spare, req, id, trailers),
            |h2, req, ()| if h2.stream_end(req, trailers) { Answered::Done } else { Answered::Gone },
        )
    }

    /// Sends `length` bytes of the open file `fd` from `offset` as the next piece of a streamed
    /// body framed by its declared Content-Length (the engine keeps a duplicate of `fd`). Returns
    /// false when it can't: the client is gone, or the body is chunked (the caller streams it instead).
    pub fn stream_file(&mut self, id: u64, fd: u32, offset: u64, length: u64) -> bool {
        let piece = Cell::new(Piece::Gone);
        let duplicate = || crate::io::file::duplicate(fd);
        if let Some(sent) = self.h3_answer(id, false, |h3, req| (h3.stream_file(req, duplicate(), offset, length) != h3::Piece::Gone, false)) {
            return sent;
        }
        self.answer(
            id,
            duplicate,
            |h1, _, req, _, duplicate| {
                piece.set(h1.stream_file(req, id, duplicate, offset, length));
                piece.get() == Piece::Written
            },
            |h2, req, duplicate| match h2.stream_file(req, duplicate, offset, length) {
                h2::Piece::Written { .. } => {
                    piece.set(Piece::Written);
                    Answered::Written
                }
                h2::Piece::Dropped => {
                    piece.set(Piece::Dropped);
                    Answered::Gone
                }
                h2::Piece::Gone => Answered::Gone,
            },
        );
        piece.get() != Piece::Gone
    }

    /// Moves what is complete on the connection to its output (`promote`); writes now unless a
    /// batch is being answered (then the batch's end writes it all at once).
    pub(crate) fn advance(&mut self, key: usize) {
        let conn = self.conns[key].as_mut().unwrap();
        let (dropped, h2) = match &mut conn.proto {
            Protocol::H1(h1) => (h1.promote(&mut conn.io, &mut self.reqs, &mut self.spare), false),
            Protocol::H2(_) => (Vec::new(), true),
            Protocol::Ws(_) | Protocol::Tunnel(_) => (Vec::new(), false),
        };
        let (server, in_batch) = (conn.server, conn.in_batch);
        if !dropped.is_empty() {
            self.defer(server, dropped);
        }
        if !in_batch && h2 {
            // HTTP/2's streams share the connection: their answers given in one turn of the loop
            // go out in one write (nghttp2's frames are taken once, when it is written).
            self.cork(key);
        } else if !in_batch {
            let (_, calls) = self.flush(key);
            if !calls.is_empty() {
                self.defer(server, calls);
            }
        }
    }

    /// Cuts the connection of a request (a failed stream, a destroyed response); the other
    /// requests on it are told they were aborted, from the loop.
    pub fn destroy(&mut self, id: u64) {
        if let Some(at) = self.h3_stream(id) {
            // On HTTP/3 only its stream is cut; the connection's others go on.
            return self.h3_cancel(id, at);
        }
        let Some(req) = self.reqs.get(id) else { return };
        let (key, gen) = req.conn();
        let stream = req.stream();
        if let Some(Protocol::H2(h2)) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen).map(|c| &mut c.proto) {
            // On HTTP/2 only its stream is cut (RST_STREAM); the connection's others go on.
            h2.cancel(stream);
            self.forget(id);
            self.advance(key);
            return;
        }
        let Some(server) = self.conns.get(key).and_then(Option::as_ref).filter(|c| c.gen == gen).map(|c| c.server) else { return };
        let calls: Vec<Event> = self.close_conn(key).into_iter().filter(|c| !matches!(c, Event::Abort { id: other } if *other == id)).collect();
        if !calls.is_empty() {
            self.defer(server, calls);
        }
    }
}

/// A whole response whose body is a file's range, on HTTP/2: its head (with the Content-Length
/// JavaScript declared), the range read into DATA frames as the stream's window allows, the end.
fn h2_file_response(h2: &mut h2::Conn, req: &Req, answer: &AppHead, body: WholeBody) -> Answered {
    let WholeBody::File { file, offset, length } = body else { return Answered::Gone };
    if !h2.stream_start(req, answer) {
        return Answered::Gone;
    }
    let sent = !matches!(h2.stream_file(req, || Some(file), offset, length), h2::Piece::Gone);
    if h2.stream_end(req, None) && sent {
        Answered::Done
    } else {
        Answered::Gone
    }
}

impl State {
    /// A whole response on HTTP/3: whether it was sent; or the body back for a request of a
    /// TCP connection.
    fn h3_respond<'b>(&mut self, id: u64, answer: &AppHead, body: WholeBody<'b>) -> Result<bool, WholeBody<'b>> {
        if self.h3_stream(id).is_none() {
            return Err(body);
        }
        let sent = self.h3_answer(id, false, |h3, req| {
            let sent = match body {
                WholeBody::Bytes(bytes) => h3.respond(req, answer, bytes),
                WholeBody::Held(held) => h3.respond(req, answer, (*held).as_ref()),
                WholeBody::File { file, offset, length } => {
                    h3.stream_start(req, answer) && h3.stream_file(req, Some(file), offset, length) != h3::Piece::Gone && h3.stream_end(req, None)
                }
            };
            (sent, true)
        });
        Ok(sent.unwrap_or(false))
    }
}
