//! Bodies sent from where they lie, never copied into the connection's output: a range of an
//! open file, sent from the kernel's page cache with sendfile(2), so a large file never passes
//! through JavaScript (or through a buffer of ours); or the Buffer the app answered with, held by
//! a reference (`held.rs`), so that a hundred slow readers of one shared Buffer cost one Buffer,
//! not a hundred copies of it (as on the node engine, whose socket writes hold the app's Buffer).
//! The body belongs to a request and goes out in its place in the connection's order: once
//! everything before it is written, `flush` sends it while the socket takes it, then moves on to
//! the responses behind it. What is left of it counts as unsent output, so a slow reader holds
//! back the connection's reading exactly as a large buffered body does. A body not sent when its
//! connection closes is dropped with its request: the file closed, the Buffer let go.
//! On a TLS connection a file is read and encrypted instead (`piece_through_tls`).

use crate::held::HeldBuffer;
use crate::socket::would_block;
use crate::state::State;
use crate::tls::{Sent, TlsConn};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::raw::c_int;

/// Most bytes one flush sends of a body in place, so one fast client can't hold the loop for a
/// whole large file or Buffer: the rest goes on the next writable event.
const SEND_BUDGET: u64 = 1024 * 1024;

pub(crate) struct InPlaceBody {
    place: Place,
    offset: u64,
    left: u64,
}

/// Where a body's bytes lie.
enum Place {
    /// The engine's own duplicate of the app's descriptor: closed when the body is sent or dropped.
    File(File),
    /// The app's Buffer, the whole body.
    Buffer(HeldBuffer),
}

impl InPlaceBody {
    pub(crate) fn left(&self) -> u64 {
        self.left
    }

    pub(crate) fn buffer(held: HeldBuffer) -> InPlaceBody {
        let left = held.bytes().len() as u64;
        InPlaceBody { place: Place::Buffer(held), offset: 0, left }
    }

    /// The bytes of a Buffer body not sent yet, at most `budget` of them.
    fn unsent(held: &HeldBuffer, offset: u64, budget: u64) -> &[u8] {
        let bytes = &held.bytes()[offset as usize..];
        &bytes[..bytes.len().min(budget as usize)]
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
}

/// How sending a connection's body in place went.
pub(crate) enum InPlaceSend {
    /// No body in place is due on the connection now.
    Idle,
    /// The socket is full; the rest goes on a writable event.
    Blocked,
    /// The body is all out: the responses behind it may follow.
    Done,
    /// The socket or the file failed (or the file shrank): the connection must close.
    Failed,
}

impl State {
    /// Sends `length` bytes of the open file `fd` from `offset` as the next piece of a streamed
    /// body framed by its declared Content-Length. Returns false when it can't: the client is
    /// gone, or the body is chunked (the caller streams it instead).
    pub fn stream_file(&mut self, id: u64, fd: c_int, offset: u64, length: u64) -> bool {
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
        req.in_place = Some(InPlaceBody { place: Place::File(unsafe { File::from_raw_fd(own) }), offset, left: length });
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
        let socket = conn.fd;
        let mut tls = conn.tls.as_deref_mut();
        let sent = &mut conn.sent;
        let Some(body) = conn.queue.front().and_then(|id| self.reqs.get_mut(id)).and_then(|req| req.held.is_empty().then_some(req.in_place.as_mut()).flatten()) else {
            return InPlaceSend::Idle;
        };
        let mut budget = SEND_BUDGET;
        while body.left > 0 {
            if budget == 0 {
                return InPlaceSend::Blocked;
            }
            let n = match (tls.as_deref_mut(), &body.place) {
                (None, Place::File(file)) => unsafe { send_piece(socket, file, body, budget) },
                (None, Place::Buffer(held)) => unsafe { crate::socket::send(socket, InPlaceBody::unsent(held, body.offset, budget)) },
                (Some(tls), Place::File(file)) => match piece_through_tls(tls, socket, file, body, budget) {
                    Ok(n) => n as isize,
                    Err(outcome) => return outcome,
                },
                (Some(tls), Place::Buffer(held)) => {
                    let mut taken = 0;
                    match tls.send(socket, InPlaceBody::unsent(held, body.offset, budget), &mut taken) {
                        Sent::Failed => return InPlaceSend::Failed,
                        _ if taken == 0 => return InPlaceSend::Blocked,
                        _ => taken as isize,
                    }
                }
            };
            if n > 0 {
                *sent += n as u64;
                body.offset += n as u64;
                body.left -= n as u64;
                budget = budget.saturating_sub(n as u64);
            } else if n < 0 && would_block() {
                return InPlaceSend::Blocked;
            } else {
                return InPlaceSend::Failed;
            }
        }
        let conn = self.conns[key].as_mut().unwrap();
        conn.in_place_bodies -= 1;
        let front = *conn.queue.front().unwrap();
        self.reqs.get_mut(&front).unwrap().in_place = None;
        InPlaceSend::Done
    }
}

/// One sendfile(2) call (Node ignores SIGPIPE, so a peer that left gives EPIPE, not a signal).
#[cfg(target_os = "linux")]
unsafe fn send_piece(socket: c_int, file: &File, body: &InPlaceBody, budget: u64) -> isize {
    let mut offset = body.offset as libc::off_t;
    libc::sendfile(socket, file.as_raw_fd(), &mut offset, body.left.min(budget) as usize)
}

/// Elsewhere, a read and a send of what the socket takes (the offset moves by what was sent).
#[cfg(not(target_os = "linux"))]
unsafe fn send_piece(socket: c_int, file: &File, body: &InPlaceBody, budget: u64) -> isize {
    let mut buf = [0u8; 64 * 1024];
    let want = body.left.min(budget).min(buf.len() as u64) as usize;
    let read = libc::pread(file.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, want, body.offset as libc::off_t);
    if read <= 0 {
        return read;
    }
    crate::socket::send(socket, &buf[..read as usize])
}

/// On TLS, sendfile can't be used (the bytes must be encrypted): a piece of the file is read
/// and handed to rustls, which takes what its buffer holds. Returns the bytes taken.
fn piece_through_tls(tls: &mut TlsConn, socket: c_int, file: &File, body: &InPlaceBody, budget: u64) -> Result<usize, InPlaceSend> {
    // One TLS record's worth of plaintext.
    let mut buf = [0u8; 16 * 1024];
    let want = body.left.min(budget).min(buf.len() as u64) as usize;
    // SAFETY: pread into a buffer of `want` bytes or more.
    let read = unsafe { libc::pread(file.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, want, body.offset as libc::off_t) };
    if read <= 0 {
        return Err(InPlaceSend::Failed);
    }
    let mut taken = 0;
    match tls.send(socket, &buf[..read as usize], &mut taken) {
        Sent::Failed => Err(InPlaceSend::Failed),
        _ if taken == 0 => Err(InPlaceSend::Blocked),
        _ => Ok(taken),
    }
}
