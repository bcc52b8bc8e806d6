//! WebSocket framing (RFC 6455 §5), for the server side: client frames in, server frames out.
//!
//! `Decoder` turns a connection's bytes into messages and control frames, and refuses what the
//! RFC says a server must fail the connection for, with the close code to send: unmasked
//! frames, reserved bits or opcodes, fragmented or oversized control frames, a continuation
//! with nothing to continue (or a new message in the middle of one), a 64-bit length with its
//! top bit set (1002); text that is not UTF-8, code points split across fragments included,
//! and close reasons that are not (1007); a frame or message past the payload limit (1009); a
//! message in more fragments than the limit (1008, as `ws` closes it).
//! A frame's length is checked against the limit before any of its payload is buffered, so a
//! client can make the decoder hold at most the limit.
//!
//! With permessage-deflate negotiated (`with_inflater`), RSV1 on a message's first frame marks
//! it compressed; it is inflated when whole, to at most the limit (past it: 1009). RSV1 on a
//! control frame or a continuation, or without the extension, is a protocol error (1002).

use crate::deflate::{Inflated, Inflater};
use sha1::{Digest, Sha1};

pub const OP_CONTINUATION: u8 = 0x0;
pub const OP_TEXT: u8 = 0x1;
pub const OP_BINARY: u8 = 0x2;
pub const OP_CLOSE: u8 = 0x8;
pub const OP_PING: u8 = 0x9;
pub const OP_PONG: u8 = 0xA;

/// Close codes the server sends when it fails a connection.
pub const PROTOCOL_ERROR: u16 = 1002;
pub const INVALID_DATA: u16 = 1007;
pub const POLICY_VIOLATION: u16 = 1008;
pub const TOO_BIG: u16 = 1009;
/// What a close handler sees for a Close frame without a code.
pub const NO_STATUS: u16 = 1005;

/// What a client sent, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A text message (checked to be UTF-8).
    Text(Vec<u8>),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    /// A Close frame: its code (`NO_STATUS` when it had none) and reason (checked UTF-8).
    Close(u16, Vec<u8>),
}

/// Why the connection must fail: the close code to send, and what was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    pub code: u16,
    pub message: &'static str,
}

const fn fail(code: u16, message: &'static str) -> Failure {
    Failure { code, message }
}

/// A connection's decoding state: the message being assembled from fragments, if any.
#[derive(Debug)]
pub struct Decoder {
    max_payload: usize,
    /// The most frames a message may come in (0: no limit).
    max_fragments: usize,
    /// Frames of the message being assembled, so far.
    fragments: usize,
    /// The fragmented message so far: whether it is text, and its bytes.
    partial: Option<(bool, Vec<u8>)>,
    /// Whether the message being assembled is compressed.
    compressed: bool,
    /// Present when permessage-deflate was negotiated.
    inflater: Option<Inflater>,
}

impl Decoder {
    pub fn new(max_payload: usize, max_fragments: usize) -> Self {
        Decoder { max_payload, max_fragments, fragments: 0, partial: None, compressed: false, inflater: None }
    }

    /// A decoder for a connection with permessage-deflate.
    pub fn with_inflater(max_payload: usize, max_fragments: usize, inflater: Inflater) -> Self {
        Decoder { inflater: Some(inflater), ..Decoder::new(max_payload, max_fragments) }
    }

