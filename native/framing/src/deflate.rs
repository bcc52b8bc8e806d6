//! permessage-deflate (RFC 7692): the offer a client makes in `Sec-WebSocket-Extensions`, the
//! answer the server gives, and each direction's compression state.
//!
//! Negotiation follows `ws` (the node engine's library) with its default options, so both engines
//! answer every offer alike: the first `permessage-deflate` offer is accepted with the parameters
//! it names; an offer with an unknown parameter, a repeated one or a bad value, or a header that
//! does not parse, fails the handshake with 400 (ws does that rather than declining).
//!
//! Incoming messages are inflated into at most `max_payload` bytes: a deflate bomb fails at the
//! limit (1009), it never allocates past it.

use flate2::{Decompress, FlushDecompress, Status};
use miniz_oxide::deflate::core::{compress_to_output, CompressorOxide, TDEFLFlush, TDEFLStatus};
use miniz_oxide::DataFormat;

/// The parameters agreed for one connection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Agreed {
    pub server_no_context_takeover: bool,
    pub client_no_context_takeover: bool,
    /// The most window bits the server may compress with (15 when not limited).
    pub server_max_window_bits: Option<u8>,
    /// The client's window bits, when it named them (echoed back).
    pub client_max_window_bits: Option<u8>,
}

impl Agreed {
    /// The `Sec-WebSocket-Extensions` value of the answer.
    pub fn header(&self) -> String {
        let mut out = String::from("permessage-deflate");
        if self.server_no_context_takeover {
            out.push_str("; server_no_context_takeover");
        }
        if self.client_no_context_takeover {
            out.push_str("; client_no_context_takeover");
        }
        if let Some(bits) = self.server_max_window_bits {
            out.push_str(&format!("; server_max_window_bits={bits}"));
        }
        if let Some(bits) = self.client_max_window_bits {
            out.push_str(&format!("; client_max_window_bits={bits}"));
        }
        out
    }

    /// Whether the server may compress: the compressor always uses a 32 KiB window (15 bits), so
    /// a client that limited the server's window gets its messages uncompressed (RFC 7692 lets
    /// any message go uncompressed).
    pub fn server_compresses(&self) -> bool {
        self.server_max_window_bits.is_none_or(|bits| bits == 15)
    }
}

/// The offer's verdict: `Ok(None)` when no permessage-deflate was offered, `Err` when the header
/// is malformed or an offer is invalid (the handshake fails with 400).
pub fn negotiate(header: &[u8]) -> Result<Option<Agreed>, &'static str> {
    let header = std::str::from_utf8(header).map_err(|_| "not ASCII")?;
    let offers = parse(header)?;
    let mut accepted = None;
    for (name, params) in offers {
        if name != "permessage-deflate" {
            continue;
        }
        // Every offer of it is checked, as ws checks them all, before the first is taken.
        let agreed = offer(&params)?;
        accepted.get_or_insert(agreed);
    }
    Ok(accepted)
}

/// An extension's parameters: names and values (`None` for a flag).
type Params = Vec<(String, Option<String>)>;

/// One permessage-deflate offer's parameters, checked.
fn offer(params: &Params) -> Result<Agreed, &'static str> {
    let mut agreed = Agreed::default();
    let mut seen: Vec<&str> = Vec::new();
    for (key, value) in params {
        if seen.contains(&key.as_str()) {
            return Err("a parameter given twice");
        }
        seen.push(key);
        let bits = |value: &Option<String>| -> Result<u8, &'static str> {
            match value.as_deref().map(str::parse::<u8>) {
                Some(Ok(bits @ 8..=15)) => Ok(bits),
                _ => Err("window bits must be 8 to 15"),
            }
        };
        match key.as_str() {
            "server_no_context_takeover" | "client_no_context_takeover" if value.is_some() => return Err("a flag parameter with a value"),
            "server_no_context_takeover" => agreed.server_no_context_takeover = true,
            "client_no_context_takeover" => agreed.client_no_context_takeover = true,
            "server_max_window_bits" => agreed.server_max_window_bits = Some(bits(value)?),
            // Without a value the client only says it could take a limit: none is set.
            "client_max_window_bits" if value.is_none() => {}
            "client_max_window_bits" => agreed.client_max_window_bits = Some(bits(value)?),
            _ => return Err("an unknown parameter"),
        }
    }
    Ok(agreed)
}

