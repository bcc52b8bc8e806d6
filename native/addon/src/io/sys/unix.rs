//! The Unix side of `sys`: the C library's socket and file calls, through `libc`.
//!
//! Two flavours, chosen at build time (`FAST_LINUX`): on Linux, `accept4` and `socket` make
//! non-blocking, close-on-exec descriptors in one call, `MSG_NOSIGNAL` keeps a peer that left
//! from raising SIGPIPE, `MSG_MORE` holds a head back for the file that follows, and Linux's
//! sendfile(2) sends a file range. Elsewhere (macOS, the BSDs), and on Linux with the crate's
//! `portable-unix` feature (which runs that flavour's code where it can be tested), each new
//! descriptor is made non-blocking and close-on-exec by `fcntl`, macOS's sockets get
//! SO_NOSIGPIPE (it has no `MSG_NOSIGNAL`), there is no `MSG_MORE`, and a file range goes by
//! macOS's sendfile(2) (its own signature) or, elsewhere, a read and a send.

use std::ffi::{CString, OsStr};
use std::fs::{File, Metadata, OpenOptions};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::FromRawFd;
use std::os::raw::{c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};

/// A socket as the system names it: a file descriptor.
pub(crate) type Socket = crate::uv::uv_os_sock_t;

#[cfg(test)]
pub(crate) use libc::{ECONNRESET, ENOENT, ENOTDIR, EPIPE};
pub(crate) use libc::{EINVAL, EIO, ENAMETOOLONG};

/// Linux's one-call paths (see the module's comment); false builds the portable flavour.
const FAST_LINUX: bool = cfg!(all(target_os = "linux", not(feature = "portable-unix")));

/// The flags of every send: no SIGPIPE where the flag exists (macOS sets SO_NOSIGPIPE on the socket instead).
#[cfg(not(any(target_os = "macos", target_os = "ios")))]
const SEND_FLAGS: c_int = libc::MSG_NOSIGNAL;
#[cfg(any(target_os = "macos", target_os = "ios"))]
const SEND_FLAGS: c_int = 0;

/// A send's flags when more bytes follow at once (`send_more`).
#[cfg(all(target_os = "linux", not(feature = "portable-unix")))]
const MORE_FLAGS: c_int = libc::MSG_NOSIGNAL | libc::MSG_MORE;
#[cfg(not(all(target_os = "linux", not(feature = "portable-unix"))))]
const MORE_FLAGS: c_int = SEND_FLAGS;

/// `socket(2)` flags that make it non-blocking and close-on-exec at once, where they exist.
#[cfg(all(target_os = "linux", not(feature = "portable-unix")))]
const NEW_FLAGS: c_int = libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
#[cfg(not(all(target_os = "linux", not(feature = "portable-unix"))))]
const NEW_FLAGS: c_int = 0;

fn last_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// Makes a new descriptor what every socket of the engine is: non-blocking, close-on-exec and,
/// on macOS, without SIGPIPE. Nothing to do where `socket`/`accept4` did it; closes `fd` on failure.
fn prepare(fd: c_int) -> std::io::Result<c_int> {
    if FAST_LINUX {
        return Ok(fd);
    }
    // SAFETY: fcntl and setsockopt on a descriptor this function owns; close only on failure.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 || libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) < 0 {
            let err = last_error();
            libc::close(fd);
            return Err(err);
        }
        #[cfg(any(target_os = "macos", target_os = "ios"))]
        set_int(fd, libc::SOL_SOCKET, libc::SO_NOSIGPIPE, 1);
    }
    Ok(fd)
}

fn new_socket(family: c_int) -> std::io::Result<c_int> {
    // SAFETY: socket(2) takes no pointer; the descriptor it returns is ours.
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | NEW_FLAGS, 0) };
    if fd < 0 {
        return Err(last_error());
    }
    prepare(fd)
}

