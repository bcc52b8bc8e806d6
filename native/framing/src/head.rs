use crate::Refusal;
use std::mem::MaybeUninit;
use std::ops::Range;

/// The 431 of a head past `maxHeaderSize`, naming the option (the node engine sends the same words).
pub const HEAD_TOO_LARGE: &str = "Request head is larger than maxHeaderSize; raise the maxHeaderSize option to accept it";

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
    /// The method's place in `METHODS`.
    pub method_index: usize,
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
    /// The request asks to change protocols: an Upgrade header and the upgrade token in
    /// Connection, both (as node:http's parser takes it; either alone is an ordinary request).
    pub upgrade: bool,
}

/// The methods node:http's parser knows (`http.METHODS`, the same on Node 20 and 24), sorted.
/// Anything else, lower-case spellings included, is refused with 400 there, and so here.
pub const METHODS: [&str; 35] = [
    "ACL",
    "BIND",
    "CHECKOUT",
    "CONNECT",
    "COPY",
    "DELETE",
    "GET",
    "HEAD",
    "LINK",
    "LOCK",
    "M-SEARCH",
    "MERGE",
    "MKACTIVITY",
    "MKCALENDAR",
    "MKCOL",
    "MOVE",
    "NOTIFY",
    "OPTIONS",
    "PATCH",
    "POST",
    "PROPFIND",
    "PROPPATCH",
    "PURGE",
    "PUT",
    "QUERY",
    "REBIND",
    "REPORT",
    "SEARCH",
    "SOURCE",
    "SUBSCRIBE",
    "TRACE",
    "UNBIND",
    "UNLINK",
    "UNLOCK",
    "UNSUBSCRIBE",
];

/// Parses one request head from the start of `buf`.
///
/// `Ok(None)`: the head is not complete yet (read more). `Err`: refuse with that status and close.
/// Empty lines before the request line are skipped, as RFC 9112 2.2 allows and node:http does.
pub fn parse_head(buf: &[u8], limits: &Limits) -> Result<Option<Head>, Refusal> {
    parse_head_reusing(buf, limits, &mut Vec::new())
}

