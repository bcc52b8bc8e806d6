//! What can go wrong: a connection the client broke (answer with what `pending_output` holds,
//! then close), or a command the app gave for a stream that cannot take it.

use std::fmt;

/// HTTP/2 error codes (RFC 9113 §7) a caller may send or see.
pub mod code {
    pub const NO_ERROR: u32 = 0x0;
    pub const PROTOCOL_ERROR: u32 = 0x1;
    pub const INTERNAL_ERROR: u32 = 0x2;
    pub const FLOW_CONTROL_ERROR: u32 = 0x3;
    pub const STREAM_CLOSED: u32 = 0x5;
    pub const FRAME_SIZE_ERROR: u32 = 0x6;
    pub const REFUSED_STREAM: u32 = 0x7;
    pub const CANCEL: u32 = 0x8;
    pub const COMPRESSION_ERROR: u32 = 0x9;
    pub const ENHANCE_YOUR_CALM: u32 = 0xb;
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The input did not start with HTTP/2's connection preface (an HTTP/1.1 client, say).
    BadPreface,
    /// The client flooded the connection (CONTINUATION frames, unread acknowledgements, frames
    /// past a rate): a GOAWAY (ENHANCE_YOUR_CALM) is in the output, then close.
    Flooded,
    /// Any other fatal error of the connection, with nghttp2's description.
    Connection(String),
    /// The stream is closed, unknown, or has already been answered.
    Stream(u32),
    /// A response header name or value HTTP/2 forbids (RFC 9113 §8.2.1: upper case, CR, LF, NUL…).
    InvalidHeader,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadPreface => write!(f, "not an HTTP/2 connection preface"),
            Error::Flooded => write!(f, "the client flooded the connection"),
            Error::Connection(reason) => write!(f, "HTTP/2 connection error: {reason}"),
            Error::Stream(id) => write!(f, "stream {id} cannot take this"),
            Error::InvalidHeader => write!(f, "a response header HTTP/2 forbids"),
        }
    }
}

impl std::error::Error for Error {}
