//! The socket calls the engine makes itself: opening listening sockets (and their options),
//! draining the node engine's accept queue (see `src/engines/node/accept.ts`), and reading and
//! writing connections.

use super::sys;
pub(crate) use super::sys::Socket;
use crate::uv::{free_handle, uv_close, uv_handle_t, uv_loop_t};
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::raw::c_int;

/// Backlog of every listener: Node's default (511) drops SYNs when thousands of clients connect
/// at once; the kernel caps it at net.core.somaxconn.
pub const BACKLOG: c_int = 4096;

/// Opens a non-blocking listening socket on `host:port`; returns it with the port it got (port 0
/// picks one). `reuse_port`: SO_REUSEPORT, so that several processes (Cog's workers) listen on
/// the port and the kernel spreads connections over them.
pub fn open(host: &str, port: u16, reuse_port: bool) -> Result<(Socket, u16), String> {
    let addr = resolve(host, port)?;
    let fd = sys::tcp_listener(&addr, reuse_port, BACKLOG).map_err(|e| format!("could not listen on {host}:{port}: {}", sys::error_text(&e)))?;
    Ok((fd, sys::local_address(fd).map_or(0, |a| a.port())))
}

/// Opens a non-blocking listening Unix domain socket at `path`, as Node's `server.listen(path)`:
/// the file is made by the bind, which fails (EADDRINUSE) if something is there already; whoever
/// stops listening removes it (`unlink`).
pub fn open_unix(path: &str) -> Result<Socket, String> {
    sys::unix_listener(path, BACKLOG).map_err(|e| format!("could not listen on {path}: {e}"))
}

/// Removes the file of a Unix domain socket the server listened on (its descriptor is closed).
pub fn unlink(path: &str) {
    sys::unlink(path);
}

pub(crate) fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    (host, port).to_socket_addrs().map_err(|e| format!("could not resolve \"{host}\": {e}"))?.next().ok_or_else(|| format!("\"{host}\" has no address"))
}

pub(crate) use super::sys::OutOfDescriptors;

/// An accepted connection: its socket, and its peer's address and port.
pub type Accepted = (Socket, (String, u16));

/// Accepts one connection waiting on a listener (non-blocking, close-on-exec, no Nagle), with
/// its peer's address as Node writes it (empty for a Unix domain socket's client). None when
/// the queue is empty, or the connection went away: try again on the next event.
pub fn accept(listener: Socket) -> Result<Option<Accepted>, OutOfDescriptors> {
    let Some((fd, peer)) = sys::accept(listener, true)? else { return Ok(None) };
    sys::set_no_delay(fd, true);
    Ok(Some((fd, written(peer))))
}

/// A descriptor held in reserve for `shed_queue` (None where the system has no use for one).
pub fn reserve_descriptor() -> Option<Socket> {
    sys::reserve_descriptor()
}

/// What libuv does when the process is out of descriptors (`uv__emfile_trick`, which Node's own
/// servers get): the reserve descriptor is closed, the connections waiting are accepted with the
/// one freed and closed at once, and the reserve is taken again. Their clients see the connection
/// end rather than wait in the queue for a descriptor that may never come, and the listener is no
/// longer readable: polled level-triggered, it would otherwise wake the loop again at once, for
/// ever (a busy loop). Returns how many were closed; None when there was no reserve (or the
/// queue could not be emptied with it): the caller stops polling the listener for a while.
pub fn shed_queue(listener: Socket, reserve: &mut Option<Socket>) -> Option<usize> {
    close(reserve.take()?);
    let mut shed = 0;
    let emptied = loop {
        match sys::accept(listener, false) {
            Ok(Some((conn, _))) => {
                close(conn);
                shed += 1;
            }
            Ok(None) => break true,
            Err(OutOfDescriptors) => break false,
        }
    };
    *reserve = sys::reserve_descriptor();
    emptied.then_some(shed)
}

/// Accepts up to `max` connections waiting in a listening socket's queue, without blocking: the
/// node engine drains the queue this way because libuv accepts one connection per wakeup.
/// `fd` is the node engine's listener, as JavaScript names it (none on Windows, where nothing
/// is accepted). Each descriptor is non-blocking and close-on-exec; the caller owns them.
pub fn accept_queued(fd: u32, max: usize) -> Vec<u32> {
    let mut accepted = Vec::new();
    let Some(listener) = sys::socket_from_js(fd) else { return accepted };
    while accepted.len() < max {
        // None: the queue is empty (EAGAIN), or an error (a connection reset while queued, the
        // file limit) ends this drain; libuv's own accept on the next wakeup deals with what
        // persists (at the file limit, as `shed_queue` does).
        let Ok(Some((conn, _))) = sys::accept(listener, false) else { break };
        accepted.push(conn as u32);
    }
    accepted
}

