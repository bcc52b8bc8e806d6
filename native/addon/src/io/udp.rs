//! A UDP socket on Node's loop (libuv's `uv_udp_t`), for HTTP/3: bound to an address, its
//! datagrams handed to a callback as libuv reads them (each read into one buffer, reused: the
//! callback consumes a datagram before the next is read), datagrams sent at once when the
//! kernel takes them (`uv_udp_try_send`), else queued on libuv (`uv_udp_send`) with a copy.

use super::sys;
use crate::uv::*;
use std::cell::Cell;
use std::net::SocketAddr;
use std::os::raw::{c_int, c_void};

/// The largest UDP payload: a datagram never overflows the read buffer.
const DATAGRAM_MAX: usize = 65_535;

thread_local! {
    /// The one read buffer (every socket's reads land here, one datagram at a time).
    static RX: Cell<*mut u8> = const { Cell::new(std::ptr::null_mut()) };
}

pub(crate) struct Udp {
    handle: *mut uv_handle_t,
}

/// A datagram queued on libuv: its request, the bytes (kept until libuv has sent them).
struct Queued {
    req: *mut uv_req_t,
    bytes: Vec<u8>,
}

impl Udp {
    /// Binds a socket to `addr` on `uv_loop` and starts reading: each datagram goes to `on_recv`,
    /// with `data` as the handle's data.
    pub(crate) fn bind(uv_loop: *mut uv_loop_t, addr: &SocketAddr, data: usize, on_recv: uv_udp_recv_cb) -> Result<Udp, String> {
        let handle = alloc_handle(UV_UDP);
        let storage = sys::sockaddr(addr);
        // SAFETY: `handle` was just allocated for a UDP handle and is initialised once, on Node's
        // loop; `storage` is a socket address of its family's size; once initialised the handle
        // is closed with `free_handle` (here on a failure, else by `close`).
        unsafe {
            if uv_udp_init(uv_loop, handle) != 0 {
                free_handle(handle);
                return Err(format!("http3: could not make a UDP socket for {addr}"));
            }
            uv_handle_set_data(handle, data as *mut c_void);
            let bound = uv_udp_bind(handle, &storage as *const sys::SockAddr as *const c_void, 0);
            let reading = if bound == 0 { uv_udp_recv_start(handle, on_alloc, on_recv) } else { bound };
            if reading != 0 {
                uv_close(handle, Some(free_handle));
                return Err(format!(
                    "http3: could not listen on UDP port {} ({}): is another process using it? HTTP/3 needs the TLS listener's port number free on UDP too",
                    addr.port(),
                    if bound != 0 { "bind failed" } else { "reading failed" }
                ));
            }
        }
        Ok(Udp { handle })
    }

    /// Sends one datagram to `to`: now if the kernel takes it, else queued on libuv. A datagram
    /// neither takes is dropped, as the network may drop any (QUIC sends it again).
    pub(crate) fn send(&self, to: &SocketAddr, bytes: &[u8]) {
        let storage = sys::sockaddr(to);
        let addr = &storage as *const sys::SockAddr as *const c_void;
        let buf = uv_buf_t::of(bytes);
        // SAFETY: the handle is open (closed only by `close`, which takes `self`); `buf` points to
        // `bytes`, read before the call returns; `addr` is a socket address of its family's size.
        if unsafe { uv_udp_try_send(self.handle, &buf, 1, addr) } >= 0 {
            return;
        }
        // SAFETY: uv_req_size is a pure lookup.
        let size = unsafe { uv_req_size(UV_UDP_SEND) };
        let layout = std::alloc::Layout::from_size_align(size, 16).expect("a request's size");
        // SAFETY: the layout is not zero-sized (libuv's send request is a struct).
        let req = unsafe { std::alloc::alloc_zeroed(layout) } as *mut uv_req_t;
        if req.is_null() {
            return;
        }
        let queued = Box::new(Queued { req, bytes: bytes.to_vec() });
        let buf = uv_buf_t::of(&queued.bytes);
        let queued = Box::into_raw(queued);
        // SAFETY: `req` is a zeroed send request of libuv's size; it and the bytes `buf` points to
        // live in `queued` until `on_sent` frees them (libuv copies `buf` and `addr`); on a failed
        // call libuv keeps nothing and they are freed here.
        unsafe {
            uv_req_set_data(req, queued as *mut c_void);
            if uv_udp_send(req, self.handle, &buf, 1, addr, on_sent) != 0 {
                free_queued(queued);
            }
        }
    }

    /// Stops reading and closes the socket (datagrams queued on libuv are cancelled and freed).
    pub(crate) fn close(self) {
        // SAFETY: the handle is open and closed once (`self` is taken); `free_handle` frees it.
        unsafe {
            uv_udp_recv_stop(self.handle);
            uv_close(self.handle, Some(free_handle));
        }
    }
}

/// Frees a queued datagram and its request.
///
/// # Safety
/// `queued` must come from `Box::into_raw` in `send`, and libuv be done with its request.
unsafe fn free_queued(queued: *mut Queued) {
    // SAFETY: see the Safety above: the box is taken back once.
    let queued = unsafe { Box::from_raw(queued) };
    // SAFETY: uv_req_size is a pure lookup.
    let size = unsafe { uv_req_size(UV_UDP_SEND) };
    let layout = std::alloc::Layout::from_size_align(size, 16).expect("a request's size");
    // SAFETY: the request was allocated in `send` with this layout.
    unsafe { std::alloc::dealloc(queued.req as *mut u8, layout) };
}

/// libuv sent (or cancelled) a queued datagram.
///
/// # Safety
/// Called by libuv only, with a request `send` started (its data the `Queued` box).
unsafe extern "C" fn on_sent(req: *mut uv_req_t, _status: c_int) {
    // SAFETY: the request's data is the `Queued` box `send` made, and libuv is done with it.
    unsafe { free_queued(uv_req_get_data(req) as *mut Queued) };
}

/// Hands libuv the read buffer.
///
/// # Safety
/// Called by libuv only, with a valid `buf` to fill in.
unsafe extern "C" fn on_alloc(_handle: *mut uv_handle_t, _suggested: usize, buf: *mut uv_buf_t) {
    let base = RX.with(|rx| {
        if rx.get().is_null() {
            rx.set(Box::leak(vec![0u8; DATAGRAM_MAX].into_boxed_slice()).as_mut_ptr());
        }
        rx.get()
    });
    // SAFETY: libuv passes a buffer descriptor to fill in; the buffer lives for the thread.
    unsafe { *buf = uv_buf_t { base, len: DATAGRAM_MAX as _ } };
}

/// The datagram a read callback was given, and who sent it; None when there is none (`nread`
/// 0: nothing more to read now; negative: a failed read, which UDP shrugs off).
///
/// # Safety
/// The arguments must be those libuv passed to a read callback of a socket `bind` started.
pub(crate) unsafe fn datagram<'a>(nread: isize, buf: *const uv_buf_t, addr: *const c_void) -> Option<(SocketAddr, &'a [u8])> {
    if nread <= 0 || buf.is_null() {
        return None;
    }
    // SAFETY: libuv read `nread` bytes into the buffer `on_alloc` gave, from the sender at `addr`.
    unsafe {
        let from = sys::address_at(addr)?;
        Some((from, std::slice::from_raw_parts((*buf).base, nread as usize)))
    }
}