/// `Sec-WebSocket-Extensions` (RFC 6455 §9.1): extensions separated by commas, each a token
/// followed by `; name[=value]` parameters, a value a token or a quoted string.
fn parse(header: &str) -> Result<Vec<(String, Params)>, &'static str> {
    let is_token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    let mut out = Vec::new();
    for extension in split_outside_quotes(header, ',') {
        let mut parts = split_outside_quotes(extension, ';').into_iter();
        let name = parts.next().unwrap_or("").trim_matches([' ', '\t']);
        if !is_token(name) {
            return Err("an extension name is not a token");
        }
        let mut params = Vec::new();
        for param in parts {
            let (key, value) = match param.split_once('=') {
                Some((key, value)) => (key, Some(value)),
                None => (param, None),
            };
            let key = key.trim_matches([' ', '\t']);
            if !is_token(key) {
                return Err("a parameter name is not a token");
            }
            let value = match value.map(|v| v.trim_matches([' ', '\t'])) {
                None => None,
                Some(v) if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') && is_token(&v[1..v.len() - 1]) => Some(v[1..v.len() - 1].to_string()),
                Some(v) if is_token(v) => Some(v.to_string()),
                Some(_) => return Err("a parameter value is not a token"),
            };
            params.push((key.to_string(), value));
        }
        out.push((name.to_string(), params));
    }
    Ok(out)
}

fn split_outside_quotes(s: &str, by: char) -> Vec<&str> {
    let (mut parts, mut start, mut quoted) = (Vec::new(), 0, false);
    for (i, c) in s.char_indices() {
        if c == '"' {
            quoted = !quoted;
        } else if c == by && !quoted {
            parts.push(&s[start..i]);
            start = i + 1;
        }
    }
    parts.push(&s[start..]);
    parts
}

/// The four bytes a sync flush ends with, left off each message (RFC 7692 §7.2.1).
const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// What a compressed message inflates to.
#[derive(Debug, PartialEq, Eq)]
pub enum Inflated {
    Message(Vec<u8>),
    /// It would pass the limit (the output never grew past the limit + 1).
    TooBig,
    /// It is not valid deflate data.
    Invalid,
}

/// Inflates a client's compressed messages.
pub struct Inflater {
    state: Decompress,
    /// Whether the window is dropped after each message (client_no_context_takeover).
    reset_each: bool,
}

impl std::fmt::Debug for Inflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inflater").field("reset_each", &self.reset_each).finish_non_exhaustive()
    }
}

impl Inflater {
    pub fn new(reset_each: bool) -> Self {
        Inflater { state: Decompress::new(false), reset_each }
    }

    /// The message `compressed` inflated to at most `limit` bytes.
    pub fn inflate(&mut self, compressed: &[u8], limit: usize) -> Inflated {
        let mut out: Vec<u8> = Vec::with_capacity(compressed.len().saturating_mul(2).max(64).min(limit.saturating_add(1)));
        let mut ended = false;
        'input: for part in [compressed, &TAIL[..]] {
            let mut rest = part;
            loop {
                if out.len() == out.capacity() {
                    // Grows by doubling, never past one byte over the limit (that byte tells it was passed).
                    out.reserve_exact(out.len().max(64).min(limit + 1 - out.len()));
                }
                let (before, written) = (self.state.total_in(), out.len());
                let status = self.state.decompress_vec(rest, &mut out, FlushDecompress::Sync);
                let used = (self.state.total_in() - before) as usize;
                rest = &rest[used..];
                if out.len() > limit {
                    self.state.reset(false);
                    return Inflated::TooBig;
                }
                match status {
                    Ok(Status::StreamEnd) => {
                        // A final block: the next message starts a new stream.
                        ended = true;
                        break 'input;
                    }
                    Ok(_) if rest.is_empty() && out.len() < out.capacity() => break,
                    // Input and room left, yet nothing moved: the data is not deflate.
                    Ok(_) if used == 0 && out.len() == written => return Inflated::Invalid,
                    Ok(_) => {}
                    Err(_) => return Inflated::Invalid,
                }
            }
        }
        if self.reset_each || ended {
            self.state.reset(false);
        }
        Inflated::Message(out)
    }
}

