//! The engine's record of a request: a copy of its head (JavaScript reads the URL and headers
//! from it lazily, so a handler that never reads a header costs no string for it), and the
//! connection it came on, and the file its answer will send, once JavaScript opened one. Where
//! its response stands is the connection's queue's (`queue.rs`).

use cog_framing::Head;
use std::collections::HashMap;
use std::fs::File;
use std::ops::Range;

pub(crate) struct Req {
    /// The connection it came on: its key and generation (see `engine::Connection`).
    conn: usize,
    gen: u32,
    /// A copy of its head; the ranges below index it.
    head: Vec<u8>,
    method_index: usize,
    target: Range<usize>,
    /// The path an absolute-form target names, when it is not the target itself.
    path: Option<Box<[u8]>>,
    headers: HeaderRanges,
    minor: u8,
    keep_alive: bool,
    is_head: bool,
    /// On HTTP/2, its stream (0 on HTTP/1.1).
    stream: u32,
    /// On HTTP/3, where it came: it has no TCP connection (`conn` finds none). Boxed, as `path`
    /// is: what is rare stays out of every record (a pending request's record is its memory in the
    /// engine, with thousands held).
    h3: Option<Box<H3Stream>>,
    /// The file JavaScript opened for the answer (`engine::files`): sent as its body, or closed
    /// with the request when the answer is something else (a 304, a HEAD, an error).
    file: Option<File>,
}

/// Where an HTTP/3 request came: its server, its QUIC connection (`cog_http3::ConnId`'s number)
/// and its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct H3Stream {
    pub(crate) server: usize,
    pub(crate) conn: usize,
    pub(crate) stream: u64,
}

/// Where each header's name and value lie in a request's head.
pub(crate) type HeaderRanges = Vec<(Range<usize>, Range<usize>)>;

/// The requests in flight, by id. Ids are never reused (a late call from JavaScript for a request
/// that is gone finds nothing).
///
/// The records lie in slots that later requests reuse, and the hash table holds only a slot's
/// number: a record is 120 bytes, and a table of records, which keeps between 44% and 87% of its
/// buckets in use, spent up to twice that per request in flight; with thousands of requests each
/// waiting for its answer (a long poll, HttpArena's held connections), the table was a seventh of the
/// engine's memory per connection.
#[derive(Default)]
pub(crate) struct Requests {
    slots: Vec<Option<Req>>,
    /// Slots no request holds, the most recently freed (still in the CPU's cache) last.
    free: Vec<u32>,
    by_id: HashMap<u64, u32, std::hash::BuildHasherDefault<IdHasher>>,
    last_id: u64,
}

