//! Properties of the request head parser (`head.rs`), over generated heads: a head written out
//! parses back to what was written, read whole or a byte short; and no input makes it panic or
//! return a head outside its input. (The fuzz target `head`, native/fuzz, checks the same on
//! inputs libFuzzer makes.)

use crate::{parse_head, Framing, Limits, METHODS};
use proptest::prelude::*;

const LIMITS: Limits = Limits { max_head: 64 * 1024, max_headers: 128 };

/// A request head as a client writes it.
#[derive(Debug, Clone)]
struct Written {
    blank_lines: usize,
    method: &'static str,
    target: String,
    minor: u8,
    /// Fields other than those that frame the request (their names start with `x-`).
    fields: Vec<(String, String)>,
    framing: Framing,
    connection: Option<&'static str>,
    expect_continue: bool,
    upgrade: bool,
}

impl Written {
    fn bytes(&self) -> Vec<u8> {
        let mut out = "\r\n".repeat(self.blank_lines);
        out += &format!("{} {} HTTP/1.{}\r\nHost: example.com\r\n", self.method, self.target, self.minor);
        for (name, value) in &self.fields {
            out += &format!("{name}: {value}\r\n");
        }
        match self.framing {
            Framing::None => {}
            Framing::Length(n) => out += &format!("Content-Length: {n}\r\n"),
            Framing::Chunked => out += "Transfer-Encoding: chunked\r\n",
        }
        if let Some(connection) = self.connection {
            out += &format!("Connection: {connection}\r\n");
        }
        if self.expect_continue {
            out += "Expect: 100-continue\r\n";
        }
        if self.upgrade {
            out += "Upgrade: websocket\r\n";
        }
        out += "\r\n";
        out.into_bytes()
    }

    /// Whether the connection may carry another request, as node:http reads it.
    fn keep_alive(&self) -> bool {
        let connection = self.connection.map(str::to_ascii_lowercase);
        match (self.minor, connection) {
            (0, Some(c)) => c.contains("keep-alive"),
            (0, None) => false,
            (_, Some(c)) => !c.contains("close"),
            (_, None) => true,
        }
    }
}

fn written() -> impl Strategy<Value = Written> {
    let method = prop::sample::select(METHODS.iter().copied().filter(|&m| m != "CONNECT").collect::<Vec<_>>());
    let target = prop_oneof!["/[!-~]{0,60}".prop_map(|t| t), Just("*".to_string()), "[a-z][a-z0-9+.-]{0,6}://[!-~]{1,30}".prop_map(|t| t),];
    let field = ("x-[a-z0-9!#$%&'*+.^_`|~-]{1,12}", "([!-~]([!-~ \t]{0,30}[!-~])?)?");
    let framing = prop_oneof![Just(Framing::None), (1u64..u64::MAX).prop_map(Framing::Length), Just(Framing::Chunked)];
    let connection = prop::option::of(prop::sample::select(vec!["close", "keep-alive", "Keep-Alive", "upgrade", "keep-alive, Upgrade"]));
    (0usize..3, method, target, 0u8..2, prop::collection::vec(field, 0..12), framing, connection, any::<bool>(), any::<bool>()).prop_map(
        |(blank_lines, method, target, minor, fields, framing, connection, expect_continue, upgrade)| {
            // HTTP/1.0 has no chunked coding (refused there, as node:http does).
            let framing = if minor == 0 && framing == Framing::Chunked { Framing::None } else { framing };
            Written { blank_lines, method, target, minor, fields, framing, connection, expect_continue, upgrade }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// parse(write(head)) == head: every part of a head comes back where it was written, and
    /// the body after it is not taken.
    #[test]
    fn a_written_head_parses_back(w in written(), body in prop::collection::vec(any::<u8>(), 0..20)) {
        let bytes = w.bytes();
        let mut input = bytes.clone();
        input.extend_from_slice(&body);
        let head = parse_head(&input, &LIMITS).map_err(|e| TestCaseError::fail(format!("{e:?} for {:?}", String::from_utf8_lossy(&bytes))))?;
        let head = head.ok_or_else(|| TestCaseError::fail("incomplete"))?;
        prop_assert_eq!(head.len, bytes.len());
        prop_assert_eq!(&input[head.method.clone()], w.method.as_bytes());
        prop_assert_eq!(METHODS[head.method_index], w.method);
        prop_assert_eq!(&input[head.target.clone()], w.target.as_bytes());
        prop_assert_eq!(head.minor, w.minor);
        let fields: Vec<_> = head.headers.iter().map(|(n, v)| (&input[n.clone()], &input[v.clone()])).filter(|(n, _)| n.starts_with(b"x-")).collect();
        let expected: Vec<_> = w.fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())).collect();
        prop_assert_eq!(fields, expected);
        prop_assert_eq!(head.framing, w.framing);
        prop_assert_eq!(head.keep_alive, w.keep_alive());
        prop_assert_eq!(head.expect_continue, w.expect_continue);
        prop_assert_eq!(head.upgrade, w.upgrade && w.connection.is_some_and(|c| c.to_ascii_lowercase().contains("upgrade")));
    }

    /// A head read before it is whole is "read more", never a refusal: a client sending a valid
    /// head slowly is not refused for it.
    #[test]
    fn any_prefix_of_a_head_waits_for_more(w in written(), cut in any::<prop::sample::Index>()) {
        let bytes = w.bytes();
        let cut = cut.index(bytes.len());
        let found = parse_head(&bytes[..cut], &LIMITS);
        prop_assert!(matches!(found, Ok(None)), "{:?} gives {:?}", String::from_utf8_lossy(&bytes[..cut]), found);
    }

    /// No input panics the parser, and a head it takes lies within its input.
    #[test]
    fn no_input_panics(input in prop::collection::vec(prop_oneof![any::<u8>(), prop::sample::select(b"\r\n :\t/GETPOSTHTP1.0".to_vec())], 0..300), max_head in 0usize..400, max_headers in 0usize..10) {
        let limits = Limits { max_head, max_headers };
        if let Ok(Some(head)) = parse_head(&input, &limits) {
            prop_assert!(head.len <= input.len());
            prop_assert!(head.headers.len() <= max_headers);
            prop_assert!(head.method.end <= head.len && head.target.end <= head.len);
        }
    }
}
