//! nghttp2's allocations, counted: a connection can say how much memory it holds (streams,
//! HPACK tables, queued frames), which the flood tests check stays flat and a server can limit,
//! as node:http2's `maxSessionMemory` does with the same allocator hook.

use libnghttp2_sys::nghttp2_mem;
use std::alloc::{alloc, alloc_zeroed, dealloc, realloc, Layout};
use std::os::raw::c_void;

/// Each block starts with its size, kept in a header as large as malloc's alignment.
const HEADER: usize = 16;

/// The live bytes of one session (pointed to by `mem_user_data`).
pub(crate) struct Counter {
    pub(crate) live: usize,
}

pub(crate) fn allocator(counter: *mut Counter) -> nghttp2_mem {
    nghttp2_mem { mem_user_data: counter as *mut c_void, malloc: Some(malloc), free: Some(free), calloc: Some(calloc), realloc: Some(resize) }
}

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, HEADER).ok()
}

/// Writes the size header of a block just allocated and counts it.
///
/// # Safety
///
/// `block` is null or a fresh allocation of `layout(size)`; `counter` is the session's `Counter`.
unsafe fn finish(block: *mut u8, size: usize, counter: *mut c_void) -> *mut c_void {
    if block.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: `block` is at least HEADER (16) bytes, aligned to 16, and `counter` a live `Counter`
    // (the caller's promise); the pointer returned stays inside the allocation.
    unsafe {
        (block as *mut usize).write(size);
        (*(counter as *mut Counter)).live += size;
        block.add(HEADER) as *mut c_void
    }
}

// nghttp2's allocator hooks (`nghttp2_mem`). Safety, for all four: nghttp2 calls them with the
// `mem_user_data` given to it, a live `Counter` (owned by the connection, freed after the
// session), and frees or resizes only what they returned.

unsafe extern "C" fn malloc(size: usize, counter: *mut c_void) -> *mut c_void {
    match layout(size) {
        // SAFETY: the layout's size is never zero (it has the header); see above for `counter`.
        Some(l) => unsafe { finish(alloc(l), size, counter) },
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn calloc(n: usize, size: usize, counter: *mut c_void) -> *mut c_void {
    match n.checked_mul(size).and_then(|total| Some((total, layout(total)?))) {
        // SAFETY: the layout's size is never zero (it has the header); see above for `counter`.
        Some((total, l)) => unsafe { finish(alloc_zeroed(l), total, counter) },
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn free(ptr: *mut c_void, counter: *mut c_void) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: `ptr` came from `finish`: HEADER bytes past the start of a block whose header holds
    // its size, allocated with `layout(size)`; see above for `counter`.
    unsafe {
        let block = (ptr as *mut u8).sub(HEADER);
        let size = (block as *mut usize).read();
        (*(counter as *mut Counter)).live -= size;
        dealloc(block, layout(size).unwrap());
    }
}

unsafe extern "C" fn resize(ptr: *mut c_void, size: usize, counter: *mut c_void) -> *mut c_void {
    if ptr.is_null() {
        // SAFETY: as `malloc`'s caller (nghttp2, with its counter).
        return unsafe { malloc(size, counter) };
    }
    let Some(_) = layout(size) else { return std::ptr::null_mut() };
    // SAFETY: `ptr` came from `finish` (see `free`); the new size plus the header fits a layout
    // (checked above); `counter` is live.
    unsafe {
        let block = (ptr as *mut u8).sub(HEADER);
        let old = (block as *mut usize).read();
        let grown = realloc(block, layout(old).unwrap(), size + HEADER);
        if grown.is_null() {
            return std::ptr::null_mut();
        }
        (*(counter as *mut Counter)).live -= old;
        finish(grown, size, counter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_is_live() {
        let counter = Box::into_raw(Box::new(Counter { live: 0 }));
        let mem = allocator(counter);
        // SAFETY: the hooks are called as nghttp2 calls them: with the counter, on what they returned.
        unsafe {
            let a = mem.malloc.unwrap()(100, mem.mem_user_data);
            let b = mem.calloc.unwrap()(10, 8, mem.mem_user_data);
            assert_eq!((*counter).live, 180);
            assert!(std::slice::from_raw_parts(b as *const u8, 80).iter().all(|&x| x == 0));
            std::ptr::write_bytes(a as *mut u8, 7, 100);
            let a = mem.realloc.unwrap()(a, 1000, mem.mem_user_data);
            assert_eq!(*(a as *const u8).add(99), 7, "realloc keeps the bytes");
            assert_eq!((*counter).live, 1080);
            mem.free.unwrap()(a, mem.mem_user_data);
            mem.free.unwrap()(b, mem.mem_user_data);
            mem.free.unwrap()(std::ptr::null_mut(), mem.mem_user_data);
            assert_eq!((*counter).live, 0);
            drop(Box::from_raw(counter));
        }
    }
}