    /// Decodes the next event from `input` (its masked bytes are unmasked in place). Returns the
    /// bytes used and the event (`None` when a frame needs more input, or when a fragment was
    /// taken into the message it belongs to: call again while bytes are used).
    pub fn decode(&mut self, input: &mut [u8]) -> Result<(usize, Option<Event>), Failure> {
        if input.len() < 2 {
            return Ok((0, None));
        }
        let (first, second) = (input[0], input[1]);
        let fin = first & 0x80 != 0;
        let opcode = first & 0x0F;
        let rsv1 = first & 0x40 != 0;
        if first & 0x30 != 0 || (rsv1 && self.inflater.is_none()) {
            return Err(fail(PROTOCOL_ERROR, "reserved bits set without an extension that uses them"));
        }
        if rsv1 && !matches!(opcode, OP_TEXT | OP_BINARY) {
            return Err(fail(PROTOCOL_ERROR, "RSV1 (compressed) is only for a message's first frame"));
        }
        if second & 0x80 == 0 {
            return Err(fail(PROTOCOL_ERROR, "a client frame must be masked"));
        }
        let is_control = opcode & 0x8 != 0;
        match opcode {
            OP_CONTINUATION | OP_TEXT | OP_BINARY | OP_CLOSE | OP_PING | OP_PONG => {}
            _ => return Err(fail(PROTOCOL_ERROR, "reserved opcode")),
        }
        let (length, header) = match second & 0x7F {
            126 => {
                if input.len() < 4 {
                    return Ok((0, None));
                }
                (u64::from(u16::from_be_bytes([input[2], input[3]])), 4)
            }
            127 => {
                if input.len() < 10 {
                    return Ok((0, None));
                }
                let length = u64::from_be_bytes(input[2..10].try_into().unwrap());
                if length >> 63 != 0 {
                    // The RFC forbids it; past any limit, it is refused as too big, as `ws` refuses it.
                    return Err(fail(TOO_BIG, "a 64-bit payload length must have its top bit clear"));
                }
                (length, 10)
            }
            n => (u64::from(n), 2),
        };
        if is_control {
            if !fin {
                return Err(fail(PROTOCOL_ERROR, "a control frame must not be fragmented"));
            }
            if length > 125 {
                return Err(fail(PROTOCOL_ERROR, "a control frame's payload is at most 125 bytes"));
            }
        } else {
            match (opcode, &self.partial) {
                (OP_CONTINUATION, None) => return Err(fail(PROTOCOL_ERROR, "a continuation frame with no message to continue")),
                (OP_TEXT | OP_BINARY, Some(_)) => return Err(fail(PROTOCOL_ERROR, "a new message began before the fragmented one ended")),
                _ => {}
            }
            let so_far = self.partial.as_ref().map_or(0, |(_, bytes)| bytes.len() as u64);
            if length.saturating_add(so_far) > self.max_payload as u64 {
                return Err(fail(TOO_BIG, "the message is larger than maxPayload"));
            }
        }
        let total = header + 4 + length as usize;
        if input.len() < total {
            return Ok((0, None));
        }
        if !is_control {
            // Counted once the frame is whole, as ws counts them.
            self.fragments += 1;
            if self.max_fragments > 0 && self.fragments > self.max_fragments {
                return Err(fail(POLICY_VIOLATION, "the message is in more fragments than maxFragments"));
            }
            if fin {
                self.fragments = 0;
            }
        }
        let mask: [u8; 4] = input[header..header + 4].try_into().unwrap();
        let payload = &mut input[header + 4..total];
        unmask(payload, mask);
        let payload = &*payload;
        let event = match opcode {
            OP_PING => Some(Event::Ping(payload.to_vec())),
            OP_PONG => Some(Event::Pong(payload.to_vec())),
            OP_CLOSE => Some(close_event(payload)?),
            OP_CONTINUATION => {
                let (text, bytes) = self.partial.as_mut().unwrap();
                bytes.extend_from_slice(payload);
                let text = *text;
                if fin {
                    let (_, bytes) = self.partial.take().unwrap();
                    Some(self.message(text, bytes)?)
                } else {
                    None
                }
            }
            _ => {
                let text = opcode == OP_TEXT;
                self.compressed = rsv1;
                if fin {
                    Some(self.message(text, payload.to_vec())?)
                } else {
                    self.partial = Some((text, payload.to_vec()));
                    None
                }
            }
        };
        Ok((total, event))
    }

    /// A whole message, inflated if it came compressed.
    fn message(&mut self, text: bool, bytes: Vec<u8>) -> Result<Event, Failure> {
        if !self.compressed {
            return message(text, bytes);
        }
        match self.inflater.as_mut().unwrap().inflate(&bytes, self.max_payload) {
            Inflated::Message(inflated) => message(text, inflated),
            Inflated::Invalid => Err(fail(INVALID_DATA, "a compressed message that is not valid deflate data")),
            Inflated::TooBig => Err(fail(TOO_BIG, "the message inflates past maxPayload")),
        }
    }
}

/// A whole message. Text is checked when it is whole, so a code point split across fragments is
/// judged whole; an invalid sequence in an early fragment fails the connection when the message
/// ends (as `ws` does; Autobahn accepts failing then or at once).
fn message(text: bool, bytes: Vec<u8>) -> Result<Event, Failure> {
    if !text {
        return Ok(Event::Binary(bytes));
    }
    if std::str::from_utf8(&bytes).is_err() {
        return Err(fail(INVALID_DATA, "a text message must be UTF-8"));
    }
    Ok(Event::Text(bytes))
}

