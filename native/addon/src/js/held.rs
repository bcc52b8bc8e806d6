//! A Buffer of the app's, held by a Node-API reference while the engine sends it, so that its
//! bytes are read where they lie rather than copied: the answer to a slow reader is the app's one
//! shared Buffer, however many readers wait for it; and a Buffer made for a request body's
//! piece, from its read to its delivery (`piece.rs`). Dropping it lets the Buffer go. As Node's own
//! socket writes do, it trusts the app not to change the Buffer, or transfer its memory away,
//! until it is sent.
//!
//! Everything runs on the JavaScript thread, so a reference is made and deleted there; but once
//! Node tears the environment down (at exit, or a worker's end) its references are gone with it,
//! and the engine's state, dropped later with the thread, must not touch them: a cleanup hook
//! notes that, and what is held then is simply forgotten.

use napi::sys;
use std::cell::Cell;

/// Buffers from this size up are held rather than copied. Below it, the copy lands in the
/// connection's reused output buffer (`spare.rs` keeps those up to 64 KiB) and goes out with its
/// head in one send(2); from it up, the output buffer would have to grow for the copy (an
/// allocation and its page faults, a memcpy of the body), and a second send(2) for the body is
/// small beside the bytes it sends.
pub(crate) const HOLD_FROM: usize = 64 * 1024;

pub(crate) struct HeldBuffer {
    env: sys::napi_env,
    reference: sys::napi_ref,
    data: *const u8,
    len: usize,
}

thread_local! {
    /// Whether this thread's environment is still alive (see the module's comment): `None` until
    /// the first Buffer is held (the cleanup hook is added then), then `Some(alive)`.
    static ENV_ALIVE: Cell<Option<bool>> = const { Cell::new(None) };
}

/// # Safety
///
/// None: called by Node only, when the env is torn down (unsafe as N-API's hook type is).
unsafe extern "C" fn env_gone(_: *mut std::ffi::c_void) {
    ENV_ALIVE.with(|alive| alive.set(Some(false)));
}

impl HeldBuffer {
    /// Holds `value`, a Buffer of `len` bytes at `data` (from `napi_get_buffer_info`); None if
    /// Node-API refuses the reference (the caller copies the bytes instead).
    ///
    /// # Safety
    /// `env` must be the current env and `value` the Buffer whose bytes `data` and `len` describe.
    pub(crate) unsafe fn new(env: sys::napi_env, value: sys::napi_value, data: *const u8, len: usize) -> Option<HeldBuffer> {
        // SAFETY: `env` and `value` are live (the caller's promise); the out-pointer is a local;
        // the hook is a function of N-API's type.
        unsafe {
            if ENV_ALIVE.with(Cell::get).is_none() {
                if sys::napi_add_env_cleanup_hook(env, Some(env_gone), std::ptr::null_mut()) != sys::Status::napi_ok {
                    return None;
                }
                ENV_ALIVE.with(|alive| alive.set(Some(true)));
            }
            let mut reference = std::ptr::null_mut();
            (sys::napi_create_reference(env, value, 1, &mut reference) == sys::Status::napi_ok).then_some(HeldBuffer { env, reference, data, len })
        }
    }

    /// The Buffer held.
    ///
    /// # Safety
    /// `env` must be the current env (the one it was held on), with a handle scope open.
    pub(crate) unsafe fn value(&self, env: sys::napi_env) -> sys::napi_value {
        // SAFETY: `env` is the env the reference was made on, with a scope open (the caller's
        // promise); the reference lives as long as `self`.
        unsafe {
            let mut value = std::ptr::null_mut();
            sys::napi_get_reference_value(env, self.reference, &mut value);
            value
        }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the reference keeps the Buffer, and so its bytes, alive while `self` lives.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }
}

impl AsRef<[u8]> for HeldBuffer {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

impl Drop for HeldBuffer {
    fn drop(&mut self) {
        if ENV_ALIVE.with(Cell::get) == Some(true) {
            // SAFETY: made on this thread's env, which is still alive.
            unsafe { sys::napi_delete_reference(self.env, self.reference) };
        }
    }
}
