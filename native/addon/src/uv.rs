//! The few libuv functions the engine uses, resolved from the `node` binary when the addon loads
//! (Node exports libuv's API). Handles are allocated by size (`uv_handle_size`), so no libuv
//! struct layout is compiled in: only the enum values below, stable across libuv 1.x.
#![allow(non_camel_case_types)]

use std::os::raw::{c_int, c_uint, c_void};

pub enum uv_loop_t {}
pub enum uv_handle_t {}
pub enum uv_req_t {}

/// libuv's buffer descriptor: its fields' order differs between Unix and Windows.
#[cfg(unix)]
#[repr(C)]
pub struct uv_buf_t {
    pub base: *mut u8,
    pub len: usize,
}
#[cfg(windows)]
#[repr(C)]
pub struct uv_buf_t {
    pub len: u32,
    pub base: *mut u8,
}

impl uv_buf_t {
    pub fn of(bytes: &[u8]) -> uv_buf_t {
        uv_buf_t { base: bytes.as_ptr() as *mut u8, len: bytes.len() as _ }
    }
}

/// libuv's socket type: a descriptor on Unix, a SOCKET handle on Windows.
#[cfg(unix)]
pub type uv_os_sock_t = c_int;
#[cfg(windows)]
pub type uv_os_sock_t = usize;

pub type uv_poll_cb = unsafe extern "C" fn(handle: *mut uv_handle_t, status: c_int, events: c_int);
pub type uv_timer_cb = unsafe extern "C" fn(handle: *mut uv_handle_t);
pub type uv_check_cb = unsafe extern "C" fn(handle: *mut uv_handle_t);
pub type uv_close_cb = unsafe extern "C" fn(handle: *mut uv_handle_t);
pub type uv_idle_cb = unsafe extern "C" fn(handle: *mut uv_handle_t);
pub type uv_alloc_cb = unsafe extern "C" fn(handle: *mut uv_handle_t, suggested: usize, buf: *mut uv_buf_t);
/// `addr` is a `struct sockaddr` (null when `nread` is 0 and nothing more is to be read now).
pub type uv_udp_recv_cb = unsafe extern "C" fn(handle: *mut uv_handle_t, nread: isize, buf: *const uv_buf_t, addr: *const c_void, flags: c_uint);
pub type uv_udp_send_cb = unsafe extern "C" fn(req: *mut uv_req_t, status: c_int);

/// `uv_handle_type` values (libuv 1.x).
pub const UV_CHECK: c_int = 2;
pub const UV_IDLE: c_int = 6;
pub const UV_POLL: c_int = 8;
pub const UV_TIMER: c_int = 13;
pub const UV_UDP: c_int = 15;

/// `uv_req_type` values (libuv 1.x).
pub const UV_UDP_SEND: c_int = 5;

/// `uv_poll_event` flags.
pub const UV_READABLE: c_int = 1;
pub const UV_WRITABLE: c_int = 2;
pub const UV_DISCONNECT: c_int = 4;