impl Requests {
    /// A new request's id.
    pub(crate) fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    pub(crate) fn insert(&mut self, id: u64, req: Req) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(req);
                slot
            }
            None => {
                self.slots.push(Some(req));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 requests in flight")
            }
        };
        if let Some(replaced) = self.by_id.insert(id, slot) {
            self.slots[replaced as usize] = None;
            self.free.push(replaced);
        }
    }

    pub(crate) fn get(&self, id: u64) -> Option<&Req> {
        self.slots[*self.by_id.get(&id)? as usize].as_ref()
    }

    pub(crate) fn get_mut(&mut self, id: u64) -> Option<&mut Req> {
        self.slots[*self.by_id.get(&id)? as usize].as_mut()
    }

    pub(crate) fn remove(&mut self, id: u64) -> Option<Req> {
        let slot = self.by_id.remove(&id)?;
        self.free.push(slot);
        self.slots[slot as usize].take()
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

impl Req {
    /// The connection it came on: its key and generation.
    pub(crate) fn conn(&self) -> (usize, u32) {
        (self.conn, self.gen)
    }

    /// Its HTTP/2 stream (0 on HTTP/1.1).
    pub(crate) fn stream(&self) -> u32 {
        self.stream
    }

    /// On HTTP/3, where it came.
    pub(crate) fn h3(&self) -> Option<H3Stream> {
        self.h3.as_deref().copied()
    }

    /// Its minor version (0 for HTTP/1.0).
    pub(crate) fn minor(&self) -> u8 {
        self.minor
    }

    /// Whether the connection may stay open after it (HTTP/1.1 without `Connection: close`, or
    /// HTTP/1.0 with keep-alive).
    pub(crate) fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    pub(crate) fn is_head(&self) -> bool {
        self.is_head
    }

    /// Whether it has a header named `name` (case-insensitive).
    pub(crate) fn has_header(&self, name: &[u8]) -> bool {
        self.headers.iter().any(|(n, _)| self.head[n.clone()].eq_ignore_ascii_case(name))
    }

    /// Whether a header can make a file's answer conditional or partial: Range, or any "If-"
    /// header (If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range).
    pub(crate) fn may_be_conditional(&self) -> bool {
        self.headers.iter().any(|(n, _)| {
            let name = &self.head[n.clone()];
            name.get(..3).is_some_and(|start| start.eq_ignore_ascii_case(b"if-")) || name.eq_ignore_ascii_case(b"range")
        })
    }

    /// Its target is in absolute form: the app sees the path it names (`path`, a range of the
    /// head), which starts with "/" as an origin-form target does.
    pub(crate) fn set_path(&mut self, path: Range<usize>) {
        let path = &self.head[path];
        self.path = Some(if path.first() == Some(&b'/') { path.into() } else { [b"/", path].concat().into_boxed_slice() });
    }

    /// Keeps the file its answer is to send, closing one kept before (the last file opened for
    /// an answer is the one it sends: a precompressed variant found after the file itself).
    pub(crate) fn keep_file(&mut self, file: File) {
        self.file = Some(file);
    }

    /// The file kept for its answer, now to be sent.
    pub(crate) fn take_file(&mut self) -> Option<File> {
        self.file.take()
    }

    /// Its buffers (the head's copy, the header list), for the next request to reuse (`Spare`).
    pub(crate) fn into_buffers(self) -> (Vec<u8>, HeaderRanges) {
        (self.head, self.headers)
    }

    /// The method (its place in `METHODS`) and the URL the app sees (the path of an absolute-form target).
    pub(crate) fn request_line(&self) -> (usize, &[u8]) {
        (self.method_index, self.path.as_deref().unwrap_or(&self.head[self.target.clone()]))
    }

    /// The value of the header named `name` (case-insensitive), repeats joined as Node joins
    /// them (cookies with "; ", others with ", "), or only the first one.
    pub(crate) fn header(&self, name: &[u8], first: bool) -> Option<Vec<u8>> {
        if first {
            let (_, value) = self.headers.iter().find(|(n, _)| self.head[n.clone()].eq_ignore_ascii_case(name))?;
            return Some(self.head[value.clone()].to_vec());
        }
        let separator: &[u8] = if name.eq_ignore_ascii_case(b"cookie") { b"; " } else { b", " };
        let mut joined: Option<Vec<u8>> = None;
        for (n, v) in &self.headers {
            if self.head[n.clone()].eq_ignore_ascii_case(name) {
                let value = &self.head[v.clone()];
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

    /// The header lines, as they came.
    pub(crate) fn headers(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.headers.iter().map(|(n, v)| (&self.head[n.clone()], &self.head[v.clone()]))
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
        stream: 0,
        h3: None,
        file: None,
    }
}

/// The engine's record of an HTTP/3 request: as an HTTP/2 one's (`new_h2_req`), on no TCP
/// connection.
pub(crate) fn new_h3_req<'a>(
    at: H3Stream,
    method_index: usize,
    path: &[u8],
    fields: impl Iterator<Item = (&'a [u8], &'a [u8])>,
    buffers: (Vec<u8>, HeaderRanges),
) -> Req {
    Req { h3: Some(Box::new(at)), ..new_h2_req(usize::MAX, 0, 0, method_index, path, fields, buffers) }
}

/// The engine's record of an HTTP/2 request on `stream`: its path, then its fields (the
/// pseudo-header fields first, as node:http2 lists them), copied into `buffers`' bytes with its
/// header list pointing into them (both reused: what they held is dropped). `method_index` is
/// the method's place in `METHODS`.
pub(crate) fn new_h2_req<'a>(
    key: usize,
    gen: u32,
    stream: u32,
    method_index: usize,
    path: &[u8],
    fields: impl Iterator<Item = (&'a [u8], &'a [u8])>,
    buffers: (Vec<u8>, HeaderRanges),
) -> Req {
    let (mut buffer, mut headers) = buffers;
    buffer.clear();
    headers.clear();
    buffer.extend_from_slice(path);
    for (name, value) in fields {
        let start = buffer.len();
        buffer.extend_from_slice(name);
        let middle = buffer.len();
        buffer.extend_from_slice(value);
        headers.push((start..middle, middle..buffer.len()));
    }
    Req {
        conn: key,
        gen,
        head: buffer,
        method_index,
        target: 0..path.len(),
        path: None,
        headers,
        minor: 1,
        keep_alive: true,
        is_head: cog_framing::METHODS[method_index] == "HEAD",
        stream,
        h3: None,
        file: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(head: &[u8]) -> Req {
        let mut headers = Vec::new();
        let mut parsed = cog_framing::parse_head_reusing(head, &cog_framing::Limits { max_head: 8192, max_headers: 100 }, &mut headers).unwrap().unwrap();
        new_req(3, 4, head, &mut parsed, Vec::new())
    }

    #[test]
    fn the_request_line_is_the_path_of_an_absolute_target() {
        let mut r = req(b"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(r.request_line(), (cog_framing::METHODS.iter().position(|m| *m == "GET").unwrap(), &b"/a?b=1"[..]));
        r.set_path(5..6);
        assert_eq!(r.request_line().1, b"/a", "a path gets its slash");
        assert_eq!((r.conn, r.gen, r.minor, r.keep_alive, r.is_head), (3, 4, 1, true, false));
        assert!(req(b"HEAD / HTTP/1.0\r\n\r\n").is_head);
    }

    #[test]
    fn repeated_headers_are_joined_as_node_joins_them() {
        let r = req(b"GET / HTTP/1.1\r\nAccept: a\r\ncookie: x=1\r\nACCEPT: b\r\nCookie: y=2\r\n\r\n");
        assert_eq!(r.header(b"accept", false).unwrap(), b"a, b");
        assert_eq!(r.header(b"Accept", true).unwrap(), b"a");
        assert_eq!(r.header(b"cookie", false).unwrap(), b"x=1; y=2");
        assert_eq!(r.header(b"missing", false), None);
        assert_eq!(r.headers().count(), 4);
        assert!(r.has_header(b"COOKIE") && !r.has_header(b"content-encoding"));
        assert_eq!(r.headers().nth(2), Some((&b"ACCEPT"[..], &b"b"[..])));
    }

    #[test]
    fn a_range_or_an_if_header_may_make_a_file_answer_conditional() {
        assert!(!req(b"GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\nIf: x\r\nRanges: y\r\n\r\n").may_be_conditional());
        for header in ["If-None-Match: \"a\"", "if-modified-since: x", "IF-MATCH: *", "If-Unmodified-Since: x", "If-Range: x", "RANGE: bytes=0-1"] {
            assert!(req(format!("GET / HTTP/1.1\r\nHost: x\r\n{header}\r\n\r\n").as_bytes()).may_be_conditional(), "{header}");
        }
    }

    #[test]
    fn the_file_kept_last_is_the_one_taken() {
        let mut r = req(b"GET / HTTP/1.1\r\n\r\n");
        assert!(r.take_file().is_none());
        let path = std::env::temp_dir().join(format!("cog-req-{}", std::process::id()));
        std::fs::write(&path, b"x").unwrap();
        let (first, second) = (File::open(&path).unwrap(), File::open(&path).unwrap());
        let second_fd = crate::io::sys::raw_of(&second);
        r.keep_file(first);
        r.keep_file(second);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(r.take_file().map(|f| crate::io::sys::raw_of(&f)), Some(second_fd));
        assert!(r.take_file().is_none(), "taken once");
    }

    #[test]
    fn an_http2_request_lists_its_pseudo_headers_and_fields_as_they_came() {
        let get = cog_framing::METHODS.iter().position(|m| *m == "GET").unwrap();
        let fields: [(&[u8], &[u8]); 4] = [(b":method", b"GET"), (b":path", b"/a?b"), (b"cookie", b"x=1"), (b"cookie", b"y=2")];
        let r = new_h2_req(1, 2, 7, get, b"/a?b", fields.into_iter(), (b"old".to_vec(), vec![(0..1, 1..2)]));
        assert_eq!(r.request_line(), (get, &b"/a?b"[..]));
        assert_eq!((r.stream(), r.conn(), r.is_head()), (7, (1, 2), false));
        assert_eq!(r.headers().collect::<Vec<_>>(), fields.to_vec());
        assert_eq!(r.header(b"cookie", false).unwrap(), b"x=1; y=2", "cookie crumbs joined as node joins them");
        assert_eq!(r.header(b"host", false), None);
    }

    #[test]
    fn a_slot_left_is_taken_by_the_next_request_and_each_id_finds_its_own() {
        let mut reqs = Requests::default();
        let ids: Vec<u64> = (0..3).map(|_| reqs.next_id()).collect();
        for (n, &id) in ids.iter().enumerate() {
            reqs.insert(id, req(format!("GET /{n} HTTP/1.1\r\n\r\n").as_bytes()));
        }
        assert_eq!(reqs.remove(ids[1]).map(|r| r.request_line().1.to_vec()), Some(b"/1".to_vec()));
        assert!(reqs.get(ids[1]).is_none() && reqs.remove(ids[1]).is_none(), "gone, once");
        let next = reqs.next_id();
        reqs.insert(next, req(b"GET /3 HTTP/1.1\r\n\r\n"));
        assert_eq!(reqs.slots.len(), 3, "the slot left was taken again");
        for (id, path) in [(ids[0], &b"/0"[..]), (ids[2], b"/2"), (next, b"/3")] {
            assert_eq!(reqs.get(id).map(|r| r.request_line().1), Some(path));
        }
        reqs.get_mut(next).unwrap().set_path(5..6);
        assert_eq!(reqs.get(next).unwrap().request_line().1, b"/3", "changed in place");
        reqs.insert(next, req(b"GET /4 HTTP/1.1\r\n\r\n"));
        assert_eq!((reqs.get(next).unwrap().request_line().1, reqs.free.len()), (&b"/4"[..], 1), "a record replaced frees its slot");
    }

    #[test]
    fn ids_are_never_reused() {
        let mut reqs = Requests::default();
        let (a, b) = (reqs.next_id(), reqs.next_id());
        assert!(b > a);
        reqs.insert(a, req(b"GET / HTTP/1.1\r\n\r\n"));
        assert!(reqs.remove(a).is_some() && reqs.get(a).is_none() && reqs.next_id() > b);
    }
}
