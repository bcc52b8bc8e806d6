use crate::Refusal;

/// Most bytes of chunk extensions in one body (they are ignored, so they only cost memory and time).
const MAX_EXTENSIONS: usize = 16 * 1024;
/// Most bytes of trailer fields after the last chunk (kept for the app: `take_trailers`).
const MAX_TRAILERS: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the chunk-size hex digits.
    Size,
    /// Chunk extensions (`;name=value`, the value a token or a quoted string), as llhttp reads them.
    ExtStart,
    ExtName,
    ExtValueStart,
    ExtValue,
    ExtQuoted,
    ExtEscape,
    ExtQuotedEnd,
    /// CR seen after the size line: LF must follow.
    SizeLf,
    /// Reading `remaining` bytes of chunk data.
    Data,
    /// After the data: CR, then LF.
    DataCr,
    DataLf,
    /// After the last chunk: trailer lines until an empty one.
    TrailerStart,
    Trailer,
    TrailerLf,
    EndLf,
    Done,
}

/// Decodes a chunked body incrementally: feed it bytes as they arrive, in any split.
#[derive(Debug)]
pub struct ChunkedDecoder {
    state: State,
    size: u64,
    digits: u8,
    remaining: u64,
    extension_bytes: usize,
    trailer_bytes: usize,
    /// The trailer line being read: it must be a field line (`name: value`), as node:http requires.
    line: Vec<u8>,
    /// The trailer lines read, each ending in CRLF.
    trailers: Vec<u8>,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        ChunkedDecoder { state: State::Size, size: 0, digits: 0, remaining: 0, extension_bytes: 0, trailer_bytes: 0, line: Vec::new(), trailers: Vec::new() }
    }
}

impl ChunkedDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The trailer fields that came after the last chunk (`name: value\r\n` lines, as sent; at
    /// most 16 KiB), taken once the body is done; empty when there were none.
    pub fn take_trailers(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.trailers)
    }

    /// Appends the body bytes found in `input` to `out`; returns how many input bytes were used
    /// (fewer than given only once the body has ended: the rest is the next request).
    pub fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, Refusal> {
        let mut i = 0;
        while i < input.len() && self.state != State::Done {
            let b = input[i];
            match self.state {
                State::Data => {
                    let take = (self.remaining.min((input.len() - i) as u64)) as usize;
                    out.extend_from_slice(&input[i..i + take]);
                    self.remaining -= take as u64;
                    i += take;
                    if self.remaining == 0 {
                        self.state = State::DataCr;
                    }
                    continue;
                }
                State::Size => match b {
                    b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                        self.digits += 1;
                        if self.digits > 16 {
                            return Err(Refusal::bad("Chunk size too large"));
                        }
                        self.size = (self.size << 4) | u64::from(hex(b));
                    }
                    b';' if self.digits > 0 => self.state = State::ExtStart,
                    b'\r' if self.digits > 0 => self.state = State::SizeLf,
                    _ => return Err(Refusal::bad("Invalid chunk size")),
                },
                State::ExtStart | State::ExtName | State::ExtValueStart | State::ExtValue | State::ExtQuoted | State::ExtEscape | State::ExtQuotedEnd => {
                    self.extension_bytes += 1;
                    if self.extension_bytes > MAX_EXTENSIONS {
                        return Err(Refusal { status: 413, message: "Chunk extensions too large" });
                    }
                    self.state = extension(self.state, b).ok_or(Refusal::bad("Invalid chunk extension"))?;
                }
                State::SizeLf => {
                    if b != b'\n' {
                        return Err(Refusal::bad("Invalid chunk size line"));
                    }
                    if self.size == 0 {
                        self.state = State::TrailerStart;
                    } else {
                        self.remaining = self.size;
                        self.state = State::Data;
                    }
                    self.size = 0;
                    self.digits = 0;
                }
                State::DataCr => {
                    if b != b'\r' {
                        return Err(Refusal::bad("Chunk data longer than its size"));
                    }
                    self.state = State::DataLf;
                }
                State::DataLf => {
                    if b != b'\n' {
                        return Err(Refusal::bad("Chunk data longer than its size"));
                    }
                    self.state = State::Size;
                }
                State::TrailerStart => {
                    self.state = if b == b'\r' { State::EndLf } else { self.trailer_byte(b)? };
                }
                State::Trailer => {
                    self.state = if b == b'\r' { State::TrailerLf } else { self.trailer_byte(b)? };
                }
                State::TrailerLf => {
                    if b != b'\n' || !is_field_line(&self.line) {
                        return Err(Refusal::bad("Invalid trailer line"));
                    }
                    self.trailers.extend_from_slice(&self.line);
                    self.trailers.extend_from_slice(b"\r\n");
                    self.line.clear();
                    self.state = State::TrailerStart;
                }
                State::EndLf => {
                    if b != b'\n' {
                        return Err(Refusal::bad("Invalid end of chunked body"));
                    }
                    self.state = State::Done;
                }
                State::Done => unreachable!(),
            }
            i += 1;
        }
        Ok(i)
    }

    fn trailer_byte(&mut self, b: u8) -> Result<State, Refusal> {
        if b != b'\t' && (b < 0x20 || b == 0x7f) {
            return Err(Refusal::bad("Invalid trailer line"));
        }
        self.trailer_bytes += 1;
        if self.trailer_bytes > MAX_TRAILERS {
            return Err(Refusal { status: 431, message: "Trailers too large" });
        }
        self.line.push(b);
        Ok(State::Trailer)
    }
}