/// A Close frame's payload: nothing, or a valid code and a UTF-8 reason (RFC 6455 §5.5.1, §7.4).
fn close_event(payload: &[u8]) -> Result<Event, Failure> {
    match payload.len() {
        0 => Ok(Event::Close(NO_STATUS, Vec::new())),
        1 => Err(fail(PROTOCOL_ERROR, "a close payload of one byte (a code is two)")),
        _ => {
            let code = u16::from_be_bytes([payload[0], payload[1]]);
            if !is_valid_close_code(code) {
                return Err(fail(PROTOCOL_ERROR, "an invalid close code"));
            }
            let reason = &payload[2..];
            if std::str::from_utf8(reason).is_err() {
                return Err(fail(INVALID_DATA, "a close reason must be UTF-8"));
            }
            Ok(Event::Close(code, reason.to_vec()))
        }
    }
}

/// Codes a peer may send in a Close frame: 1000-1003, 1007-1014 and 3000-4999 (1004-1006 and
/// 1015 are reserved, never sent; 1016-2999 are for future RFCs).
pub fn is_valid_close_code(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

/// XORs `payload` with the mask (RFC 6455 §5.3), eight bytes at a time where it can.
pub fn unmask(payload: &mut [u8], mask: [u8; 4]) {
    let wide = u64::from_ne_bytes([mask[0], mask[1], mask[2], mask[3], mask[0], mask[1], mask[2], mask[3]]);
    let mut chunks = payload.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let word = u64::from_ne_bytes((&*chunk).try_into().unwrap()) ^ wide;
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    for (i, byte) in chunks.into_remainder().iter_mut().enumerate() {
        *byte ^= mask[i % 4];
    }
}

/// Appends a server frame (FIN set, unmasked) with `payload` to `out`.
pub fn write_frame(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) {
    write_frame_head(out, opcode, payload.len());
    out.extend_from_slice(payload);
}

/// Appends a server frame with RSV1 set: a message compressed with permessage-deflate.
pub fn write_compressed_frame(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) {
    let at = out.len();
    write_frame(out, opcode, payload);
    out[at] |= 0x40;
}

/// Appends the head of a server frame of `length` bytes; its payload follows.
pub fn write_frame_head(out: &mut Vec<u8>, opcode: u8, length: usize) {
    out.push(0x80 | opcode);
    if length < 126 {
        out.push(length as u8);
    } else if length <= 0xFFFF {
        out.push(126);
        out.extend_from_slice(&(length as u16).to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&(length as u64).to_be_bytes());
    }
}

/// Appends a Close frame with `code` (none when `NO_STATUS`) and `reason` (cut to fit 125 bytes).
pub fn write_close(out: &mut Vec<u8>, code: u16, reason: &[u8]) {
    if code == NO_STATUS {
        return write_frame(out, OP_CLOSE, &[]);
    }
    let mut payload = code.to_be_bytes().to_vec();
    payload.extend_from_slice(&reason[..reason.len().min(123)]);
    write_frame(out, OP_CLOSE, &payload);
}

/// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key` (RFC 6455 §4.2.2).
pub fn accept_key(key: &[u8]) -> String {
    let mut sha = Sha1::new();
    sha.update(key);
    sha.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    base64(&sha.finalize())
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16) | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8) | u32::from(*chunk.get(2).unwrap_or(&0));
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            out.push(if i <= chunk.len() { ALPHABET[(n >> shift) as usize & 63] as char } else { '=' });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A client frame: masked with `mask`.
    fn client_frame(fin: bool, opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
        let mut out = Vec::new();
        write_frame_head(&mut out, opcode, payload.len());
        if !fin {
            out[0] &= 0x7F;
        }
        out[1] |= 0x80;
        out.extend_from_slice(&mask);
        let mut masked = payload.to_vec();
        unmask(&mut masked, mask);
        out.extend_from_slice(&masked);
        out
    }

    /// Decodes everything in `input`: the events, then the failure if one came.
    fn decode_all(decoder: &mut Decoder, input: &[u8]) -> (Vec<Event>, Option<Failure>) {
        let mut buf = input.to_vec();
        let mut at = 0;
        let mut events = Vec::new();
        loop {
            match decoder.decode(&mut buf[at..]) {
                Ok((0, _)) => return (events, None),
                Ok((n, event)) => {
                    at += n;
                    events.extend(event);
                }
                Err(failure) => return (events, Some(failure)),
            }
        }
    }

    const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

    #[test]
    fn accept_key_of_the_rfc_example() {
        assert_eq!(accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }

    #[test]
    fn lengths_of_7_16_and_64_bits() {
        for size in [0, 125, 126, 65535, 65536, 70000] {
            let payload = vec![b'a'; size];
            let (events, failure) = decode_all(&mut Decoder::new(1 << 20, 0), &client_frame(true, OP_BINARY, &payload, MASK));
            assert_eq!((events, failure), (vec![Event::Binary(payload)], None), "size {size}");
        }
    }

    #[test]
    fn unmasked_frames_fail_with_1002() {
        let mut frame = Vec::new();
        write_frame(&mut frame, OP_TEXT, b"hi");
        assert_eq!(decode_all(&mut Decoder::new(100, 0), &frame).1.unwrap().code, PROTOCOL_ERROR);
    }

    #[test]
    fn fragments_with_control_frames_between_them() {
        let mut input = client_frame(false, OP_TEXT, b"Hel", MASK);
        input.extend(client_frame(true, OP_PING, b"p", MASK));
        input.extend(client_frame(false, OP_CONTINUATION, b"lo, ", MASK));
        input.extend(client_frame(true, OP_CONTINUATION, b"world", MASK));
        let (events, failure) = decode_all(&mut Decoder::new(100, 0), &input);
        assert_eq!(failure, None);
        assert_eq!(events, vec![Event::Ping(b"p".to_vec()), Event::Text(b"Hello, world".to_vec())]);
    }

    #[test]
    fn a_code_point_split_across_fragments_is_text() {
        let euro = "€".as_bytes();
        let mut input = client_frame(false, OP_TEXT, &euro[..1], MASK);
        input.extend(client_frame(true, OP_CONTINUATION, &euro[1..], MASK));
        assert_eq!(decode_all(&mut Decoder::new(100, 0), &input), (vec![Event::Text(euro.to_vec())], None));
    }

    #[test]
    fn refusals_and_their_codes() {
        let cases: Vec<(Vec<u8>, u16)> = vec![
            (client_frame(true, OP_TEXT, &[0xff, 0xfe], MASK), INVALID_DATA),
            (client_frame(true, OP_CONTINUATION, b"x", MASK), PROTOCOL_ERROR),
            (client_frame(false, OP_PING, b"x", MASK), PROTOCOL_ERROR),
            (client_frame(true, OP_PING, &[0; 126], MASK), PROTOCOL_ERROR),
            (client_frame(true, 0x3, b"", MASK), PROTOCOL_ERROR),
            (client_frame(true, 0xB, b"", MASK), PROTOCOL_ERROR),
            (client_frame(true, OP_CLOSE, &[0x03], MASK), PROTOCOL_ERROR),
            (client_frame(true, OP_CLOSE, &1005u16.to_be_bytes(), MASK), PROTOCOL_ERROR),
            (client_frame(true, OP_CLOSE, &999u16.to_be_bytes(), MASK), PROTOCOL_ERROR),
            (client_frame(true, OP_CLOSE, &[0x03, 0xe8, 0xff], MASK), INVALID_DATA),
            (client_frame(true, OP_BINARY, &[0; 101], MASK), TOO_BIG),
            ([client_frame(false, OP_TEXT, b"a", MASK), client_frame(true, OP_TEXT, b"b", MASK)].concat(), PROTOCOL_ERROR),
            ([client_frame(false, OP_BINARY, &[0; 60], MASK), client_frame(true, OP_CONTINUATION, &[0; 60], MASK)].concat(), TOO_BIG),
            (vec![0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], TOO_BIG),
            (vec![0xC2, 0x80, 0, 0, 0, 0], PROTOCOL_ERROR),
        ];
        for (input, code) in cases {
            assert_eq!(decode_all(&mut Decoder::new(100, 0), &input).1.map(|f| f.code), Some(code), "{input:02x?}");
        }
    }

    #[test]
    fn an_invalid_sequence_fails_when_its_message_ends() {
        let mut decoder = Decoder::new(100, 0);
        let mut input = client_frame(false, OP_TEXT, &[b'a', 0xC0, 0x80], MASK);
        assert_eq!(decode_all(&mut decoder, &input), (vec![], None));
        input.extend(client_frame(true, OP_CONTINUATION, b"b", MASK));
        assert_eq!(decode_all(&mut Decoder::new(100, 0), &input).1.map(|f| f.code), Some(INVALID_DATA));
        // A truncated code point at the message's end is invalid; mid-message it waits.
        let mut input = client_frame(false, OP_TEXT, &[0xE2, 0x82], MASK);
        input.extend(client_frame(true, OP_CONTINUATION, &[], MASK));
        assert_eq!(decode_all(&mut Decoder::new(100, 0), &input).1.map(|f| f.code), Some(INVALID_DATA));
    }

    #[test]
    fn close_frames() {
        let (events, _) = decode_all(&mut Decoder::new(100, 0), &client_frame(true, OP_CLOSE, &[], MASK));
        assert_eq!(events, vec![Event::Close(NO_STATUS, Vec::new())]);
        let (events, _) = decode_all(&mut Decoder::new(100, 0), &client_frame(true, OP_CLOSE, &[0x0f, 0xa0, b'o', b'k'], MASK));
        assert_eq!(events, vec![Event::Close(4000, b"ok".to_vec())]);
    }

    #[test]
    fn a_message_in_more_fragments_than_the_limit_is_1008() {
        let fragmented = |count: usize| -> Vec<u8> {
            let mut input = Vec::new();
            for i in 0..count {
                input.extend(client_frame(i + 1 == count, if i == 0 { OP_BINARY } else { OP_CONTINUATION }, b"x", MASK));
                // Control frames between fragments are not fragments.
                input.extend(client_frame(true, OP_PING, b"", MASK));
            }
            input
        };
        let mut decoder = Decoder::new(100, 3);
        // At the limit, message after message: the count starts again with each.
        let (events, failure) = decode_all(&mut decoder, &[fragmented(3), fragmented(1), fragmented(3)].concat());
        assert_eq!((events.iter().filter(|e| matches!(e, Event::Binary(_))).count(), failure), (3, None));
        let (events, failure) = decode_all(&mut decoder, &fragmented(4));
        assert_eq!(failure.map(|f| f.code), Some(POLICY_VIOLATION));
        assert_eq!(events.len(), 3, "the pings before the fourth fragment: {events:?}");
        // 0: no limit.
        assert_eq!(decode_all(&mut Decoder::new(100, 0), &fragmented(50)).1, None);
    }

    #[test]
    fn a_huge_declared_length_is_refused_before_its_payload_arrives() {
        let mut head = vec![0x82, 0xFF];
        head.extend_from_slice(&(1u64 << 40).to_be_bytes());
        assert_eq!(decode_all(&mut Decoder::new(1 << 20, 0), &head).1.unwrap().code, TOO_BIG);
    }

    proptest! {
        /// Whatever bytes arrive, in whatever pieces: no panic, and what is used was offered.
        #[test]
        fn any_input_decodes_or_fails_with_a_proper_code(input in proptest::collection::vec(any::<u8>(), 0..600), limit in 0usize..300, fragments in 0usize..4) {
            let mut decoder = Decoder::new(limit, fragments);
            let mut buf = input.clone();
            let mut at = 0;
            loop {
                match decoder.decode(&mut buf[at..]) {
                    Ok((0, _)) => break,
                    Ok((n, _)) => { prop_assert!(at + n <= input.len()); at += n; }
                    Err(f) => { prop_assert!([PROTOCOL_ERROR, INVALID_DATA, POLICY_VIOLATION, TOO_BIG].contains(&f.code)); break; }
                }
            }
        }

        /// Messages framed by a client and cut into arbitrary pieces come back whole, in order.
        #[test]
        fn framed_messages_come_back(messages in proptest::collection::vec((any::<bool>(), proptest::collection::vec(any::<u8>(), 0..300), 1usize..4), 1..6), mask in any::<[u8; 4]>(), cut in 1usize..97) {
            let mut stream = Vec::new();
            let mut expected = Vec::new();
            for (text, bytes, pieces) in &messages {
                let payload = if *text { String::from_utf8_lossy(bytes).into_owned().into_bytes() } else { bytes.clone() };
                let size = payload.len().div_ceil(*pieces).max(1);
                let parts: Vec<&[u8]> = if payload.is_empty() { vec![&[]] } else { payload.chunks(size).collect() };
                for (i, part) in parts.iter().enumerate() {
                    let opcode = if i > 0 { OP_CONTINUATION } else if *text { OP_TEXT } else { OP_BINARY };
                    stream.extend(client_frame(i + 1 == parts.len(), opcode, part, mask));
                }
                expected.push(if *text { Event::Text(payload) } else { Event::Binary(payload) });
            }
            // Fed `cut` bytes at a time, as a socket may deliver them.
            // Each message in at most 3 frames: the fragment limit at 3 lets them all through.
            let mut decoder = Decoder::new(1 << 16, 3);
            let mut pending: Vec<u8> = Vec::new();
            let mut events = Vec::new();
            for piece in stream.chunks(cut) {
                pending.extend_from_slice(piece);
                loop {
                    let (n, event) = decoder.decode(&mut pending).unwrap();
                    if n == 0 { break; }
                    pending.drain(..n);
                    events.extend(event);
                }
            }
            prop_assert_eq!(events, expected);
        }
    }
}
