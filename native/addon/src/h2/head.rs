//! An HTTP/2 request's head against Cog's rules, as the node engine checks them on its HTTP/2
//! streams (`inspectH2Head` in src/engines/node/http2.ts, with the same words): the header count
//! and list size (431), the URL's length (414), then the body it announces. nghttp2 has already
//! refused what RFC 9113 forbids (malformed or missing pseudo-header fields, connection fields,
//! upper-case names, a Content-Length the DATA disagrees with). A method the engine can't hand to
//! JavaScript (one `METHODS` lacks, or CONNECT) is answered here, as on HTTP/1.1.

use super::settings::{Limits, Settings};
use crate::events::{Body, FLAG_ENCODED, FLAG_HTTP2, FLAG_REFUSED};
use cog_framing::METHODS;
use cog_http2::Request;

/// What becomes of a request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It goes to JavaScript: its method (its place in `METHODS`), how its body comes, its flags
    /// (refused, with the status in the high 16 bits and `problem` saying why, for the app's
    /// error handler to answer).
    App { method: usize, body: Body, flags: u32, problem: Option<String> },
    /// The engine answers it: status and message.
    Refuse { status: u16, message: &'static str },
}

pub(super) fn check(req: &Request, settings: &Settings) -> Verdict {
    let head = Head {
        method: req.method,
        path: req.path,
        fields: req.headers.len(),
        too_large: req.too_large,
        end_stream: req.end_stream,
        content_length: req.headers.get(b"content-length"),
        encoded: req.headers.get(b"content-encoding").is_some(),
    };
    check_head(&head, &settings.limits(), FLAG_HTTP2)
}

/// A request's head as Cog's rules read it, whichever multiplexed protocol carried it (HTTP/2,
/// HTTP/3: their streams come with the same pseudo-header fields and limits).
pub(crate) struct Head<'a> {
    pub(crate) method: &'a [u8],
    pub(crate) path: &'a [u8],
    /// How many fields it has (pseudo-header fields not counted).
    pub(crate) fields: usize,
    /// Its field list was past the limit the protocol announced.
    pub(crate) too_large: bool,
    /// Nothing follows its head on its stream.
    pub(crate) end_stream: bool,
    pub(crate) content_length: Option<&'a [u8]>,
    /// It has a Content-Encoding field.
    pub(crate) encoded: bool,
}

