//! Writing connections: the output a connection's protocol produced goes to its socket, then what
//! the protocol holds behind it (bodies in place, responses now complete), and the socket is
//! polled for what the connection waits for. Past `HIGH_WATER` unsent bytes, reading pauses
//! and streams are told to wait for a drain event: the backpressure a slow client exerts.
//! The answers JavaScript gives go to the connection's HTTP/1.1 state machine (`h1`), then the
//! connection is advanced: written now, or at the end of the batch being answered.

use crate::events::Event;
use crate::h1::{self, Piece, WholeBody};
use crate::io::{Transport, Written, HIGH_WATER};
use crate::request::Req;
use crate::spare::Spare;
use super::state::{Protocol, State};
use crate::uv::*;
use cog_framing::response::AppHead;

impl State {
    /// Writes pending output. Returns whether parsing may resume, and drain events for streams.
    pub(crate) fn flush(&mut self, key: usize) -> (bool, Vec<Event>) {
        let mut dropped = Vec::new();
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return (false, dropped) };
        let written = match &mut conn.proto {
            // The output, then a body in place due next, then the responses behind it.
            Protocol::H1(h1) => h1.write_out(&mut conn.io, &mut self.reqs, &mut self.spare, &mut dropped),
            Protocol::Ws(_) => conn.io.write(),
        };
        if let Written::Failed = written {
            dropped.extend(self.close_conn(key));
            return (false, dropped);
        }
        self.conns[key].as_mut().unwrap().io.settle_output(&mut self.spare, HIGH_WATER);
        let pending = self.unsent(key);
        let conn = self.conns[key].as_mut().unwrap();
        let finished = match &conn.proto {
            Protocol::H1(h1) => h1.finished(),
            Protocol::Ws(ws) => ws.closing(),
        };
        if pending == 0 && finished {
            dropped.extend(self.close_conn(key));
            return (false, dropped);
        }
        let mut calls = dropped;
        let wants_input = match &mut conn.proto {
            Protocol::H1(h1) => {
                if pending <= HIGH_WATER {
                    h1.drained(&mut calls);
                }
                h1.wants_input(&conn.io)
            }
            Protocol::Ws(ws) => {
                ws.drained(&conn.io, &mut calls);
                ws.wants_input(&conn.io)
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
        let in_place = if let Protocol::H1(h1) = &conn.proto { h1.in_place_left() as usize } else { 0 };
        conn.io.unsent() + in_place + conn.io.tls_pending() as usize
    }

    /// Request `id`, its connection, and where buffers are reused from, if its connection is
    /// still open; then `advance`s the connection if `answer` wrote anything (says true).
    fn answer(&mut self, id: u64, answer: impl FnOnce(&mut h1::Conn, &mut Transport, &Req, &mut Spare) -> bool) -> bool {
        let Some(req) = self.reqs.get(id) else { return false };
        let (key, gen) = req.conn();
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen) else { return false };
        let Protocol::H1(h1) = &mut conn.proto else { return false };
        if !answer(h1, &mut conn.io, req, &mut self.spare) {
            return false;
        }
        self.advance(key);
        true
    }

    /// A whole response (see `h1::Conn::respond`). Returns false when the client is gone.
    pub(crate) fn respond(&mut self, id: u64, answer: &AppHead, body: WholeBody) -> bool {
        self.answer(id, |h1, io, req, spare| h1.respond(io, spare, req, id, answer, body))
    }

    /// Starts a streamed response (see `h1::Conn::stream_start`).
    pub fn stream_start(&mut self, id: u64, answer: &AppHead) -> bool {
        self.answer(id, |h1, io, req, spare| h1.stream_start(io, spare, req, id, answer))
    }

    /// A piece of a streamed body. Returns false when the caller should wait for a drain event
    /// (or the client is gone: then an abort event follows).
    pub fn stream_write(&mut self, id: u64, chunk: &[u8]) -> bool {
        let mut piece = Piece::Gone;
        self.answer(id, |h1, io, req, spare| {
            piece = h1.stream_write(io, spare, req, id, chunk);
            piece == Piece::Written
        });
        match piece {
            Piece::Gone => false,
            Piece::Dropped => true,
            Piece::Written => {
                let Some(req) = self.reqs.get(id) else { return false };
                let (key, gen) = req.conn();
                let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen) else { return false };
                match &mut conn.proto {
                    Protocol::H1(h1) => h1.below_high_water(&conn.io, id),
                    Protocol::Ws(_) => false,
                }
            }
        }
    }

    pub fn stream_end(&mut self, id: u64) -> bool {
        self.answer(id, |h1, io, req, spare| h1.stream_end(io, spare, req, id))
    }

    /// Sends `length` bytes of the open file `fd` from `offset` as the next piece of a streamed
    /// body framed by its declared Content-Length (the engine keeps a duplicate of `fd`). Returns
    /// false when it can't: the client is gone, or the body is chunked (the caller streams it instead).
    pub fn stream_file(&mut self, id: u64, fd: std::os::raw::c_int, offset: u64, length: u64) -> bool {
        let mut piece = Piece::Gone;
        let duplicate = || {
            // SAFETY: fcntl on a descriptor the caller holds open; the duplicate is ours alone.
            let own = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
            (own >= 0).then(|| unsafe { std::os::fd::FromRawFd::from_raw_fd(own) })
        };
        self.answer(id, |h1, _, req, _| {
            piece = h1.stream_file(req, id, duplicate, offset, length);
            piece == Piece::Written
        });
        piece != Piece::Gone
    }

    /// Moves what is complete on the connection to its output (`promote`); writes now unless a
    /// batch is being answered (then the batch's end writes it all at once).
    pub(crate) fn advance(&mut self, key: usize) {
        let conn = self.conns[key].as_mut().unwrap();
        let dropped = match &mut conn.proto {
            Protocol::H1(h1) => h1.promote(&mut conn.io, &mut self.reqs, &mut self.spare),
            Protocol::Ws(_) => Vec::new(),
        };
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

    /// Cuts the connection of a request (a failed stream, a destroyed response); the other
    /// requests on it are told they were aborted, from the loop.
    pub fn destroy(&mut self, id: u64) {
        let Some(req) = self.reqs.get(id) else { return };
        let (key, gen) = req.conn();
        let Some(server) = self.conns.get(key).and_then(Option::as_ref).filter(|c| c.gen == gen).map(|c| c.server) else { return };
        let calls: Vec<Event> = self.close_conn(key).into_iter().filter(|c| !matches!(c, Event::Abort { id: other } if *other == id)).collect();
        if !calls.is_empty() {
            self.defer(server, calls);
        }
    }
}
