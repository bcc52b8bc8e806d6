//! The bodies of the fuzz targets (`fuzz_targets/*.rs` call them; `tests/corpus.rs` runs them
//! over seeds and pseudo-random inputs on stable). Each takes any bytes and panics only when a
//! property fails: besides "no input panics", what each checks is said on the function.

#![forbid(unsafe_code)]

use bytes::Bytes;
use cog_framing::deflate::{Deflater, Inflated, Inflater};
use cog_framing::websocket::{Decoder, Event as Frame};
use cog_framing::{parse_head, parse_head_reusing, ChunkedDecoder, Framing, Head, Limits, METHODS};
use cog_http2::{Config, Connection, Event};
use cog_http3::frame::{parse_settings, parse_single, Frame as H3Piece, FrameError, FrameReader};
use cog_http3::huffman;
use cog_http3::qpack::{decode_section, encode_section, DecoderStream, EncoderStream};

/// The first byte of a target's input picks its limits; the rest is the input.
fn split_first(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&first, rest)) => (first, rest),
        None => (0, &[]),
    }
}

/// What a parsed head says, as bytes: for comparing two parses of the same request.
#[derive(Debug, PartialEq, Eq)]
struct Said {
    method: Vec<u8>,
    target: Vec<u8>,
    minor: u8,
    /// Names, and values with the spaces and tabs that followed them on their line (which
    /// `Transfer-Encoding` reads; httparse leaves them out of the value).
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    framing: Framing,
    keep_alive: bool,
    expect_continue: bool,
    upgrade: bool,
}

fn said(buf: &[u8], head: &Head) -> Said {
    let headers = head
        .headers
        .iter()
        .map(|(name, value)| {
            let trailing = buf[value.end..head.len].iter().take_while(|&&b| b == b' ' || b == b'\t').count();
            let value = if value.is_empty() { Vec::new() } else { buf[value.start..value.end + trailing].to_vec() };
            (buf[name.clone()].to_vec(), value)
        })
        .collect();
    Said {
        method: buf[head.method.clone()].to_vec(),
        target: buf[head.target.clone()].to_vec(),
        minor: head.minor,
        headers,
        framing: head.framing,
        keep_alive: head.keep_alive,
        expect_continue: head.expect_continue,
        upgrade: head.upgrade,
    }
}

