use crate::Refusal;
use std::ops::Range;

/// The limits a head is parsed under (the app's options).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most bytes in a request head (request line and headers): past it, 431.
    pub max_head: usize,
    /// Most header lines: past it, 431. Cog's JavaScript side applies its own, smaller,
    /// `maxHeaders` with a descriptive answer; this one bounds the parser's work.
    pub max_headers: usize,
}

/// How the request's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    None,
    Length(u64),
    Chunked,
}

/// A parsed request head. Ranges index the buffer that was parsed.
#[derive(Debug, Clone)]
pub struct Head {
    /// Bytes the head took, including the blank line that ends it.
    pub len: usize,
    pub method: Range<usize>,
    pub target: Range<usize>,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor: u8,
    /// Name and value of each header line, in order.
    pub headers: Vec<(Range<usize>, Range<usize>)>,
    pub framing: Framing,
    /// Whether the connection may carry another request after this one.
    pub keep_alive: bool,
    /// `Expect: 100-continue`: the client waits for a 100 before sending the body.
    pub expect_continue: bool,
}

/// Parses one request head from the start of `buf`.
///
/// `Ok(None)`: the head is not complete yet (read more). `Err`: refuse with that status and close.
pub fn parse_head(buf: &[u8], limits: &Limits) -> Result<Option<Head>, Refusal> {
    let mut slots = vec![httparse::EMPTY_HEADER; limits.max_headers];
    let mut req = httparse::Request::new(&mut slots);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > limits.max_head { Err(Refusal { status: 431, message: "Request head too large" }) } else { Ok(None) };
        }
        Err(httparse::Error::TooManyHeaders) => return Err(Refusal { status: 431, message: "Too many headers" }),
        Err(httparse::Error::Version) => return Err(version_refusal(buf)),
        Err(_) => return Err(Refusal::bad("Malformed request head")),
    };
    if len > limits.max_head {
        return Err(Refusal { status: 431, message: "Request head too large" });
    }
    check_line_endings(&buf[..len])?;
    let minor = req.version.unwrap_or(1);
    let method = range_of(buf, req.method.unwrap_or("").as_bytes());
    let target = range_of(buf, req.path.unwrap_or("").as_bytes());

    let mut headers = Vec::with_capacity(req.headers.len());
    let mut length: Option<u64> = None;
    let mut codings: Option<Vec<u8>> = None;
    let mut close = false;
    let mut keep_alive_token = false;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        let value = h.value;
        headers.push((range_of(buf, name), range_of(buf, value)));
        if name.eq_ignore_ascii_case(b"content-length") {
            if length.is_some() {
                return Err(Refusal::bad("More than one Content-Length header"));
            }
            length = Some(parse_length(value)?);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // Repeated Transfer-Encoding lines form one list, in order.
            let list = codings.get_or_insert_with(Vec::new);
            if !list.is_empty() {
                list.push(b',');
            }
            list.extend_from_slice(value);
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',') {
                let token = trim(token);
                close |= token.eq_ignore_ascii_case(b"close");
                keep_alive_token |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if name.eq_ignore_ascii_case(b"expect") {
            if trim(value).eq_ignore_ascii_case(b"100-continue") {
                expect_continue = true;
            } else {
                return Err(Refusal { status: 417, message: "Unsupported Expect header" });
            }
        }
    }

    let framing = match (codings, length) {
        (Some(_), Some(_)) => return Err(Refusal::bad("Both Content-Length and Transfer-Encoding")),
        (Some(_), None) if minor == 0 => return Err(Refusal::bad("Transfer-Encoding is not allowed in HTTP/1.0")),
        (Some(list), None) => {
            // RFC 9112 6.3: chunked must be the final coding, or the body's end can't be known.
            let last = list.rsplit(|&b| b == b',').next().map(trim).unwrap_or(b"");
            if !last.eq_ignore_ascii_case(b"chunked") {
                return Err(Refusal::bad("Transfer-Encoding does not end with chunked"));
            }
            let chunked_count = list.split(|&b| b == b',').filter(|t| trim(t).eq_ignore_ascii_case(b"chunked")).count();
            if chunked_count > 1 {
                return Err(Refusal::bad("chunked applied more than once"));
            }
            Framing::Chunked
        }
        (None, Some(0)) | (None, None) => Framing::None,
        (None, Some(n)) => Framing::Length(n),
    };
    let keep_alive = if minor == 0 { keep_alive_token && !close } else { !close };
    Ok(Some(Head { len, method, target, minor, headers, framing, keep_alive, expect_continue }))
}

/// `1*DIGIT`, as Node accepts it: no sign, no spaces inside, no hex, no overflow.
fn parse_length(value: &[u8]) -> Result<u64, Refusal> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(Refusal::bad("Invalid Content-Length"));
    }
    value
        .iter()
        .try_fold(0u64, |n, &d| n.checked_mul(10)?.checked_add(u64::from(d - b'0')))
        .ok_or(Refusal::bad("Invalid Content-Length"))
}

/// httparse tolerates a bare LF as a line end (RFC 9112 allows that leniency); Node does not,
/// and two parsers that disagree on line ends disagree on where headers end.
fn check_line_endings(head: &[u8]) -> Result<(), Refusal> {
    let mut prev = 0u8;
    for (i, &b) in head.iter().enumerate() {
        match b {
            b'\n' if prev != b'\r' => return Err(Refusal::bad("Bare LF in request head")),
            b'\r' if head.get(i + 1) != Some(&b'\n') => return Err(Refusal::bad("Bare CR in request head")),
            0 => return Err(Refusal::bad("NUL in request head")),
            _ => {}
        }
        prev = b;
    }
    Ok(())
}

