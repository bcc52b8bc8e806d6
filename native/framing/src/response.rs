//! Response heads: status line, the app's headers (validated again here: a CR or LF must never
//! reach the wire), Date, Content-Length or chunked framing, and Connection.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

/// How the body after the head is framed.
pub enum BodyFraming {
    /// A whole body of this many bytes (also what a HEAD response reports).
    Length(usize),
    /// A streamed body: chunked on HTTP/1.1, ended by closing on HTTP/1.0.
    Stream,
    /// 1xx, 204 and 304 have no body and describe none.
    NoBody,
}

/// The request id echoed in X-Request-Id, sent apart from the header block so that a block kept
/// for reuse stays reusable (the id differs on every response): visible ASCII only, 1 to 128
/// bytes, so it can't end the line early. Only made by `RequestId::new`, which refuses anything else.
#[derive(Debug, Clone, Copy)]
pub struct RequestId<'a>(&'a [u8]);

impl<'a> RequestId<'a> {
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    pub fn new(bytes: &'a [u8]) -> Result<RequestId<'a>, &'static str> {
        if (1..=128).contains(&bytes.len()) && bytes.iter().all(|&b| (0x21..0x7f).contains(&b)) {
            Ok(RequestId(bytes))
        } else {
            Err("Invalid request id to echo in X-Request-Id: 1 to 128 visible ASCII characters")
        }
    }
}

/// The app's headers as `name: value\r\n` lines (latin1, as Node writes header strings),
/// without Content-Length, Transfer-Encoding or Connection: those are the engine's to write.
/// Only made by `HeaderBlock::new`, which refuses anything that isn't well-formed header lines,
/// so nothing the app set can split a response, and a block kept for reuse is checked once.
#[derive(Debug, Clone, Copy)]
pub struct HeaderBlock<'a>(&'a [u8]);

impl<'a> HeaderBlock<'a> {
    pub fn new(bytes: &'a [u8]) -> Result<HeaderBlock<'a>, &'static str> {
        if is_header_block(bytes) {
            Ok(HeaderBlock(bytes))
        } else {
            Err("Invalid header line in the response")
        }
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }
}

/// A header block checked once and kept, for responses that repeat the same header set: each
/// use lends it out as a `HeaderBlock` without checking it again.
#[derive(Debug)]
pub struct KeptHeaderBlock(Box<[u8]>);

impl KeptHeaderBlock {
    pub fn new(bytes: &[u8]) -> Result<KeptHeaderBlock, &'static str> {
        HeaderBlock::new(bytes).map(|block| KeptHeaderBlock(block.0.into()))
    }

    pub fn block(&self) -> HeaderBlock<'_> {
        HeaderBlock(&self.0)
    }
}

/// A status code the engine writes: three digits, 100 to 999, as node:http's `writeHead`
/// takes them; None for any other. The JavaScript side checks too; a status past them must not
/// reach the wire written as some other number.
#[inline]
pub fn status_code(status: u32) -> Option<u16> {
    (100..=999).contains(&status).then_some(status as u16)
}

/// A reason phrase the app chose (node:http's `statusMessage`): RFC 9112 4's
/// `*( HTAB / SP / VCHAR / obs-text )` as latin1 bytes, so nothing the app sets can end the
/// status line early. Only made by `ReasonPhrase::new`, which refuses anything else.
#[derive(Debug, Clone, Copy)]
pub struct ReasonPhrase<'a>(&'a [u8]);

impl<'a> ReasonPhrase<'a> {
    pub fn new(bytes: &'a [u8]) -> Result<ReasonPhrase<'a>, &'static str> {
        if value_end(bytes, 0) == bytes.len() {
            Ok(ReasonPhrase(bytes))
        } else {
            Err("Invalid character in the reason phrase (statusMessage)")
        }
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }
}

