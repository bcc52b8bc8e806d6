//! The few libuv functions the engine uses, resolved from the `node` binary when the addon loads
//! (Node exports libuv's API). Handles are allocated by size (`uv_handle_size`), so no libuv
//! struct layout is compiled in: only the enum values below, stable across libuv 1.x.
#![allow(non_camel_case_types)]

use std::os::raw::{c_int, c_uint, c_void};

pub enum uv_loop_t {}
pub enum uv_handle_t {}

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

/// `uv_handle_type` values (libuv 1.x).
pub const UV_CHECK: c_int = 2;
pub const UV_IDLE: c_int = 6;
pub const UV_POLL: c_int = 8;
pub const UV_TIMER: c_int = 13;

/// `uv_poll_event` flags.
pub const UV_READABLE: c_int = 1;
pub const UV_WRITABLE: c_int = 2;
pub const UV_DISCONNECT: c_int = 4;

// On Windows an addon's imports name the DLL (or program) that provides them: libuv's functions
// are node.exe's exports, imported without an import library (raw-dylib). Node-API's own
// functions are looked up in the running program by napi-sys on Windows.
#[cfg_attr(windows, link(name = "node.exe", kind = "raw-dylib", modifiers = "+verbatim"))]
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
}

/// Room before each handle for its allocation's size (kept so that `free_handle` can give it
/// back), as much as the handle's alignment needs.
const HEADER: usize = 16;

fn layout_of(size: usize) -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(HEADER + size, HEADER).expect("a handle's size")
}

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
    // SAFETY: `alloc_handle` put the size `HEADER` bytes before the handle.
    let block = (handle as *mut u8).sub(HEADER);
    let size = (block as *const usize).read();
    std::alloc::dealloc(block, layout_of(size));
}
