//! The Windows side of `sys`: Winsock through `windows-sys`, with the Unix side's meanings.
//! Winsock is initialised by libuv (Node calls WSAStartup before any addon loads). Sockets are
//! made non-blocking with FIONBIO and not inheritable (WSA_FLAG_NO_HANDLE_INHERIT); a send never
//! raises a signal on Windows. There is no sendfile: a file range goes by a read and a send
//! (TransmitFile needs overlapped I/O, which a readiness loop does not use). Unix domain
//! sockets, `acceptQueued` (Node's handles expose no descriptor on Windows) and `streamFile`
//! (a JavaScript descriptor is a C runtime one) are not supported: they fail, and the
//! JavaScript side takes its other path.
//!
//! Errors a caller sees as errno values (which JavaScript names with `util.getSystemErrorName`)
//! are libuv's numbering on Windows, which is not the OS's: `errno_of` translates Windows' and
//! Winsock's codes as libuv does for Node's own sockets and files (WSAECONNRESET is ECONNRESET).

use std::fs::{File, Metadata, OpenOptions};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::raw::c_int;
use std::os::windows::fs::FileExt;
use windows_sys::Win32::Networking::WinSock as ws;

/// A socket as the system names it: a SOCKET handle.
pub(crate) type Socket = crate::uv::uv_os_sock_t;

// libuv's error numbers on Windows (uv/errno.h, UV__E*, negated), which Node names there.
pub(crate) const EINVAL: i32 = 4071;
pub(crate) const EIO: i32 = 4070;
// The rest are the unit tests' (the engine's own code has errno_of).
#[cfg(test)]
pub(crate) const ENAMETOOLONG: i32 = 4064;
#[cfg(test)]
pub(crate) const ENOENT: i32 = 4058;
#[cfg(test)]
pub(crate) const ENOTDIR: i32 = 4052;
#[cfg(test)]
pub(crate) const ECONNRESET: i32 = 4077;
#[cfg(test)]
pub(crate) const EPIPE: i32 = 4047;

fn last_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn new_socket(family: u16) -> std::io::Result<Socket> {
    // SAFETY: WSASocketW takes no pointer here (no protocol info); the socket is ours.
    let s = unsafe { ws::WSASocketW(family as i32, ws::SOCK_STREAM, 0, std::ptr::null(), 0, ws::WSA_FLAG_OVERLAPPED | ws::WSA_FLAG_NO_HANDLE_INHERIT) };
    if s == ws::INVALID_SOCKET {
        return Err(last_error());
    }
    set_non_blocking(s)
}

fn set_non_blocking(s: Socket) -> std::io::Result<Socket> {
    let mut on: u32 = 1;
    // SAFETY: FIONBIO reads one u32.
    if unsafe { ws::ioctlsocket(s, ws::FIONBIO, &mut on) } != 0 {
        let err = last_error();
        // SAFETY: our own socket, not used again.
        unsafe { ws::closesocket(s) };
        return Err(err);
    }
    Ok(s)
}

/// setsockopt with an integer value; returns its status.
fn set_int(s: Socket, level: i32, name: i32, value: i32) -> i32 {
    // SAFETY: the option's value is an int of the size given.
    unsafe { ws::setsockopt(s, level, name, &value as *const i32 as *const u8, std::mem::size_of::<i32>() as i32) }
}

/// A non-blocking TCP socket listening on `addr`. `reuse_port` has no Windows meaning (several
/// processes can't share a port's connections that way): it is refused.
pub(crate) fn tcp_listener(addr: &SocketAddr, reuse_port: bool, backlog: c_int) -> std::io::Result<Socket> {
    if reuse_port {
        return Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "reusePort is not supported on Windows"));
    }
    let s = new_socket(if addr.is_ipv6() { ws::AF_INET6 } else { ws::AF_INET })?;
    // As libuv: no other socket may take the port while this one listens.
    set_int(s, ws::SOL_SOCKET, ws::SO_EXCLUSIVEADDRUSE, 1);
    if addr.is_ipv6() {
        set_int(s, ws::IPPROTO_IPV6, ws::IPV6_V6ONLY, 0);
    }
    let (storage, len) = sockaddr_of(addr);
    // SAFETY: `storage` holds `len` bytes of a socket address; the socket is ours.
    unsafe {
        if ws::bind(s, &storage as *const ws::SOCKADDR_STORAGE as *const ws::SOCKADDR, len) != 0 || ws::listen(s, backlog) != 0 {
            let err = last_error();
            ws::closesocket(s);
            return Err(err);
        }
    }
    Ok(s)
}