/// What the app answered, for the head: its status and header lines.
pub struct AppHead<'a> {
    pub status: u16,
    /// The reason phrase the app chose; None writes the status's own (see `reason`).
    pub reason: Option<ReasonPhrase<'a>>,
    pub block: HeaderBlock<'a>,
    /// The block has a Date line (else the engine adds one).
    pub has_date: bool,
    /// The Content-Length the app declared, reported by a HEAD answer that has no body.
    pub declared_length: Option<u64>,
    /// The app asked to close the connection after this response.
    pub close: bool,
    /// The request id to echo, written after the block.
    pub request_id: Option<RequestId<'a>>,
}

pub struct HeadOptions<'a> {
    pub app: &'a AppHead<'a>,
    pub framing: BodyFraming,
    /// The request's minor version (0 for HTTP/1.0).
    pub minor: u8,
    /// The request asked to close the connection (or is HTTP/1.0 without keep-alive).
    pub request_close: bool,
    /// The body is left out but its length reported (HEAD).
    pub head_request: bool,
}

/// Writes the head into `out`. Returns whether the connection must close after this response
/// (the app or client asked, or a stream on HTTP/1.0 can only end by closing).
pub fn write_head(out: &mut Vec<u8>, o: &HeadOptions) -> bool {
    let app = o.app;
    let mut close = app.close || o.request_close;
    out.extend_from_slice(b"HTTP/1.1 ");
    push_number(out, u64::from(app.status));
    out.push(b' ');
    out.extend_from_slice(match app.reason {
        Some(phrase) => phrase.0,
        None => reason(app.status).as_bytes(),
    });
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(app.block.as_bytes());
    if let Some(id) = app.request_id {
        out.extend_from_slice(b"x-request-id: ");
        out.extend_from_slice(id.0);
        out.extend_from_slice(b"\r\n");
    }
    if !app.has_date {
        out.extend_from_slice(b"Date: ");
        with_date(|d| out.extend_from_slice(d));
        out.extend_from_slice(b"\r\n");
    }
    match o.framing {
        BodyFraming::Length(n) => {
            // A HEAD answer reports the length the app declared, if it declared one without a body.
            let reported = match app.declared_length {
                Some(declared) if o.head_request && n == 0 => declared,
                _ => n as u64,
            };
            out.extend_from_slice(b"Content-Length: ");
            push_number(out, reported);
            out.extend_from_slice(b"\r\n");
        }
        BodyFraming::Stream if o.minor >= 1 => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        BodyFraming::Stream => close = true,
        BodyFraming::NoBody => {}
    }
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    } else if o.minor == 0 {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"\r\n");
    close
}

/// `name: value\r\n` lines: a token, a colon and a space, a value without control characters
/// but tab, each line ended by CRLF. One pass over the bytes.
fn is_header_block(block: &[u8]) -> bool {
    let mut i = 0;
    while i < block.len() {
        let start = i;
        while i < block.len() && crate::TOKEN[block[i] as usize] {
            i += 1;
        }
        if i == start || block.get(i) != Some(&b':') || block.get(i + 1) != Some(&b' ') {
            return false;
        }
        i += 2;
        i = value_end(block, i);
        if block.get(i) != Some(&b'\r') || block.get(i + 1) != Some(&b'\n') {
            return false;
        }
        i += 2;
    }
    true
}

/// Where the field value from `i` on ends: at the first byte that is not tab, space, visible or
/// obs-text (the CR ending the line, or a bad byte). Eight bytes at a time while none of them is
/// a control character or DEL: a third of the instructions of testing each byte.
fn value_end(block: &[u8], mut i: usize) -> usize {
    use crate::{has_below, has_byte, word_at};
    // A control character (tab included: the byte loop sorts it out) or DEL ends the fast part.
    while let Some(x) = word_at(block, i) {
        if has_below(x, 0x20) | has_byte(x, 0x7f) != 0 {
            break;
        }
        i += 8;
    }
    while i < block.len() && (block[i] == b'\t' || (block[i] >= 0x20 && block[i] != 0x7f)) {
        i += 1;
    }
    i
}