/// setsockopt with an integer value; returns its status.
///
/// # Safety
/// `fd` must be a descriptor; a wrong option only fails.
unsafe fn set_int(fd: c_int, level: c_int, name: c_int, value: c_int) -> c_int {
    // SAFETY: the value is an int of the size given; a wrong descriptor or option only fails.
    unsafe { libc::setsockopt(fd, level, name, &value as *const c_int as *const c_void, std::mem::size_of::<c_int>() as libc::socklen_t) }
}

/// Binds `fd` to the address in `storage` and listens; closes `fd` on failure.
fn bind_listen(fd: c_int, storage: *const libc::sockaddr, len: libc::socklen_t, backlog: c_int) -> std::io::Result<c_int> {
    // SAFETY: `storage` points at `len` bytes of a socket address (the callers' own); `fd` is ours.
    unsafe {
        if libc::bind(fd, storage, len) != 0 || libc::listen(fd, backlog) != 0 {
            let err = last_error();
            libc::close(fd);
            return Err(err);
        }
    }
    Ok(fd)
}

/// A non-blocking TCP socket listening on `addr`, with SO_REUSEADDR, SO_REUSEPORT if asked, and
/// dual-stack for IPv6 (as Node's default).
pub(crate) fn tcp_listener(addr: &SocketAddr, reuse_port: bool, backlog: c_int) -> std::io::Result<Socket> {
    let fd = new_socket(if addr.is_ipv6() { libc::AF_INET6 } else { libc::AF_INET })?;
    // SAFETY: integer options on our own descriptor.
    unsafe {
        set_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1);
        if reuse_port && set_int(fd, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1) != 0 {
            let err = last_error();
            libc::close(fd);
            return Err(err);
        }
        if addr.is_ipv6() {
            // "::" serves IPv4 clients too, as Node's default does.
            set_int(fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 0);
        }
    }
    let (storage, len) = sockaddr_of(addr);
    bind_listen(fd, &storage as *const libc::sockaddr_storage as *const libc::sockaddr, len, backlog)
}

/// A non-blocking Unix domain socket listening at `path` (the bind makes the file).
pub(crate) fn unix_listener(path: &str, backlog: c_int) -> std::io::Result<Socket> {
    // SAFETY: sockaddr_un is plain data; all zeroes is a valid (empty) one.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_bytes();
    // One byte is left for the NUL the kernel reads the path to.
    if bytes.is_empty() || bytes.contains(&0) {
        return Err(std::io::Error::from_raw_os_error(EINVAL));
    }
    if bytes.len() >= addr.sun_path.len() {
        return Err(std::io::Error::from_raw_os_error(ENAMETOOLONG));
    }
    for (to, &from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = from as libc::c_char;
    }
    let fd = new_socket(libc::AF_UNIX)?;
    let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
    bind_listen(fd, &addr as *const libc::sockaddr_un as *const libc::sockaddr, len, backlog)
}

/// Removes a file (a Unix domain socket's, once its listener is closed).
pub(crate) fn unlink(path: &str) {
    if let Ok(path) = CString::new(path) {
        // SAFETY: a NUL-terminated path.
        unsafe { libc::unlink(path.as_ptr()) };
    }
}

/// Accepts one connection waiting on a listening socket, non-blocking and close-on-exec; with
/// `peer`, its address too (None for a Unix domain socket's client). None when the queue is empty
/// (or the connection failed); `OutOfDescriptors` at the file limit.
pub(crate) fn accept(listener: Socket, peer: bool) -> Result<Option<(Socket, Option<SocketAddr>)>, super::limit::OutOfDescriptors> {
    // SAFETY: sockaddr_storage is plain data.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let (addr, len_ptr) = if peer {
        (&mut storage as *mut libc::sockaddr_storage as *mut libc::sockaddr, &mut len as *mut libc::socklen_t)
    } else {
        (std::ptr::null_mut(), std::ptr::null_mut())
    };
    #[cfg(all(target_os = "linux", not(feature = "portable-unix")))]
    // SAFETY: `addr` and `len_ptr` are both null, or point at a storage and its length.
    let fd = unsafe { libc::accept4(listener, addr, len_ptr, NEW_FLAGS) };
    #[cfg(not(all(target_os = "linux", not(feature = "portable-unix"))))]
    // SAFETY: as above.
    let fd = unsafe { libc::accept(listener, addr, len_ptr) };
    if fd < 0 {
        return match last_error().raw_os_error() {
            Some(libc::EMFILE | libc::ENFILE) => Err(super::limit::OutOfDescriptors),
            _ => Ok(None),
        };
    }
    let Ok(fd) = prepare(fd) else { return Ok(None) };
    Ok(Some((fd, if peer { address_of(&storage) } else { None })))
}

