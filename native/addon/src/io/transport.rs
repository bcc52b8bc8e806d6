//! One connection's socket and its bytes: what arrived and is not consumed yet (plaintext, on
//! TLS too), what waits to be sent, and the libuv poll handle that says when the socket is
//! ready. The protocol state machines above read `input` and append to `output`; they never
//! touch the socket. A cleartext connection has no TLS state and pays one `None` check per
//! read and write for it.

use super::in_place::{InPlaceBody, InPlaceSend};
use super::socket::{close_watched, local_address, peek, recv, reset_on_close, send, send_more, set_no_delay, shutdown_write, waiting, would_block, Socket};
use super::tls::{Peer, Received, Sent, TlsConn};
use crate::events::SocketFailure;
use crate::spare::Spare;
use crate::uv::*;
use std::os::raw::c_int;

/// Most bytes read from one connection per readiness event, so one client can't starve others.
const READ_BUDGET: usize = 256 * 1024;
/// The shared read buffer's size: one read takes at most this much.
const RX_SIZE: usize = 64 * 1024;
/// Past this many unsent bytes on a connection, it is read no more (and streams wait for a
/// drain event): the backpressure a slow client exerts.
pub(crate) const HIGH_WATER: usize = 256 * 1024;
/// Past this, an emptied input buffer is given back rather than kept for the connection.
const KEEP_INPUT: usize = 16 * 1024;

pub(crate) struct Transport {
    fd: Socket,
    poll: *mut uv_handle_t,
    /// What the poll handle waits for now (`UV_READABLE`…, 0: stopped).
    polling: c_int,
    /// Called by libuv when the socket is ready (the engine's).
    on_ready: uv_poll_cb,
    tls: Option<Box<TlsConn>>,
    /// Bytes received (plaintext) that the protocol has not consumed yet.
    input: Vec<u8>,
    /// Bytes to send: `output[sent_from..]` are not on the socket yet.
    output: Vec<u8>,
    sent_from: usize,
    /// Bytes of output the socket has taken, ever: the send timeout's sign that the client reads.
    sent: u64,
    /// The client ended its side (end of stream, or TLS close_notify): nothing more will arrive.
    ended: bool,
    /// The error a read or write of the socket failed with, or the client's broken TLS (a tunnel
    /// tells JavaScript, as a Node socket emits it); the kernel reports a socket's error once,
    /// so it is kept. Boxed (rare, and 48 bytes inline): every connection pays for what is inline.
    failure: Option<Box<SocketFailure>>,
    /// `close` ran: the descriptor is gone (and its number may be another socket's already).
    closed: bool,
}

/// What a connection's protocol wants done with the socket's input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Input {
    /// Read it: requests (or frames) may be in it.
    Read,
    /// Leave it in the socket: an upgrade waits for the app's answer, or JavaScript's stream of a
    /// body is full.
    Wait,
    /// Read it and drop it: nothing more is parsed (a client still sending after a refusal).
    Drop,
}

/// What `read` found.
pub(crate) enum Read {
    /// What the socket had is in the input (maybe nothing: a TLS handshake under way); more may come.
    Open,
    /// The client ended its side (end of stream, or TLS close_notify): nothing more will arrive.
    Ended,
    /// The socket failed, or the client broke TLS: the connection must close.
    Failed,
}

/// What `write` managed.
pub(crate) enum Written {
    /// All the output is on the socket.
    All,
    /// The socket is full: the rest goes on a writable event.
    Blocked,
    /// The socket failed: the connection must close.
    Failed,
}

impl Transport {
    /// A connection's transport over the non-blocking socket `fd`, watched by `poll` (initialised
    /// on Node's loop by the caller, which starts it for reading), with `tls` on a TLS server.
    pub(crate) fn new(fd: Socket, poll: *mut uv_handle_t, on_ready: uv_poll_cb, tls: Option<Box<TlsConn>>) -> Transport {
        Transport {
            fd,
            poll,
            polling: UV_READABLE | UV_DISCONNECT,
            on_ready,
            tls,
            input: Vec::new(),
            output: Vec::new(),
            sent_from: 0,
            sent: 0,
            ended: false,
            failure: None,
            closed: false,
        }
    }