/// Compresses a server's outgoing messages.
pub struct Deflater {
    state: Box<CompressorOxide>,
    /// Whether the window is dropped after each message (server_no_context_takeover).
    reset_each: bool,
}

impl Deflater {
    pub fn new(reset_each: bool) -> Self {
        let mut state = Box::<CompressorOxide>::default();
        // zlib's default level (6), as ws uses it.
        state.set_format_and_level(DataFormat::Raw, 6);
        Deflater { state, reset_each }
    }

    /// `data` as one message's compressed payload (the sync flush's tail left off).
    pub fn deflate(&mut self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len() / 2 + 64);
        // Through a callback the compressor hands over each block as it ends, so one call takes
        // all of `data` and the sync flush and keeps nothing back. Its fill-a-buffer interface (the
        // one flate2 wraps) does not say when a flush is done: when a block ends inside a call and
        // does not fit the room left, the next call only hands over that block's rest and returns,
        // all input taken and room to spare, with the message's last bytes (up to 258) and the
        // flush still inside. A loop that stopped there sent such messages short.
        let (status, used) = compress_to_output(&mut self.state, data, TDEFLFlush::Sync, |block| {
            out.extend_from_slice(block);
            true
        });
        debug_assert!(status == TDEFLStatus::Okay && used == data.len(), "{status:?} {used}");
        debug_assert!(out.ends_with(&TAIL));
        if out.ends_with(&TAIL) {
            out.truncate(out.len() - TAIL.len());
        }
        if self.reset_each {
            self.state.reset();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_bytes_inflate_within_the_limit_or_are_refused(input in proptest::collection::vec(any::<u8>(), 0..512), limit in 1usize..4096) {
            let mut inflater = Inflater::new(false);
            if let Inflated::Message(out) = inflater.inflate(&input, limit) {
                prop_assert!(out.len() <= limit);
            }
        }

        #[test]
        fn any_header_negotiates_or_is_refused_without_panicking(header in "[ -~]{0,80}") {
            let _ = negotiate(header.as_bytes());
        }
    }

    proptest! {
        // Thousands of 64 KiB binary messages cut from files shaped like a JPEG (a compressible
        // header, then entropy-coded data: near-random bytes, a few values more common), with
        // context takeover (64 files of 32 slices: 2,048 messages): about one slice in two hundred
        // ends a deflate block in its last bytes, the case a compressor that holds output back got
        // wrong, so a run that misses it is about one in 30,000.
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn slices_of_real_file_like_data_round_trip(seed in any::<u64>(), header in 0usize..20_000, common_every in 2u64..16) {
            let file = jpeg_like(seed, header, common_every, 32 << 16);
            let (mut deflater, mut inflater) = (Deflater::new(false), Inflater::new(false));
            for (n, message) in file.chunks(1 << 16).enumerate() {
                let compressed = deflater.deflate(message);
                match inflater.inflate(&compressed, 1 << 20) {
                    Inflated::Message(out) => prop_assert!(out == message, "slice {n}: {} bytes back of {}", out.len(), message.len()),
                    other => prop_assert!(false, "slice {n}: {other:?}"),
                }
            }
        }
    }