/// The head written plainly: one space between the request line's parts, `name: value` lines.
fn serialize(said: &Said) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&said.method);
    out.push(b' ');
    out.extend_from_slice(&said.target);
    out.extend_from_slice(format!(" HTTP/1.{}\r\n", said.minor).as_bytes());
    for (name, value) in &said.headers {
        out.extend_from_slice(name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// The request head parser (`cog_framing::parse_head`), under limits the first byte picks. A head
/// it takes lies within the input and within the limits, its method is the one it names; the same
/// head written plainly parses to the same request (method, target, version, fields, framing,
/// keep-alive, Expect, Upgrade); a parse reusing a dirty header list gives the same; and any
/// prefix of a head it takes is "read more", never a refusal (a client sending a valid head
/// slowly is never refused for it).
pub fn head(data: &[u8]) {
    let (knob, input) = split_first(data);
    let limits = Limits { max_head: 32 + usize::from(knob & 0x3f) * 64, max_headers: 1 + usize::from(knob >> 6) * 40 };
    let Ok(found) = parse_head(input, &limits) else { return };
    let Some(head) = found else { return };
    assert!(head.len <= input.len() && head.len <= limits.max_head + 4096, "a head within its input");
    assert!(head.headers.len() <= limits.max_headers);
    assert!(head.method.end <= head.len && head.target.end <= head.len);
    assert!(head.headers.iter().all(|(n, v)| n.end <= head.len && v.end <= head.len));
    assert_eq!(&input[head.method.clone()], METHODS[head.method_index].as_bytes());
    let first = said(input, &head);

    let mut spare = vec![(0..1, 2..3); 5];
    let again = parse_head_reusing(input, &limits, &mut spare).expect("the same input parses the same").expect("whole");
    assert_eq!(said(input, &again), first);

    let plain = serialize(&first);
    let wide = Limits { max_head: plain.len().max(limits.max_head), max_headers: limits.max_headers };
    match parse_head(&plain, &wide) {
        Ok(Some(reparsed)) => assert_eq!(said(&plain, &reparsed), first, "{:?}", String::from_utf8_lossy(&plain)),
        other => panic!("{:?} written plainly ({:?}) parses to {other:?}", String::from_utf8_lossy(&input[..head.len]), String::from_utf8_lossy(&plain)),
    }

    for cut in [head.len - 1, head.len / 2, usize::from(knob) % head.len] {
        match parse_head(&input[..cut], &limits) {
            Ok(None) => {}
            other => {
                panic!("{:?} of a head it takes ({:?}) gives {other:?}", String::from_utf8_lossy(&input[..cut]), String::from_utf8_lossy(&input[..head.len]))
            }
        }
    }
}

/// Chunked bodies (`ChunkedDecoder`): the input decoded whole and in two parts (cut where the
/// first byte says) gives the same body, the same bytes used, and a refusal in both or neither;
/// the body is never longer than its encoding.
pub fn chunked(data: &[u8]) {
    let (knob, input) = split_first(data);
    let mut whole = ChunkedDecoder::new();
    let mut whole_body = Vec::new();
    let whole_result = whole.decode(input, &mut whole_body);

    let cut = if input.is_empty() { 0 } else { usize::from(knob) * input.len() / 256 };
    let mut parts = ChunkedDecoder::new();
    let mut parts_body = Vec::new();
    let parts_result = parts.decode(&input[..cut], &mut parts_body).and_then(|first| {
        assert!(first == cut || parts.is_done(), "all of a part is used until the body ends");
        if parts.is_done() {
            Ok(first)
        } else {
            parts.decode(&input[cut..], &mut parts_body).map(|second| first + second)
        }
    });
    match (&whole_result, &parts_result) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "bytes used");
            assert_eq!(whole_body, parts_body, "the body");
            assert_eq!(whole.is_done(), parts.is_done());
            assert!(whole_body.len() <= *a);
        }
        (Err(a), Err(b)) => assert_eq!(a.status, b.status),
        _ => panic!("whole: {whole_result:?}, in two parts at {cut}: {parts_result:?}"),
    }
}

/// WebSocket frames (`websocket::Decoder`), with permessage-deflate when the first byte says: a
/// client's bytes decode to messages within the payload limit (text checked UTF-8, close codes
/// valid) or fail with a close code; a decoder always makes progress or waits for more.
pub fn websocket(data: &[u8]) {
    let (knob, input) = split_first(data);
    let max_payload = 1 + usize::from(knob & 0x1f) * 64;
    let max_fragments = usize::from((knob >> 5) & 0x3);
    let mut decoder = if knob & 0x80 != 0 {
        Decoder::with_inflater(max_payload, max_fragments, Inflater::new(knob & 0x20 != 0))
    } else {
        Decoder::new(max_payload, max_fragments)
    };
    let mut buf = input.to_vec();
    let mut at = 0;
    loop {
        match decoder.decode(&mut buf[at..]) {
            Ok((0, None)) => break,
            Ok((used, event)) => {
                assert!(used > 0 && at + used <= buf.len(), "progress within the input");
                at += used;
                match event {
                    Some(Frame::Text(text)) => {
                        assert!(text.len() <= max_payload);
                        assert!(std::str::from_utf8(&text).is_ok(), "text is UTF-8");
                    }
                    Some(Frame::Binary(bytes)) => assert!(bytes.len() <= max_payload),
                    Some(Frame::Ping(bytes) | Frame::Pong(bytes)) => assert!(bytes.len() <= 125),
                    Some(Frame::Close(code, reason)) => {
                        assert!(code == cog_framing::websocket::NO_STATUS || cog_framing::websocket::is_valid_close_code(code), "close code {code}");
                        assert!(std::str::from_utf8(&reason).is_ok(), "a close reason is UTF-8");
                    }
                    None => {}
                }
            }
            Err(failure) => {
                assert!((1002..=1009).contains(&failure.code), "{failure:?}");
                break;
            }
        }
    }
}

