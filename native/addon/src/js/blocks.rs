//! The memory a request body's larger pieces are read into, reused. Such a piece is a Buffer over
//! a block of this pool (`napi_create_external_buffer`); once V8 has freed the Buffer's memory
//! (so once no JavaScript can reach it, nor any ArrayBuffer its memory was moved to), Node runs
//! the Buffer's finalizer on the JavaScript thread, which gives the block back, and the next piece
//! takes it warm. A Buffer of V8's own per piece (`napi_create_buffer`) was a glibc malloc and
//! free of up to 256 KiB: V8 frees the pieces in batches of 32 MB at its young generation's
//! collections, glibc gives such a batch at the top of its heap back to the kernel (`brk`), and
//! the next pieces fault fresh zeroed pages in (~350 page faults a request under the arena's
//! uploads; a quarter of the engine's CPU, in the kernel's copy into those pages).
//!
//! A block is handed out again only after that finalizer has run: a piece an app keeps keeps its
//! block, and nothing of another request shows through it.
//!
//! V8 counts a Buffer over outside memory with its young generation's ArrayBuffers, as it does
//! its own, but only the allocation of memory of its own checks that count (a young-generation
//! collection once it passes twice the semi-space: 32 MB on 64-bit Node). Pieces made only over
//! blocks never check it: V8 then collected them only in full (mark-compact) collections, started
//! by its external-memory limit every 100-300 ms, and the CPU per request doubled. So each piece
//! also makes a 1-byte ArrayBuffer of V8's own: the check runs, and the pieces are collected at
//! the pace V8's own Buffers would be.
//!
//! The free list is the JavaScript thread's own (a worker's engine has its own). It keeps at most
//! `KEEP` blocks, about what the pieces between two young-generation collections take; what comes
//! back beyond that is freed.

use napi::sys;
use std::alloc::{alloc, dealloc, Layout};
use std::cell::{Cell, RefCell};
use std::ptr;

/// The size of every block: the largest piece (`engine::serve`'s `PIECE_MAX`).
pub(crate) const BLOCK: usize = 256 * 1024;
/// Pieces from this size up take a block: V8 counts a piece by its length, so a block under a
/// much shorter piece would be memory V8 doesn't know is held (smaller ones are Buffers of V8's
/// own, as before).
pub(crate) const BLOCK_FROM: usize = BLOCK / 2;
/// The most blocks kept free (32 MiB).
const KEEP: usize = 128;

fn layout() -> Layout {
    Layout::from_size_align(BLOCK, 4096).expect("a valid layout")
}

struct Free(Vec<*mut u8>);

impl Drop for Free {
    fn drop(&mut self) {
        for &block in &self.0 {
            // SAFETY: every block in the list was allocated with `layout()` and is owned by it.
            unsafe { dealloc(block, layout()) };
        }
    }
}

thread_local! {
    static FREE: RefCell<Free> = const { RefCell::new(Free(Vec::new())) };
    /// Whether Node-API refused a Buffer over outside memory (as it does where V8's sandbox
    /// forbids them): pieces are then Buffers of V8's own.
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// A block of `BLOCK` bytes: a free one if there is one, else a new one; None if none can be had.
fn take() -> Option<*mut u8> {
    let reused = FREE.try_with(|free| free.borrow_mut().0.pop()).ok().flatten();
    // SAFETY: `layout()` has a non-zero size.
    reused.or_else(|| Some(unsafe { alloc(layout()) }).filter(|block| !block.is_null()))
}

/// Gives `block` back: to the free list, or to the allocator once the list is full (or gone,
/// while the thread ends).
///
/// # Safety
/// `block` came from `take()`, and nothing refers to its bytes any longer.
unsafe fn give_back(block: *mut u8) {
    // SAFETY: `block` came from `take()` (the caller's promise): allocated with `layout()`, and no
    // longer used.
    unsafe {
        let kept = FREE
            .try_with(|free| {
                let mut free = free.borrow_mut();
                (free.0.len() < KEEP).then(|| free.0.push(block)).is_some()
            })
            .unwrap_or(false);
        if !kept {
            dealloc(block, layout());
        }
    }
}

/// The finalizer of a Buffer over a block: V8 has freed the Buffer's memory.
///
/// # Safety
///
/// Called by V8 only, as the finalizer of a Buffer made by `new_buffer`.
unsafe extern "C" fn collected(_env: sys::napi_env, data: *mut std::ffi::c_void, _hint: *mut std::ffi::c_void) {
    // SAFETY: V8 calls the finalizer once, with the block `new_buffer` made the Buffer over; its
    // bytes are no longer used.
    unsafe {
        give_back(data.cast());
    }
}

/// A new Buffer of `len` bytes (`BLOCK_FROM` to `BLOCK`) over a block of the pool, its bytes as
/// a previous piece left them (the read overwrites them all); None if Node-API refuses it (the
/// caller makes a Buffer of V8's own).
///
/// # Safety
/// `env` must be the current env, on its thread, with a handle scope open.
pub(crate) unsafe fn new_buffer(env: sys::napi_env, len: usize) -> Option<(sys::napi_value, *mut u8)> {
    // SAFETY: `env` is the current env with a scope open (the caller's promise); `block` is `BLOCK`
    // bytes, at least `len`, which the Buffer owns from now on (its finalizer gives it back); the
    // out-pointers are locals.
    unsafe {
        debug_assert!((BLOCK_FROM..=BLOCK).contains(&len));
        if REFUSED.with(Cell::get) {
            return None;
        }
        let block = take()?;
        let mut buffer = ptr::null_mut();
        if sys::napi_create_external_buffer(env, len, block.cast(), Some(collected), ptr::null_mut(), &mut buffer) != sys::Status::napi_ok {
            // Node may run the finalizer of a Buffer it failed to make (it does for a length it
            // refuses), so the block is not given back here: it can't then be freed twice.
            REFUSED.with(|refused| refused.set(true));
            clear_exception(env);
            return None;
        }
        // The check of V8's pace (see the module's comment); a failure only skips it once.
        let (mut data, mut pace) = (ptr::null_mut(), ptr::null_mut());
        if sys::napi_create_arraybuffer(env, 1, &mut data, &mut pace) != sys::Status::napi_ok {
            clear_exception(env);
        }
        Some((buffer, block))
    }
}

/// Clears what a failed call left pending: nobody is there to catch it.
///
/// # Safety
///
/// `env` must be the current env, on its thread.
pub(crate) unsafe fn clear_exception(env: sys::napi_env) {
    // SAFETY: `env` is the current env (the caller's promise); the out-pointers are locals.
    unsafe {
        let mut pending = false;
        if sys::napi_is_exception_pending(env, &mut pending) == sys::Status::napi_ok && pending {
            let mut error = ptr::null_mut();
            sys::napi_get_and_clear_last_exception(env, &mut error);
        }
    }
}