/// An address and port as Node writes them: a dual-stack socket's IPv4 peer is "::ffff:a.b.c.d".
fn written(addr: Option<SocketAddr>) -> (String, u16) {
    match addr {
        Some(a) => (a.ip().to_string(), a.port()),
        None => (String::new(), 0),
    }
}

/// The local address and port of a connected socket.
pub fn local_address(fd: Socket) -> Option<(String, u16)> {
    sys::local_address(fd).map(|a| written(Some(a)))
}

/// Watches a socket with a fresh poll handle on Node's loop.
///
/// # Safety
/// `handle` must be a fresh poll handle (`alloc_handle(UV_POLL)`), `uv_loop` Node's.
pub unsafe fn watch(uv_loop: *mut uv_loop_t, handle: *mut uv_handle_t, fd: Socket) -> c_int {
    // SAFETY: the caller's handle and loop, as this function's contract says.
    unsafe { sys::poll_init(uv_loop, handle, fd) }
}

/// The error the kernel holds for a socket (SO_ERROR: a reset, say), taken (it is reported once); 0 if none.
pub(crate) fn pending_error(fd: Socket) -> i32 {
    sys::pending_error(fd)
}

/// `recv` and `send` rather than `read` and `write`: on a socket they skip the VFS layer (about
/// 0.1 µs of kernel time a request at 2,500 connections x 4 pipelined), and `MSG_NOSIGNAL`
/// (SO_NOSIGPIPE on macOS) keeps a peer that went away from raising SIGPIPE.
pub(crate) use super::sys::{recv, send};

/// `send` with MSG_MORE: more bytes follow at once (a file sent in place after a response's
/// head), so the kernel holds a partial segment for them rather than pushing it alone. On
/// loopback each segment pushed costs the sender the receiver's TCP work too: a head pushed
/// alone, then its file, cost a small file's response ~40% more CPU than one segment. Linux
/// only: elsewhere a plain send.
pub(crate) use super::sys::send_more;

pub(crate) use super::sys::{peek, shutdown_write, waiting, would_block};

/// TCP_NODELAY on or off (nothing on a Unix domain socket).
pub(crate) fn set_no_delay(fd: Socket, on: bool) {
    sys::set_no_delay(fd, on);
}

/// Closes a socket and the poll handle that watches it. uv_close stops polling and drops the
/// descriptor from libuv's epoll set at once, so the descriptor can be closed now (a port is
/// free again as soon as close() returns); the handle's memory is freed once libuv is done with it.
///
/// # Safety
/// `handle` must be an initialised handle (from `alloc_handle`) watching `fd`, closed only here.
pub unsafe fn close_watched(handle: *mut uv_handle_t, fd: Socket) {
    // SAFETY: `handle` is initialised and closed only here (the contract above); `fd` is the
    // socket it watched, ours, not used again.
    unsafe {
        uv_close(handle, Some(free_handle));
        sys::close(fd);
    }
}

/// Closes a socket nothing watches (one accepted and then refused, a test's): the caller owns
/// `fd` and does not use it again.
pub(crate) fn close(fd: Socket) {
    // SAFETY: the caller owns `fd` and does not use it again.
    unsafe { sys::close(fd) };
}

/// Makes the socket's close a reset (SO_LINGER with a zero timeout): the kernel drops what it
/// still holds for a client that reads nothing, rather than keeping it, orphaned, until the
/// client goes. Node's `socket.resetAndDestroy()` does the same.
pub fn reset_on_close(fd: Socket) {
    sys::reset_on_close(fd);
}

/// A connected pair of non-blocking sockets, for tests: the engine's end and a client's.
#[cfg(test)]
pub(crate) use super::sys::socket_pair;

/// A test client's send.
#[cfg(test)]
pub(crate) fn client_send(fd: Socket, bytes: &[u8]) -> isize {
    // SAFETY: `send` reads within `bytes`; the descriptor is the test's own.
    unsafe { send(fd, bytes) }
}

/// A test client's recv.
#[cfg(test)]
pub(crate) fn client_recv(fd: Socket, buf: &mut [u8]) -> isize {
    // SAFETY: `recv` writes within `buf`; the descriptor is the test's own.
    unsafe { recv(fd, buf) }
}

/// A test client ends its side.
#[cfg(test)]
pub(crate) fn client_shutdown(fd: Socket) {
    shutdown_write(fd);
}