    /// Reads what the socket has, up to a budget, into the input; on TLS, decrypted. `rx` is the
    /// buffer every connection's reads land in first: with thousands of connections, a large
    /// read buffer each (64 KiB) spread reads over that much memory, and the cache misses cost
    /// more than copying the few hundred bytes that arrived into the connection's input.
    pub(crate) fn read(&mut self, rx: &mut Vec<u8>) -> Read {
        self.read_within(rx, READ_BUDGET)
    }

    /// `read`, one read of the shared buffer's size at most: for a connection reading request
    /// heads, whose next bytes may be the start of a long body. What follows the head is then
    /// read after it is parsed, when the body's pieces are read straight into Buffers of their
    /// own (`waiting`, `read_into`), rather than through the input; a burst of pipelined requests
    /// longer than a read waits for the next readable event.
    pub(crate) fn read_once(&mut self, rx: &mut Vec<u8>) -> Read {
        self.read_within(rx, RX_SIZE)
    }

    fn read_within(&mut self, rx: &mut Vec<u8>, budget: usize) -> Read {
        let read = self.read_some(rx, budget);
        if let Read::Ended = read {
            self.ended = true;
        }
        read
    }

    /// Whether the client ended its side (a `read` found the end).
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    fn read_some(&mut self, rx: &mut Vec<u8>, budget: usize) -> Read {
        if rx.len() < RX_SIZE {
            rx.resize(RX_SIZE, 0);
        }
        let mut total = 0;
        while total < budget {
            // SAFETY: `recv` writes within the slice; `fd` is this connection's socket, open until
            // `close`.
            let n = unsafe { recv(self.fd, &mut rx[..RX_SIZE]) };
            if n > 0 {
                let bytes = &rx[..n as usize];
                match self.tls.as_deref_mut() {
                    None => self.input.extend_from_slice(bytes),
                    // On TLS, what was read becomes plaintext input (or says the client is done).
                    Some(tls) => match tls.receive(bytes, self.fd, &mut self.input) {
                        Received::Data => {}
                        Received::Ended => return Read::Ended,
                        Received::Broken(failure) => {
                            self.failure = Some(Box::new(failure));
                            return Read::Failed;
                        }
                        Received::Failed => return Read::Failed,
                    },
                }
            } else if n == 0 {
                return Read::Ended;
            } else if would_block() {
                break;
            } else {
                self.failed(false);
                return Read::Failed;
            }
            total += n as usize;
            if (n as usize) < RX_SIZE {
                break;
            }
        }
        Read::Open
    }

    /// Reads and drops what the socket has (a client still sending after nothing more is
    /// parsed); false once the client is gone.
    pub(crate) fn read_and_drop(&mut self) -> bool {
        let mut scratch = [0u8; 16 * 1024];
        // SAFETY: `recv` writes within `scratch`; `fd` is this connection's socket.
        let n = unsafe { recv(self.fd, &mut scratch) };
        !(n == 0 || (n < 0 && !would_block()))
    }

    pub(crate) fn input(&self) -> &[u8] {
        &self.input
    }

    /// The input and the output at once (a parser reads one and answers into the other).
    pub(crate) fn buffers(&mut self) -> (&mut Vec<u8>, &mut Vec<u8>) {
        (&mut self.input, &mut self.output)
    }

    /// Drops the first `used` bytes of the input (consumed); a buffer a large body or a burst
    /// grew is given back once empty, so that an idle connection doesn't hold that much.
    pub(crate) fn consume(&mut self, used: usize) {
        self.input.drain(..used);
        self.shrink_input();
    }

    /// Bytes waiting in the socket to be read (FIONREAD), on cleartext; 0 on TLS, whose
    /// records are decrypted into the input. A body's next piece is read at once, that long,
    /// straight into a buffer of its own (`read_into`).
    pub(crate) fn waiting(&self) -> usize {
        if self.tls.is_some() {
            return 0;
        }
        waiting(self.fd)
    }

    /// Whether the socket holds bytes not yet read (a request the client sent before the server
    /// could look), peeked at without taking them: closing over them would send a reset, and
    /// lose the request, where reading them lets it be answered.
    pub(crate) fn unread(&self) -> bool {
        peek(self.fd)
    }

