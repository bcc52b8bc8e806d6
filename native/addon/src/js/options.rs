//! The options JavaScript passes to `listen` and `set_tls`, as napi-rs objects, and the settings
//! of each protocol made from them.

use crate::{h1, h2, h3, io};
use napi_derive::napi;
use std::sync::Arc;

#[napi(object)]
pub struct ListenOptions {
    pub host: String,
    pub port: u32,
    /// A Unix domain socket to listen on instead of `host` and `port`.
    pub path: Option<String>,
    pub max_header_size: u32,
    pub max_headers: u32,
    pub max_url_length: u32,
    pub strict: bool,
    pub headers_timeout: u32,
    pub request_timeout: u32,
    pub keep_alive_timeout: u32,
    /// See `engine::Settings::send_timeout`.
    pub send_timeout: u32,
    pub timeout_check_interval: u32,
    /// The app has WebSocket routes, or a listener of 'upgrade': a request with an Upgrade header
    /// waits for its answer (`set_upgrades` changes it).
    pub web_sockets: bool,
    /// Share the port with other processes (SO_REUSEPORT): Cog's workers.
    pub reuse_port: Option<bool>,
    /// Serve TLS (see `io::tls`).
    pub tls: Option<TlsOptions>,
    /// Serve HTTP/2: over TLS beside HTTP/1.1, chosen by ALPN; on cleartext with prior knowledge
    /// (h2c), alone or, with `allow_http1`, beside HTTP/1.1 (see `h2`).
    pub http2: Option<bool>,
    /// On cleartext HTTP/2, serve a client whose first bytes are not HTTP/2's preface as HTTP/1.1.
    pub allow_http1: Option<bool>,
    /// Serve HTTP/3 on UDP, on the TCP listener's port number (needs `tls`; see `h3`).
    pub http3: Option<bool>,
}

impl ListenOptions {
    /// What its HTTP/1.1 requests may be.
    pub(crate) fn requests(&self) -> h1::Settings {
        h1::Settings {
            // The parser's own bound sits one past Cog's, so Cog's 431 (with its message) answers first.
            head: cog_framing::Limits { max_head: self.max_header_size as usize, max_headers: self.max_headers as usize + 1 },
            rules: cog_framing::rules::Rules { max_headers: self.max_headers as usize, max_url_length: self.max_url_length as usize, strict: self.strict },
            web_sockets: self.web_sockets,
        }
    }

    /// An HTTP/2 connection's limits, when it serves HTTP/2: those the node engine gives
    /// node:http2 (its header list as `maxHeaderSize`, room for every field that fits in it
    /// before a stream is reset), and cog-http2's defaults for the rest (see
    /// docs/decisions/http2-implementation.md).
    pub(crate) fn h2(&self) -> Option<h2::Settings> {
        if !self.http2.unwrap_or(false) {
            return None;
        }
        let (max_headers, max_header_size) = (self.max_headers as usize, self.max_header_size as usize);
        let config = cog_http2::Config {
            max_header_list_size: self.max_header_size,
            // As node:http2's maxHeaderListPairs in the node engine (src/engines/node/engine.ts).
            max_header_pairs: (max_headers + 5).max(max_header_size.div_ceil(32) + 1) as u32,
            ..cog_http2::Config::default()
        };
        Some(h2::Settings { config, max_headers, max_header_size, max_url_length: self.max_url_length as usize, http1: self.allow_http1.unwrap_or(false) })
    }

    /// An HTTP/3 endpoint's limits, when it serves HTTP/3: the app's on request heads (checked
    /// as on HTTP/2), its header list size announced as SETTINGS_MAX_FIELD_SECTION_SIZE,
    /// cog-http3's defaults for the rest.
    pub(crate) fn h3(&self) -> Option<h3::Settings> {
        if !self.http3.unwrap_or(false) {
            return None;
        }
        let config = cog_http3::Config { max_header_list_size: u64::from(self.max_header_size), ..cog_http3::Config::default() };
        let limits =
            h2::Limits { max_headers: self.max_headers as usize, max_header_size: self.max_header_size as usize, max_url_length: self.max_url_length as usize };
        Some(h3::Settings { config, limits })
    }

    /// Its TLS configuration, when it serves TLS.
    pub(crate) fn tls(&self) -> Result<Option<Arc<io::tls::TlsServer>>, String> {
        self.tls.as_ref().map(|tls| tls.server_config(self.http2.unwrap_or(false))).transpose()
    }
}

/// What `listen` and `set_tls` take (see `io::tls::TlsOptions`).
#[napi(object)]
pub struct TlsOptions {
    pub key: String,
    pub cert: String,
    pub ca: Option<String>,
    pub request_cert: bool,
    pub reject_unauthorized: bool,
    pub tls12: bool,
    pub tls13: bool,
}

impl TlsOptions {
    /// The server's TLS configuration, offering HTTP/2 by ALPN when it serves HTTP/2.
    pub(crate) fn server_config(&self, http2: bool) -> Result<Arc<io::tls::TlsServer>, String> {
        io::tls::server_config(&io::tls::TlsOptions {
            key: self.key.clone(),
            cert: self.cert.clone(),
            ca: self.ca.clone(),
            request_cert: self.request_cert,
            reject_unauthorized: self.reject_unauthorized,
            tls12: self.tls12,
            tls13: self.tls13,
            http2,
        })
    }
}
