//! Bytes both ways through napi-rs's own conversions: what JavaScript writes (a string or a
//! Buffer), and bytes handed back as a latin1 string.

use napi::bindgen_prelude::{Buffer, Either, Result, ToNapiValue};
use napi::sys;

/// The bytes of what JavaScript writes: a string's UTF-8, or a Buffer's own.
pub(crate) fn bytes_of(data: &Either<String, Buffer>) -> &[u8] {
    match data {
        Either::A(text) => text.as_bytes(),
        Either::B(buffer) => buffer.as_ref(),
    }
}

/// Bytes handed to JavaScript as a latin1 string.
pub struct Latin1(pub(crate) Vec<u8>);

impl ToNapiValue for Latin1 {
    unsafe fn to_napi_value(env: sys::napi_env, value: Self) -> Result<sys::napi_value> {
        // SAFETY: napi-rs calls this with the current env; the bytes are valid for their length,
        // and copied.
        unsafe {
            let mut out = std::ptr::null_mut();
            sys::napi_create_string_latin1(env, value.0.as_ptr() as *const _, value.0.len(), &mut out);
            Ok(out)
        }
    }
}
