//! File bodies: a range of an open file sent from the kernel's page cache to the socket with
//! sendfile(2), so a large file never passes through JavaScript (or through a buffer of ours).
//! The range belongs to a request and goes out in its place in the connection's order: once
//! everything before it is written, `flush` sends it while the socket takes it, then moves on to
//! the responses behind it. What is left of it counts as unsent output, so a slow reader holds
//! back the connection's reading exactly as a large buffered body does.
//! On a TLS connection the file is read and encrypted instead (`piece_through_tls`).

use crate::socket::would_block;
use crate::state::State;
use crate::tls::{Sent, TlsConn};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::raw::c_int;

/// Most bytes one flush sends from a file, so one fast client can't hold the loop for a whole
/// large file: the rest goes on the next writable event.
const SEND_BUDGET: u64 = 1024 * 1024;

pub(crate) struct FileBody {
    /// The engine's own duplicate of the app's descriptor: closed when the body is sent or dropped.
    file: File,
    offset: u64,
    left: u64,
}

impl FileBody {
    pub(crate) fn left(&self) -> u64 {
        self.left
    }
}

impl State {
    /// What is left of the file body due next on the connection (0 if none): unsent output.
    pub(crate) fn file_left(&self, key: usize) -> u64 {
        let conn = self.conns[key].as_ref().unwrap();
        if conn.file_bodies == 0 {
            return 0;
        }
        conn.queue.front().and_then(|id| self.reqs.get(id)).and_then(|req| req.file.as_ref()).map_or(0, FileBody::left)
    }
}

/// How sending a connection's file body went.
pub(crate) enum FileSend {
    /// No file body is due on the connection now.
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
        req.file = Some(FileBody { file: unsafe { File::from_raw_fd(own) }, offset, left: length });
        let key = req.conn;
        self.conns[key].as_mut().unwrap().file_bodies += 1;
        self.advance(key);
        true
    }

    /// Sends the file body of the connection's oldest request, if it is due (all before it written).
    pub(crate) fn send_file(&mut self, key: usize) -> FileSend {
        let Some(conn) = self.conns.get_mut(key).and_then(Option::as_mut) else { return FileSend::Idle };
        if conn.file_bodies == 0 {
            return FileSend::Idle;
        }
        let socket = conn.fd;
        let mut tls = conn.tls.as_deref_mut();
        let Some(body) = conn.queue.front().and_then(|id| self.reqs.get_mut(id)).and_then(|req| req.held.is_empty().then_some(req.file.as_mut()).flatten()) else {
            return FileSend::Idle;
        };
        let mut budget = SEND_BUDGET;
        while body.left > 0 {
            if budget == 0 {
                return FileSend::Blocked;
            }
            let n = match tls.as_deref_mut() {
                None => unsafe { send_piece(socket, body, budget) },
                Some(tls) => match piece_through_tls(tls, socket, body, budget) {
                    Ok(n) => n as isize,
                    Err(outcome) => return outcome,
                },
            };
            if n > 0 {
                body.offset += n as u64;
                body.left -= n as u64;
                budget = budget.saturating_sub(n as u64);
            } else if n < 0 && would_block() {
                return FileSend::Blocked;
            } else {
                return FileSend::Failed;
            }
        }
        let conn = self.conns[key].as_mut().unwrap();
        conn.file_bodies -= 1;
        let front = *conn.queue.front().unwrap();
        self.reqs.get_mut(&front).unwrap().file = None;
        FileSend::Done
    }
}

/// One sendfile(2) call (Node ignores SIGPIPE, so a peer that left gives EPIPE, not a signal).
#[cfg(target_os = "linux")]
unsafe fn send_piece(socket: c_int, body: &mut FileBody, budget: u64) -> isize {
    let mut offset = body.offset as libc::off_t;
    libc::sendfile(socket, body.file.as_raw_fd(), &mut offset, body.left.min(budget) as usize)
}

/// Elsewhere, a read and a send of what the socket takes (the offset moves by what was sent).
#[cfg(not(target_os = "linux"))]
unsafe fn send_piece(socket: c_int, body: &mut FileBody, budget: u64) -> isize {
    let mut buf = [0u8; 64 * 1024];
    let want = body.left.min(budget).min(buf.len() as u64) as usize;
    let read = libc::pread(body.file.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, want, body.offset as libc::off_t);
    if read <= 0 {
        return read;
    }
    crate::socket::send(socket, &buf[..read as usize])
}

/// On TLS, sendfile can't be used (the bytes must be encrypted): a piece of the file is read
/// and handed to rustls, which takes what its buffer holds. Returns the bytes taken.
fn piece_through_tls(tls: &mut TlsConn, socket: c_int, body: &FileBody, budget: u64) -> Result<usize, FileSend> {
    // One TLS record's worth of plaintext.
    let mut buf = [0u8; 16 * 1024];
    let want = body.left.min(budget).min(buf.len() as u64) as usize;
    // SAFETY: pread into a buffer of `want` bytes or more.
    let read = unsafe { libc::pread(body.file.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, want, body.offset as libc::off_t) };
    if read <= 0 {
        return Err(FileSend::Failed);
    }
    let mut taken = 0;
    match tls.send(socket, &buf[..read as usize], &mut taken) {
        Sent::Failed => Err(FileSend::Failed),
        _ if taken == 0 => Err(FileSend::Blocked),
        _ => Ok(taken),
    }
}
