//! JavaScript strings into bytes, for responses. Node-API's own UTF-8 path (V8's `WriteUtf8`,
//! after asking for the length first) cost more than the rest of a small response together:
//! here a string is copied out once, as latin1 (headers) or as UTF-16 code units that are
//! encoded to UTF-8 in Rust, into buffers reused from one response to the next.

use napi::sys;
use std::ptr;

/// Past this, a scratch buffer is given back after use rather than kept for the next response.
const KEEP: usize = 1 << 20;

/// The string's latin1 bytes (how Node writes header strings: one byte per character).
///
/// # Safety
///
/// `env` must be the current env and `value` a value of the current scope (a string, or nothing is
/// copied).
pub unsafe fn latin1_into(env: sys::napi_env, value: sys::napi_value, out: &mut Vec<u8>) {
    // SAFETY: `env` and `value` are live (the caller's promise); each call writes at most the
    // length it is given into `out`'s spare capacity, and `written` (at most that length less the
    // NUL) bytes are then initialised.
    unsafe {
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
}

/// The string as UTF-8, lone surrogates replaced by U+FFFD (as `Buffer.from(text)` and Node's
/// `res.end(text)` write them). Always inlined, as the functions it calls: every string body
/// goes through them, and called rather than inlined they cost ~30 instructions a response.
///
/// # Safety
///
/// As `utf16_into`.
#[inline(always)]
pub unsafe fn utf8_into(env: sys::napi_env, value: sys::napi_value, units: &mut Vec<u16>, out: &mut Vec<u8>) {
    // SAFETY: the caller's promise, passed on.
    unsafe {
        utf16_into(env, value, units);
        out.clear();
        encode_utf8(units, out);
    }
}

/// The string's UTF-16 code units.
///
/// # Safety
///
/// `env` must be the current env and `value` a value of the current scope (a string, or nothing is
/// copied).
#[inline(always)]
pub unsafe fn utf16_into(env: sys::napi_env, value: sys::napi_value, units: &mut Vec<u16>) {
    // SAFETY: `env` and `value` are live (the caller's promise); each call writes at most the
    // length it is given into `units`' spare capacity, and `written` (at most that length less the
    // NUL) units are then initialised.
    unsafe {
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
    }
}

/// UTF-16 code units as latin1 bytes, into `out`; false if one is past U+00FF (which latin1
/// can't hold: Node refuses such a character in a status message rather than cut it to a byte).
pub fn latin1_from_utf16(units: &[u16], out: &mut Vec<u8>) -> bool {
    out.clear();
    out.extend(units.iter().map(|&unit| unit as u8));
    units.iter().all(|&unit| unit <= 0xff)
}

/// Gives back a scratch buffer that grew for one large response.
pub fn trim<T>(buffer: &mut Vec<T>) {
    if buffer.capacity() * std::mem::size_of::<T>() > KEEP {
        *buffer = Vec::new();
    }
}

/// UTF-16 code units to UTF-8, appended to `out`.
#[inline(always)]
pub fn encode_utf8(units: &[u16], out: &mut Vec<u8>) {
    // Three bytes per unit at most (a surrogate pair is two units for four bytes).
    out.reserve(units.len() * 3);
    let mut i = 0;
    while i < units.len() {
        i += copy_ascii(&units[i..], out);
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

/// Copies the run of ASCII units that `units` starts with into `out`; returns its length. Most
/// bodies are nothing else: eight units are tested and narrowed at once (the compiler turns both
/// into a few vector instructions), where a unit at a time cost ~4 instructions a byte.
fn copy_ascii(units: &[u16], out: &mut Vec<u8>) -> usize {
    let start = out.len();
    let spare = out.spare_capacity_mut();
    let len = units.len().min(spare.len());
    let (units, spare) = (&units[..len], &mut spare[..len]);
    let mut copied = 0;
    for (from, to) in units.chunks_exact(8).zip(spare.chunks_exact_mut(8)) {
        let from: &[u16; 8] = from.try_into().unwrap();
        if from.iter().fold(0, |any, &unit| any | unit) >= 0x80 {
            break;
        }
        for (to, &unit) in to.iter_mut().zip(from) {
            to.write(unit as u8);
        }
        copied += 8;
    }
    while copied < len && units[copied] < 0x80 {
        spare[copied].write(units[copied] as u8);
        copied += 1;
    }
    // SAFETY: the first `copied` bytes of the spare capacity were written just above.
    unsafe { out.set_len(start + copied) };
    copied
}

#[cfg(test)]
mod tests {
    use super::{encode_utf8, latin1_from_utf16};

    #[test]
    fn latin1_holds_the_first_256_characters_only() {
        let text = "Tr\u{e8}s bien \u{ff}\t";
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut out = Vec::new();
        assert!(latin1_from_utf16(&units, &mut out));
        assert_eq!(out, b"Tr\xe8s bien \xff\t");
        // U+010A would be cut to 0x0A, a line feed; U+0141 to "A".
        for past in [0x100, 0x10a, 0x141, 0x20ac, 0xd83d] {
            assert!(!latin1_from_utf16(&[0x4f, past, 0x4b], &mut out), "{past:#x}");
        }
    }

    /// Every length around the eight-unit steps, with a non-ASCII unit at every place (or none).
    #[test]
    fn ascii_runs_of_any_length_end_where_they_end() {
        for len in 0..40 {
            for odd in (0..len).map(Some).chain([None]) {
                let text: String = (0..len).map(|i| if Some(i) == odd { 'é' } else { (b'a' + (i % 26) as u8) as char }).collect();
                let units: Vec<u16> = text.encode_utf16().collect();
                let mut out = Vec::new();
                encode_utf8(&units, &mut out);
                assert_eq!(out, text.as_bytes(), "{text:?}");
            }
        }
    }

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
