//! HTTP/1.1 framing for Cog's native engine: request heads and bodies in, response heads out.
//!
//! Framing is where HTTP servers get attacked: two parties that disagree on
//! where a request ends let a second request be smuggled inside the first.
//! These rules follow RFC 9112 and refuse what Node's own parser (llhttp)
//! refuses, so the native engine and the node engine agree on every byte
//! stream (the differential tests in the repo's test suite check that):
//!
//! - the head is parsed by `httparse`; bare CR, bare LF and NUL are refused;
//! - `Content-Length` is digits only, once; with `Transfer-Encoding` it is refused;
//! - `Transfer-Encoding` must end in `chunked` and is refused on HTTP/1.0;
//! - chunk sizes are hex digits only (at most 16), extensions and trailers are bounded;
//! - a head larger than the limit is a 431, more headers than the limit a 431.

mod chunked;
mod head;
pub mod response;
pub mod rules;

pub use chunked::ChunkedDecoder;
pub use head::{parse_head, Framing, Head, Limits, METHODS};

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
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~');
        b += 1;
    }
    table
};

/// A non-empty run of token characters.
pub fn is_token(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(|&b| TOKEN[b as usize])
}
