//! JavaScript values read through Node-API directly, where napi-rs's typed arguments would cost
//! a call more than the answer it serves: a value's type, a number that may not be one, a
//! Float64Array written into.

use napi::sys;

/// A JavaScript value's type (`sys::ValueType`).
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
pub(crate) unsafe fn type_of(env: sys::napi_env, value: sys::napi_value) -> sys::napi_valuetype {
    // SAFETY: `env` and `value` are live (the caller's promise); `kind` is a local.
    unsafe {
        let mut kind = 0;
        sys::napi_typeof(env, value, &mut kind);
        kind
    }
}

/// Whether an argument is `undefined` (or was not passed).
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
pub(crate) unsafe fn is_undefined(env: sys::napi_env, value: sys::napi_value) -> bool {
    // SAFETY: the caller's promise, passed on.
    unsafe { type_of(env, value) == sys::ValueType::napi_undefined }
}

/// The value as a uint32 when it is a number (none for a string or any other value).
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
pub(crate) unsafe fn uint32_of(env: sys::napi_env, value: sys::napi_value) -> Option<u32> {
    // SAFETY: `env` and `value` are live (the caller's promise); `number` is a local.
    unsafe {
        let mut number = 0u32;
        (sys::napi_get_value_uint32(env, value, &mut number) == sys::Status::napi_ok).then_some(number)
    }
}

/// The value as a number when it is one.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
pub(crate) unsafe fn double_of(env: sys::napi_env, value: sys::napi_value) -> Option<f64> {
    // SAFETY: `env` and `value` are live (the caller's promise); `number` is a local.
    unsafe {
        let mut number = 0f64;
        (sys::napi_get_value_double(env, value, &mut number) == sys::Status::napi_ok).then_some(number)
    }
}

/// The first `n` elements of a Float64Array, to write into; none when the value is no
/// Float64Array or holds fewer.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope; the slice is used only
/// within that scope (the array lives at least as long).
pub(crate) unsafe fn float64s<'a>(env: sys::napi_env, value: sys::napi_value, n: usize) -> Option<&'a mut [f64]> {
    let (mut kind, mut length, mut data, mut buffer, mut offset) = (0, 0usize, std::ptr::null_mut(), std::ptr::null_mut(), 0usize);
    // SAFETY: `env` and `value` are live (the caller's promise); the out-pointers are locals.
    let status = unsafe { sys::napi_get_typedarray_info(env, value, &mut kind, &mut length, &mut data, &mut buffer, &mut offset) };
    if status != sys::Status::napi_ok || kind != sys::TypedarrayType::float64_array || length < n || n == 0 {
        return None;
    }
    // SAFETY: a Float64Array of at least `n` (> 0) elements, checked above: `data` is non-null and
    // aligned for f64, and the array outlives the caller's scope.
    Some(unsafe { std::slice::from_raw_parts_mut(data as *mut f64, n) })
}
