//! Cog's rules for a request head beyond framing: the limits and the strict-HTTP checks that
//! `src/head.ts` applies on the other engines (same rules, same messages). Applied here, the
//! native engine hands JavaScript a request already checked, without copying every header
//! across to do it.

use crate::head::Head;
use std::ops::Range;

#[derive(Debug, Clone, Copy)]
pub struct Rules {
    pub max_headers: usize,
    pub max_url_length: usize,
    pub strict: bool,
}

/// A request Cog refuses: its status and message, answered through the app's error handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub status: u16,
    pub message: String,
}

fn bad(message: impl Into<String>) -> Problem {
    Problem { status: 400, message: message.into() }
}

/// Checks `head` (parsed from `buf`). Ok(Some(range)): the target was in absolute form and the
/// path it names (this range of `buf`, or "/" when empty) is what the app routes.
pub fn check(head: &Head, buf: &[u8], rules: &Rules) -> Result<Option<Range<usize>>, Problem> {
    if head.headers.len() > rules.max_headers {
        return Err(Problem {
            status: 431,
            message: format!("Too many headers (the limit is {}); raise the maxHeaders option to accept more", rules.max_headers),
        });
    }
    let target = &buf[head.target.clone()];
    if target.len() > rules.max_url_length {
        return Err(Problem {
            status: 414,
            message: format!("URL is longer than the limit of {} characters; raise the maxUrlLength option to accept it", rules.max_url_length),
        });
    }
    let mut hosts = 0;
    for (name, value) in &head.headers {
        if buf[name.clone()].eq_ignore_ascii_case(b"host") {
            hosts += 1;
            if !rules.strict {
                continue;
            }
            if hosts > 1 {
                return Err(bad("More than one Host header"));
            }
            let host = &buf[value.clone()];
            if !is_host(host) {
                return Err(bad(format!("Malformed Host header \"{}\"", latin1(host))));
            }
        }
    }
    if hosts == 0 && head.minor == 1 {
        return Err(bad("An HTTP/1.1 request needs a Host header"));
    }
    if !rules.strict {
        return Ok(None);
    }
    let (path, rewritten) = match target.first() {
        Some(b'/') => (target, None),
        Some(b'*') => (target, None),
        _ => {
            // absolute-form: route by the path after the scheme and authority (RFC 9112 3.2.2).
            let after_scheme = target.windows(3).position(|w| w == b"://").map(|i| i + 3).unwrap_or(target.len());
            let path_start = target[after_scheme..].iter().position(|&b| b == b'/' || b == b'?' || b == b'#').map_or(target.len(), |i| after_scheme + i);
            let start = head.target.start + path_start;
            (&target[path_start..], Some(start..head.target.end))
        }
    };
    if target == b"*" && &buf[head.method.clone()] != b"OPTIONS" {
        return Err(bad("The request target must be a path starting with /"));
    }
    let (path, suspect) = split_path(path);
    if suspect && has_dot_segment(path) {
        return Err(bad("The path contains a \".\" or \"..\" segment"));
    }
    Ok(rewritten)
}

/// RFC 3986 host (IP-literal, IPv4 or reg-name) and an optional port.
fn is_host(host: &[u8]) -> bool {
    let port = if host.first() == Some(&b'[') {
        match host.iter().position(|&b| b == b']') {
            Some(end) if end > 1 && host[1..end].iter().all(|b| b.is_ascii_hexdigit() || *b == b':' || *b == b'.') => &host[end + 1..],
            _ => return false,
        }
    } else {
        let colon = host.iter().position(|&b| b == b':').unwrap_or(host.len());
        if !host[..colon].iter().all(|&b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=%".contains(&b)) {
            return false;
        }
        &host[colon..]
    };
    port.is_empty() || (port[0] == b':' && port[1..].iter().all(u8::is_ascii_digit))
}

/// A "." or ".." segment, raw or percent-encoded, between "/", "\" or their escapes: clients
/// remove them, so one on the wire is an attempt to make a proxy and this server disagree.
/// The path before any `?`, and whether it holds a `.` or `%` (without one it can have no dot
/// segment). One pass, eight bytes at a time: long paths made two byte-by-byte scans cost more
/// than the rest of the head rules.
fn split_path(target: &[u8]) -> (&[u8], bool) {
    use crate::{has_byte, word_at};
    let mut suspect = false;
    let mut i = 0;
    while let Some(x) = word_at(target, i) {
        if has_byte(x, b'?') != 0 {
            break;
        }
        suspect |= (has_byte(x, b'.') | has_byte(x, b'%')) != 0;
        i += 8;
    }
    while i < target.len() && target[i] != b'?' {
        suspect |= target[i] == b'.' || target[i] == b'%';
        i += 1;
    }
    (&target[..i], suspect)
}