    /// Reads into `dest` straight from the socket, past the input (cleartext only: see
    /// `waiting`, which says how much is there); returns the bytes read, or why none were:
    /// `Read::Open` when the socket had nothing after all.
    pub(crate) fn read_into(&mut self, dest: &mut [u8]) -> Result<usize, Read> {
        debug_assert!(self.tls.is_none());
        // SAFETY: `recv` writes within `dest`; `fd` is this connection's socket.
        let n = unsafe { recv(self.fd, dest) };
        if n > 0 {
            Ok(n as usize)
        } else if n == 0 {
            self.ended = true;
            Err(Read::Ended)
        } else if would_block() {
            Err(Read::Open)
        } else {
            self.failed(false);
            Err(Read::Failed)
        }
    }

    /// Keeps the error the last read (`writing` false) or write of the socket failed with.
    fn failed(&mut self, writing: bool) {
        self.failed_with(super::sys::errno_of(&std::io::Error::last_os_error()), writing);
    }

    /// Keeps `errno` as the error a read or write failed with (0: none did).
    fn failed_with(&mut self, errno: i32, writing: bool) {
        if errno != 0 {
            self.failure = Some(Box::new(SocketFailure::Os { errno, writing }));
        }
    }

    /// The error the connection failed with: the one a read or write (or TLS) found, or else the one the
    /// kernel holds for the socket (a reset libuv's poll reported as an error before any read
    /// found it). None when it did not fail (it ended, or was closed on this side).
    pub(crate) fn failure(&self) -> Option<SocketFailure> {
        self.failure.as_deref().cloned().or_else(|| {
            let errno = super::socket::pending_error(self.fd);
            (errno != 0).then_some(SocketFailure::Os { errno, writing: false })
        })
    }

