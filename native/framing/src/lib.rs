//! HTTP/1.1 framing for Cog's native engine: request heads and bodies in, response heads out.
//!
//! Framing is where HTTP servers get attacked: two parties that disagree on
//! where a request ends let a second request be smuggled inside the first.
//! These rules follow RFC 9112 and refuse what Node's own parser (llhttp, as
//! Node 24 ships it) refuses, so the native engine and the node engine agree
//! on every byte stream (the differential tests in the repo's test suite check that):
//!
//! - the head is parsed by `httparse`; bare CR, bare LF and NUL are refused;
//! - `Content-Length` is digits only (spaces and tabs around them), once; with
//!   `Transfer-Encoding` it is refused;
//! - `Transfer-Encoding` lines form one list that must end in `chunked`, spelled as llhttp
//!   spells it; a line with no coding is refused, and so is `Transfer-Encoding` on HTTP/1.0;
//! - chunk sizes are hex digits only (at most 16), extensions and trailers are bounded;
//! - a head larger than the limit is a 431, more headers than the limit a 431.

#![forbid(unsafe_code)]

mod chunked;
pub mod deflate;
mod head;
#[cfg(test)]
mod head_props;
pub mod response;
pub mod rules;
pub mod websocket;

pub use chunked::ChunkedDecoder;
pub use head::{parse_head, parse_head_reusing, Framing, Head, Limits, METHODS};

/// Why a request was refused: the status to answer with and a message for the client.
/// After a refusal the connection must be closed: the stream's framing can't be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub message: &'static str,
}

impl Refusal {
    pub(crate) const fn bad(message: &'static str) -> Self {
        Refusal { status: 400, message }
    }
}

/// RFC 9110 token characters (header names, methods), by byte.
pub(crate) static TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] =
            c.is_ascii_alphanumeric() || matches!(c, b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~');
        b += 1;
    }
    table
};

/// A non-empty run of token characters.
pub fn is_token(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(|&b| TOKEN[b as usize])
}

// Word-at-a-time byte tests, for scans that run over every request or response: eight bytes
// a step cost about a third of testing each byte. Both answer "any byte?" exactly (a borrow
// only carries past a byte that matched), not which byte: the caller finds that byte by byte.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The eight bytes of `buf` from `i` on, as one word, if there are eight.
pub(crate) fn word_at(buf: &[u8], i: usize) -> Option<u64> {
    buf.get(i..i + 8).map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap()))
}

/// Nonzero when some byte of `x` equals `byte`.
pub(crate) fn has_byte(x: u64, byte: u8) -> u64 {
    let y = x ^ (ONES * u64::from(byte));
    y.wrapping_sub(ONES) & !y & HIGH
}

/// Nonzero when some byte of `x` is below `n` (`n` at most 0x80).
pub(crate) fn has_below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH
}