/// A head against Cog's rules; `protocol`: the flag saying which protocol carried it.
pub(crate) fn check_head(req: &Head, limits: &Limits, protocol: u32) -> Verdict {
    let Some(method) = std::str::from_utf8(req.method).ok().and_then(|m| METHODS.binary_search(&m).ok()) else {
        return Verdict::Refuse { status: 400, message: "Unknown method" };
    };
    if req.method == b"CONNECT" {
        return Verdict::Refuse { status: 501, message: "CONNECT is not supported by this server" };
    }
    let refused = |status: u16, message: String| Verdict::App {
        method,
        body: Body::None,
        flags: protocol | FLAG_REFUSED | (u32::from(status) << 16),
        problem: Some(message),
    };
    if req.fields > limits.max_headers {
        return refused(431, format!("Too many headers (the limit is {}); raise the maxHeaders option to accept more", limits.max_headers));
    }
    // The size the protocol's settings announce (each field's name and value, plus 32),
    // pseudo-header fields included; the protocol's crate has counted it, and kept only what
    // fits of a list past it.
    if req.too_large {
        return refused(
            431,
            format!("Request headers are larger than the limit of {} bytes; raise the maxHeaderSize option to accept them", limits.max_header_size),
        );
    }
    if req.path.len() > limits.max_url_length {
        return refused(414, format!("URL is longer than the limit of {} characters; raise the maxUrlLength option to accept it", limits.max_url_length));
    }
    let declared = req.content_length.and_then(|v| std::str::from_utf8(v).ok()?.parse::<u64>().ok());
    // Without a Content-Length, a stream that did not end with its head has a body of unknown
    // length, read as a chunked one is.
    let body = match declared {
        _ if req.end_stream => Body::None,
        Some(0) => Body::None,
        declared => Body::Follows(declared),
    };
    let encoded = body != Body::None && req.encoded;
    Verdict::App { method, body, flags: protocol | if encoded { FLAG_ENCODED } else { 0 }, problem: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cog_http2::{Config, Connection, Event};

    fn settings() -> Settings {
        Settings { config: Config::default(), max_headers: 3, max_header_size: 16 * 1024, max_url_length: 20, http1: false }
    }

    /// An HPACK literal field without indexing.
    fn literal(block: &mut Vec<u8>, name: &[u8], value: &[u8]) {
        block.extend_from_slice(&[0, name.len() as u8]);
        block.extend_from_slice(name);
        block.push(value.len() as u8);
        block.extend_from_slice(value);
    }

    /// The verdict on a request with these fields, received by a real connection.
    fn verdict(method: &[u8], path: &[u8], fields: &[(&[u8], &[u8])], end_stream: bool) -> Verdict {
        let mut conn = Connection::new(Config::default()).unwrap();
        let mut input = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0".to_vec();
        let mut block = Vec::new();
        literal(&mut block, b":method", method);
        literal(&mut block, b":scheme", b"http");
        literal(&mut block, b":authority", b"localhost");
        literal(&mut block, b":path", path);
        for (n, v) in fields {
            literal(&mut block, n, v);
        }
        let n = block.len();
        input.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8, 1, if end_stream { 5 } else { 4 }, 0, 0, 0, 1]);
        input.extend_from_slice(&block);
        conn.receive(&input).unwrap();
        let events = conn.take_events();
        let verdict = events.iter().find_map(|e| if let Event::Request(r) = e { Some(check(&r, &settings())) } else { None });
        verdict.expect("a request")
    }

    fn status(v: &Verdict) -> Option<u32> {
        match v {
            Verdict::App { flags, .. } if flags & FLAG_REFUSED != 0 => Some(flags >> 16),
            Verdict::Refuse { status, .. } => Some(u32::from(*status)),
            _ => None,
        }
    }

    #[test]
    fn a_get_goes_to_the_app_without_a_body() {
        let get = METHODS.iter().position(|m| *m == "GET").unwrap();
        assert_eq!(verdict(b"GET", b"/", &[], true), Verdict::App { method: get, body: Body::None, flags: FLAG_HTTP2, problem: None });
    }

    #[test]
    fn a_body_follows_by_its_length_or_to_the_streams_end() {
        let Verdict::App { body, flags, .. } = verdict(b"POST", b"/", &[(b"content-length", b"5"), (b"content-encoding", b"gzip")], false) else { panic!() };
        assert_eq!((body, flags), (Body::Follows(Some(5)), FLAG_HTTP2 | FLAG_ENCODED));
        let Verdict::App { body, .. } = verdict(b"POST", b"/", &[], false) else { panic!() };
        assert_eq!(body, Body::Follows(None));
        let Verdict::App { body, flags, .. } = verdict(b"POST", b"/", &[(b"content-length", b"0"), (b"content-encoding", b"gzip")], false) else { panic!() };
        assert_eq!((body, flags), (Body::None, FLAG_HTTP2), "an empty body is none");
    }

    #[test]
    fn the_limits_are_the_apps_with_its_words() {
        let many: Vec<(&[u8], &[u8])> = vec![(b"a", b"1"), (b"b", b"2"), (b"c", b"3"), (b"d", b"4")];
        let v = verdict(b"GET", b"/", &many, true);
        assert_eq!(status(&v), Some(431));
        assert!(matches!(&v, Verdict::App { problem: Some(p), .. } if p.starts_with("Too many headers (the limit is 3)")));
        let v = verdict(b"GET", b"/a-path-past-twenty-chars", &[], true);
        assert_eq!(status(&v), Some(414));
        assert_eq!(status(&verdict(b"GET", b"/short", &[], true)), None);
    }

    #[test]
    fn methods_the_engine_cannot_hand_over_are_answered_here() {
        assert_eq!(verdict(b"BREW", b"/", &[], true), Verdict::Refuse { status: 400, message: "Unknown method" });
    }
}