/// permessage-deflate (`deflate::Deflater` and `Inflater`): messages (the input cut at 0xff
/// bytes) deflated and inflated in turn come back as they were, with and without context
/// takeover; and the input itself, inflated as a client's message, is refused or inflates
/// within the limit.
pub fn deflate(data: &[u8]) {
    let (knob, input) = split_first(data);
    let reset = knob & 1 != 0;
    let (mut deflater, mut inflater) = (Deflater::new(reset), Inflater::new(reset));
    for message in input.split(|&b| b == 0xff) {
        let compressed = deflater.deflate(message);
        assert_eq!(inflater.inflate(&compressed, message.len()), Inflated::Message(message.to_vec()));
    }
    let limit = usize::from(knob) * 16;
    if let Inflated::Message(out) = Inflater::new(reset).inflate(input, limit) {
        assert!(out.len() <= limit);
    }
}

/// The HTTP/2 connection (`cog_http2::Connection`, nghttp2 driven sans-IO): after the client's
/// preface, the input (cut into reads where the first byte says) is taken frame by frame; every
/// request is answered, every body piece consumed and all output written, as the engine does;
/// nothing panics, and once the connection fails it stays done.
pub fn http2(data: &[u8]) {
    let (knob, input) = split_first(data);
    let mut conn = Connection::new(Config::default()).expect("a connection");
    let mut stream_input = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    stream_input.extend_from_slice(input);
    let read = 1 + usize::from(knob) * 4;
    for piece in stream_input.chunks(read) {
        let failed = conn.receive(piece).is_err();
        let events = conn.take_events();
        let mut answers = Vec::new();
        let mut consumed = Vec::new();
        for event in events.iter() {
            match event {
                Event::Request(req) => answers.push((req.stream, req.end_stream)),
                Event::Data { stream, data, .. } => consumed.push((stream, data.len())),
                _ => {}
            }
        }
        conn.recycle(events);
        for (stream, n) in consumed {
            conn.consume(stream, n);
        }
        for (stream, _) in answers {
            if conn.respond(stream, 200, &[(b"content-type", b"text/plain")], false).is_ok() {
                let _ = conn.send_data(stream, b"hello", true);
            }
        }
        let n = conn.pending_output().len();
        conn.consume_output(n);
        if failed {
            let n = conn.pending_output().len();
            conn.consume_output(n);
            return;
        }
    }
    let _ = conn.memory();
}

/// What HTTP/3's frame reader gave, with DATA's pieces joined: for comparing two readings.
#[derive(Debug, PartialEq, Eq)]
enum H3Frame {
    Begin { ty: u64, len: u64 },
    Data(Vec<u8>),
    Whole { ty: u64, payload: Vec<u8> },
}

/// Reads `input` with a fresh reader in pieces of `piece` bytes: the frames and whether it
/// stopped on an error (and which).
fn read_h3_frames(input: &[u8], max_frame: u64, piece: usize) -> (Vec<H3Frame>, Option<u64>, bool) {
    let mut reader = FrameReader::new(max_frame);
    let mut frames: Vec<H3Frame> = Vec::new();
    for chunk in input.chunks(piece.max(1)) {
        let result = reader.read(Bytes::copy_from_slice(chunk), &mut |frame| {
            match frame {
                H3Piece::Begin { ty, len } => frames.push(H3Frame::Begin { ty, len }),
                H3Piece::Data(bytes) => match frames.last_mut() {
                    Some(H3Frame::Data(joined)) => joined.extend_from_slice(&bytes),
                    _ => frames.push(H3Frame::Data(bytes.to_vec())),
                },
                H3Piece::Whole { ty, payload } => frames.push(H3Frame::Whole { ty, payload: payload.to_vec() }),
            }
            Ok(())
        });
        if let Err(FrameError(code)) = result {
            return (frames, Some(code), false);
        }
    }
    (frames, None, reader.at_boundary())
}