/// A request line with a well-formed version other than 1.0/1.1 gets 505; anything else is malformed.
fn version_refusal(buf: &[u8]) -> Refusal {
    let line_end = buf.iter().position(|&b| b == b'\r' || b == b'\n').unwrap_or(buf.len());
    let line = &buf[..line_end];
    let version = line.rsplit(|&b| b == b' ').next().unwrap_or(b"");
    let well_formed = version.len() == 8 && version.starts_with(b"HTTP/") && version[5].is_ascii_digit() && version[6] == b'.' && version[7].is_ascii_digit();
    if well_formed && line.iter().filter(|&&b| b == b' ').count() == 2 {
        Refusal { status: 505, message: "HTTP version not supported; use HTTP/1.1" }
    } else {
        Refusal::bad("Malformed request line")
    }
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|&b| b != b' ' && b != b'\t').map_or(start, |i| i + 1);
    &bytes[start..end]
}

/// Where a slice httparse returned lies in the parsed buffer.
fn range_of(buf: &[u8], part: &[u8]) -> Range<usize> {
    if part.is_empty() {
        return 0..0;
    }
    let start = part.as_ptr() as usize - buf.as_ptr() as usize;
    start..start + part.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits { max_head: 16 * 1024, max_headers: 128 };

    fn parse(raw: &str) -> Result<Option<Head>, Refusal> {
        parse_head(raw.as_bytes(), &LIMITS)
    }
    fn status(raw: &str) -> u16 {
        parse(raw).expect_err("should be refused").status
    }

    #[test]
    fn a_simple_get() {
        let raw = "GET /a?b=1 HTTP/1.1\r\nHost: x\r\nCookie: t=1\r\n\r\nNEXT";
        let head = parse(raw).unwrap().unwrap();
        assert_eq!(&raw[head.method.clone()], "GET");
        assert_eq!(&raw[head.target.clone()], "/a?b=1");
        assert_eq!(head.len, raw.len() - 4);
        assert_eq!(head.headers.len(), 2);
        assert_eq!(&raw[head.headers[1].1.clone()], "t=1");
        assert_eq!(head.framing, Framing::None);
        assert!(head.keep_alive);
    }

    #[test]
    fn partial_heads_wait_for_more_until_the_limit() {
        assert!(parse("GET / HTTP/1.1\r\nHost: x\r\n").unwrap().is_none());
        let big = format!("GET / HTTP/1.1\r\nX: {}", "a".repeat(LIMITS.max_head));
        assert_eq!(status(&big), 431);
    }

    #[test]
    fn content_length_rules() {
        assert_eq!(parse("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n").unwrap().unwrap().framing, Framing::Length(5));
        assert_eq!(parse("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").unwrap().unwrap().framing, Framing::None);
        for bad in ["+5", "-1", "5 5", "0x5", "5a", "", "99999999999999999999"] {
            assert_eq!(status(&format!("POST / HTTP/1.1\r\nContent-Length: {bad}\r\n\r\n")), 400, "{bad:?}");
        }
        assert_eq!(status("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"), 400);
        assert_eq!(status("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
    }

    #[test]
    fn transfer_encoding_rules() {
        assert_eq!(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap().unwrap().framing, Framing::Chunked);
        assert_eq!(parse("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").unwrap().unwrap().framing, Framing::Chunked);
        assert_eq!(parse("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap().unwrap().framing, Framing::Chunked);
        assert_eq!(status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"), 400);
        assert_eq!(status("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), 400);
        assert_eq!(status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"), 400);
        assert_eq!(status("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
    }

    #[test]
    fn line_endings_and_bytes() {
        assert_eq!(status("GET / HTTP/1.1\nHost: x\n\n"), 400);
        assert_eq!(status("GET / HTTP/1.1\r\nHost: x\rY\r\n\r\n"), 400);
        assert_eq!(status("GET / HTTP/1.1\r\nHost: a\x01b\r\n\r\n"), 400);
        assert_eq!(status("GET / HTTP/1.1\r\nBad Name: v\r\n\r\n"), 400);
        assert_eq!(status("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n"), 400, "obs-fold");
    }

    #[test]
    fn versions_and_connection() {
        assert_eq!(status("GET / HTTP/2.0\r\n\r\n"), 505);
        assert_eq!(status("GET / HTTP/1.2\r\n\r\n"), 505);
        assert_eq!(status("GET /\r\n\r\n"), 400);
        let old = parse("GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert_eq!(old.minor, 0);
        assert!(!old.keep_alive);
        assert!(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap().unwrap().keep_alive);
        assert!(!parse("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").unwrap().unwrap().keep_alive);
    }

    #[test]
    fn header_count_and_expect() {
        let many: String = (0..LIMITS.max_headers + 1).map(|i| format!("X-{i}: v\r\n")).collect();
        assert_eq!(status(&format!("GET / HTTP/1.1\r\n{many}\r\n")), 431);
        assert!(parse("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").unwrap().unwrap().expect_continue);
        assert_eq!(status("POST / HTTP/1.1\r\nExpect: teapot\r\n\r\n"), 417);
    }
}
