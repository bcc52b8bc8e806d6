//! What a server's HTTP/2 connections get: cog-http2's limits (`Config`) and the app's, which
//! its requests' heads are checked against (`head.rs`).

use cog_http2::Config;

pub(crate) struct Settings {
    pub(crate) config: Config,
    pub(crate) max_headers: usize,
    pub(crate) max_header_size: usize,
    pub(crate) max_url_length: usize,
    /// On cleartext, a client whose first bytes are not HTTP/2's preface speaks HTTP/1.1 (as Go's
    /// h2c handler and hyper's auto connection serve both); else it is closed. TLS has ALPN.
    pub(crate) http1: bool,
}

/// The app's limits on a head.
pub(crate) struct Limits {
    pub(crate) max_headers: usize,
    pub(crate) max_header_size: usize,
    pub(crate) max_url_length: usize,
}

impl Settings {
    pub(crate) fn limits(&self) -> Limits {
        Limits { max_headers: self.max_headers, max_header_size: self.max_header_size, max_url_length: self.max_url_length }
    }
}
