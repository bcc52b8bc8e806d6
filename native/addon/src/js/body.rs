//! A whole response's body from what JavaScript passes to `respond`: a string, a Buffer, or the
//! position of a file opened for the answer.

use super::{held, text, value};
use crate::h1::WholeBody;
use napi::{sys, Error, Result};

/// What a body argument gave.
pub(crate) enum Given<'a> {
    Body(WholeBody<'a>),
    /// A number: the position in the file opened for the answer to send `declared` bytes from.
    FileAt(u64),
}

/// A response body: a string's UTF-8 (written into `out`), a small Buffer's own bytes, a large
/// Buffer held where it lies (see `held`), or a file's position (see `file_at`). Inlined into
/// both copies of `respond`: called instead, it cost a response ~30 instructions.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
#[inline(always)]
pub(crate) unsafe fn body_of<'a>(env: sys::napi_env, value: sys::napi_value, declared: f64, units: &mut Vec<u16>, out: &'a mut Vec<u8>) -> Result<Given<'a>> {
    // SAFETY: `env` and `value` are live (the caller's promise); `data` and `len` describe the
    // Buffer N-API reported, which lives for the rest of the call, and the slice is made only from
    // a non-null pointer (`len` > 0); a large Buffer is held by reference instead
    // (`held::HeldBuffer`) so it outlives the call.
    unsafe {
        let mut kind = 0;
        sys::napi_typeof(env, value, &mut kind);
        if kind == sys::ValueType::napi_string {
            text::utf8_into(env, value, units, out);
            return Ok(Given::Body(WholeBody::Bytes(out)));
        }
        let mut data = std::ptr::null_mut();
        let mut len = 0usize;
        if sys::napi_get_buffer_info(env, value, &mut data, &mut len) != sys::Status::napi_ok {
            return file_at(env, value, declared);
        }
        if len >= held::HOLD_FROM {
            if let Some(held) = held::HeldBuffer::new(env, value, data as *const u8, len) {
                return Ok(Given::Body(WholeBody::Held(Box::new(held))));
            }
        }
        Ok(Given::Body(WholeBody::Bytes(if len == 0 { &[] } else { std::slice::from_raw_parts(data as *const u8, len) })))
    }
}

/// A body given as a number: `declared` bytes, from that position, of the file opened for the
/// request's answer (`open_file`), sent in place.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
#[cold]
unsafe fn file_at(env: sys::napi_env, value: sys::napi_value, declared: f64) -> Result<Given<'static>> {
    // SAFETY: the caller's promise, passed on.
    let Some(offset) = (unsafe { value::double_of(env, value) }) else {
        return Err(Error::from_reason("a response body must be a string, a Buffer or the position of an opened file"));
    };
    if !(offset >= 0.0 && declared >= 0.0) {
        return Err(Error::from_reason("a file body needs a position and a Content-Length (declared), neither negative"));
    }
    Ok(Given::FileAt(offset as u64))
}