    /// Takes the whole input, leaving none (what arrived on a tunnel, handed to JavaScript as it lies).
    pub(crate) fn take_input(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.input)
    }

    /// Drops the whole input (what is left can never be used).
    pub(crate) fn clear_input(&mut self) {
        self.input.clear();
        self.shrink_input();
    }

    fn shrink_input(&mut self) {
        if self.input.is_empty() && self.input.capacity() > KEEP_INPUT {
            self.input = Vec::new();
        }
    }

    /// Before a read: an input buffer reused from `spare` when the connection holds none.
    pub(crate) fn input_from(&mut self, spare: &mut Spare) {
        if self.input.capacity() == 0 {
            self.input = spare.input();
        }
    }

    /// After a parse: an emptied input buffer goes back to `spare`, so that a connection holds
    /// one only while bytes wait in it; with thousands of connections each waiting for its
    /// answer (or idle), none holds a buffer the size of its last request (`input_from`).
    pub(crate) fn release_input(&mut self, spare: &mut Spare) {
        if self.input.is_empty() && self.input.capacity() > 0 {
            spare.keep_input(std::mem::take(&mut self.input));
        }
    }

    /// The output, to append to.
    pub(crate) fn output(&mut self) -> &mut Vec<u8> {
        &mut self.output
    }

    /// The output, to append to, with a buffer reused from `spare` when it has none (a
    /// connection holds an output buffer only while it has output).
    pub(crate) fn output_from(&mut self, spare: &mut Spare) -> &mut Vec<u8> {
        if self.output.capacity() == 0 {
            self.output = spare.out();
        }
        &mut self.output
    }

    /// Bytes of output not on the socket yet (records rustls holds are not counted: see `tls_pending`).
    pub(crate) fn unsent(&self) -> usize {
        self.output.len() - self.sent_from
    }

    /// Whether rustls holds records (a handshake message, an alert, a response) not written yet.
    pub(crate) fn tls_pending(&self) -> bool {
        self.tls.as_ref().is_some_and(|tls| tls.has_output())
    }

    /// Bytes the socket has taken, ever.
    pub(crate) fn sent(&self) -> u64 {
        self.sent
    }

    /// For tests: `write_then`, with nothing after the output.
    #[cfg(test)]
    pub(crate) fn write(&mut self) -> Written {
        self.write_then(false)
    }

    /// Writes the output as far as the socket takes it. On TLS, rustls takes the output (all of
    /// it, unless the socket is full) and writes it as records; the cleartext loop then finds
    /// nothing left. `more`: a body in place follows the output at once, so the kernel is told
    /// more bytes come (MSG_MORE), and a head and its file's first bytes leave in one segment.
    /// Only when the body is sent right after, in the same flush: a segment held back waits for it.
    pub(crate) fn write_then(&mut self, more: bool) -> Written {
        if let Some(tls) = self.tls.as_deref_mut() {
            let before = self.sent_from;
            let sent = tls.send(self.fd, &self.output, &mut self.sent_from);
            self.sent += (self.sent_from - before) as u64;
            match sent {
                Sent::All => {}
                Sent::Blocked => return Written::Blocked,
                Sent::Failed(errno) => {
                    // As a cleartext write's: a tunnel's JavaScript side hears it (`write EPIPE`).
                    self.failed_with(errno, true);
                    return Written::Failed;
                }
            }
        }
        while self.sent_from < self.output.len() {
            let unsent = &self.output[self.sent_from..];
            // SAFETY: `send` reads within `unsent`; `fd` is this connection's socket.
            let n = unsafe {
                if more {
                    send_more(self.fd, unsent)
                } else {
                    send(self.fd, unsent)
                }
            };
            if n > 0 {
                self.sent_from += n as usize;
                self.sent += n as u64;
            } else if n < 0 && would_block() {
                return Written::Blocked;
            } else {
                self.failed(true);
                return Written::Failed;
            }
        }
        Written::All
    }

    /// Sends what the socket takes of a body in place (once the output before it is written).
    pub(crate) fn send_in_place(&mut self, body: &mut InPlaceBody) -> InPlaceSend {
        body.send(self.fd, self.tls.as_deref_mut(), &mut self.sent)
    }

    /// After writing: an output buffer all written goes back to `spare` (or is kept, emptied, when
    /// `spare` has enough); one written past `high_water` drops what was written.
    pub(crate) fn settle_output(&mut self, spare: &mut Spare, high_water: usize) {
        if self.sent_from == self.output.len() {
            spare.keep_out(std::mem::take(&mut self.output));
            self.sent_from = 0;
        } else if self.sent_from > high_water {
            self.output.drain(..self.sent_from);
            self.sent_from = 0;
        }
    }

    /// Appends bytes and tries once to send what is unsent, ignoring the outcome: a last word
    /// (a 408) before the connection closes.
    pub(crate) fn send_last(&mut self, bytes: &[u8]) {
        self.output.extend_from_slice(bytes);
        let unsent = &self.output[self.sent_from..];
        match self.tls.as_deref_mut() {
            // SAFETY: `send` reads within `unsent`; `fd` is this connection's socket.
            None => drop(unsafe { send(self.fd, unsent) }),
            Some(tls) => drop(tls.send(self.fd, unsent, &mut 0)),
        }
    }

    /// What the poll handle waits for.
    pub(crate) fn polling(&self) -> c_int {
        self.polling
    }

    /// Waits for `events` (`UV_READABLE`, `UV_WRITABLE`, `UV_DISCONNECT`; 0: nothing).
    pub(crate) fn poll_for(&mut self, events: c_int) {
        if self.polling == events {
            return;
        }
        self.polling = events;
        // SAFETY: `poll` is the connection's initialised poll handle (from `accept`), live until
        // `close`; `on_ready` has libuv's poll callback signature.
        unsafe {
            if events == 0 {
                uv_poll_stop(self.poll);
            } else {
                uv_poll_start(self.poll, events, self.on_ready);
            }
        }
    }

    /// Makes the close a reset (see `socket::reset_on_close`): for a client that reads nothing.
    pub(crate) fn reset_on_close(&self) {
        reset_on_close(self.fd);
    }

    /// Shuts the write side (a tunnel JavaScript ended): on TLS, close_notify first (as far as
    /// the socket takes it); what arrives is still read.
    pub(crate) fn shut_write(&mut self) {
        if let Some(tls) = self.tls.as_deref_mut() {
            tls.close(self.fd);
        }
        shutdown_write(self.fd);
    }

    /// Turns Nagle's algorithm off (`true`) or on, as Node's `socket.setNoDelay`; nothing on a
    /// Unix domain socket, which has none.
    pub(crate) fn set_no_delay(&self, on: bool) {
        set_no_delay(self.fd, on);
    }

    /// Closes the connection: on TLS, close_notify first (as far as the socket takes it).
    pub(crate) fn close(&mut self) {
        // A second close would close whatever socket has the number by then: another
        // connection's, or a listener's (a client's connect is then refused).
        debug_assert!(!self.closed, "a transport closed twice");
        self.closed = true;
        if let Some(tls) = self.tls.as_deref_mut() {
            tls.close(self.fd);
        }
        // SAFETY: `poll` watches `fd`, both this connection's, and `close` is the last use of
        // either (the connection is dropped after it).
        unsafe { close_watched(self.poll, self.fd) };
    }

    /// The local address and port the client reached.
    pub(crate) fn local_address(&self) -> Option<(String, u16)> {
        local_address(self.fd)
    }

    /// The protocol TLS's handshake agreed on by ALPN (none on cleartext, before the handshake,
    /// or when the client offered none).
    pub(crate) fn alpn(&self) -> Option<&[u8]> {
        self.tls.as_ref().and_then(|tls| tls.alpn())
    }

    /// What the client proved, on TLS.
    pub(crate) fn tls_peer(&self) -> Option<Peer> {
        self.tls.as_ref().map(|tls| tls.peer())
    }
}