/// Unix domain sockets are not supported on Windows (yet).
pub(crate) fn unix_listener(_path: &str, _backlog: c_int) -> std::io::Result<Socket> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "listening on a path is not supported on Windows"))
}

pub(crate) fn unlink(path: &str) {
    let _ = std::fs::remove_file(path);
}

/// Accepts one waiting connection, non-blocking; with `peer`, its address.
/// `OutOfDescriptors` when Winsock has no socket left to give (WSAEMFILE).
pub(crate) fn accept(listener: Socket, peer: bool) -> Result<Option<(Socket, Option<SocketAddr>)>, super::limit::OutOfDescriptors> {
    let mut storage = ws::SOCKADDR_STORAGE::default();
    let mut len = std::mem::size_of::<ws::SOCKADDR_STORAGE>() as i32;
    // SAFETY: accept writes at most `len` bytes of the peer's address into `storage`.
    let s = unsafe { ws::accept(listener, &mut storage as *mut ws::SOCKADDR_STORAGE as *mut ws::SOCKADDR, &mut len) };
    if s == ws::INVALID_SOCKET {
        // SAFETY: WSAGetLastError reads the thread's last Winsock error.
        return if unsafe { ws::WSAGetLastError() } == ws::WSAEMFILE { Err(super::limit::OutOfDescriptors) } else { Ok(None) };
    }
    let Ok(s) = set_non_blocking(s) else { return Ok(None) };
    Ok(Some((s, if peer { address_of(&storage) } else { None })))
}

/// No reserve on Windows: its sockets are handles, with no per-process limit like Unix's file
/// limit; at WSAEMFILE the engine stops accepting for a moment instead (`socket::shed_queue`).
pub(crate) fn reserve_descriptor() -> Option<Socket> {
    None
}

fn sockaddr_of(addr: &SocketAddr) -> (ws::SOCKADDR_STORAGE, i32) {
    let mut storage = ws::SOCKADDR_STORAGE::default();
    match addr {
        SocketAddr::V4(a) => {
            // SAFETY: SOCKADDR_STORAGE is large and aligned enough for any address.
            let sin = unsafe { &mut *(&mut storage as *mut ws::SOCKADDR_STORAGE as *mut ws::SOCKADDR_IN) };
            sin.sin_family = ws::AF_INET;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.S_un.S_addr = u32::from_ne_bytes(a.ip().octets());
            (storage, std::mem::size_of::<ws::SOCKADDR_IN>() as i32)
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above.
            let sin6 = unsafe { &mut *(&mut storage as *mut ws::SOCKADDR_STORAGE as *mut ws::SOCKADDR_IN6) };
            sin6.sin6_family = ws::AF_INET6;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.u.Byte = a.ip().octets();
            (storage, std::mem::size_of::<ws::SOCKADDR_IN6>() as i32)
        }
    }
}

fn address_of(storage: &ws::SOCKADDR_STORAGE) -> Option<SocketAddr> {
    // SAFETY: the family says which address structure the storage holds; the unions are plain bytes.
    unsafe {
        match storage.ss_family {
            ws::AF_INET => {
                let sin = &*(storage as *const ws::SOCKADDR_STORAGE as *const ws::SOCKADDR_IN);
                Some(SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(u32::from_be(sin.sin_addr.S_un.S_addr)), u16::from_be(sin.sin_port))))
            }
            ws::AF_INET6 => {
                let sin6 = &*(storage as *const ws::SOCKADDR_STORAGE as *const ws::SOCKADDR_IN6);
                Some(SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from(sin6.sin6_addr.u.Byte), u16::from_be(sin6.sin6_port), 0, 0)))
            }
            _ => None,
        }
    }
}