/// HTTP/3's frame reader (`cog_http3::frame::FrameReader`), with the largest gathered frame and
/// the size of QUIC's pieces picked by the first byte: read whole and in pieces, a stream gives
/// the same frames, the same refusal and the same end (between frames or inside one); every
/// frame's payload is as long as its header said (a DATA frame's in all, unless the stream ended
/// inside it); a gathered frame is never larger than the limit, and a larger one is refused with
/// H3_EXCESSIVE_LOAD. The payloads the connection parses (SETTINGS, GOAWAY and its kin, HEADERS
/// through QPACK) are parsed too, so nothing the reader hands on panics them.
pub fn h3frames(data: &[u8]) {
    let (knob, input) = split_first(data);
    let max_frame = 1 + u64::from(knob & 0x0f) * 64;
    let piece = 1 + usize::from(knob >> 4) * 3;
    let whole = read_h3_frames(input, max_frame, input.len());
    let pieces = read_h3_frames(input, max_frame, piece);
    assert_eq!(whole, pieces, "read whole and in pieces of {piece}");
    let (frames, error, _) = whole;
    if let Some(code) = error {
        assert!(code == cog_http3::code::H3_EXCESSIVE_LOAD, "the reader refuses only oversized frames, not {code:#x}");
    }
    let mut begun: Option<(u64, u64)> = None;
    for frame in &frames {
        match frame {
            H3Frame::Begin { ty, len } => begun = Some((*ty, *len)),
            H3Frame::Data(bytes) => {
                let (ty, len) = begun.expect("DATA after its header");
                assert_eq!(ty, cog_http3::frame::DATA);
                assert!(bytes.len() as u64 <= len);
            }
            H3Frame::Whole { ty, payload } => {
                let (begun_ty, len) = begun.expect("a frame after its header");
                assert_eq!((*ty, payload.len() as u64), (begun_ty, len), "a gathered frame is whole");
                assert!(len <= max_frame);
                match *ty {
                    cog_http3::frame::SETTINGS => {
                        let _ = parse_settings(payload);
                    }
                    cog_http3::frame::GOAWAY | cog_http3::frame::MAX_PUSH_ID | cog_http3::frame::CANCEL_PUSH => {
                        let _ = parse_single(payload);
                    }
                    cog_http3::frame::HEADERS => {
                        let _ = decode_section(payload, |_, _| {});
                    }
                    _ => {}
                }
            }
        }
    }
    // A DATA frame cut short by the end of the input is the only one shorter than its header says.
    let followed = frames.len().saturating_sub(1);
    for pair in frames[..followed].windows(2) {
        if let [H3Frame::Begin { ty: cog_http3::frame::DATA, len }, H3Frame::Data(bytes)] = pair {
            assert_eq!(bytes.len() as u64, *len, "a DATA frame followed by another is whole");
        }
    }
}

/// QPACK's decoder (`cog_http3::qpack`), without a dynamic table: a field section it takes,
/// encoded again by the crate's encoder (names in lower case, as HTTP/3 requires), decodes to
/// the same fields; the encoder and decoder streams, fed whole and in two parts (cut where the
/// first byte says), take or refuse the same input with the same error; every byte string
/// Huffman-encoded decodes to itself.
pub fn qpack(data: &[u8]) {
    let (knob, input) = split_first(data);
    let mut fields: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    if decode_section(input, |name, value| fields.push((name.to_vec(), value.to_vec()))).is_ok() {
        let lower: Vec<(Vec<u8>, Vec<u8>)> = fields.iter().map(|(n, v)| (n.to_ascii_lowercase(), v.clone())).collect();
        let mut encoded = Vec::new();
        encode_section(lower.iter().map(|(n, v)| (n.as_slice(), v.as_slice())), &mut encoded);
        let mut again: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        decode_section(&encoded, |name, value| again.push((name.to_vec(), value.to_vec()))).expect("the encoder's own section decodes");
        assert_eq!(again, lower, "a section re-encoded decodes to the same fields");
    }

    let cut = if input.is_empty() { 0 } else { usize::from(knob) * input.len() / 256 };
    let mut whole = EncoderStream::default();
    let mut parts = EncoderStream::default();
    let parted = parts.receive(&input[..cut]).and_then(|_| parts.receive(&input[cut..]));
    assert_eq!(whole.receive(input), parted, "the encoder stream whole and cut at {cut}");
    let mut whole = DecoderStream::default();
    let mut parts = DecoderStream::default();
    let parted = parts.receive(&input[..cut]).and_then(|_| parts.receive(&input[cut..]));
    assert_eq!(whole.receive(input), parted, "the decoder stream whole and cut at {cut}");

    let mut coded = Vec::new();
    huffman::encode(input, &mut coded);
    assert_eq!(coded.len(), huffman::encoded_len(input));
    let mut decoded = Vec::new();
    huffman::decode(&coded, &mut decoded).expect("the encoder's own Huffman string decodes");
    assert_eq!(decoded, input);
}
