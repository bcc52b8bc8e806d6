//! The socket calls the engine makes itself: opening listening sockets (and their options),
//! draining the node engine's accept queue (see `src/engines/node/accept.ts`), and reading and
//! writing connections.

use crate::uv::{free_handle, uv_close, uv_handle_t};
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::raw::{c_int, c_void};

/// Backlog of every listener: Node's default (511) drops SYNs when thousands of clients connect
/// at once; the kernel caps it at net.core.somaxconn.
pub const BACKLOG: c_int = 4096;

/// Opens a non-blocking listening socket on `host:port`; returns it with the port it got (port 0
/// picks one). `reuse_port`: SO_REUSEPORT, so that several processes (Cog's workers) listen on
/// the port and the kernel spreads connections over them.
pub fn open(host: &str, port: u16, reuse_port: bool) -> Result<(c_int, u16), String> {
    let addr = resolve(host, port)?;
    // SAFETY: `open_socket` and `local_port` make system calls on the descriptor they create, and
    // only on it.
    let fd = unsafe { open_socket(&addr, reuse_port) }.map_err(|e| format!("could not listen on {host}:{port}: {e}"))?;
    // SAFETY: getsockname on the socket just opened.
    Ok((fd, unsafe { local_port(fd) }))
}

/// Opens a non-blocking listening Unix domain socket at `path`, as Node's `server.listen(path)`:
/// the file is made by the bind, which fails (EADDRINUSE) if something is there already; whoever
/// stops listening removes it (`unlink`).
pub fn open_unix(path: &str) -> Result<c_int, String> {
    let fail = |e: std::io::Error| format!("could not listen on {path}: {e}");
    // SAFETY: all zeroes is a valid `sockaddr_un` (a plain C struct).
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_bytes();
    // One byte is left for the NUL the kernel reads the path to.
    if bytes.is_empty() || bytes.len() >= addr.sun_path.len() || bytes.contains(&0) {
        return Err(fail(std::io::Error::from_raw_os_error(if bytes.is_empty() || bytes.contains(&0) { libc::EINVAL } else { libc::ENAMETOOLONG })));
    }
    for (to, &from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = from as libc::c_char;
    }
    // SAFETY: socket, bind and listen on a descriptor made here, with an address struct of the
    // length given; the descriptor is closed on failure, else handed to the caller.
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(fail(std::io::Error::last_os_error()));
        }
        let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        if libc::bind(fd, &addr as *const libc::sockaddr_un as *const libc::sockaddr, len) != 0 || libc::listen(fd, BACKLOG) != 0 {
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            return Err(fail(err));
        }
        Ok(fd)
    }
}

/// Removes the file of a Unix domain socket the server listened on (its descriptor is closed).
pub fn unlink(path: &str) {
    if let Ok(path) = std::ffi::CString::new(path) {
        // SAFETY: `path` is a NUL-terminated string that outlives the call.
        unsafe { libc::unlink(path.as_ptr()) };
    }
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    (host, port).to_socket_addrs().map_err(|e| format!("could not resolve \"{host}\": {e}"))?.next().ok_or_else(|| format!("\"{host}\" has no address"))
}