/// `parse_head`, with the header list of a head parsed earlier to fill again: a complete head
/// takes it (its allocation, cleared), so a server that recycles them allocates none per request.
pub fn parse_head_reusing(buf: &[u8], limits: &Limits, spare: &mut Vec<(Range<usize>, Range<usize>)>) -> Result<Option<Head>, Refusal> {
    let skip = buf.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
    if skip > 0 {
        if skip == buf.len() {
            return if skip > limits.max_head { Err(Refusal { status: 431, message: HEAD_TOO_LARGE }) } else { Ok(None) };
        }
        return Ok(parse_head_reusing(&buf[skip..], limits, spare)?.map(|head| head.shifted(skip)));
    }
    // Header slots on the stack for the usual limits (no allocation, no zeroing per request).
    let mut stack: [MaybeUninit<httparse::Header>; 128] = [const { MaybeUninit::uninit() }; 128];
    let mut heap: Vec<MaybeUninit<httparse::Header>> = Vec::new();
    let slots: &mut [MaybeUninit<httparse::Header>] = if limits.max_headers <= stack.len() {
        &mut stack[..limits.max_headers]
    } else {
        heap.resize_with(limits.max_headers, MaybeUninit::uninit);
        &mut heap
    };
    let mut req = httparse::Request::new(&mut []);
    let parsed = req.parse_with_uninit_headers(buf, slots);
    if !matches!(parsed, Ok(httparse::Status::Complete(_))) {
        // Only a request line httparse did not take can hold a run of spaces: the usual request
        // never pays for looking.
        if let Some(found) = parse_spaced_line(buf, limits) {
            return found;
        }
    }
    let len = match parsed {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => {
            // node:http refuses a method it doesn't know as soon as its first wrong byte arrives.
            let word_end = buf.iter().position(|&b| b == b' ');
            let word = &buf[..word_end.unwrap_or(buf.len())];
            let known = match word_end {
                Some(_) => METHODS.iter().any(|m| m.as_bytes() == word),
                None => METHODS.iter().any(|m| m.as_bytes().starts_with(word)),
            };
            if !known {
                return Err(Refusal::bad("Unknown method"));
            }
            check_partial(buf)?;
            return if buf.len() > limits.max_head { Err(Refusal { status: 431, message: HEAD_TOO_LARGE }) } else { Ok(None) };
        }
        Err(httparse::Error::TooManyHeaders) => return Err(Refusal { status: 431, message: "Too many headers; raise the maxHeaders option to accept more" }),
        Err(httparse::Error::Version) => return Err(version_refusal(buf)),
        Err(_) => return Err(Refusal::bad("Malformed request head")),
    };
    if len > limits.max_head {
        return Err(Refusal { status: 431, message: HEAD_TOO_LARGE });
    }
    if has_bare_lf(&buf[..len], req.headers) {
        return Err(Refusal::bad("Bare LF in request head"));
    }
    let minor = req.version.unwrap_or(1);
    let method = range_of(buf, req.method.unwrap_or("").as_bytes());
    let target = range_of(buf, req.path.unwrap_or("").as_bytes());

    let Ok(method_index) = METHODS.binary_search(&req.method.unwrap_or("")) else {
        return Err(Refusal::bad("Unknown method"));
    };
    if req.method == Some("CONNECT") {
        // Tunnels are a proxy's business; node:http answers an origin's CONNECT the same way.
        return Err(Refusal { status: 501, message: "CONNECT is not supported by this server" });
    }
    if !is_parsed_request_target(req.path.unwrap_or("").as_bytes()) {
        return Err(Refusal::bad("Invalid request target"));
    }
    let mut headers = std::mem::take(spare);
    headers.clear();
    headers.reserve(req.headers.len());
    let mut length: Option<u64> = None;
    let mut transfer_encoding = false;
    // The last Transfer-Encoding line ended in chunked (llhttp's F_CHUNKED).
    let mut chunked = false;
    let mut close = false;
    let mut keep_alive_token = false;
    let mut expect_continue = false;
    let (mut upgrade_header, mut upgrade_token) = (false, false);
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        let value = h.value;
        headers.push((range_of(buf, name), range_of(buf, value)));
        if name.eq_ignore_ascii_case(b"content-length") {
            if length.is_some() {
                return Err(Refusal::bad("More than one Content-Length header"));
            }
            // httparse leaves out the whitespace around the value (spaces and tabs, which
            // node:http takes too, since Node 24).
            length = Some(parse_length(value)?);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // Repeated lines form one list, in order (RFC 9110 5.3): chunked ending one line
            // is not the last coding if another line follows.
            if chunked {
                return Err(Refusal::bad("chunked is not the final transfer coding"));
            }
            chunked = ends_in_chunked(line_value(buf, value))?;
            transfer_encoding = true;
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',') {
                let token = trim(token);
                close |= token.eq_ignore_ascii_case(b"close");
                keep_alive_token |= token.eq_ignore_ascii_case(b"keep-alive");
                upgrade_token |= token.eq_ignore_ascii_case(b"upgrade");
            }
        } else if name.eq_ignore_ascii_case(b"upgrade") {
            upgrade_header = true;
        } else if name.eq_ignore_ascii_case(b"expect") {
            if trim(value).eq_ignore_ascii_case(b"100-continue") {
                expect_continue = true;
            } else {
                return Err(Refusal { status: 417, message: "Unsupported Expect header" });
            }
        }
    }

    let framing = match (transfer_encoding, length) {
        (true, Some(_)) => return Err(Refusal::bad("Both Content-Length and Transfer-Encoding")),
        (true, None) if minor == 0 => return Err(Refusal::bad("Transfer-Encoding is not allowed in HTTP/1.0")),
        // RFC 9112 6.3: chunked must be the final coding, or the body's end can't be known.
        (true, None) if !chunked => return Err(Refusal::bad("Transfer-Encoding does not end with chunked")),
        (true, None) => Framing::Chunked,
        (false, Some(0)) | (false, None) => Framing::None,
        (false, Some(n)) => Framing::Length(n),
    };
    // On HTTP/1.0, keep-alive keeps the connection even beside close: RFC 9112 9.3 has close win,
    // but llhttp reads it so and node:http answers the next request, and framing must agree.
    let keep_alive = if minor == 0 { keep_alive_token } else { !close };
    let upgrade = upgrade_header && upgrade_token;
    Ok(Some(Head { len, method, method_index, target, minor, headers, framing, keep_alive, expect_continue, upgrade }))
}