// On Windows an addon's imports name the DLL (or program) that provides them: libuv's functions
// are node.exe's exports, imported without an import library (raw-dylib). Node-API's own
// functions are looked up in the running program by napi-sys on Windows.
#[cfg_attr(windows, link(name = "node.exe", kind = "raw-dylib", modifiers = "+verbatim"))]
#[cfg(not(test))]
extern "C" {
    pub fn uv_version() -> c_uint;
    pub fn uv_handle_size(kind: c_int) -> usize;
    pub fn uv_handle_set_data(handle: *mut uv_handle_t, data: *mut c_void);
    pub fn uv_handle_get_data(handle: *const uv_handle_t) -> *mut c_void;
    pub fn uv_close(handle: *mut uv_handle_t, cb: Option<uv_close_cb>);
    pub fn uv_unref(handle: *mut uv_handle_t);
    pub fn uv_now(lp: *const uv_loop_t) -> u64;

    #[cfg(unix)]
    pub fn uv_poll_init(lp: *mut uv_loop_t, handle: *mut uv_handle_t, fd: c_int) -> c_int;
    /// A socket's poll handle on Windows (where `uv_poll_init` takes a C runtime descriptor).
    #[cfg(windows)]
    pub fn uv_poll_init_socket(lp: *mut uv_loop_t, handle: *mut uv_handle_t, socket: uv_os_sock_t) -> c_int;
    /// A Windows or Winsock error code as libuv's (negative) error number, which Node names.
    #[cfg(windows)]
    pub fn uv_translate_sys_error(sys_errno: c_int) -> c_int;
    pub fn uv_poll_start(handle: *mut uv_handle_t, events: c_int, cb: uv_poll_cb) -> c_int;
    pub fn uv_poll_stop(handle: *mut uv_handle_t) -> c_int;

    pub fn uv_timer_init(lp: *mut uv_loop_t, handle: *mut uv_handle_t) -> c_int;
    pub fn uv_timer_start(handle: *mut uv_handle_t, cb: uv_timer_cb, timeout: u64, repeat: u64) -> c_int;
    pub fn uv_timer_stop(handle: *mut uv_handle_t) -> c_int;

    pub fn uv_check_init(lp: *mut uv_loop_t, handle: *mut uv_handle_t) -> c_int;
    pub fn uv_check_start(handle: *mut uv_handle_t, cb: uv_check_cb) -> c_int;
    pub fn uv_check_stop(handle: *mut uv_handle_t) -> c_int;

    pub fn uv_idle_init(lp: *mut uv_loop_t, handle: *mut uv_handle_t) -> c_int;
    pub fn uv_idle_start(handle: *mut uv_handle_t, cb: uv_idle_cb) -> c_int;
    pub fn uv_idle_stop(handle: *mut uv_handle_t) -> c_int;

    pub fn uv_udp_init(lp: *mut uv_loop_t, handle: *mut uv_handle_t) -> c_int;
    pub fn uv_udp_bind(handle: *mut uv_handle_t, addr: *const c_void, flags: c_uint) -> c_int;
    pub fn uv_udp_recv_start(handle: *mut uv_handle_t, alloc_cb: uv_alloc_cb, recv_cb: uv_udp_recv_cb) -> c_int;
    pub fn uv_udp_recv_stop(handle: *mut uv_handle_t) -> c_int;
    pub fn uv_udp_try_send(handle: *mut uv_handle_t, bufs: *const uv_buf_t, nbufs: c_uint, addr: *const c_void) -> c_int;
    pub fn uv_udp_send(req: *mut uv_req_t, handle: *mut uv_handle_t, bufs: *const uv_buf_t, nbufs: c_uint, addr: *const c_void, cb: uv_udp_send_cb) -> c_int;
    pub fn uv_req_size(kind: c_int) -> usize;
    pub fn uv_req_set_data(req: *mut uv_req_t, data: *mut c_void);
    pub fn uv_req_get_data(req: *const uv_req_t) -> *mut c_void;
}

/// Room before each handle for its allocation's size (kept so that `free_handle` can give it
/// back), as much as the handle's alignment needs.
const HEADER: usize = 16;

fn layout_of(size: usize) -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(HEADER + size, HEADER).expect("a handle's size")
}

// Unit tests have no libuv (only Node provides it): they run the engine on a loop of their own.
#[cfg(test)]
pub use fake::*;

/// Allocates a zeroed handle of `kind`; freed by `free_handle` from its close callback.
pub fn alloc_handle(kind: c_int) -> *mut uv_handle_t {
    // SAFETY: uv_handle_size is a pure lookup.
    let size = unsafe { uv_handle_size(kind) };
    let layout = layout_of(size);
    // SAFETY: the layout is not zero-sized (it holds the header); the size is written in the
    // header, and the handle starts after it, aligned as the header is.
    unsafe {
        let block = std::alloc::alloc_zeroed(layout);
        if block.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        (block as *mut usize).write(size);
        block.add(HEADER) as *mut uv_handle_t
    }
}

/// A close callback that frees what `alloc_handle` allocated.
///
/// # Safety
/// `handle` must come from `alloc_handle`, and libuv be done with it.
pub unsafe extern "C" fn free_handle(handle: *mut uv_handle_t) {
    // SAFETY: libuv calls this once, when it is done with a handle that `alloc_handle` allocated,
    // which put the allocation's size `HEADER` bytes before the handle.
    unsafe {
        let block = (handle as *mut u8).sub(HEADER);
        let size = (block as *const usize).read();
        std::alloc::dealloc(block, layout_of(size));
    }
}

/// A loop of the unit tests' own, in place of libuv's functions: it keeps what the engine asks of
/// each handle (its data, what it waits for, its timer, whether it is active, referenced, closed)
/// and a clock the test moves, and runs a handle's callback when the test says its event came.
/// The engine's own code is then what runs, from `listen` to `dispose`.
#[cfg(test)]
#[allow(clippy::missing_safety_doc)] // libuv's signatures, unsafe as the real ones are.
pub mod fake {
    use super::*;
    use std::cell::RefCell;
    use std::collections::HashMap;