/// # Safety
///
/// None: `unsafe` only for the calls it makes (a plain constructor).
unsafe fn open_socket(addr: &SocketAddr, reuse_port: bool) -> Result<c_int, std::io::Error> {
    // SAFETY: socket, setsockopt, bind and listen on the descriptor made here, closed on failure,
    // else handed to the caller; `storage` is an address of the length `sockaddr_of` gives.
    unsafe {
        let family = if addr.is_ipv6() { libc::AF_INET6 } else { libc::AF_INET };
        let fd = libc::socket(family, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        set_option(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1);
        if reuse_port && set_option(fd, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1) != 0 {
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            return Err(err);
        }
        if addr.is_ipv6() {
            // "::" serves IPv4 clients too, as Node's default does.
            set_option(fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 0);
        }
        let (storage, len) = sockaddr_of(addr);
        if libc::bind(fd, &storage as *const libc::sockaddr_storage as *const libc::sockaddr, len) != 0 || libc::listen(fd, BACKLOG) != 0 {
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            return Err(err);
        }
        Ok(fd)
    }
}

/// Accepts up to `max` connections waiting in a listening socket's queue, without blocking: the
/// node engine drains the queue this way because libuv accepts one connection per wakeup.
/// Each descriptor is non-blocking and close-on-exec; the caller owns them.
pub fn accept_queued(fd: c_int, max: usize) -> Vec<c_int> {
    let mut accepted = Vec::new();
    while accepted.len() < max {
        // SAFETY: accept4 with null address pointers (allowed: no address is written) on the
        // caller's descriptor; a bad one only fails.
        let conn = unsafe { libc::accept4(fd, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
        if conn < 0 {
            // EAGAIN: the queue is empty. Any other error (EMFILE, a connection reset while queued)
            // ends this drain; libuv's own accept on the next wakeup reports what persists.
            break;
        }
        accepted.push(conn);
    }
    accepted
}

/// Accepts the next connection waiting on a listening socket, non-blocking and close-on-exec,
/// with Nagle's algorithm off (where there is one): its descriptor (the caller's to close) and
/// its peer's address. None when the queue is empty (EAGAIN) or the accept failed.
pub(crate) fn accept(listen_fd: c_int) -> Option<(c_int, libc::sockaddr_storage)> {
    // SAFETY: all zeroes is a valid `sockaddr_storage` (a plain C struct).
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: accept4 writes at most `len` bytes into `storage`; a bad descriptor only fails.
    let fd = unsafe { libc::accept4(listen_fd, &mut storage as *mut _ as *mut libc::sockaddr, &mut len, libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: on the descriptor just accepted (a Unix domain socket, which has no Nagle, refuses it).
    unsafe { set_option(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1) };
    Some((fd, storage))
}

/// Closes a descriptor the engine owns and never gave to libuv (a connection refused before it
/// was watched).
pub(crate) fn close(fd: c_int) {
    // SAFETY: the caller owns `fd` and does not use it again.
    unsafe { libc::close(fd) };
}

/// setsockopt with an integer value; returns its status.
///
/// # Safety
///
/// None: any `fd` is accepted (a bad one fails with EBADF); kept unsafe as the raw system call it
/// wraps.
pub unsafe fn set_option(fd: c_int, level: c_int, name: c_int, value: c_int) -> c_int {
    // SAFETY: `value` outlives the call and is of the size passed; a bad descriptor only fails.
    unsafe { libc::setsockopt(fd, level, name, &value as *const c_int as *const c_void, std::mem::size_of::<c_int>() as libc::socklen_t) }
}

fn sockaddr_of(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all zeroes is a valid `sockaddr_storage` (a plain C struct).
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            // SAFETY: `sockaddr_storage` is as large as and aligned for every address type, so it
            // may be viewed as a `sockaddr_in`.
            let sin = unsafe { &mut *(&mut storage as *mut libc::sockaddr_storage as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr = libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) };
            (storage, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(a) => {
            // SAFETY: `sockaddr_storage` is as large as and aligned for every address type, so it
            // may be viewed as a `sockaddr_in6`.
            let sin6 = unsafe { &mut *(&mut storage as *mut libc::sockaddr_storage as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr = libc::in6_addr { s6_addr: a.ip().octets() };
            (storage, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

/// # Safety
///
/// `fd` is a bound socket (else the port read is 0).
unsafe fn local_port(fd: c_int) -> u16 {
    // SAFETY: getsockname writes at most `len` bytes into `storage`, which the family says how to
    // read (a `sockaddr_storage` is as large as and aligned for each).
    unsafe {
        let mut storage: libc::sockaddr_storage = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        libc::getsockname(fd, &mut storage as *mut _ as *mut libc::sockaddr, &mut len);
        match storage.ss_family as c_int {
            libc::AF_INET => u16::from_be((*(&storage as *const _ as *const libc::sockaddr_in)).sin_port),
            _ => u16::from_be((*(&storage as *const _ as *const libc::sockaddr_in6)).sin6_port),
        }
    }
}

/// The local address and port of a connected socket.
pub fn local_address(fd: c_int) -> Option<(String, u16)> {
    // SAFETY: all zeroes is a valid `sockaddr_storage` (a plain C struct).
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: getsockname writes at most `len` bytes into `storage`; a bad descriptor only fails.
    if unsafe { libc::getsockname(fd, &mut storage as *mut _ as *mut libc::sockaddr, &mut len) } != 0 {
        return None;
    }
    Some(address_of(&storage))
}

/// An address and port as Node writes them: a dual-stack socket's IPv4 peer is "::ffff:a.b.c.d".
pub fn address_of(storage: &libc::sockaddr_storage) -> (String, u16) {
    // SAFETY: `sockaddr_storage` is as large as and aligned for every address type, and `ss_family`
    // says which one it holds.
    unsafe {
        match storage.ss_family as c_int {
            libc::AF_INET => {
                let sin = &*(storage as *const _ as *const libc::sockaddr_in);
                (std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)).to_string(), u16::from_be(sin.sin_port))
            }
            libc::AF_INET6 => {
                let sin6 = &*(storage as *const _ as *const libc::sockaddr_in6);
                (std::net::Ipv6Addr::from(sin6.sin6_addr.s6_addr).to_string(), u16::from_be(sin6.sin6_port))
            }
            _ => (String::new(), 0),
        }
    }
}

/// `recv` and `send` rather than `read` and `write`: on a socket they skip the VFS layer (about
/// 0.1 µs of kernel time a request at 2,500 connections x 4 pipelined), and `MSG_NOSIGNAL`
/// keeps a peer that went away from raising SIGPIPE.
/// The error the kernel holds for a socket (SO_ERROR: a reset, say), taken (it is reported once); 0 if none.
///
/// # Safety
/// `fd` must be an open socket.
pub(crate) unsafe fn pending_error(fd: c_int) -> c_int {
    // SAFETY: getsockopt writes at most `len` bytes into `error`, an int; a bad descriptor only
    // fails.
    unsafe {
        let mut error: c_int = 0;
        let mut len = std::mem::size_of::<c_int>() as libc::socklen_t;
        if libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut error as *mut c_int as *mut c_void, &mut len) < 0 {
            return 0;
        }
        error
    }
}

/// # Safety
///
/// None for memory: `buf` is written within its length. `fd` should be the caller's own socket
/// (another descriptor's bytes would be read).
pub(crate) unsafe fn recv(fd: c_int, buf: &mut [u8]) -> isize {
    // SAFETY: `buf` is valid for writes of its length; a bad descriptor only fails.
    unsafe { libc::recv(fd, buf.as_mut_ptr() as *mut c_void, buf.len(), 0) }
}

/// # Safety
///
/// None for memory: `bytes` is read within its length. `fd` should be the caller's own socket.
pub(crate) unsafe fn send(fd: c_int, bytes: &[u8]) -> isize {
    // SAFETY: `bytes` is valid for reads of its length; a bad descriptor only fails.
    unsafe { libc::send(fd, bytes.as_ptr() as *const c_void, bytes.len(), libc::MSG_NOSIGNAL) }
}

/// `send` with MSG_MORE: more bytes follow at once (a file sent in place after a response's
/// head), so the kernel holds a partial segment for them rather than pushing it alone. On
/// loopback each segment pushed costs the sender the receiver's TCP work too: a head pushed
/// alone, then its file, cost a small file's response ~40% more CPU than one segment.
///
/// # Safety
///
/// None for memory: `bytes` is read within its length. `fd` should be the caller's own socket.
pub(crate) unsafe fn send_more(fd: c_int, bytes: &[u8]) -> isize {
    // SAFETY: `bytes` is valid for reads of its length; a bad descriptor only fails.
    unsafe { libc::send(fd, bytes.as_ptr() as *const c_void, bytes.len(), libc::MSG_NOSIGNAL | libc::MSG_MORE) }
}

pub(crate) fn would_block() -> bool {
    let err = std::io::Error::last_os_error().raw_os_error();
    err == Some(libc::EAGAIN) || err == Some(libc::EWOULDBLOCK) || err == Some(libc::EINTR)
}

/// Closes a socket and the poll handle that watches it. uv_close stops polling and drops the
/// descriptor from libuv's epoll set at once, so the descriptor can be closed now (a port is
/// free again as soon as close() returns); the handle's memory is freed once libuv is done with it.
///
/// # Safety
/// `handle` must be an initialised handle (from `alloc_handle`) watching `fd`, closed only here.
pub unsafe fn close_watched(handle: *mut uv_handle_t, fd: c_int) {
    // SAFETY: the caller's promise: a live handle watching `fd`, closed once; `free_handle` frees
    // it after libuv's close.
    unsafe {
        uv_close(handle, Some(free_handle));
        libc::close(fd);
    }
}

/// Makes the socket's close a reset (SO_LINGER with a zero timeout): the kernel drops what it
/// still holds for a client that reads nothing, rather than keeping it, orphaned, until the
/// client goes. Node's `socket.resetAndDestroy()` does the same.
pub fn reset_on_close(fd: c_int) {
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: setsockopt on a descriptor the engine holds, with a value of the size it says.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const libc::linger as *const c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
}

/// A connected pair of non-blocking sockets, for tests: the engine's end and a client's.
#[cfg(test)]
pub(crate) fn socket_pair() -> (c_int, c_int) {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into `fds`.
    let status = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) };
    assert_eq!(status, 0, "socketpair: {}", std::io::Error::last_os_error());
    (fds[0], fds[1])
}

/// A test client's send (safe: the test owns its end of the pair).
#[cfg(test)]
pub(crate) fn client_send(fd: c_int, bytes: &[u8]) -> isize {
    // SAFETY: `send` reads within `bytes`; the descriptor is the test's own.
    unsafe { send(fd, bytes) }
}

/// A test client's recv.
#[cfg(test)]
pub(crate) fn client_recv(fd: c_int, buf: &mut [u8]) -> isize {
    // SAFETY: `recv` writes within `buf`; the descriptor is the test's own.
    unsafe { recv(fd, buf) }
}

/// A test client ends its side.
#[cfg(test)]
pub(crate) fn client_shutdown(fd: c_int) {
    // SAFETY: shutdown on the test's own descriptor.
    unsafe { libc::shutdown(fd, libc::SHUT_WR) };
}

/// Reads what a test's client end has, without blocking.
#[cfg(test)]
pub(crate) fn read_all(fd: c_int) -> Vec<u8> {
    let mut all = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        // SAFETY: `recv` writes within `buf`.
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
            accepted.extend(accept_queued(fd, 2 - accepted.len().min(2)));
            if accepted.len() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(accepted.len(), 2, "at most `max` are accepted");
        let (local, local_port) = local_address(accepted[0]).unwrap();
        assert_eq!((local.as_str(), local_port), ("127.0.0.1", port));
        for conn in accepted.into_iter().chain(accept_queued(fd, 10)) {
            // SAFETY: closing the descriptors the test accepted.
            unsafe { libc::close(conn) };
        }
        drop(clients);
        // SAFETY: closing the descriptor the test opened.
        unsafe { libc::close(fd) };
    }

    #[test]
    fn a_port_in_use_is_refused_with_the_address() {
        let (fd, port) = open("127.0.0.1", 0, false).unwrap();
        let err = open("127.0.0.1", port, false).unwrap_err();
        assert!(err.starts_with(&format!("could not listen on 127.0.0.1:{port}:")), "{err}");
        assert!(open("no-such-host.invalid", 80, false).unwrap_err().starts_with("could not resolve \"no-such-host.invalid\""));
        // SAFETY: closing the descriptor the test opened.
        unsafe { libc::close(fd) };
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
            accepted.extend(accept_queued(fd, 1));
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
        // SAFETY: closing the descriptors the test opened.
        unsafe { (libc::close(accepted[0]), libc::close(fd)) };
        unlink(path);
        assert!(!std::path::Path::new(path).exists());
    }

    #[test]
    fn addresses_read_as_node_writes_them() {
        let v4: SocketAddr = "10.1.2.3:8080".parse().unwrap();
        let (storage, _) = sockaddr_of(&v4);
        assert_eq!(address_of(&storage), ("10.1.2.3".to_string(), 8080));
        let v6: SocketAddr = "[::ffff:10.1.2.3]:443".parse().unwrap();
        let (s, _) = sockaddr_of(&v6);
        assert_eq!(address_of(&s), ("::ffff:10.1.2.3".to_string(), 443));
    }

    #[test]
    fn a_full_socket_would_block_and_a_closed_peer_reads_as_the_end() {
        let (ours, theirs) = socket_pair();
        let chunk = [0u8; 64 * 1024];
        let mut blocked = false;
        for _ in 0..1000 {
            // SAFETY: `send` reads within `chunk`.
            if unsafe { send(ours, &chunk) } < 0 {
                blocked = would_block();
                break;
            }
        }
        assert!(blocked, "the socket filled up and said so");
        // SAFETY: closing the test's own descriptors.
        unsafe { (libc::close(ours), libc::close(theirs)) };
        let (ours, theirs) = socket_pair();
        let mut buf = [0u8; 16];
        // SAFETY: `recv` writes within `buf`.
        assert!(unsafe { recv(ours, &mut buf) } < 0 && would_block(), "nothing yet");
        // SAFETY: closing the test's own descriptor.
        unsafe { libc::close(theirs) };
        // SAFETY: `recv` writes within `buf`.
        assert_eq!(unsafe { recv(ours, &mut buf) }, 0);
        // SAFETY: closing the test's own descriptor.
        unsafe { libc::close(ours) };
    }
}
