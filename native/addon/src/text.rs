//! JavaScript strings into bytes, for responses. Node-API's own UTF-8 path (V8's `WriteUtf8`,
//! after asking for the length first) cost more than the rest of a small response together:
//! here a string is copied out once, as latin1 (headers) or as UTF-16 code units that are
//! encoded to UTF-8 in Rust, into buffers reused from one response to the next.

use napi::sys;
use std::ptr;

/// Past this, a scratch buffer is given back after use rather than kept for the next response.
const KEEP: usize = 1 << 20;

/// The string's latin1 bytes (how Node writes header strings: one byte per character).
pub unsafe fn latin1_into(env: sys::napi_env, value: sys::napi_value, out: &mut Vec<u8>) {
    out.clear();
    if out.capacity() < 1024 {
        out.reserve(1024);
    }
    let mut written = 0usize;
    sys::napi_get_value_string_latin1(env, value, out.as_mut_ptr() as *mut _, out.capacity(), &mut written);
    if written + 1 >= out.capacity() {
        // It may have been cut short: ask for the length and copy again.
        let mut len = 0usize;
        sys::napi_get_value_string_latin1(env, value, ptr::null_mut(), 0, &mut len);
        out.reserve(len + 1);
        sys::napi_get_value_string_latin1(env, value, out.as_mut_ptr() as *mut _, len + 1, &mut written);
    }
    out.set_len(written);
}

/// The string as UTF-8, lone surrogates replaced by U+FFFD (as `Buffer.from(text)` and Node's
/// `res.end(text)` write them).
pub unsafe fn utf8_into(env: sys::napi_env, value: sys::napi_value, units: &mut Vec<u16>, out: &mut Vec<u8>) {
    units.clear();
    if units.capacity() < 1024 {
        units.reserve(1024);
    }
    let mut written = 0usize;
    sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), units.capacity(), &mut written);
    if written + 1 >= units.capacity() {
        let mut len = 0usize;
        sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut len);
        units.reserve(len + 1);
        sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), len + 1, &mut written);
    }
    units.set_len(written);
    out.clear();
    encode_utf8(units, out);
}

/// Gives back a scratch buffer that grew for one large response.
pub fn trim<T>(buffer: &mut Vec<T>) {
    if buffer.capacity() * std::mem::size_of::<T>() > KEEP {
        *buffer = Vec::new();
    }
}

/// UTF-16 code units to UTF-8, appended to `out`.
pub fn encode_utf8(units: &[u16], out: &mut Vec<u8>) {
    // Three bytes per unit at most (a surrogate pair is two units for four bytes).
    out.reserve(units.len() * 3);
    let mut i = 0;
    while i < units.len() {
        // A run of ASCII (most bodies are nothing else) is copied without the per-unit branches.
        let ascii = units[i..].iter().take_while(|&&unit| unit < 0x80).count();
        out.extend(units[i..i + ascii].iter().map(|&unit| unit as u8));
        i += ascii;
        if i == units.len() {
            break;
        }
        let unit = units[i];
        i += 1;
        let code = if unit < 0x80 {
            out.push(unit as u8);
            continue;
        } else if (0xd800..0xdc00).contains(&unit) && i < units.len() && (0xdc00..0xe000).contains(&units[i]) {
            let low = units[i];
            i += 1;
            0x10000 + ((u32::from(unit) - 0xd800) << 10) + (u32::from(low) - 0xdc00)
        } else if (0xd800..0xe000).contains(&unit) {
            0xfffd
        } else {
            u32::from(unit)
        };
        let mut bytes = [0u8; 4];
        out.extend_from_slice(char::from_u32(code).unwrap_or('\u{fffd}').encode_utf8(&mut bytes).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::encode_utf8;

    #[test]
    fn encodes_as_rust_strings_do_and_replaces_lone_surrogates() {
        for text in ["", "hello", "héllo wörld", "日本語", "emoji 😀 and 𝄞", "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}"] {
            let units: Vec<u16> = text.encode_utf16().collect();
            let mut out = Vec::new();
            encode_utf8(&units, &mut out);
            assert_eq!(out, text.as_bytes());
        }
        let mut out = Vec::new();
        encode_utf8(&[0x61, 0xd800, 0x62, 0xdc00, 0xd83d], &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "a\u{fffd}b\u{fffd}\u{fffd}");
    }
}
