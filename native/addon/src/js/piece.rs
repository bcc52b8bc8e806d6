//! A Buffer made for a piece of a request body before its bytes are read, so that the socket's
//! bytes land in memory JavaScript then owns: no copy between the socket and the app. Each piece
//! is a Buffer of its own (from 128 KiB up over a block of `blocks.rs`, given back for reuse once
//! V8 has freed the Buffer; below, V8's own memory), never written to again once handed over, so
//! a piece an app keeps keeps its bytes. Held by a reference (`HeldBuffer`) from its making to its
//! delivery; JavaScript sees it only once its bytes are in.

use super::held::HeldBuffer;
use crate::events::ReadPiece;
use napi::sys;
use std::ptr;

/// A new Buffer of `len` bytes (uninitialised: the read fills it), held for the engine, and
/// where its bytes are; None if Node-API refuses (the caller reads the bytes as usual).
///
/// # Safety
/// `env` must be the current env, on its thread.
pub(crate) unsafe fn new_piece(env: sys::napi_env, len: usize) -> Option<(ReadPiece, *mut u8)> {
    // SAFETY: `env` is the current env (the caller's promise); the scope opened here is closed
    // before returning; `data` is non-null and `len` bytes long whenever a Buffer is held over it.
    unsafe {
        let mut scope = ptr::null_mut();
        if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
            return None;
        }
        let pooled = if len >= super::blocks::BLOCK_FROM { super::blocks::new_buffer(env, len) } else { None };
        let (mut data, mut buffer): (*mut std::ffi::c_void, sys::napi_value) = match pooled {
            Some((buffer, block)) => (block.cast(), buffer),
            None => (ptr::null_mut(), ptr::null_mut()),
        };
        let made = if !data.is_null() || sys::napi_create_buffer(env, len, &mut data, &mut buffer) == sys::Status::napi_ok && !data.is_null() {
            HeldBuffer::new(env, buffer, data as *const u8, len).map(|held| (ReadPiece(Box::new(held)), data as *mut u8))
        } else {
            // A failed Buffer leaves an exception pending (a RangeError), and the bytes are read as
            // usual instead.
            super::blocks::clear_exception(env);
            None
        };
        sys::napi_close_handle_scope(env, scope);
        made
    }
}

/// The piece's Buffer, for the call that hands it over (the reference is dropped with `piece`).
///
/// # Safety
/// `env` must be the current env, with a handle scope open.
pub(crate) unsafe fn piece_value(env: sys::napi_env, piece: &ReadPiece) -> sys::napi_value {
    // SAFETY: `env` is the current env with a scope open (the caller's promise), the one the piece
    // was held on.
    unsafe {
        let held = piece.0.downcast_ref::<HeldBuffer>().expect("a piece made by new_piece");
        held.value(env)
    }
}