/// Reads what a test's client end has, without blocking.
#[cfg(test)]
pub(crate) fn read_all(fd: Socket) -> Vec<u8> {
    let mut all = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        // SAFETY: a test's open socket.
        let n = unsafe { recv(fd, &mut buf) };
        if n <= 0 {
            return all;
        }
        all.extend_from_slice(&buf[..n as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_gets_a_port_and_its_queue_is_drained() {
        let (fd, port) = open("127.0.0.1", 0, false).unwrap();
        assert!(port > 0);
        let clients: Vec<_> = (0..3).map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
        // Connections reach the accept queue asynchronously: wait until all three are there.
        let mut accepted = Vec::new();
        for _ in 0..100 {
            accepted.extend(accept_queued(fd as u32, 2 - accepted.len().min(2)));
            if accepted.len() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(accepted.len(), 2, "at most `max` are accepted");
        let (local, local_port) = local_address(accepted[0] as Socket).unwrap();
        assert_eq!((local.as_str(), local_port), ("127.0.0.1", port));
        for conn in accepted.into_iter().chain(accept_queued(fd as u32, 10)) {
            close(conn as Socket);
        }
        drop(clients);
        close(fd);
    }

    #[test]
    fn shedding_the_queue_closes_what_waits_and_takes_the_reserve_again() {
        use std::io::Read;
        let (fd, port) = open("127.0.0.1", 0, false).unwrap();
        let mut clients: Vec<_> = (0..2).map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
        let mut reserve = reserve_descriptor();
        assert!(reserve.is_some(), "/dev/null opens");
        // The connections reach the accept queue asynchronously: shed until both were closed.
        let mut shed = 0;
        for _ in 0..100 {
            shed += shed_queue(fd, &mut reserve).expect("a reserve, and the queue emptied");
            assert!(reserve.is_some(), "the reserve is taken again");
            if shed == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(shed, 2);
        for client in &mut clients {
            client.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
            // Closed unanswered: the end of the stream (or a reset).
            assert!(matches!(client.read(&mut [0; 16]), Ok(0) | Err(_)));
        }
        // Without a reserve nothing is accepted: the caller pauses instead.
        let waiting = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut none = None;
        assert_eq!(shed_queue(fd, &mut none), None);
        close(reserve.unwrap());
        drop(waiting);
        close(fd);
    }

    #[test]
    fn a_port_in_use_is_refused_with_the_address() {
        let (fd, port) = open("127.0.0.1", 0, false).unwrap();
        let err = open("127.0.0.1", port, false).unwrap_err();
        assert!(err.starts_with(&format!("could not listen on 127.0.0.1:{port}:")), "{err}");
        assert!(open("no-such-host.invalid", 80, false).unwrap_err().starts_with("could not resolve \"no-such-host.invalid\""));
        close(fd);
    }

    #[test]
    fn a_unix_socket_is_made_served_and_refused_twice() {
        let path = std::env::temp_dir().join(format!("cog-socket-test-{}.sock", std::process::id()));
        let path = path.to_str().unwrap();
        let fd = open_unix(path).unwrap();
        assert!(std::path::Path::new(path).exists(), "the bind makes the file");
        let client = std::os::unix::net::UnixStream::connect(path).unwrap();
        let mut accepted = Vec::new();
        for _ in 0..100 {
            accepted.extend(accept_queued(fd as u32, 1));
            if !accepted.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(accepted.len(), 1);
        let err = open_unix(path).unwrap_err();
        assert!(err.starts_with(&format!("could not listen on {path}:")) && err.contains("in use"), "{err}");
        assert!(open_unix(&"x".repeat(200)).unwrap_err().contains("too long"));
        drop(client);
        close(accepted[0] as Socket);
        close(fd);
        unlink(path);
        assert!(!std::path::Path::new(path).exists());
    }

    #[test]
    fn addresses_read_as_node_writes_them() {
        let v4: SocketAddr = "10.1.2.3:8080".parse().unwrap();
        assert_eq!(written(Some(v4)), ("10.1.2.3".to_string(), 8080));
        let v6: SocketAddr = "[::ffff:10.1.2.3]:443".parse().unwrap();
        assert_eq!(written(Some(v6)), ("::ffff:10.1.2.3".to_string(), 443));
        assert_eq!(written(None), (String::new(), 0));
    }

    #[test]
    fn a_full_socket_would_block_and_a_closed_peer_reads_as_the_end() {
        let (ours, theirs) = socket_pair();
        let chunk = [0u8; 64 * 1024];
        let mut blocked = false;
        for _ in 0..1000 {
            // SAFETY: the test's own socket.
            if unsafe { send(ours, &chunk) } < 0 {
                blocked = would_block();
                break;
            }
        }
        assert!(blocked, "the socket filled up and said so");
        close(ours);
        close(theirs);
        let (ours, theirs) = socket_pair();
        let mut buf = [0u8; 16];
        // SAFETY: the test's own socket.
        assert!(unsafe { recv(ours, &mut buf) } < 0 && would_block(), "nothing yet");
        close(theirs);
        // SAFETY: the test's own socket.
        assert_eq!(unsafe { recv(ours, &mut buf) }, 0);
        close(ours);
    }
}
