//! Bodies sent from where they lie, never copied into the connection's output: a range of an
//! open file, sent from the kernel's page cache with sendfile(2), so a large file never passes
//! through JavaScript (or through a buffer of ours); or the Buffer the app answered with, held by
//! a reference (`js::held`), so that a hundred slow readers of one shared Buffer cost one Buffer,
//! not a hundred copies of it (as on the node engine, whose socket writes hold the app's Buffer).
//! The body belongs to a request and goes out in its place in the connection's order: once
//! everything before it is written, `flush` sends it while the socket takes it, then moves on to
//! the responses behind it. What is left of it counts as unsent output, so a slow reader holds
//! back the connection's reading exactly as a large buffered body does. A body not sent when its
//! connection closes is dropped with its request: the file closed, the Buffer let go.
//! On a TLS connection a file is read and encrypted instead (`piece_through_tls`).

use super::socket::{send, would_block, Socket};
use super::sys;
use super::tls::{Sent, TlsConn};
use std::fs::File;

/// Most bytes one flush sends of a body in place, so one fast client can't hold the loop for a
/// whole large file or Buffer: the rest goes on the next writable event.
const SEND_BUDGET: u64 = 1024 * 1024;

pub(crate) struct InPlaceBody {
    place: Place,
    offset: u64,
    left: u64,
}

/// Bytes held where they lie while they are sent (the app's Buffer: see `js::held`); dropping
/// them lets them go.
pub(crate) type Held = Box<dyn AsRef<[u8]>>;

/// Where a body's bytes lie.
enum Place {
    /// The engine's own duplicate of the app's descriptor: closed when the body is sent or dropped.
    File(File),
    /// The app's Buffer, the whole body.
    Buffer(Held),
}

/// How sending a body in place went.
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

impl InPlaceBody {
    /// `length` bytes of `file` from `offset`.
    pub(crate) fn file(file: File, offset: u64, length: u64) -> InPlaceBody {
        InPlaceBody { place: Place::File(file), offset, left: length }
    }

    /// The whole of a held Buffer.
    pub(crate) fn buffer(held: Held) -> InPlaceBody {
        let left = (*held).as_ref().len() as u64;
        InPlaceBody { place: Place::Buffer(held), offset: 0, left }
    }

    /// Bytes not sent yet.
    pub(crate) fn left(&self) -> u64 {
        self.left
    }

    /// The bytes of a Buffer body not sent yet, at most `budget` of them.
    fn unsent(held: &Held, offset: u64, budget: u64) -> &[u8] {
        let bytes = &(**held).as_ref()[offset as usize..];
        &bytes[..bytes.len().min(budget as usize)]
    }

    /// Sends what the socket takes of the body, up to `SEND_BUDGET` (through `tls` on a TLS
    /// connection), counting the bytes in `sent`.
    pub(crate) fn send(&mut self, socket: Socket, mut tls: Option<&mut TlsConn>, sent: &mut u64) -> InPlaceSend {
        let mut budget = SEND_BUDGET;
        while self.left > 0 {
            if budget == 0 {
                return InPlaceSend::Blocked;
            }
            let n = match (tls.as_deref_mut(), &self.place) {
                // SAFETY: the connection's open socket.
                (None, Place::File(file)) => unsafe { sys::send_file(socket, file, self.offset, self.left.min(budget) as usize) },
                // SAFETY: as above.
                (None, Place::Buffer(held)) => unsafe { send(socket, InPlaceBody::unsent(held, self.offset, budget)) },
                (Some(tls), Place::File(file)) => match piece_through_tls(tls, socket, file, self, budget) {
                    Ok(n) => n as isize,
                    Err(outcome) => return outcome,
                },
                (Some(tls), Place::Buffer(held)) => {
                    let mut taken = 0;
                    match tls.send(socket, InPlaceBody::unsent(held, self.offset, budget), &mut taken) {
                        Sent::Failed(_) => return InPlaceSend::Failed,
                        _ if taken == 0 => return InPlaceSend::Blocked,
                        _ => taken as isize,
                    }
                }
            };
            if n > 0 {
                *sent += n as u64;
                self.offset += n as u64;
                self.left -= n as u64;
                budget = budget.saturating_sub(n as u64);
            } else if n < 0 && would_block() {
                return InPlaceSend::Blocked;
            } else {
                return InPlaceSend::Failed;
            }
        }
        InPlaceSend::Done
    }
}
/// On TLS, sendfile can't be used (the bytes must be encrypted): a piece of the file is read
/// and handed to rustls, which takes what its buffer holds. Returns the bytes taken.
fn piece_through_tls(tls: &mut TlsConn, socket: Socket, file: &File, body: &InPlaceBody, budget: u64) -> Result<usize, InPlaceSend> {
    // One TLS record's worth of plaintext.
    let mut buf = [0u8; 16 * 1024];
    let want = body.left.min(budget).min(buf.len() as u64) as usize;
    let read = sys::read_at(file, &mut buf[..want], body.offset);
    if read <= 0 {
        return Err(InPlaceSend::Failed);
    }
    let mut taken = 0;
    match tls.send(socket, &buf[..read as usize], &mut taken) {
        Sent::Failed(_) => Err(InPlaceSend::Failed),
        _ if taken == 0 => Err(InPlaceSend::Blocked),
        _ => Ok(taken),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::socket::{close, read_all, socket_pair};
    use std::io::Write;

    fn file_of(bytes: &[u8]) -> File {
        let path = std::env::temp_dir().join(format!("cog-in-place-{}-{}", std::process::id(), bytes.len()));
        let mut file = File::create(&path).unwrap();
        file.write_all(bytes).unwrap();
        let file = File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        file
    }

    #[test]
    fn a_file_range_is_sent_from_where_it_lies() {
        let (ours, theirs) = socket_pair();
        let mut body = InPlaceBody::file(file_of(b"0123456789"), 2, 5);
        let mut sent = 0;
        assert!(matches!(body.send(ours, None, &mut sent), InPlaceSend::Done));
        assert_eq!((body.left(), sent), (0, 5));
        assert_eq!(read_all(theirs), b"23456");
        close(ours);
        close(theirs);
    }

    #[test]
    fn a_held_buffer_goes_out_a_budget_at_a_time() {
        let (ours, theirs) = socket_pair();
        let size = SEND_BUDGET as usize + 1000;
        let mut body = InPlaceBody::buffer(Box::new(vec![7u8; size]));
        let mut sent = 0;
        let mut received = Vec::new();
        loop {
            let outcome = body.send(ours, None, &mut sent);
            received.extend(read_all(theirs));
            match outcome {
                InPlaceSend::Done => break,
                InPlaceSend::Blocked => assert!(body.left() > 0),
                _ => panic!("failed"),
            }
        }
        assert_eq!((received.len(), sent), (size, size as u64));
        close(ours);
        close(theirs);
    }

    #[test]
    fn a_file_shorter_than_promised_fails() {
        let (ours, theirs) = socket_pair();
        let mut body = InPlaceBody::file(file_of(b"short"), 0, 100);
        let mut sent = 0;
        assert!(matches!(body.send(ours, None, &mut sent), InPlaceSend::Failed));
        assert_eq!(read_all(theirs), b"short");
        close(ours);
        close(theirs);
    }
}