/// node:http takes several spaces between the method, the target and the version; httparse one.
/// A request line with runs of spaces is parsed from a copy with single spaces, and the ranges
/// moved back onto `buf`. None: the line has no such run (parse as usual).
fn parse_spaced_line(buf: &[u8], limits: &Limits) -> Option<Result<Option<Head>, Refusal>> {
    let line_end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    let line = &buf[..line_end];
    let first = line.iter().position(|&b| b == b' ')?;
    let run1 = line[first..].iter().take_while(|&&b| b == b' ').count();
    let target_start = first + run1;
    let target_len = line[target_start..].iter().position(|&b| b == b' ').unwrap_or(line.len() - target_start);
    let second = target_start + target_len;
    let run2 = line[second..].iter().take_while(|&&b| b == b' ').count();
    if run1 <= 1 && run2 <= 1 {
        return None;
    }
    if line_end == buf.len() {
        // Not a whole line yet.
        return Some(if buf.len() > limits.max_head { Err(Refusal { status: 431, message: HEAD_TOO_LARGE }) } else { Ok(None) });
    }
    // A whole line with no target (its spaces run to a bare LF: `GET  \n`): the copy would be the
    // line again, and parsing it would come back here for ever (found by fuzzing: a stack overflow
    // that took the process down). The usual parse refuses it.
    if target_len == 0 {
        return None;
    }
    let mut copy = Vec::with_capacity(buf.len());
    copy.extend_from_slice(&buf[..first + 1]);
    copy.extend_from_slice(&buf[target_start..second]);
    copy.push(b' ');
    copy.extend_from_slice(&buf[(second + run2).min(buf.len())..]);
    let (d1, d2) = (run1 - 1, run1 - 1 + run2.saturating_sub(1));
    Some(parse_head(&copy, limits).map(|found| {
        found.map(|mut head| {
            head.len += d2;
            head.target = head.target.start + d1..head.target.end + d1;
            for (name, value) in head.headers.iter_mut() {
                *name = name.start + d2..name.end + d2;
                *value = value.start + d2..value.end + d2;
            }
            head
        })
    }))
}

/// A header value as httparse returned it, with the whitespace that followed it on its line
/// (httparse leaves that out; for Transfer-Encoding, node:http tells a space from a tab there).
fn line_value<'a>(buf: &'a [u8], value: &'a [u8]) -> &'a [u8] {
    if value.is_empty() {
        return value;
    }
    let start = value.as_ptr() as usize - buf.as_ptr() as usize;
    let end = start + value.len();
    let trailing = buf[end..].iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    &buf[start..end + trailing]
}

/// Whether one Transfer-Encoding line ends in chunked, read as node:http's parser (llhttp)
/// reads it, so that the two agree on every request's framing: codings are split at commas and
/// their leading spaces and tabs skipped; a coding is chunked (in any case) when only spaces
/// follow the word, a tab after it makes it another coding. chunked before another coding on
/// the line is refused (it must be the last, RFC 9112 6.1), and so is a line with no coding
/// (since Node 24: before, node:http ignored it).
fn ends_in_chunked(line: &[u8]) -> Result<bool, Refusal> {
    if line.iter().all(|&b| b == b' ' || b == b'\t') {
        return Err(Refusal::bad("Empty Transfer-Encoding"));
    }
    let mut codings = line.split(|&b| b == b',').peekable();
    while let Some(coding) = codings.next() {
        let start = coding.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(coding.len());
        let (word, rest) = coding[start..].split_at(coding[start..].len().min(7));
        if word.eq_ignore_ascii_case(b"chunked") && rest.iter().all(|&b| b == b' ') {
            return match codings.peek() {
                None => Ok(true),
                Some(_) => Err(Refusal::bad("chunked is not the final transfer coding")),
            };
        }
    }
    Ok(false)
}