/// Appends `n` in decimal, without allocating.
fn push_number(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    out.extend_from_slice(decimal(n, &mut digits));
}

/// `n` in decimal, written at the end of `digits`.
pub fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &digits[i..];
        }
    }
}

/// The status codes Node knows, with its phrases; others get "Unknown".
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        208 => "Already Reported",
        226 => "IM Used",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Payload Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        418 => "I'm a Teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Entity",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        509 => "Bandwidth Limit Exceeded",
        510 => "Not Extended",
        511 => "Network Authentication Required",
        _ => "Unknown",
    }
}

/// A whole response the engine writes itself (a refused request), closing the connection.
pub fn refusal(status: u16, message: &str) -> Vec<u8> {
    let body = refusal_body(status, message);
    let mut out = Vec::with_capacity(160 + body.len());
    let block = HeaderBlock::new(b"content-type: application/json; charset=utf-8\r\n").expect("constant headers are valid");
    let app = AppHead { status, reason: None, block, has_date: false, declared_length: None, close: true, request_id: None };
    let options = HeadOptions { app: &app, framing: BodyFraming::Length(body.len()), minor: 1, request_close: false, head_request: false };
    write_head(&mut out, &options);
    out.extend_from_slice(body.as_bytes());
    out
}

/// The JSON body of the engine's own refusals, in Cog's error format.
pub fn refusal_body(status: u16, message: &str) -> String {
    format!("{{\"statusCode\":{status},\"error\":\"{}\",\"message\":\"{}\"}}", reason(status), message.replace('"', "'"))
}

thread_local! {
    /// The Date header's value, formatted once per second.
    static DATE: RefCell<(u64, Vec<u8>)> = const { RefCell::new((u64::MAX, Vec::new())) };
}

/// Calls `f` with the Date header's value now (IMF-fixdate, 29 bytes).
pub fn with_date(f: impl FnOnce(&[u8])) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    DATE.with(|cell| {
        let mut cache = cell.borrow_mut();
        if cache.0 != now {
            *cache = (now, http_date(now).into_bytes());
        }
        f(&cache.1);
    });
}

