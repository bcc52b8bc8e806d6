//! The engine's record of a request: a copy of its head (JavaScript reads the URL and headers
//! from it lazily, so a handler that never reads a header costs no string for it), and the
//! connection it came on. Where its response stands is the connection's queue's (`queue.rs`).

use crate::state::State;
use cog_framing::Head;
use std::collections::HashMap;
use std::ops::Range;

pub struct Req {
    pub(crate) conn: usize,
    pub(crate) gen: u32,
    pub(crate) head: Vec<u8>,
    pub(crate) method_index: usize,
    pub(crate) target: Range<usize>,
    /// The path an absolute-form target names, when it is not the target itself.
    pub(crate) path: Option<Vec<u8>>,
    pub(crate) headers: Vec<(Range<usize>, Range<usize>)>,
    pub(crate) minor: u8,
    pub(crate) keep_alive: bool,
    pub(crate) is_head: bool,
}

/// The requests in flight, by id. Ids are never reused (a late call from JavaScript for a request
/// that is gone finds nothing).
#[derive(Default)]
pub(crate) struct Requests {
    map: HashMap<u64, Req, std::hash::BuildHasherDefault<IdHasher>>,
    last_id: u64,
}

impl Requests {
    /// A new request's id.
    pub(crate) fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    pub(crate) fn insert(&mut self, id: u64, req: Req) {
        self.map.insert(id, req);
    }

    pub(crate) fn get(&self, id: u64) -> Option<&Req> {
        self.map.get(&id)
    }

    pub(crate) fn remove(&mut self, id: u64) -> Option<Req> {
        self.map.remove(&id)
    }
}

/// Request ids are sequential: a multiply spreads them well enough, far cheaper than SipHash.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl State {
    /// The method (its place in `METHODS`) and the URL the app sees (the path of an absolute-form target).
    pub fn request_line(&self, id: u64) -> Option<(usize, &[u8])> {
        let req = self.reqs.get(id)?;
        Some((req.method_index, req.path.as_deref().unwrap_or(&req.head[req.target.clone()])))
    }

    /// The value of the header named `name` (case-insensitive), repeats joined as Node joins
    /// them (cookies with "; ", others with ", "), or only the first one.
    pub fn header(&self, id: u64, name: &[u8], first: bool) -> Option<Vec<u8>> {
        let req = self.reqs.get(id)?;
        if first {
            let (_, value) = req.headers.iter().find(|(n, _)| req.head[n.clone()].eq_ignore_ascii_case(name))?;
            return Some(req.head[value.clone()].to_vec());
        }
        let separator: &[u8] = if name.eq_ignore_ascii_case(b"cookie") { b"; " } else { b", " };
        let mut joined: Option<Vec<u8>> = None;
        for (n, v) in &req.headers {
            if req.head[n.clone()].eq_ignore_ascii_case(name) {
                let value = &req.head[v.clone()];
                match joined.as_mut() {
                    Some(all) => {
                        all.extend_from_slice(separator);
                        all.extend_from_slice(value);
                    }
                    None => joined = Some(value.to_vec()),
                }
            }
        }
        joined
    }

    pub fn headers(&self, id: u64) -> Option<Vec<(&[u8], &[u8])>> {
        let req = self.reqs.get(id)?;
        Some(req.headers.iter().map(|(n, v)| (&req.head[n.clone()], &req.head[v.clone()])).collect())
    }

    pub fn remote_address(&self, id: u64) -> Option<&str> {
        let req = self.reqs.get(id)?;
        let conn = self.conns.get(req.conn)?.as_ref()?;
        (conn.gen == req.gen).then_some(conn.remote.as_str())
    }

    /// The client's port, and the address and port it connected to (asked of the socket: only
    /// a request that asks pays for the call).
    pub fn endpoints(&self, id: u64) -> Option<(u16, String, u16)> {
        let req = self.reqs.get(id)?;
        let conn = self.conns.get(req.conn)?.as_ref()?;
        if conn.gen != req.gen {
            return None;
        }
        let (local, local_port) = conn.io.local_address()?;
        Some((conn.remote_port, local, local_port))
    }

    /// The client's certificate and whether it verified, on a TLS connection.
    pub fn tls_peer(&self, id: u64) -> Option<crate::io::tls::Peer> {
        let req = self.reqs.get(id)?;
        let conn = self.conns.get(req.conn)?.as_ref()?;
        if conn.gen != req.gen {
            return None;
        }
        conn.io.tls_peer()
    }
}

/// The engine's record of a parsed head: `buffer` (empty) receives a copy of the head's bytes,
/// and the head's header list is taken (the rules have read it).
pub(crate) fn new_req(key: usize, gen: u32, head_bytes: &[u8], head: &mut Head, mut buffer: Vec<u8>) -> Req {
    let method = &head_bytes[head.method.clone()];
    buffer.extend_from_slice(head_bytes);
    Req {
        conn: key,
        gen,
        head: buffer,
        method_index: head.method_index,
        target: head.target.clone(),
        path: None,
        headers: std::mem::take(&mut head.headers),
        minor: head.minor,
        keep_alive: head.keep_alive,
        is_head: method == b"HEAD",
    }
}
