//! What JavaScript reads of a request's connection, as napi-rs objects: its endpoints, and what
//! the client of a TLS connection proved.

use crate::io::tls::Peer;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

/// The request's connection beyond its client's address: the client's port, and the local
/// address and port it reached.
#[napi(object)]
pub struct Endpoints {
    pub remote_port: u32,
    pub local_address: String,
    pub local_port: u32,
}

impl From<(u16, String, u16)> for Endpoints {
    fn from((remote_port, local_address, local_port): (u16, String, u16)) -> Self {
        Endpoints { remote_port: u32::from(remote_port), local_address, local_port: u32::from(local_port) }
    }
}

/// What the client of a TLS connection proved (see `tls::Peer`), as node:tls reports it.
#[napi(object)]
pub struct TlsPeer {
    pub authorized: bool,
    pub authorization_error: Option<String>,
    /// The client's certificate, DER.
    pub certificate: Option<Buffer>,
}

impl From<Peer> for TlsPeer {
    fn from(peer: Peer) -> Self {
        TlsPeer { authorized: peer.authorized, authorization_error: peer.error.map(str::to_string), certificate: peer.certificate.map(Buffer::from) }
    }
}