/// IMF-fixdate (RFC 9110 5.6.7): "Sun, 06 Nov 1994 08:49:37 GMT".
fn http_date(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{}, {:02} {} {} {:02}:{:02}:{:02} GMT", DAYS[(days % 7) as usize], day, MONTHS[(month - 1) as usize], year, rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_are_written_in_decimal() {
        let mut digits = [0u8; 20];
        assert_eq!(super::decimal(0, &mut digits), b"0");
        assert_eq!(super::decimal(1_048_576, &mut digits), b"1048576");
        assert_eq!(super::decimal(u64::MAX, &mut digits), b"18446744073709551615");
    }

    #[test]
    fn header_blocks() {
        assert!(super::is_header_block(b""));
        assert!(super::is_header_block(b"a: b\r\nx-y: \tz\r\n"));
        for bad in [&b"a: b"[..], b"a: b\nc: d\r\n", b"a b: c\r\n", b"a:b\r\n", b"a: b\rc\r\n", b": b\r\n"] {
            assert!(!super::is_header_block(bad), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn kept_blocks_are_checked_when_kept() {
        let kept = super::KeptHeaderBlock::new(b"x-a: b\r\n").unwrap();
        assert_eq!(kept.block().as_bytes(), b"x-a: b\r\n");
        assert!(super::KeptHeaderBlock::new(b"x-a: b\r\nx-b: c\r\n\r\nHTTP/1.1 200 OK\r\n").is_err());
    }

    #[test]
    fn status_codes_are_three_digits() {
        for good in [100, 200, 599, 999] {
            assert_eq!(super::status_code(good), Some(good as u16));
        }
        // 65736 would be written as 200 if it were cut to 16 bits.
        for bad in [0, 99, 1000, 65_736, u32::MAX] {
            assert_eq!(super::status_code(bad), None, "{bad}");
        }
    }

    #[test]
    fn reason_phrases_are_tab_space_visible_and_obs_text() {
        let every_good: Vec<u8> = [b'\t'].into_iter().chain(0x20..=0x7e).chain(0x80..=0xff).collect();
        for good in [&b""[..], b"OK", b"Not\tQuite Found", b"Tr\xe8s bien", &every_good] {
            assert_eq!(super::ReasonPhrase::new(good).unwrap().as_bytes(), good);
        }
        for bad in (0..0x20u8).filter(|&b| b != b'\t').chain([0x7f]) {
            assert!(super::ReasonPhrase::new(&[b'O', bad, b'K']).is_err(), "byte {bad:#x}");
            assert!(super::ReasonPhrase::new(&[bad]).is_err(), "byte {bad:#x} alone");
        }
        assert!(super::ReasonPhrase::new(b"OK\r\nSet-Cookie: a=b").is_err());
        assert!(super::ReasonPhrase::new(b"a long phrase, longer than a word\n").is_err(), "past the eight-byte steps");
    }

    fn head_with(status: u16, reason: Option<&[u8]>) -> String {
        let block = super::HeaderBlock::new(b"").unwrap();
        let app = super::AppHead {
            status,
            reason: reason.map(|r| super::ReasonPhrase::new(r).unwrap()),
            block,
            has_date: true,
            declared_length: None,
            close: false,
            request_id: None,
        };
        let mut out = Vec::new();
        super::write_head(
            &mut out,
            &super::HeadOptions { app: &app, framing: super::BodyFraming::Length(0), minor: 1, request_close: false, head_request: false },
        );
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn an_echoed_request_id_follows_the_block_and_cannot_split_the_head() {
        let block = super::HeaderBlock::new(b"a: b\r\n").unwrap();
        let request_id = Some(super::RequestId::new(b"k3f9-12").unwrap());
        let app = super::AppHead { status: 200, reason: None, block, has_date: true, declared_length: None, close: false, request_id };
        let mut out = Vec::new();
        super::write_head(
            &mut out,
            &super::HeadOptions { app: &app, framing: super::BodyFraming::Length(0), minor: 1, request_close: false, head_request: false },
        );
        assert_eq!(String::from_utf8_lossy(&out), "HTTP/1.1 200 OK\r\na: b\r\nx-request-id: k3f9-12\r\nContent-Length: 0\r\n\r\n");
        for bad in [&b""[..], b"a b", b"a\r\nb: c", b"\xe9", &[b'a'; 129]] {
            assert!(super::RequestId::new(bad).is_err(), "{bad:?}");
        }
        assert!(super::RequestId::new(&[b'a'; 128]).is_ok());
    }

    #[test]
    fn the_status_line_has_the_apps_reason_phrase_or_the_statuss_own() {
        assert_eq!(head_with(200, None), "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(head_with(200, Some(b"Fine")), "HTTP/1.1 200 Fine\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(head_with(404, Some(b"")), "HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n");
        assert_eq!(head_with(599, None), "HTTP/1.1 599 Unknown\r\nContent-Length: 0\r\n\r\n");
    }

    #[test]
    fn formats_http_dates() {
        assert_eq!(super::http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(super::http_date(1_795_330_207), "Sun, 22 Nov 2026 06:50:07 GMT");
    }

    #[test]
    fn value_end_stops_where_a_byte_by_byte_scan_stops() {
        let naive = |block: &[u8], mut i: usize| {
            while i < block.len() && (block[i] == b'\t' || (block[i] >= 0x20 && block[i] != 0x7f)) {
                i += 1;
            }
            i
        };
        // Every byte value at every position of a valid run, from every start offset.
        for bad in 0..=255u8 {
            for at in 0..20 {
                let mut block = b"abcdefghij klmnopq\xe9rstuvwxyz".to_vec();
                block[at] = bad;
                for start in 0..4 {
                    assert_eq!(super::value_end(&block, start), naive(&block, start), "byte {bad:#x} at {at} from {start}");
                }
            }
        }
    }
}