/// A descriptor held in reserve for when the process runs out (`socket::shed_queue`): /dev/null
/// (or "/" where there is none), read-only and close-on-exec, as libuv's loop keeps one.
pub(crate) fn reserve_descriptor() -> Option<Socket> {
    [c"/dev/null", c"/"].into_iter().find_map(|path| {
        // SAFETY: a NUL-terminated path; the descriptor is the caller's.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        (fd >= 0).then_some(fd)
    })
}

/// A socket address in the system's form, and its length.
fn sockaddr_of(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data, large and aligned enough for either address.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            // SAFETY: as above.
            let sin = unsafe { &mut *(&mut storage as *mut libc::sockaddr_storage as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr = libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) };
            (storage, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above.
            let sin6 = unsafe { &mut *(&mut storage as *mut libc::sockaddr_storage as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr = libc::in6_addr { s6_addr: a.ip().octets() };
            (storage, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

/// An IP socket address from the system's form (None for another family: a Unix domain socket's).
fn address_of(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    // SAFETY: the family says which of the address structures the storage holds.
    unsafe {
        match storage.ss_family as c_int {
            libc::AF_INET => {
                let sin = &*(storage as *const _ as *const libc::sockaddr_in);
                Some(SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)), u16::from_be(sin.sin_port))))
            }
            libc::AF_INET6 => {
                let sin6 = &*(storage as *const _ as *const libc::sockaddr_in6);
                Some(SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from(sin6.sin6_addr.s6_addr), u16::from_be(sin6.sin6_port), 0, 0)))
            }
            _ => None,
        }
    }
}

/// A socket address in the system's form, for libuv's UDP calls (which take a `struct sockaddr`).
pub(crate) type SockAddr = libc::sockaddr_storage;

pub(crate) fn sockaddr(addr: &SocketAddr) -> SockAddr {
    sockaddr_of(addr).0
}

/// The IP socket address at `at`, a `struct sockaddr` of its family's size (as libuv hands a
/// datagram's sender over); None for a null pointer or another family.
///
/// # Safety
/// `at` must be null or point to a socket address as long as its family says.
pub(crate) unsafe fn address_at(at: *const c_void) -> Option<SocketAddr> {
    if at.is_null() {
        return None;
    }
    // SAFETY: sockaddr_storage is plain data.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    // SAFETY: `at` points to a sockaddr (see the Safety above), whose family comes first.
    let family = c_int::from(unsafe { (*(at as *const libc::sockaddr)).sa_family });
    let len = match family {
        libc::AF_INET => std::mem::size_of::<libc::sockaddr_in>(),
        libc::AF_INET6 => std::mem::size_of::<libc::sockaddr_in6>(),
        _ => return None,
    };
    // SAFETY: the address at `at` is `len` bytes long (its family's size), the storage larger.
    unsafe { std::ptr::copy_nonoverlapping(at as *const u8, &mut storage as *mut _ as *mut u8, len) };
    address_of(&storage)
}

/// The local address of a socket (getsockname).
pub(crate) fn local_address(socket: Socket) -> Option<SocketAddr> {
    // SAFETY: sockaddr_storage is plain data; getsockname writes at most `len` bytes into it.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: as above.
    if unsafe { libc::getsockname(socket, &mut storage as *mut _ as *mut libc::sockaddr, &mut len) } != 0 {
        return None;
    }
    address_of(&storage)
}