/// A socket address in the system's form, for libuv's UDP calls (which take a `struct sockaddr`).
pub(crate) type SockAddr = ws::SOCKADDR_STORAGE;

pub(crate) fn sockaddr(addr: &SocketAddr) -> SockAddr {
    sockaddr_of(addr).0
}

/// The IP socket address at `at`, a `struct sockaddr` of its family's size (as libuv hands a
/// datagram's sender over); None for a null pointer or another family.
///
/// # Safety
/// `at` must be null or point to a socket address as long as its family says.
pub(crate) unsafe fn address_at(at: *const std::ffi::c_void) -> Option<SocketAddr> {
    if at.is_null() {
        return None;
    }
    let mut storage = ws::SOCKADDR_STORAGE::default();
    // SAFETY: `at` points to a SOCKADDR (see the Safety above), whose family comes first.
    let family = unsafe { (*(at as *const ws::SOCKADDR)).sa_family };
    let len = match family {
        ws::AF_INET => std::mem::size_of::<ws::SOCKADDR_IN>(),
        ws::AF_INET6 => std::mem::size_of::<ws::SOCKADDR_IN6>(),
        _ => return None,
    };
    // SAFETY: the address at `at` is `len` bytes long (its family's size), the storage larger.
    unsafe { std::ptr::copy_nonoverlapping(at as *const u8, &mut storage as *mut _ as *mut u8, len) };
    address_of(&storage)
}

pub(crate) fn local_address(socket: Socket) -> Option<SocketAddr> {
    let mut storage = ws::SOCKADDR_STORAGE::default();
    let mut len = std::mem::size_of::<ws::SOCKADDR_STORAGE>() as i32;
    // SAFETY: getsockname writes at most `len` bytes into `storage`.
    if unsafe { ws::getsockname(socket, &mut storage as *mut ws::SOCKADDR_STORAGE as *mut ws::SOCKADDR, &mut len) } != 0 {
        return None;
    }
    address_of(&storage)
}

/// # Safety
/// `socket` must be open.
#[inline]
pub(crate) unsafe fn recv(socket: Socket, buf: &mut [u8]) -> isize {
    // SAFETY: recv writes at most the length given into `buf`.
    unsafe { ws::recv(socket, buf.as_mut_ptr(), buf.len().min(i32::MAX as usize) as i32, 0) as isize }
}

/// # Safety
/// `socket` must be open.
#[inline]
pub(crate) unsafe fn send(socket: Socket, bytes: &[u8]) -> isize {
    // SAFETY: send reads at most the length given from `bytes`.
    unsafe { ws::send(socket, bytes.as_ptr(), bytes.len().min(i32::MAX as usize) as i32, 0) as isize }
}

/// No MSG_MORE on Windows: a plain send.
///
/// # Safety
/// `socket` must be open.
#[inline]
pub(crate) unsafe fn send_more(socket: Socket, bytes: &[u8]) -> isize {
    // SAFETY: the caller's open socket.
    unsafe { send(socket, bytes) }
}

pub(crate) fn peek(socket: Socket) -> bool {
    let mut byte = [0u8; 1];
    // SAFETY: recv writes at most one byte; MSG_PEEK leaves it (the socket is non-blocking).
    unsafe { ws::recv(socket, byte.as_mut_ptr(), 1, ws::MSG_PEEK) > 0 }
}

pub(crate) fn waiting(socket: Socket) -> usize {
    let mut n: u32 = 0;
    // SAFETY: FIONREAD writes one u32.
    if unsafe { ws::ioctlsocket(socket, ws::FIONREAD, &mut n) } != 0 {
        return 0;
    }
    n as usize
}

#[inline]
pub(crate) fn would_block() -> bool {
    // SAFETY: WSAGetLastError reads the thread's last Winsock error.
    let err = unsafe { ws::WSAGetLastError() };
    err == ws::WSAEWOULDBLOCK || err == ws::WSAEINTR
}