fn has_dot_segment(path: &[u8]) -> bool {
    // Split into segments at "/", "\", "%2f", "%5c" (any case), then look for "." or ".." spelled with "." or "%2e".
    let mut segments: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < path.len() {
        let sep = match path[i] {
            b'/' | b'\\' => 1,
            b'%' if path.len() >= i + 3 && (path[i + 1..i + 3].eq_ignore_ascii_case(b"2f") || path[i + 1..i + 3].eq_ignore_ascii_case(b"5c")) => 3,
            _ => 0,
        };
        if sep > 0 {
            segments.push(&path[start..i]);
            i += sep;
            start = i;
        } else {
            i += 1;
        }
    }
    segments.push(&path[start..]);
    segments.iter().any(|segment| is_dots(segment))
}

fn is_dots(segment: &[u8]) -> bool {
    let mut dots = 0;
    let mut i = 0;
    while i < segment.len() {
        if segment[i] == b'.' {
            i += 1;
        } else if segment.len() >= i + 3 && segment[i] == b'%' && segment[i + 1..i + 3].eq_ignore_ascii_case(b"2e") {
            i += 3;
        } else {
            return false;
        }
        dots += 1;
    }
    dots == 1 || dots == 2
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| b as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::head::{parse_head, Limits};

    const RULES: Rules = Rules { max_headers: 100, max_url_length: 8192, strict: true };

    fn check_raw(raw: &str) -> Result<Option<String>, u16> {
        let head = parse_head(raw.as_bytes(), &Limits { max_head: 16384, max_headers: 200 }).unwrap().unwrap();
        check(&head, raw.as_bytes(), &RULES).map(|r| r.map(|r| raw[r].to_string())).map_err(|p| p.status)
    }

    #[test]
    fn hosts() {
        assert_eq!(check_raw("GET / HTTP/1.1\r\nHost: a.example:80\r\n\r\n"), Ok(None));
        assert_eq!(check_raw("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n"), Ok(None));
        assert_eq!(check_raw("GET / HTTP/1.1\r\nHost: \r\n\r\n"), Ok(None));
        for bad in ["a b", "a/b", "a:b", "[zz]", "a@b"] {
            assert_eq!(check_raw(&format!("GET / HTTP/1.1\r\nHost: {bad}\r\n\r\n")), Err(400), "{bad}");
        }
        assert_eq!(check_raw("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), Err(400));
        assert_eq!(check_raw("GET / HTTP/1.1\r\n\r\n"), Err(400));
        assert_eq!(check_raw("GET / HTTP/1.0\r\n\r\n"), Ok(None));
    }

    #[test]
    fn split_path_agrees_with_a_byte_by_byte_scan() {
        let naive = |t: &[u8]| {
            let end = t.iter().position(|&b| b == b'?').unwrap_or(t.len());
            (end, t[..end].iter().any(|&b| b == b'.' || b == b'%'))
        };
        for special in [b'?', b'.', b'%', b'/', b'a'] {
            for at in 0..24 {
                for second in [None, Some(b'?'), Some(b'.')] {
                    let mut target = b"/abcdefghijklmnopqrstuvw".to_vec();
                    target[at] = special;
                    if let Some(b) = second {
                        target[(at + 9) % 24] = b;
                    }
                    let (path, suspect) = super::split_path(&target);
                    assert_eq!((path.len(), suspect), naive(&target), "{:?}", String::from_utf8_lossy(&target));
                }
            }
        }
    }

    #[test]
    fn targets_and_dot_segments() {
        assert_eq!(check_raw("GET http://a.example/x?y HTTP/1.1\r\nHost: a\r\n\r\n"), Ok(Some("/x?y".into())));
        assert_eq!(check_raw("GET http://a.example HTTP/1.1\r\nHost: a\r\n\r\n"), Ok(Some("".into())));
        assert_eq!(check_raw("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n"), Ok(None));
        assert_eq!(check_raw("GET * HTTP/1.1\r\nHost: a\r\n\r\n"), Err(400));
        for bad in ["/a/../b", "/./a", "/a/..", "/%2e%2e/a", "/a%2f..%2fb", "/a\\..\\b", "/.%2E/", "/a/%2E"] {
            assert_eq!(check_raw(&format!("GET {bad} HTTP/1.1\r\nHost: a\r\n\r\n")), Err(400), "{bad}");
        }
        for good in ["/a.b", "/...", "/a/.b/", "/%2e%2e%2e", "/a?x=/../"] {
            assert_eq!(check_raw(&format!("GET {good} HTTP/1.1\r\nHost: a\r\n\r\n")), Ok(None), "{good}");
        }
    }

    #[test]
    fn limits() {
        let many: String = (0..101).map(|i| format!("X-{i}: v\r\n")).collect();
        assert_eq!(check_raw(&format!("GET / HTTP/1.1\r\nHost: a\r\n{many}\r\n")), Err(431));
        assert_eq!(check_raw(&format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(8192))), Err(414));
    }
}