/// recv(2) into `buf`: the bytes read, 0 at the end, negative on an error (`would_block`).
///
/// # Safety
/// `socket` must be open.
#[inline]
pub(crate) unsafe fn recv(socket: Socket, buf: &mut [u8]) -> isize {
    // SAFETY: recv writes at most `buf.len()` bytes into `buf`.
    unsafe { libc::recv(socket, buf.as_mut_ptr() as *mut c_void, buf.len(), 0) }
}

/// send(2) without SIGPIPE: the bytes taken, negative on an error (`would_block`).
///
/// # Safety
/// `socket` must be open.
#[inline]
pub(crate) unsafe fn send(socket: Socket, bytes: &[u8]) -> isize {
    // SAFETY: send reads at most `bytes.len()` bytes from `bytes`.
    unsafe { libc::send(socket, bytes.as_ptr() as *const c_void, bytes.len(), SEND_FLAGS) }
}

/// `send`, saying more bytes follow at once (MSG_MORE, on Linux; a plain send elsewhere).
///
/// # Safety
/// `socket` must be open.
#[inline]
pub(crate) unsafe fn send_more(socket: Socket, bytes: &[u8]) -> isize {
    // SAFETY: send reads at most `bytes.len()` bytes from `bytes`.
    unsafe { libc::send(socket, bytes.as_ptr() as *const c_void, bytes.len(), MORE_FLAGS) }
}

