//! What can go wrong, and the codes RFC 9114 §8.1 and RFC 9204 §6 give it on the wire.

use std::fmt;

/// HTTP/3 and QPACK error codes (RFC 9114 §8.1, RFC 9204 §6), as carried in CONNECTION_CLOSE,
/// RESET_STREAM and STOP_SENDING.
pub mod code {
    pub const H3_NO_ERROR: u64 = 0x100;
    pub const H3_GENERAL_PROTOCOL_ERROR: u64 = 0x101;
    pub const H3_INTERNAL_ERROR: u64 = 0x102;
    pub const H3_STREAM_CREATION_ERROR: u64 = 0x103;
    pub const H3_CLOSED_CRITICAL_STREAM: u64 = 0x104;
    pub const H3_FRAME_UNEXPECTED: u64 = 0x105;
    pub const H3_FRAME_ERROR: u64 = 0x106;
    pub const H3_EXCESSIVE_LOAD: u64 = 0x107;
    pub const H3_ID_ERROR: u64 = 0x108;
    pub const H3_SETTINGS_ERROR: u64 = 0x109;
    pub const H3_MISSING_SETTINGS: u64 = 0x10a;
    pub const H3_REQUEST_REJECTED: u64 = 0x10b;
    pub const H3_REQUEST_CANCELLED: u64 = 0x10c;
    pub const H3_REQUEST_INCOMPLETE: u64 = 0x10d;
    pub const H3_MESSAGE_ERROR: u64 = 0x10e;
    pub const H3_CONNECT_ERROR: u64 = 0x10f;
    pub const H3_VERSION_FALLBACK: u64 = 0x110;
    pub const QPACK_DECOMPRESSION_FAILED: u64 = 0x200;
    pub const QPACK_ENCODER_STREAM_ERROR: u64 = 0x201;
    pub const QPACK_DECODER_STREAM_ERROR: u64 = 0x202;
}

/// An error of a command the app gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// No such connection (closed, or never was).
    Connection,
    /// The stream is closed, unknown, or cannot take this (answered twice, data before the head,
    /// data after the end).
    Stream(u64),
    /// A response header name or value HTTP/3 forbids (upper case in a name, CR, LF, NUL, a
    /// connection-specific field: RFC 9114 §4.2).
    InvalidHeader,
    /// The TLS configuration cannot serve QUIC (no TLS 1.3, or no usable initial cipher suite).
    Tls(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connection => write!(f, "no such HTTP/3 connection"),
            Error::Stream(id) => write!(f, "stream {id} cannot take this"),
            Error::InvalidHeader => write!(f, "a response header HTTP/3 forbids"),
            Error::Tls(reason) => write!(f, "TLS configuration unusable for QUIC: {reason}"),
        }
    }
}

impl std::error::Error for Error {}