/// The targets node:http's parser takes: a path, `*`, or an absolute URL (`scheme://…`), of
/// visible ASCII only (llhttp's strict URL bytes, 0x21 to 0x7E). httparse also takes bytes from
/// 0x80 up, so raw UTF-8 (`/é`) would be routed here where node:http answers 400; RFC 3986 has a
/// client percent-encode it. (CONNECT's authority form never gets here: it is refused before.)
fn is_request_target(target: &[u8]) -> bool {
    target.iter().all(|b| (0x21..=0x7E).contains(b)) && has_target_form(target)
}

/// `is_request_target` for a target httparse parsed, which holds only bytes from `!` to 0x7E
/// and from 0x80 up (its URI bytes): visible ASCII is then ASCII, which the standard library
/// checks a word at a time, where the byte-by-byte check cost ~7 instructions a byte of every
/// request's target.
fn is_parsed_request_target(target: &[u8]) -> bool {
    debug_assert!(target.iter().all(|&b| b >= b'!' && b != 0x7F));
    target.is_ascii() && has_target_form(target)
}

/// Whether a target of visible ASCII is a path, `*`, or an absolute URL.
fn has_target_form(target: &[u8]) -> bool {
    match target.first() {
        Some(b'/') => true,
        Some(b'*') => target.len() == 1,
        Some(first) if first.is_ascii_alphabetic() => {
            let scheme = target.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')).count();
            target[scheme..].starts_with(b"://")
        }
        _ => false,
    }
}

impl Head {
    /// The same head found `by` bytes further into the buffer.
    fn shifted(mut self, by: usize) -> Head {
        let shift = |r: &Range<usize>| r.start + by..r.end + by;
        self.len += by;
        self.method = shift(&self.method);
        self.target = shift(&self.target);
        for (name, value) in self.headers.iter_mut() {
            *name = shift(name);
            *value = shift(value);
        }
        self
    }
}

/// `1*DIGIT`, as Node accepts it: no sign, no spaces inside, no hex, no overflow.
fn parse_length(value: &[u8]) -> Result<u64, Refusal> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(Refusal::bad("Invalid Content-Length"));
    }
    value.iter().try_fold(0u64, |n, &d| n.checked_mul(10)?.checked_add(u64::from(d - b'0'))).ok_or(Refusal::bad("Invalid Content-Length"))
}

/// httparse tolerates a bare LF as a line end (RFC 9112 allows that leniency); Node does not,
/// and two parsers that disagree on line ends disagree on where headers end. In a head httparse
/// accepted, every LF ends a line (a value can't hold one, and it refuses obs-fold) and every CR
/// is followed by an LF (it refuses a bare CR, as it refuses NUL). So one look per line does: the
/// byte before the LF that ends the blank line, and before the LF that ends each line ahead of
/// it, which sits just before the next line starts (a header's name, or the blank line). Counting
/// every CR and LF instead cost a look per byte (~170 instructions on a 40-byte head, several
/// times that on a browser's).
fn has_bare_lf(head: &[u8], headers: &[httparse::Header]) -> bool {
    let len = head.len();
    let start_of = |name: &str| name.as_ptr() as usize - head.as_ptr() as usize;
    head[len - 2] != b'\r' || headers.iter().map(|h| start_of(h.name)).chain([len - 2]).any(|start| head[start - 2] != b'\r')
}

/// The same rules, byte by byte, for a head httparse has not finished with.
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

