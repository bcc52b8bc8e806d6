//! RFC 9114 §4.2 and §4.3's rules for a request's fields: what makes a request malformed
//! (H3_MESSAGE_ERROR), gathered while its field section is decoded.

use crate::events::Field;

/// A request head as its field section is decoded.
#[derive(Debug, Default)]
pub(crate) struct Head {
    pub method: Option<Vec<u8>>,
    pub scheme: Option<Vec<u8>>,
    pub authority: Option<Vec<u8>>,
    pub path: Option<Vec<u8>>,
    pub headers: Vec<Field>,
    pub content_length: Option<u64>,
    pub has_host: bool,
    pub too_large: bool,
    size: u64,
    regular_seen: bool,
    pub malformed: bool,
}

/// HTTP/1.1's connection-specific fields, forbidden in HTTP/3 (§4.2).
pub(crate) fn is_connection_specific(name: &[u8]) -> bool {
    matches!(name, b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade")
}

/// A field name's characters: RFC 9110's token characters, lower case only (§4.2).
pub(crate) fn valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.iter().all(|&c| {
            matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~')
        })
}

/// A field value: no NUL, CR or LF, and no leading or trailing space or tab (§4.2, RFC 9110
/// §5.5).
pub(crate) fn valid_value(value: &[u8]) -> bool {
    !value.iter().any(|&c| c == 0 || c == b'\r' || c == b'\n') && !matches!(value.first(), Some(b' ' | b'\t')) && !matches!(value.last(), Some(b' ' | b'\t'))
}

fn parse_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    value.iter().try_fold(0u64, |n, &d| n.checked_mul(10)?.checked_add((d - b'0') as u64))
}

impl Head {
    /// Takes one decoded field; `limit` is the field section size past which fields are left
    /// out (`too_large`).
    pub fn field(&mut self, name: &[u8], value: &[u8], limit: u64) {
        self.size += name.len() as u64 + value.len() as u64 + 32;
        if !valid_value(value) {
            self.malformed = true;
            return;
        }
        if let Some(pseudo) = name.strip_prefix(b":") {
            let slot = match pseudo {
                b"method" => &mut self.method,
                b"scheme" => &mut self.scheme,
                b"authority" => &mut self.authority,
                b"path" => &mut self.path,
                // :protocol (RFC 9220) needs SETTINGS_ENABLE_CONNECT_PROTOCOL, not sent;
                // :status is a response's; anything else is unknown.
                _ => {
                    self.malformed = true;
                    return;
                }
            };
            if self.regular_seen || slot.is_some() {
                self.malformed = true;
                return;
            }
            *slot = Some(value.to_vec());
            return;
        }
        self.regular_seen = true;
        if !valid_name(name) || is_connection_specific(name) || (name == b"te" && value != b"trailers") {
            self.malformed = true;
            return;
        }
        if name == b"content-length" {
            match (parse_length(value), self.content_length) {
                (Some(n), None) => self.content_length = Some(n),
                (Some(n), Some(m)) if n == m => {}
                _ => {
                    self.malformed = true;
                    return;
                }
            }
        }
        self.has_host |= name == b"host";
        if self.size > limit {
            self.too_large = true;
            return;
        }
        self.headers.push((name.to_vec(), value.to_vec()));
    }

    /// Whether the pseudo-header fields make a request (§4.3.1): a method; for CONNECT an
    /// authority and neither scheme nor path; otherwise a scheme and a non-empty path, and an
    /// authority or Host for the schemes that need one.
    pub fn is_valid_request(&self) -> bool {
        if self.malformed {
            return false;
        }
        let Some(method) = &self.method else {
            return false;
        };
        if method.is_empty() || !valid_name(&method.to_ascii_lowercase()) {
            return false;
        }
        if method == b"CONNECT" {
            return self.authority.is_some() && self.scheme.is_none() && self.path.is_none();
        }
        let (Some(scheme), Some(path)) = (&self.scheme, &self.path) else {
            return false;
        };
        if path.is_empty() {
            return false;
        }
        if matches!(&scheme[..], b"http" | b"https") {
            let authority = self.authority.as_deref().unwrap_or_default();
            if authority.is_empty() && !self.has_host {
                return false;
            }
        }
        true
    }

    /// Trailer fields (§4.1): no pseudo-header fields.
    pub fn is_valid_trailers(&self) -> bool {
        !self.malformed && self.method.is_none() && self.scheme.is_none() && self.authority.is_none() && self.path.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(fields: &[(&str, &str)]) -> Head {
        let mut h = Head::default();
        for (n, v) in fields {
            h.field(n.as_bytes(), v.as_bytes(), 16384);
        }
        h
    }

    #[test]
    fn requests_need_their_pseudo_headers() {
        let get = [(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/")];
        assert!(head(&get).is_valid_request());
        assert!(!head(&get[..3]).is_valid_request()); // no :path
        assert!(!head(&[(":method", "GET"), (":scheme", "https"), (":path", "/")]).is_valid_request()); // no authority
        assert!(head(&[(":method", "GET"), (":scheme", "https"), (":path", "/"), ("host", "a")]).is_valid_request());
        assert!(head(&[(":method", "CONNECT"), (":authority", "a:443")]).is_valid_request());
        assert!(!head(&[(":method", "CONNECT"), (":authority", "a:443"), (":path", "/")]).is_valid_request());
    }

    #[test]
    fn malformed_fields_are_caught() {
        let base = vec![(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/")];
        for bad in [
            vec![("Upper", "x")],
            vec![("connection", "close")],
            vec![("transfer-encoding", "chunked")],
            vec![("te", "gzip")],
            vec![("x", "a\r\nb")],
            vec![("x", " padded")],
            vec![("content-length", "+5")],
            vec![("content-length", "5"), ("content-length", "6")],
            vec![(":status", "200")],
            vec![(":protocol", "websocket")],
            vec![("x", "1"), (":method", "GET")], // pseudo after regular (and duplicate)
        ] {
            let mut fields = base.clone();
            fields.extend(bad.iter().copied());
            assert!(!head(&fields).is_valid_request(), "{bad:?}");
        }
        let mut fields = base.clone();
        fields.push(("te", "trailers"));
        fields.push(("content-length", "5"));
        fields.push(("content-length", "5"));
        let h = head(&fields);
        assert!(h.is_valid_request());
        assert_eq!(h.content_length, Some(5));
    }

    #[test]
    fn oversized_sections_keep_what_fits() {
        let mut h = Head::default();
        for f in [(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/")] {
            h.field(f.0.as_bytes(), f.1.as_bytes(), 300);
        }
        h.field(b"a", &[b'x'; 40], 300);
        h.field(b"b", &[b'x'; 200], 300);
        assert!(h.too_large && h.is_valid_request());
        assert_eq!(h.headers.len(), 1);
    }
}