/// For the tests of the layers above: a transport over one end of a socket pair, never polled
/// (nothing in a unit test touches libuv, which only Node provides), and the client's end.
#[cfg(test)]
impl Transport {
    pub(crate) fn pair() -> (Transport, Socket) {
        unsafe extern "C" fn never(_: *mut uv_handle_t, _: c_int, _: c_int) {}
        let (ours, theirs) = super::socket::socket_pair();
        (Transport::new(ours, std::ptr::null_mut(), never, None), theirs)
    }

    /// Closes both ends (without libuv: see the `Drop` below).
    pub(crate) fn close_pair(self, client: Socket) {
        super::socket::close(client);
    }
}

/// In tests a transport that was not closed (`close`, through libuv) closes its socket when
/// dropped: the layers' tests make transports without libuv (`pair`).
#[cfg(test)]
impl Drop for Transport {
    fn drop(&mut self) {
        if !self.closed {
            // A test's socket, closed only here.
            super::socket::close(self.fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::socket::read_all;

    fn pair() -> (Transport, Socket) {
        Transport::pair()
    }

    fn close(transport: Transport, client: Socket) {
        transport.close_pair(client);
    }

    #[test]
    fn what_arrives_is_input_until_consumed() {
        let (mut t, client) = pair();
        let mut rx = Vec::new();
        assert!(matches!(t.read(&mut rx), Read::Open), "nothing yet is not the end");
        assert!(t.input().is_empty());
        // SAFETY: `send` reads within the bytes given.
        unsafe { send(client, b"GET / HTTP/1.1\r\n\r\nGET /b") };
        assert!(matches!(t.read(&mut rx), Read::Open));
        assert_eq!(t.input(), b"GET / HTTP/1.1\r\n\r\nGET /b");
        t.consume(18);
        assert_eq!(t.input(), b"GET /b");
        shutdown_write(client);
        assert!(!t.ended());
        assert!(matches!(t.read(&mut rx), Read::Ended));
        assert!(t.ended(), "and the transport remembers it");
        assert_eq!(t.input(), b"GET /b", "what arrived before the end stays");
        close(t, client);
    }

    #[test]
    fn a_reset_is_kept_as_the_failure_whether_a_read_or_the_kernel_finds_it() {
        // A client that closes with bytes it never read resets the connection (on a Unix socket
        // pair as on TCP with SO_LINGER 0): the reset is the failure, as Node's socket reports it.
        for read_first in [true, false] {
            let (mut t, client) = pair();
            assert_eq!(t.failure(), None, "open, and nothing failed");
            t.output().extend_from_slice(b"never read");
            assert!(matches!(t.write(), Written::All));
            crate::io::socket::close(client);
            let reset = Some(SocketFailure::Os { errno: crate::io::sys::ECONNRESET, writing: false });
            if read_first {
                assert!(matches!(t.read(&mut Vec::new()), Read::Failed));
                assert_eq!(t.failure(), reset, "the read found it, and it is kept");
                t.output().extend_from_slice(b"late");
                assert!(matches!(t.write(), Written::Failed));
                assert_eq!(t.failure(), Some(SocketFailure::Os { errno: crate::io::sys::EPIPE, writing: true }), "the last failure");
            } else {
                assert_eq!(t.failure(), reset, "the kernel held it (what libuv's poll reports as an error)");
            }
            drop(t);
        }
    }

    #[test]
    fn an_end_is_no_failure() {
        let (mut t, client) = pair();
        shutdown_write(client);
        assert!(matches!(t.read(&mut Vec::new()), Read::Ended));
        assert_eq!(t.failure(), None);
        close(t, client);
    }

    #[test]
    fn what_waits_in_the_socket_is_read_past_the_input() {
        let (mut t, client) = pair();
        assert_eq!(t.waiting(), 0);
        let bytes: Vec<u8> = (0..70_000u32).map(|i| i as u8).collect();
        // SAFETY: `send` reads within `bytes`.
        assert_eq!(unsafe { send(client, &bytes) }, 70_000);
        assert_eq!(t.waiting(), 70_000);
        let mut dest = vec![0u8; 50_000];
        assert_eq!(t.read_into(&mut dest).ok(), Some(50_000));
        assert_eq!(dest, bytes[..50_000]);
        assert!(t.input().is_empty(), "nothing went through the input");
        assert_eq!(t.waiting(), 20_000);
        assert_eq!(t.read_into(&mut dest).ok(), Some(20_000));
        assert!(matches!(t.read_into(&mut dest), Err(Read::Open)), "nothing more yet");
        shutdown_write(client);
        assert!(matches!(t.read_into(&mut dest), Err(Read::Ended)));
        assert!(t.ended());
        close(t, client);
    }

    #[test]
    fn a_large_emptied_input_is_given_back() {
        let (mut t, client) = pair();
        t.buffers().0.extend_from_slice(&[b'x'; 100_000]);
        t.consume(50_000);
        assert!(t.input.capacity() >= 100_000, "kept while it holds bytes");
        t.consume(50_000);
        assert_eq!(t.input.capacity(), 0);
        t.buffers().0.extend_from_slice(b"small");
        t.clear_input();
        assert!(t.input.capacity() > 0, "a small buffer is kept for the next bytes");
        close(t, client);
    }

    #[test]
    fn output_goes_out_and_its_buffer_back_to_spare() {
        let (mut t, client) = pair();
        let mut spare = Spare::default();
        t.output_from(&mut spare).extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(t.unsent(), 19);
        assert!(matches!(t.write(), Written::All));
        assert_eq!((t.unsent(), t.sent()), (0, 19));
        t.settle_output(&mut spare, 1024);
        assert_eq!(t.output.capacity(), 0, "an idle connection holds no output buffer");
        assert!(spare.out().capacity() > 0, "the buffer went back for the next response");
        assert_eq!(read_all(client), b"HTTP/1.1 200 OK\r\n\r\n");
        close(t, client);
    }

    #[test]
    fn a_client_that_reads_nothing_blocks_the_output() {
        let (mut t, client) = pair();
        let mut spare = Spare::default();
        t.output().resize(8 << 20, b'a');
        assert!(matches!(t.write(), Written::Blocked));
        let (sent, unsent) = (t.sent(), t.unsent());
        assert!(sent > 0 && unsent > 0 && sent as usize + unsent == 8 << 20);
        t.settle_output(&mut spare, 1024);
        assert_eq!((t.sent_from, t.output.len()), (0, unsent), "what was written is dropped past the high-water mark");
        assert_eq!(read_all(client).len(), sent as usize);
        close(t, client);
    }

    #[test]
    fn writing_to_a_client_gone_fails() {
        let (mut t, client) = pair();
        crate::io::socket::close(client);
        t.output().extend_from_slice(b"late");
        assert!(matches!(t.write(), Written::Failed));
        assert!(!t.read_and_drop(), "and reading finds it gone");
    }

    #[test]
    fn input_after_the_last_request_is_dropped_until_the_client_goes() {
        let (mut t, client) = pair();
        // SAFETY: `send` reads within the bytes given.
        unsafe { send(client, b"more bytes nobody parses") };
        assert!(t.read_and_drop());
        assert!(t.input().is_empty());
        shutdown_write(client);
        assert!(!t.read_and_drop());
        close(t, client);
    }

    #[test]
    fn a_last_word_is_sent_at_once() {
        let (mut t, client) = pair();
        t.send_last(b"HTTP/1.1 408 Request Timeout\r\n\r\n");
        assert_eq!(read_all(client), b"HTTP/1.1 408 Request Timeout\r\n\r\n");
        close(t, client);
    }
}