/// What is wrong in a head that is not complete yet: node:http refuses at the first bad byte,
/// and a client that never finishes its head must not be able to hide one.
fn check_partial(buf: &[u8]) -> Result<(), Refusal> {
    // A final CR may yet be followed by its LF.
    let whole = if buf.last() == Some(&b'\r') { &buf[..buf.len() - 1] } else { buf };
    check_line_endings(whole)?;
    if let Some(line_end) = buf.iter().position(|&b| b == b'\r' || b == b'\n') {
        let mut words = buf[..line_end].split(|&b| b == b' ').filter(|w| !w.is_empty());
        let (_method, target) = (words.next(), words.next());
        if target.is_some_and(|t| !is_request_target(t)) {
            return Err(Refusal::bad("Invalid request target"));
        }
    }
    Ok(())
}

/// llhttp takes HTTP/2.0 (which Cog then answers 505, as node:http apps do); any other version
/// but 1.0 and 1.1 is malformed there, and so here.
fn version_refusal(buf: &[u8]) -> Refusal {
    let line_end = buf.iter().position(|&b| b == b'\r' || b == b'\n').unwrap_or(buf.len());
    let line = &buf[..line_end];
    let version = line.rsplit(|&b| b == b' ').next().unwrap_or(b"");
    if version == b"HTTP/2.0" && line.iter().filter(|&&b| b == b' ').count() == 2 {
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

    /// Parses `raw`, adding a Host line after the request line if it has none.
    fn parse(raw: &str) -> Result<Option<Head>, Refusal> {
        let raw = match raw.find("\r\n") {
            Some(end) if !raw.contains("Host:") => format!("{}\r\nHost: x{}", &raw[..end], &raw[end..]),
            _ => raw.to_string(),
        };
        parse_head(raw.as_bytes(), &LIMITS)
    }
    fn status(raw: &str) -> u16 {
        parse(raw).expect_err("should be refused").status
    }

    /// A target is taken exactly when its bytes are visible ASCII, in a short target and a long
    /// one (httparse checks 32 bytes at a time), whole (checked as ASCII, httparse having refused
    /// the rest) or not complete yet (checked byte by byte).
    #[test]
    fn a_target_is_taken_exactly_when_it_is_visible_ascii() {
        // (A space ends the target: runs of them between the words are taken, as node:http does.)
        for b in (0..=255u8).filter(|&b| b != b' ') {
            for target in [vec![b'/', b], [b"/".as_slice(), &[b'a'; 40], &[b], b"/z"].concat()] {
                let mut raw = b"GET ".to_vec();
                raw.extend_from_slice(&target);
                raw.extend_from_slice(b" HTTP/1.1\r\nHost: x\r\n\r\n");
                let taken = matches!(parse_head(&raw, &LIMITS), Ok(Some(_)));
                assert_eq!(taken, (0x21..=0x7E).contains(&b), "byte {b:#04x} in {:?}", String::from_utf8_lossy(&target));
                let waits = matches!(parse_head(&raw[..raw.len() - 2], &LIMITS), Ok(None));
                assert_eq!(waits, (0x21..=0x7E).contains(&b), "byte {b:#04x} in a partial head");
                assert_eq!(is_request_target(&target), (0x21..=0x7E).contains(&b), "byte {b:#04x}");
            }
        }
    }

    /// `has_bare_lf`'s look per line finds what counting finds: a head httparse completes has a
    /// bare LF exactly when it holds more LFs than CRs. Heads of random lines, each ended by CRLF
    /// or a bare LF, with empty values and trailing whitespace.
    #[test]
    fn a_look_per_line_finds_every_bare_lf() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..5_000 {
            let mut raw = String::from("GET /a HTTP/1.1");
            let lines = next(5);
            for i in 0..=lines {
                raw += if next(4) == 0 { "\n" } else { "\r\n" };
                if i < lines {
                    raw += ["Host: x", "X-Empty:", "X-Spaces: a \t ", "A: b", "Cookie: t=1; u=2"][next(5) as usize];
                }
            }
            raw += if next(4) == 0 { "\n" } else { "\r\n" };
            let counted = raw.matches('\n').count() != raw.matches('\r').count();
            let mut slots = [httparse::EMPTY_HEADER; 16];
            let mut req = httparse::Request::new(&mut slots);
            let Ok(httparse::Status::Complete(len)) = req.parse(raw.as_bytes()) else { panic!("{raw:?}") };
            assert_eq!(len, raw.len());
            assert_eq!(has_bare_lf(raw.as_bytes(), req.headers), counted, "{raw:?}");
        }
    }

    /// `has_bare_lf` leans on httparse refusing a bare CR and NUL in a head it completes: pin that.
    #[test]
    fn bare_cr_lf_and_nul_anywhere_in_a_whole_head() {
        for raw in [
            "GET / HTTP/1.1\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n\n",
            "GET / HTTP/1.1\rHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n",
            "GET / HTTP/1.1\r\nHo\rst: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n\r\r\n",
            "GET /\0 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\0y\r\n\r\n",
            "GET / HTTP/1.1\r\nHo\0st: x\r\n\r\n",
        ] {
            assert_eq!(parse_head(raw.as_bytes(), &LIMITS).map(|h| h.is_some()).unwrap_err().status, 400, "{raw:?}");
        }
    }

    #[test]
    fn a_simple_get() {
        let raw = "GET /a?b=1 HTTP/1.1\r\nHost: x\r\nCookie: t=1\r\n\r\nNEXT";
        let head = parse_head(raw.as_bytes(), &LIMITS).unwrap().unwrap();
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
        assert_eq!(status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"), 400);
    }

    /// Spaces and tabs around the value, as node:http takes them since Node 24 (it refused a tab
    /// after the digits before); none inside it.
    #[test]
    fn content_length_whitespace() {
        for spaced in ["3 ", "3\t", "\t3\t", " \t3 \t ", "\t\t3"] {
            assert_eq!(parse(&format!("POST / HTTP/1.1\r\nContent-Length:{spaced}\r\n\r\n")).unwrap().unwrap().framing, Framing::Length(3), "{spaced:?}");
        }
        for bad in ["3 3", "3\t3", " ", "\t", "3\x0b"] {
            assert_eq!(status(&format!("POST / HTTP/1.1\r\nContent-Length:{bad}\r\n\r\n")), 400, "{bad:?}");
        }
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

    /// Transfer-Encoding read as node:http's parser (llhttp) reads it: any difference on where
    /// a body ends is a request one of them sees and the other does not.
    #[test]
    fn transfer_encoding_as_node_reads_it() {
        let te = |lines: &[&str]| {
            let lines: String = lines.iter().map(|line| format!("Transfer-Encoding:{line}\r\n")).collect();
            parse(&format!("POST / HTTP/1.1\r\n{lines}\r\n")).map(|head| head.unwrap().framing).map_err(|refusal| refusal.status)
        };
        let chunked = Ok(Framing::Chunked);
        // Spelling and whitespace of one line.
        for line in [
            " chunked",
            "chunked",
            "\tchunked",
            " CHUNKED",
            " ChUnKeD",
            " chunked  ",
            " gzip,chunked",
            " gzip ,chunked",
            " gzip,\tchunked",
            " gzip\t, chunked",
            " ,chunked",
            " gzip,, chunked",
            " x;q=\"a, chunked",
        ] {
            assert_eq!(te(&[line]), chunked, "{line:?}");
        }
        // A tab after chunked makes it another coding: the line doesn't end in chunked...
        for line in
            [" chunked\t", " chunked \t", " gzip, chunked\t", " chunkedx", " chunked;q=1", " gzip chunked", " \"chunked\"", " identity", " gzip", " chunked x"]
        {
            assert_eq!(te(&[line]), Err(400), "{line:?}");
        }
        // ...and chunked may follow it (node:http decodes the body once, and so does this parser).
        assert_eq!(te(&[" chunked\t, chunked"]), chunked);
        assert_eq!(te(&[" chunked\t", " chunked"]), chunked);
        // chunked before another coding, on its line or on a later one.
        for lines in [
            &[" chunked, gzip"][..],
            &[" chunked, chunked"],
            &[" chunked ,gzip"],
            &[" gzip, chunked, chunked"],
            &[" chunked,"],
            &[" chunked", " gzip"],
            &[" chunked", " chunked"],
            &[" chunked", " gzip, chunked"],
        ] {
            assert_eq!(te(lines), Err(400), "{lines:?}");
        }
        // Repeated lines form one list.
        assert_eq!(te(&[" gzip", " chunked"]), chunked);
        assert_eq!(te(&[" gzip\t", " deflate", " chunked"]), chunked);
        // A line with no coding is refused (Node 24; Node 20 ignored it), wherever it is.
        for lines in [&[""][..], &[" "], &["\t"], &[" \t "], &["", " chunked"], &[" chunked", ""], &[" gzip", "", " chunked"]] {
            assert_eq!(te(lines), Err(400), "{lines:?}");
        }
        assert_eq!(te(&[" ,"]), Err(400), "a comma alone names no chunked coding");
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
        assert_eq!(status("GET / HTTP/1.2\r\n\r\n"), 400);
        assert_eq!(status("GET / HTTP/0.1\r\n\r\n"), 400);
        assert_eq!(status("GET / HTTP/3.0\r\n\r\n"), 400);
        assert_eq!(parse_head(b"GET :/n HTTP/1.1\r\nHo", &LIMITS).unwrap_err().status, 400, "a bad target, head unfinished");
        assert_eq!(parse_head(b"GET / HTTP/1.1\r\nHost: a\n", &LIMITS).unwrap_err().status, 400, "a bare LF, head unfinished");
        // A missing Host is not a framing error: the request is whole, and Cog answers it 400 (as node:http does).
        assert!(parse_head(b"GET / HTTP/1.1\r\n\r\n", &LIMITS).unwrap().is_some());
        assert_eq!(status("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n"), 501);
        assert_eq!(status("GET /\r\n\r\n"), 400);
        let old = parse("GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert_eq!(old.minor, 0);
        assert!(!old.keep_alive);
        assert!(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap().unwrap().keep_alive);
        assert!(!parse("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").unwrap().unwrap().keep_alive);
        assert!(!parse("GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n").unwrap().unwrap().keep_alive);
        assert!(parse("GET / HTTP/1.0\r\nConnection: close, keep-alive\r\n\r\n").unwrap().unwrap().keep_alive, "as node:http reads it");
        assert!(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n").unwrap().unwrap().keep_alive, "as node:http reads it");
        // Spaces and tabs around a token, as Node 24 reads them (Node 20 missed a tab after one).
        assert!(!parse("GET / HTTP/1.1\r\nConnection: close\t\r\n\r\n").unwrap().unwrap().keep_alive);
        assert!(parse("GET / HTTP/1.0\r\nConnection: x,\tkeep-alive\t\r\n\r\n").unwrap().unwrap().keep_alive);
        assert!(parse("GET / HTTP/1.1\r\nConnection: close x\r\n\r\n").unwrap().unwrap().keep_alive, "close x is another token");
    }

    #[test]
    fn spaces_and_tabs_as_node_takes_them() {
        let raw = "GET   /x  HTTP/1.1\r\nHost: a\r\n\r\n";
        let head = parse_head(raw.as_bytes(), &LIMITS).unwrap().unwrap();
        assert_eq!(&raw[head.method.clone()], "GET");
        assert_eq!(&raw[head.target.clone()], "/x");
        assert_eq!(&raw[head.headers[0].1.clone()], "a");
        assert_eq!(head.len, raw.len());
        assert!(parse_head(b"GET  /x HT", &LIMITS).unwrap().is_none());
        assert_eq!(status("GET / HTTP/1.1 \r\n\r\n"), 400);
        assert_eq!(status("GET\t/ HTTP/1.1\r\n\r\n"), 400);
        assert_eq!(status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked,\r\n\r\n"), 400);
    }

    #[test]
    fn request_targets() {
        for good in ["/", "/a?b", "*", "http://a/b", "HTTPS://a"] {
            assert!(parse(&format!("OPTIONS {good} HTTP/1.1\r\n\r\n")).unwrap().is_some(), "{good}");
        }
        for bad in ["+/c", "a/b", "**", "http:/a", "%2F"] {
            assert_eq!(status(&format!("GET {bad} HTTP/1.1\r\n\r\n")), 400, "{bad}");
        }
        // Byte by byte, as llhttp (strict) takes them: visible ASCII, in a path, a query and a fragment.
        for byte in 0..=255u8 {
            for at in [&b"/a"[..], b"/a?", b"/a#", b"http://h/"] {
                let mut raw = b"GET ".to_vec();
                raw.extend_from_slice(at);
                raw.push(byte);
                raw.extend_from_slice(b"b HTTP/1.1\r\nHost: a\r\n\r\n");
                let parsed = parse_head(&raw, &LIMITS);
                if (0x21..=0x7E).contains(&byte) {
                    assert!(parsed.is_ok_and(|head| head.is_some()), "{byte:#04x} after {at:?}");
                } else {
                    assert_eq!(parsed.unwrap_err().status, 400, "{byte:#04x} after {at:?}");
                }
                // Refused before the head is complete, too.
                if !(0x20..=0x7E).contains(&byte) && ![b'\r', b'\n'].contains(&byte) {
                    assert_eq!(parse_head(&raw[..raw.len() - 9], &LIMITS).err().map(|r| r.status), Some(400), "{byte:#04x} after {at:?}, partial");
                }
            }
        }
        assert_eq!(status("GET /caf\u{e9} HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "raw UTF-8");
    }

    #[test]
    fn methods_and_leading_blank_lines() {
        assert_eq!(status("get / HTTP/1.1\r\n\r\n"), 400);
        assert_eq!(status("FOO / HTTP/1.1\r\n\r\n"), 400);
        let raw = "\r\n\rPURGE /x HTTP/1.1\r\nHost: a\r\n\r\n";
        let head = parse_head(raw.as_bytes(), &LIMITS).unwrap().unwrap();
        assert_eq!(&raw[head.method.clone()], "PURGE");
        assert_eq!(&raw[head.target.clone()], "/x");
        assert_eq!(&raw[head.headers[0].1.clone()], "a");
        assert_eq!(head.len, raw.len());
        assert!(parse_head(b"\r\n", &LIMITS).unwrap().is_none());
        assert!(parse_head(b"PR", &LIMITS).unwrap().is_none(), "a prefix of PROPFIND");
        assert_eq!(parse_head(b"5", &LIMITS).unwrap_err().status, 400);
        assert_eq!(parse_head(b"GETS /", &LIMITS).unwrap_err().status, 400);
    }

    #[test]
    fn header_count_and_expect() {
        let many: String = (0..LIMITS.max_headers + 1).map(|i| format!("X-{i}: v\r\n")).collect();
        assert_eq!(status(&format!("GET / HTTP/1.1\r\n{many}\r\n")), 431);
        assert!(parse("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").unwrap().unwrap().expect_continue);
        assert!(parse("GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\r\n").unwrap().unwrap().upgrade);
        assert!(!parse("GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n").unwrap().unwrap().upgrade, "Upgrade without Connection: upgrade");
        assert!(!parse("GET / HTTP/1.1\r\nConnection: upgrade\r\n\r\n").unwrap().unwrap().upgrade, "Connection: upgrade without Upgrade");
        assert_eq!(status("POST / HTTP/1.1\r\nExpect: teapot\r\n\r\n"), 417);
    }

    /// A request line whose spaces run to a bare LF has no target to collapse them around: it
    /// is refused, where it once sent the parser into endless recursion (found by fuzzing).
    #[test]
    fn spaces_up_to_a_bare_lf_are_refused_not_recursed_on() {
        for raw in [&b"GET  \n"[..], b"GET   \n\r\n", b"\r\nD\xcdLET\xf4\x00\x00\x00\x19/6  \n", b"GET / HTTP/1.1  \n"] {
            assert_eq!(parse_head(raw, &LIMITS).map(|h| h.is_some()), Err(Refusal::bad("Malformed request head")), "{raw:?}");
        }
        // Before its line ends, the same spaces wait for the target (found by fuzzing too).
        assert_eq!(parse_head(b"DELETE   ", &LIMITS).map(|h| h.is_some()), Ok(false));
    }
}