pub(crate) fn pending_error(socket: Socket) -> i32 {
    let mut error: i32 = 0;
    let mut len = std::mem::size_of::<i32>() as i32;
    // SAFETY: SO_ERROR writes one int.
    if unsafe { ws::getsockopt(socket, ws::SOL_SOCKET, ws::SO_ERROR, &mut error as *mut i32 as *mut u8, &mut len) } != 0 || error == 0 {
        return 0;
    }
    errno_of(&std::io::Error::from_raw_os_error(error))
}

pub(crate) fn shutdown_write(socket: Socket) {
    // SAFETY: shutdown takes no pointer.
    unsafe { ws::shutdown(socket, ws::SD_SEND) };
}

/// # Safety
/// `socket` must be the caller's, not used again.
pub(crate) unsafe fn close(socket: Socket) {
    // SAFETY: the caller's socket, not used again.
    unsafe { ws::closesocket(socket) };
}

pub(crate) fn set_no_delay(socket: Socket, on: bool) {
    set_int(socket, ws::IPPROTO_TCP, ws::TCP_NODELAY, i32::from(on));
}

pub(crate) fn reset_on_close(socket: Socket) {
    let linger = ws::LINGER { l_onoff: 1, l_linger: 0 };
    // SAFETY: the value is a LINGER of the size given.
    unsafe { ws::setsockopt(socket, ws::SOL_SOCKET, ws::SO_LINGER, &linger as *const ws::LINGER as *const u8, std::mem::size_of::<ws::LINGER>() as i32) };
}

/// Node's handles have no descriptor on Windows (`handle.fd` is -1): nothing to accept from.
pub(crate) fn socket_from_js(_fd: u32) -> Option<Socket> {
    None
}

/// A read and a send of what the socket takes.
///
/// # Safety
/// `socket` must be open.
pub(crate) unsafe fn send_file(socket: Socket, file: &File, offset: u64, length: usize) -> isize {
    // SAFETY: the caller's open socket (the contract above).
    super::copy::send_by_copy(offset, length, |buf, at| read_at(file, buf, at), |bytes| unsafe { send(socket, bytes) })
}

/// A positioned read (it moves the file's cursor on Windows, which nothing here relies on).
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> isize {
    match file.seek_read(buf, offset) {
        Ok(n) => n as isize,
        Err(_) => -1,
    }
}

/// A JavaScript descriptor is the C runtime's on Windows: not taken (the caller streams instead).
pub(crate) fn duplicate_file(_fd: u32) -> Option<File> {
    None
}

/// A path from the bytes JavaScript gave: UTF-8 on Windows.
pub(crate) fn path_of(bytes: &[u8]) -> Option<&std::path::Path> {
    std::str::from_utf8(bytes).ok().map(std::path::Path::new)
}

pub(crate) fn open_for_reading(path: &std::path::Path) -> std::io::Result<File> {
    OpenOptions::new().read(true).open(path)
}

pub(crate) fn modified(meta: &Metadata) -> (i64, i64) {
    match meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()) {
        Some(d) => (d.as_secs() as i64, i64::from(d.subsec_nanos())),
        None => (0, 0),
    }
}

/// libuv's error number (as Node names it, positive) for a Windows or Winsock error, translated
/// by Node's own libuv: the code a JavaScript error gets is the one Node's would.
pub(crate) fn errno_of(err: &std::io::Error) -> i32 {
    match err.raw_os_error() {
        // SAFETY: a pure function of its argument.
        Some(code) => -unsafe { crate::uv::uv_translate_sys_error(code) },
        None => EIO,
    }
}

/// An error's text ending as on Unix, "… (os error N)", N being the number Node names it by
/// (libuv's), not Windows' own.
pub(crate) fn error_text(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.rsplit_once(" (os error ") {
        Some((message, _)) => format!("{message} (os error {})", errno_of(err)),
        None => text,
    }
}

/// # Safety
/// As `uv_poll_init_socket`: `handle` a fresh poll handle, `uv_loop` Node's.
pub(crate) unsafe fn poll_init(uv_loop: *mut crate::uv::uv_loop_t, handle: *mut crate::uv::uv_handle_t, socket: Socket) -> c_int {
    // SAFETY: the caller's fresh handle and Node's loop (the contract above).
    unsafe { crate::uv::uv_poll_init_socket(uv_loop, handle, socket) }
}