    fn agreed(header: &str) -> Result<Option<Agreed>, &'static str> {
        negotiate(header.as_bytes())
    }

    #[test]
    fn offers_and_answers_as_ws_gives_them() {
        assert_eq!(agreed("x-webkit-deflate-frame").unwrap(), None);
        assert_eq!(agreed("permessage-deflate; client_max_window_bits").unwrap().unwrap().header(), "permessage-deflate");
        let all =
            agreed("permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=\"12\"")
                .unwrap()
                .unwrap();
        assert_eq!(
            all.header(),
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=12"
        );
        assert!(!all.server_compresses());
        // The first offer is taken.
        assert_eq!(agreed("permessage-deflate; server_max_window_bits=9, permessage-deflate").unwrap().unwrap().server_max_window_bits, Some(9));
        for bad in [
            "permessage-deflate; server_max_window_bits=7",
            "permessage-deflate; server_max_window_bits",
            "permessage-deflate; client_max_window_bits=16",
            "permessage-deflate; server_no_context_takeover=1",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "permessage-deflate; level=9",
            "permessage-deflate, permessage-deflate; bogus",
            "permessage-deflate;; x",
            "permessage deflate",
            ", permessage-deflate",
        ] {
            assert!(agreed(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn round_trips_with_and_without_context_takeover() {
        for reset in [false, true] {
            let (mut deflater, mut inflater) = (Deflater::new(reset), Inflater::new(reset));
            for message in [&b"hello hello hello hello"[..], &[7u8; 100_000], b"", b"hello hello hello hello"] {
                let compressed = deflater.deflate(message);
                assert_eq!(inflater.inflate(&compressed, 1 << 20), Inflated::Message(message.to_vec()));
            }
        }
    }

    /// Deterministic bytes (xorshift64).
    fn noise(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// `len` bytes of images one after another: each a compressible header of `header` bytes, then
    /// entropy-coded data in which every `common_every`th byte is a zero (JPEG's byte stuffing).
    fn jpeg_like(seed: u64, header: usize, common_every: u64, len: usize) -> Vec<u8> {
        let mut next = noise(seed | 1);
        let mut file = Vec::with_capacity(len + 400_000);
        while file.len() < len {
            for k in 0..header {
                file.push((k % 64) as u8 ^ u8::from(next().is_multiple_of(4)));
            }
            for _ in 0..next() % 300_000 + 1000 {
                let x = next();
                file.push(if x.is_multiple_of(common_every) { 0 } else { (x >> 8) as u8 });
            }
        }
        file.truncate(len);
        file
    }

    #[test]
    fn a_message_whose_last_block_ends_in_its_last_bytes_comes_back_whole() {
        // 7,200 bytes of a run then noise: the compressor ends a block within the last 258 bytes
        // of the message, and the block does not fit the room left in the output. Compression
        // that stopped once all input was taken and room was left sent 65,279 of these 65,536 bytes.
        let mut next = noise(0x9e37_79b9_7f4a_7c15);
        let mut message = vec![b'a'; 7200];
        message.extend((7200..1 << 16).map(|_| next() as u8));
        for reset in [false, true] {
            let (mut deflater, mut inflater) = (Deflater::new(reset), Inflater::new(reset));
            for _ in 0..3 {
                let compressed = deflater.deflate(&message);
                assert_eq!(inflater.inflate(&compressed, 1 << 20), Inflated::Message(message.clone()));
            }
        }
    }

    #[test]
    fn the_limit_is_the_inflated_size_and_is_never_passed() {
        let bomb = Deflater::new(true).deflate(&vec![0u8; 50 << 20]);
        assert!(bomb.len() < 100_000, "{}", bomb.len());
        let mut inflater = Inflater::new(false);
        assert_eq!(inflater.inflate(&bomb, 1 << 20), Inflated::TooBig);
        let exact = Deflater::new(true).deflate(&[1u8; 1000]);
        assert_eq!(Inflater::new(false).inflate(&exact, 1000), Inflated::Message(vec![1u8; 1000]));
        assert_eq!(Inflater::new(false).inflate(&exact, 999), Inflated::TooBig);
        // A limit smaller than the first allocation would be.
        assert_eq!(Inflater::new(false).inflate(&exact, 1), Inflated::TooBig);
        assert_eq!(Inflater::new(false).inflate(&Deflater::new(true).deflate(b"x"), 1), Inflated::Message(b"x".to_vec()));
    }

    #[test]
    fn data_that_is_not_deflate_is_refused() {
        assert_eq!(Inflater::new(false).inflate(&[0xff, 0xff, 0xff, 0xff, 0x01], 1000), Inflated::Invalid);
    }
}