/// `token ":" value`, no space before the colon, and not a framing field (RFC 9110 6.5.1: a
/// trailer can't change how the message was delimited; node:http refuses these too).
fn is_field_line(line: &[u8]) -> bool {
    match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let name = &line[..colon];
            crate::is_token(name) && !name.eq_ignore_ascii_case(b"transfer-encoding") && !name.eq_ignore_ascii_case(b"content-length")
        }
        None => false,
    }
}

/// The next state inside chunk extensions, or None for a byte that can't be there.
fn extension(state: State, b: u8) -> Option<State> {
    let token = crate::is_token(&[b]);
    Some(match (state, b) {
        (State::ExtStart, b'=') => State::ExtValueStart,
        (State::ExtStart, _) if token => State::ExtName,
        (State::ExtName, _) if token => State::ExtName,
        (State::ExtName, b'=') => State::ExtValueStart,
        (State::ExtValueStart, b'"') => State::ExtQuoted,
        (State::ExtValueStart | State::ExtValue, _) if token => State::ExtValue,
        (State::ExtQuoted, b'"') => State::ExtQuotedEnd,
        (State::ExtQuoted, b'\\') => State::ExtEscape,
        (State::ExtQuoted, b'\t' | 0x20..=0x7e) => State::ExtQuoted,
        (State::ExtEscape, b'\t' | 0x20..=0x7e) => State::ExtQuoted,
        (State::ExtName | State::ExtValueStart | State::ExtValue | State::ExtQuotedEnd, b';') => State::ExtStart,
        (State::ExtName | State::ExtValueStart | State::ExtValue | State::ExtQuotedEnd, b'\r') => State::SizeLf,
        _ => return None,
    })
}

fn hex(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode_all(input: &[u8]) -> Result<(Vec<u8>, usize, bool), Refusal> {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        let used = d.decode(input, &mut out)?;
        Ok((out, used, d.is_done()))
    }

    #[test]
    fn decodes_chunks_extensions_and_trailers() {
        let (out, used, done) = decode_all(b"5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nX-T: 1\r\n\r\nGET /").unwrap();
        assert_eq!(out, b"hello world");
        assert!(done);
        let mut d = ChunkedDecoder::new();
        d.decode(b"3\r\nabc\r\n0\r\nGrpc-Status: 0\r\nx-sum:abc\r\n\r\n", &mut Vec::new()).unwrap();
        assert_eq!(d.take_trailers(), b"Grpc-Status: 0\r\nx-sum:abc\r\n");
        assert_eq!(used, b"5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nX-T: 1\r\n\r\n".len());
    }

    #[test]
    fn refuses_malformed_framing() {
        for bad in [
            &b"5 \r\nhello\r\n0\r\n\r\n"[..],
            b"0\r\n5\r\n\r\n",
            b"0\r\nX : 1\r\n\r\n",
            b"0\r\nContent-Length: 5\r\n\r\n",
            b"0\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"-5\r\n",
            b"0x5\r\n",
            b"5\nhello",
            b"5\r\nhelloXX\r\n",
            b"\r\n",
            b"5\r\nhello\r\n0\r\n\r\r",
        ] {
            assert!(decode_all(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert!(decode_all(b"11111111111111111\r\n").is_err(), "more than 16 hex digits");
    }

    #[test]
    fn extensions_as_node_reads_them() {
        for good in [";a", ";a=", ";a=b", ";a=\"b c\"", ";a=b;c", ";a;b=c", ";=b", ";a=\"b\\\"c\""] {
            assert!(decode_all(format!("1{good}\r\na\r\n0\r\n\r\n").as_bytes()).is_ok(), "{good:?}");
        }
        for bad in [";", "; a=b", ";a =b", ";a= b", ";a=b c", ";a\t", ";a=\"x", ";a;"] {
            assert!(decode_all(format!("1{bad}\r\na\r\n0\r\n\r\n").as_bytes()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bounds_extensions() {
        let long = format!("1;{}\r\n", "e".repeat(MAX_EXTENSIONS + 1));
        assert_eq!(decode_all(long.as_bytes()).unwrap_err().status, 413);
    }

    fn encode(chunks: &[Vec<u8>]) -> Vec<u8> {
        let mut raw = Vec::new();
        for c in chunks.iter().filter(|c| !c.is_empty()) {
            raw.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
            raw.extend_from_slice(c);
            raw.extend_from_slice(b"\r\n");
        }
        raw.extend_from_slice(b"0\r\n\r\n");
        raw
    }

    proptest! {
        /// Any body, in any chunking, fed in any split, decodes to itself and stops at its end.
        #[test]
        fn any_split_gives_the_same_body(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..8), cut in 0usize..400) {
            let raw = encode(&chunks);
            let mut with_next = raw.clone();
            with_next.extend_from_slice(b"GET / HTTP/1.1\r\n");
            let cut = cut.min(with_next.len());
            let mut d = ChunkedDecoder::new();
            let mut out = Vec::new();
            let first = d.decode(&with_next[..cut], &mut out).unwrap();
            let second = if d.is_done() { 0 } else { d.decode(&with_next[first..], &mut out).unwrap() };
            prop_assert!(d.is_done());
            prop_assert_eq!(first + second, raw.len());
            prop_assert_eq!(out, chunks.concat());
        }

        /// Arbitrary bytes never panic, and never yield more body than they hold.
        #[test]
        fn arbitrary_bytes_are_safe(input in prop::collection::vec(any::<u8>(), 0..200)) {
            let mut d = ChunkedDecoder::new();
            let mut out = Vec::new();
            if let Ok(used) = d.decode(&input, &mut out) {
                prop_assert!(used <= input.len());
                prop_assert!(out.len() <= input.len());
            }
        }
    }
}