    /// What the loop knows of one handle.
    #[derive(Clone, Default, Debug)]
    pub struct Handle {
        pub kind: c_int,
        pub data: usize,
        pub fd: c_int,
        pub active: bool,
        pub referenced: bool,
        /// A poll handle's events.
        pub events: c_int,
        pub poll_cb: Option<uv_poll_cb>,
        /// A timer's, check's or idle's callback.
        pub cb: Option<uv_timer_cb>,
        pub timeout: u64,
        pub repeat: u64,
        /// When a started timer is due.
        pub due: u64,
    }

    #[derive(Default)]
    struct Loop {
        now: u64,
        handles: HashMap<usize, Handle>,
        closed: Vec<usize>,
    }

    thread_local! {
        static LOOP: RefCell<Loop> = RefCell::new(Loop::default());
    }

    fn with<R>(f: impl FnOnce(&mut Loop) -> R) -> R {
        LOOP.with(|l| f(&mut l.borrow_mut()))
    }

    fn handle<R>(h: *const uv_handle_t, f: impl FnOnce(&mut Handle) -> R) -> R {
        with(|l| f(l.handles.get_mut(&(h as usize)).expect("a handle initialised on the loop")))
    }

    fn init(h: *mut uv_handle_t, kind: c_int, fd: c_int) -> c_int {
        with(|l| l.handles.insert(h as usize, Handle { kind, fd, referenced: true, ..Handle::default() }));
        0
    }

    /// A handle as the loop knows it (None once closed).
    pub fn handle_of(h: *const uv_handle_t) -> Option<Handle> {
        with(|l| l.handles.get(&(h as usize)).cloned())
    }

    /// How many handles were closed so far.
    pub fn closed() -> usize {
        with(|l| l.closed.len())
    }

    /// Sets the loop's clock (ms).
    pub fn set_now(now: u64) {
        with(|l| l.now = now);
    }

    /// The poll handles that are active, with their descriptors and events.
    pub fn polls() -> Vec<(*mut uv_handle_t, c_int, c_int)> {
        let mut polls: Vec<_> =
            with(|l| l.handles.iter().filter(|(_, h)| h.kind == UV_POLL && h.active).map(|(&p, h)| (p as *mut uv_handle_t, h.fd, h.events)).collect());
        polls.sort_by_key(|&(_, fd, _)| fd);
        polls
    }

    /// libuv's poll phase found `events` on a poll handle: its callback runs.
    pub fn poll_event(h: *mut uv_handle_t, events: c_int) {
        let Handle { active, poll_cb, .. } = handle_of(h).expect("a live handle");
        assert!(active, "an event on a stopped poll handle");
        // SAFETY: the engine's own callback, called as libuv calls it.
        unsafe { poll_cb.expect("a started poll handle")(h, 0, events) };
    }

    /// Runs the active handles of `kind` (UV_CHECK, UV_IDLE), as a turn of the loop does.
    pub fn run(kind: c_int) -> usize {
        let due: Vec<_> = with(|l| l.handles.iter().filter(|(_, h)| h.kind == kind && h.active).map(|(&p, h)| (p, h.cb)).collect());
        for &(p, cb) in &due {
            // SAFETY: the engine's own callback, called as libuv calls it.
            unsafe { cb.expect("a started handle")(p as *mut uv_handle_t) };
        }
        due.len()
    }

    /// Moves the clock to `now` and runs the timers due by then, in order; returns how many ran.
    pub fn advance(now: u64) -> usize {
        let mut ran = 0;
        loop {
            let next = with(|l| {
                let (&p, h) = l.handles.iter().filter(|(_, h)| h.kind == UV_TIMER && h.active && h.due <= now).min_by_key(|(_, h)| h.due)?;
                l.now = l.now.max(h.due);
                let cb = h.cb;
                let h = l.handles.get_mut(&p).unwrap();
                if h.repeat > 0 {
                    h.due += h.repeat;
                } else {
                    h.active = false;
                }
                Some((p, cb))
            });
            let Some((p, cb)) = next else { break };
            // SAFETY: the engine's own callback, called as libuv calls it.
            unsafe { cb.expect("a started timer")(p as *mut uv_handle_t) };
            ran += 1;
        }
        set_now(now);
        ran
    }

