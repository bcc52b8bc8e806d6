//! What JavaScript asks of a request after it was handed over: its head (read lazily, so a
//! handler that never reads a header costs no string for it), and its connection's endpoints
//! and TLS peer. Each request is found by its id, and its connection by key and generation (a
//! request whose connection closed finds nothing).

use super::state::{Connection, State};
use crate::io::tls::Peer;
use crate::request::Req;

impl State {
    /// The request and its connection, if the connection it came on is still open.
    fn request_and_connection(&self, id: u64) -> Option<(&Req, &Connection)> {
        let req = self.reqs.get(id)?;
        let (key, gen) = req.conn();
        let conn = self.conns.get(key)?.as_ref()?;
        (conn.gen == gen).then_some((req, conn))
    }

    /// The method (its place in `METHODS`) and the URL the app sees.
    pub(crate) fn request_line(&self, id: u64) -> Option<(usize, &[u8])> {
        Some(self.reqs.get(id)?.request_line())
    }

    /// The value of a request header (see `Req::header`).
    pub(crate) fn header(&self, id: u64, name: &[u8], first: bool) -> Option<Vec<u8>> {
        self.reqs.get(id)?.header(name, first)
    }

    /// Whether request `id` has a header that can make a file's answer conditional or partial (false once it is gone).
    pub(crate) fn may_be_conditional(&self, id: u64) -> bool {
        self.reqs.get(id).is_some_and(|req| req.may_be_conditional())
    }

    pub(crate) fn headers(&self, id: u64) -> Option<impl Iterator<Item = (&[u8], &[u8])>> {
        Some(self.reqs.get(id)?.headers())
    }

    /// The client's address; none on a Unix domain socket, as Node's `remoteAddress` there.
    pub(crate) fn remote_address(&self, id: u64) -> Option<String> {
        if let Some(at) = self.h3_stream(id) {
            return self.h3_endpoints(at).map(|(remote, _)| remote.ip().to_string());
        }
        self.request_and_connection(id).map(|(_, conn)| conn.remote.clone()).filter(|address| !address.is_empty())
    }

    /// The client's port, and the address and port it connected to (asked of the socket: only
    /// a request that asks pays for the call).
    pub(crate) fn endpoints(&self, id: u64) -> Option<(u16, String, u16)> {
        if let Some(at) = self.h3_stream(id) {
            return self.h3_endpoints(at).map(|(remote, local)| (remote.port(), local.ip().to_string(), local.port()));
        }
        let (_, conn) = self.request_and_connection(id)?;
        let (local, local_port) = conn.io.local_address()?;
        Some((conn.remote_port, local, local_port))
    }

    /// The client's certificate and whether it verified, on a TLS connection.
    pub(crate) fn tls_peer(&self, id: u64) -> Option<Peer> {
        self.request_and_connection(id)?.1.io.tls_peer()
    }
}