/// Whether the socket holds a byte not read yet (MSG_PEEK, without blocking).
pub(crate) fn peek(socket: Socket) -> bool {
    let mut byte = [0u8; 1];
    // SAFETY: recv writes at most one byte into `byte`; MSG_PEEK leaves it in the socket.
    let n = unsafe { libc::recv(socket, byte.as_mut_ptr() as *mut c_void, 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    n > 0
}

/// The bytes waiting to be read (FIONREAD); 0 when it can't say.
pub(crate) fn waiting(socket: Socket) -> usize {
    let mut n: c_int = 0;
    // SAFETY: FIONREAD writes one int.
    if unsafe { libc::ioctl(socket, libc::FIONREAD, &mut n) } < 0 {
        return 0;
    }
    n.max(0) as usize
}

/// Whether the last call failed only because the socket would block (or was interrupted).
#[inline]
pub(crate) fn would_block() -> bool {
    let err = std::io::Error::last_os_error().raw_os_error();
    err == Some(libc::EAGAIN) || err == Some(libc::EWOULDBLOCK) || err == Some(libc::EINTR)
}

/// The error the kernel holds for a socket (SO_ERROR), taken; 0 if none.
pub(crate) fn pending_error(socket: Socket) -> i32 {
    let mut error: c_int = 0;
    let mut len = std::mem::size_of::<c_int>() as libc::socklen_t;
    // SAFETY: SO_ERROR writes one int, `len` says so.
    if unsafe { libc::getsockopt(socket, libc::SOL_SOCKET, libc::SO_ERROR, &mut error as *mut c_int as *mut c_void, &mut len) } < 0 {
        return 0;
    }
    error
}

/// Ends the write side (the peer reads the end).
pub(crate) fn shutdown_write(socket: Socket) {
    // SAFETY: shutdown takes no pointer; on a closed descriptor it only fails.
    unsafe { libc::shutdown(socket, libc::SHUT_WR) };
}

/// Closes a socket.
///
/// # Safety
/// `socket` must be the caller's, not used again.
pub(crate) unsafe fn close(socket: Socket) {
    // SAFETY: the caller's descriptor, not used again (the contract above).
    unsafe { libc::close(socket) };
}

/// TCP_NODELAY on (`true`) or off; nothing on a Unix domain socket, which has no Nagle.
pub(crate) fn set_no_delay(socket: Socket, on: bool) {
    // SAFETY: an integer option on a descriptor; a socket without it only fails.
    unsafe { set_int(socket, libc::IPPROTO_TCP, libc::TCP_NODELAY, c_int::from(on)) };
}

/// SO_LINGER with a zero timeout: the close is a reset.
pub(crate) fn reset_on_close(socket: Socket) {
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: setsockopt on a descriptor the engine holds, with a value of the size it says.
    unsafe {
        libc::setsockopt(
            socket,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const libc::linger as *const c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
}

/// A socket JavaScript named by its descriptor (a node engine's listener, `acceptQueued`).
pub(crate) fn socket_from_js(fd: u32) -> Option<Socket> {
    Some(fd as c_int)
}

/// Sends up to `length` bytes of `file` from `offset` to the socket, from the page cache where
/// the system can: the bytes sent, 0 at the file's end, negative on an error (`would_block`).
///
/// # Safety
/// `socket` must be open.
#[cfg(all(target_os = "linux", not(feature = "portable-unix")))]
pub(crate) unsafe fn send_file(socket: Socket, file: &File, offset: u64, length: usize) -> isize {
    // Node ignores SIGPIPE, so a peer that left gives EPIPE, not a signal.
    let mut offset = offset as libc::off_t;
    // SAFETY: sendfile reads the file `file` holds open and writes `offset`, a local; a bad socket only fails.
    unsafe { libc::sendfile(socket, std::os::fd::AsRawFd::as_raw_fd(file), &mut offset, length) }
}

/// macOS's sendfile(2): the length is in and out, and a socket that fills up fails with EAGAIN
/// after sending part (the part is what counts).
///
/// # Safety
/// `socket` must be open.
#[cfg(all(any(target_os = "macos", target_os = "ios"), not(feature = "portable-unix")))]
pub(crate) unsafe fn send_file(socket: Socket, file: &File, offset: u64, length: usize) -> isize {
    let mut len = length as libc::off_t;
    // SAFETY: sendfile reads the file `file` holds open and writes `len`, a local; no header or trailer.
    let status = unsafe { libc::sendfile(std::os::fd::AsRawFd::as_raw_fd(file), socket, offset as libc::off_t, &mut len, std::ptr::null_mut(), 0) };
    if status == 0 || len > 0 {
        len as isize
    } else {
        -1
    }
}

/// Elsewhere (and with `portable-unix`), a read and a send of what the socket takes.
///
/// # Safety
/// `socket` must be open.
#[cfg(not(any(all(target_os = "linux", not(feature = "portable-unix")), all(any(target_os = "macos", target_os = "ios"), not(feature = "portable-unix")))))]
pub(crate) unsafe fn send_file(socket: Socket, file: &File, offset: u64, length: usize) -> isize {
    // SAFETY: the caller's open socket (the contract above).
    super::copy::send_by_copy(offset, length, |buf, at| read_at(file, buf, at), |bytes| unsafe { send(socket, bytes) })
}

/// Reads from `offset` of a file into `buf` (pread): the bytes read, 0 at the end, negative on an error.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> isize {
    match file.read_at(buf, offset) {
        Ok(n) => n as isize,
        Err(_) => -1,
    }
}

/// The engine's own duplicate of a file descriptor JavaScript holds (close-on-exec).
pub(crate) fn duplicate_file(fd: u32) -> Option<File> {
    // SAFETY: fcntl on a descriptor the caller holds open; the duplicate is ours alone.
    let own = unsafe { libc::fcntl(fd as c_int, libc::F_DUPFD_CLOEXEC, 0) };
    // SAFETY: `own` is a new descriptor nothing else owns.
    (own >= 0).then(|| unsafe { File::from_raw_fd(own) })
}

/// A path from the bytes JavaScript gave (as the file system takes them).
pub(crate) fn path_of(bytes: &[u8]) -> Option<&std::path::Path> {
    Some(std::path::Path::new(OsStr::from_bytes(bytes)))
}

/// Opens a file for reading, non-blocking (a FIFO can't hold the open until a writer comes).
pub(crate) fn open_for_reading(path: &std::path::Path) -> std::io::Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

/// A file's modification time, in seconds and nanoseconds.
pub(crate) fn modified(meta: &Metadata) -> (i64, i64) {
    (meta.mtime(), meta.mtime_nsec())
}

/// Starts `handle` watching `socket` on libuv's loop.
///
/// # Safety
/// As `uv_poll_init`: `handle` a fresh poll handle, `uv_loop` Node's.
pub(crate) unsafe fn poll_init(uv_loop: *mut crate::uv::uv_loop_t, handle: *mut crate::uv::uv_handle_t, socket: Socket) -> c_int {
    // SAFETY: the caller's fresh handle and Node's loop (the contract above).
    unsafe { crate::uv::uv_poll_init(uv_loop, handle, socket) }
}

/// A connected pair of non-blocking sockets, for tests: the engine's end and a client's.
#[cfg(test)]
pub(crate) fn socket_pair() -> (Socket, Socket) {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into `fds`.
    let status = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | NEW_FLAGS, 0, fds.as_mut_ptr()) };
    assert_eq!(status, 0, "socketpair: {}", std::io::Error::last_os_error());
    (prepare(fds[0]).unwrap(), prepare(fds[1]).unwrap())
}

/// Whether a file is close-on-exec, for tests.
#[cfg(test)]
pub(crate) fn closed_on_exec(file: &File) -> bool {
    // SAFETY: F_GETFD takes no pointer.
    let flags = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(file), libc::F_GETFD) };
    flags & libc::FD_CLOEXEC != 0
}