    pub unsafe fn uv_version() -> c_uint {
        (1 << 16) | (46 << 8)
    }
    pub unsafe fn uv_handle_size(_kind: c_int) -> usize {
        64
    }
    pub unsafe fn uv_handle_set_data(h: *mut uv_handle_t, data: *mut c_void) {
        handle(h, |h| h.data = data as usize);
    }
    pub unsafe fn uv_handle_get_data(h: *const uv_handle_t) -> *mut c_void {
        handle(h, |h| h.data as *mut c_void)
    }
    /// Closes at once, its callback run after, as libuv's next turn would.
    pub unsafe fn uv_close(h: *mut uv_handle_t, cb: Option<uv_close_cb>) {
        with(|l| {
            l.handles.remove(&(h as usize)).expect("a handle closed once");
            l.closed.push(h as usize);
        });
        if let Some(cb) = cb {
            // SAFETY: the caller's close callback, for the handle it closed.
            unsafe { cb(h) };
        }
    }
    pub unsafe fn uv_unref(h: *mut uv_handle_t) {
        handle(h, |h| h.referenced = false);
    }
    pub unsafe fn uv_now(_: *const uv_loop_t) -> u64 {
        with(|l| l.now)
    }
    pub unsafe fn uv_poll_init(_: *mut uv_loop_t, h: *mut uv_handle_t, fd: c_int) -> c_int {
        init(h, UV_POLL, fd)
    }
    pub unsafe fn uv_poll_start(h: *mut uv_handle_t, events: c_int, cb: uv_poll_cb) -> c_int {
        handle(h, |h| (h.active, h.events, h.poll_cb) = (true, events, Some(cb)));
        0
    }
    pub unsafe fn uv_poll_stop(h: *mut uv_handle_t) -> c_int {
        handle(h, |h| (h.active, h.events) = (false, 0));
        0
    }
    pub unsafe fn uv_timer_init(_: *mut uv_loop_t, h: *mut uv_handle_t) -> c_int {
        init(h, UV_TIMER, -1)
    }
    pub unsafe fn uv_timer_start(h: *mut uv_handle_t, cb: uv_timer_cb, timeout: u64, repeat: u64) -> c_int {
        let now = with(|l| l.now);
        handle(h, |h| (h.active, h.cb, h.timeout, h.repeat, h.due) = (true, Some(cb), timeout, repeat, now + timeout));
        0
    }
    pub unsafe fn uv_timer_stop(h: *mut uv_handle_t) -> c_int {
        handle(h, |h| h.active = false);
        0
    }
    pub unsafe fn uv_check_init(_: *mut uv_loop_t, h: *mut uv_handle_t) -> c_int {
        init(h, UV_CHECK, -1)
    }
    pub unsafe fn uv_check_start(h: *mut uv_handle_t, cb: uv_check_cb) -> c_int {
        handle(h, |h| (h.active, h.cb) = (true, Some(cb)));
        0
    }
    pub unsafe fn uv_check_stop(h: *mut uv_handle_t) -> c_int {
        handle(h, |h| h.active = false);
        0
    }
    pub unsafe fn uv_idle_init(_: *mut uv_loop_t, h: *mut uv_handle_t) -> c_int {
        init(h, UV_IDLE, -1)
    }
    pub unsafe fn uv_idle_start(h: *mut uv_handle_t, cb: uv_idle_cb) -> c_int {
        handle(h, |h| (h.active, h.cb) = (true, Some(cb)));
        0
    }
    pub unsafe fn uv_idle_stop(h: *mut uv_handle_t) -> c_int {
        handle(h, |h| h.active = false);
        0
    }
    // UDP (HTTP/3) is not on the fake loop: its sockets are tested over real ones, from JavaScript.
    pub unsafe fn uv_udp_init(_: *mut uv_loop_t, _: *mut uv_handle_t) -> c_int {
        -1
    }
    pub unsafe fn uv_udp_bind(_: *mut uv_handle_t, _: *const c_void, _: c_uint) -> c_int {
        -1
    }
    pub unsafe fn uv_udp_recv_start(_: *mut uv_handle_t, _: uv_alloc_cb, _: uv_udp_recv_cb) -> c_int {
        -1
    }
    pub unsafe fn uv_udp_recv_stop(_: *mut uv_handle_t) -> c_int {
        -1
    }
    pub unsafe fn uv_udp_try_send(_: *mut uv_handle_t, _: *const uv_buf_t, _: c_uint, _: *const c_void) -> c_int {
        -1
    }
    pub unsafe fn uv_udp_send(_: *mut uv_req_t, _: *mut uv_handle_t, _: *const uv_buf_t, _: c_uint, _: *const c_void, _: uv_udp_send_cb) -> c_int {
        -1
    }
    pub unsafe fn uv_req_size(_: c_int) -> usize {
        64
    }
    pub unsafe fn uv_req_set_data(_: *mut uv_req_t, _: *mut c_void) {}
    pub unsafe fn uv_req_get_data(_: *const uv_req_t) -> *mut c_void {
        std::ptr::null_mut()
    }
}
