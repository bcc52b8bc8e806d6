//! An answer's head from what JavaScript passes (`respond`, `stream_start`): its status, reason
//! phrase, flags, declared length and request id to echo, checked as the engine takes them.

use super::text;
use super::value::{is_undefined, type_of};
use cog_framing::response::{status_code, AppHead, HeaderBlock, KeptHeaderBlock, ReasonPhrase, RequestId};
use napi::{sys, Error, Result};

/// Response flags from JavaScript.
const RESPONSE_CLOSE: u32 = 1;
const RESPONSE_HAS_DATE: u32 = 2;

/// The status JavaScript passed, when it is one (100 to 999).
#[inline]
pub(crate) fn status(status: u32) -> Result<u16> {
    status_code(status).ok_or_else(|| invalid_status(status))
}

#[cold]
fn invalid_status(status: u32) -> Error {
    Error::from_reason(format!("Invalid status code {status}: a status is 100 to 999"))
}

/// The app's answer head from what JavaScript passed: its flags (`RESPONSE_HAS_DATE`,
/// `RESPONSE_CLOSE`) and the Content-Length it declared (negative: none).
#[inline]
pub(crate) fn app_head<'a>(
    status: u16,
    reason: Option<ReasonPhrase<'a>>,
    block: HeaderBlock<'a>,
    flags: u32,
    declared: f64,
    request_id: Option<RequestId<'a>>,
) -> AppHead<'a> {
    AppHead {
        status,
        reason,
        block,
        has_date: flags & RESPONSE_HAS_DATE != 0,
        declared_length: (declared >= 0.0).then_some(declared as u64),
        close: flags & RESPONSE_CLOSE != 0,
        request_id,
    }
}

/// The request id JavaScript passed to echo: a string `RequestId` takes, kept in `out`.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
pub(crate) unsafe fn request_id_of<'a>(env: sys::napi_env, value: sys::napi_value, out: &'a mut Vec<u8>) -> Result<RequestId<'a>> {
    // SAFETY: the caller's promise, passed on (`value` checked to be a string).
    unsafe {
        if type_of(env, value) != sys::ValueType::napi_string {
            return Err(Error::from_reason("A request id to echo must be a string"));
        }
        text::latin1_into(env, value, out);
        RequestId::new(out).map_err(Error::from_reason)
    }
}

/// The reason phrase JavaScript passed: a string of latin1 characters that `ReasonPhrase` takes
/// (no CR, LF or other control character but tab), kept in `out`.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
pub(crate) unsafe fn reason_phrase<'a>(env: sys::napi_env, value: sys::napi_value, units: &mut Vec<u16>, out: &'a mut Vec<u8>) -> Result<ReasonPhrase<'a>> {
    // SAFETY: the caller's promise, passed on (`value` checked to be a string).
    unsafe {
        if type_of(env, value) != sys::ValueType::napi_string {
            return Err(Error::from_reason("A reason phrase (statusMessage) must be a string"));
        }
        text::utf16_into(env, value, units);
        let latin1 = text::latin1_from_utf16(units, out);
        text::trim(units);
        if !latin1 {
            return Err(Error::from_reason("Invalid character in the reason phrase (statusMessage): past U+00FF"));
        }
        ReasonPhrase::new(out).map_err(Error::from_reason)
    }
}

/// A header block JavaScript passed as a string (latin1 `name: value\r\n` lines), checked, kept
/// in `out`.
///
/// # Safety
///
/// `env` is the current env and `value` a string of the current scope.
pub(crate) unsafe fn header_block<'a>(env: sys::napi_env, value: sys::napi_value, out: &'a mut Vec<u8>) -> Result<HeaderBlock<'a>> {
    // SAFETY: the caller's promise, passed on.
    unsafe { text::latin1_into(env, value, out) };
    HeaderBlock::new(out).map_err(Error::from_reason)
}

/// A header block JavaScript keeps (`keep_header_block`), checked once, owned.
///
/// # Safety
///
/// `env` is the current env and `value` a string of the current scope.
pub(crate) unsafe fn kept_block(env: sys::napi_env, value: sys::napi_value) -> Result<KeptHeaderBlock> {
    let mut bytes = Vec::new();
    // SAFETY: the caller's promise, passed on.
    unsafe { text::latin1_into(env, value, &mut bytes) };
    KeptHeaderBlock::new(&bytes).map_err(Error::from_reason)
}

/// The trailers JavaScript passed to end a streamed body: none when undefined, else a string of
/// header lines checked as a head's block is, kept in `out`.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
pub(crate) unsafe fn trailers_of<'a>(env: sys::napi_env, value: sys::napi_value, out: &'a mut Vec<u8>) -> Result<Option<HeaderBlock<'a>>> {
    // SAFETY: the caller's promise, passed on (`value` checked to be a string before it is read).
    unsafe {
        if is_undefined(env, value) {
            return Ok(None);
        }
        if type_of(env, value) != sys::ValueType::napi_string {
            return Err(Error::from_reason("Trailers must be a string of header lines"));
        }
        text::latin1_into(env, value, out);
    }
    HeaderBlock::new(out).map(Some).map_err(|_| Error::from_reason("Invalid trailer line in the response"))
}