/// Makes a FIFO at `path`, for tests (`None` where there are none).
#[cfg(test)]
pub(crate) fn make_fifo(path: &std::path::Path) -> Option<()> {
    let name = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    Some(())
}

/// The descriptor of an open file, for tests.
#[cfg(test)]
pub(crate) fn raw_of(file: &File) -> i64 {
    std::os::fd::AsRawFd::as_raw_fd(file) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_go_to_the_system_and_back() {
        for text in ["10.1.2.3:8080", "[::ffff:10.1.2.3]:443", "[2001:db8::1]:1"] {
            let addr: SocketAddr = text.parse().unwrap();
            let (storage, _) = sockaddr_of(&addr);
            assert_eq!(address_of(&storage), Some(addr));
        }
    }

    #[test]
    fn new_sockets_are_non_blocking_and_closed_on_exec() {
        let (a, b) = socket_pair();
        for fd in [a, b] {
            // SAFETY: F_GETFL and F_GETFD take no pointer.
            let (fl, fd_flags) = unsafe { (libc::fcntl(fd, libc::F_GETFL), libc::fcntl(fd, libc::F_GETFD)) };
            assert!(fl & libc::O_NONBLOCK != 0 && fd_flags & libc::FD_CLOEXEC != 0);
        }
        let listener = tcp_listener(&"127.0.0.1:0".parse().unwrap(), false, 8).unwrap();
        let port = local_address(listener).unwrap().port();
        let _client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let accepted = (0..100).find_map(|_| {
            accept(listener, true).unwrap().or_else(|| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                None
            })
        });
        let (conn, peer) = accepted.expect("accepted");
        assert_eq!(peer.unwrap().ip(), "127.0.0.1".parse::<std::net::IpAddr>().unwrap());
        // SAFETY: as above.
        let (fl, fd_flags) = unsafe { (libc::fcntl(conn, libc::F_GETFL), libc::fcntl(conn, libc::F_GETFD)) };
        assert!(fl & libc::O_NONBLOCK != 0 && fd_flags & libc::FD_CLOEXEC != 0);
        // SAFETY: the test's own descriptors.
        unsafe { (close(a), close(b), close(conn), close(listener)) };
    }
}
