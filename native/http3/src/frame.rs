//! HTTP/3 frames (RFC 9114 §7): QUIC variable-length integers, the frame types, and a reader
//! that takes a stream's bytes in whatever pieces QUIC delivers them. DATA payloads are handed
//! on as slices of the pieces (no copy); other known frames are gathered whole, up to a limit;
//! unknown and reserved types are skipped unread (§9).

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::error::code;

pub const DATA: u64 = 0x0;
pub const HEADERS: u64 = 0x1;
pub const CANCEL_PUSH: u64 = 0x3;
pub const SETTINGS: u64 = 0x4;
pub const PUSH_PROMISE: u64 = 0x5;
pub const GOAWAY: u64 = 0x7;
pub const MAX_PUSH_ID: u64 = 0xd;

/// Whether `ty` is one of HTTP/2's frame types that HTTP/3 reserves and forbids (§7.2.8):
/// PRIORITY, PING, WINDOW_UPDATE, CONTINUATION.
pub fn is_http2_reserved(ty: u64) -> bool {
    matches!(ty, 0x2 | 0x6 | 0x8 | 0x9)
}

/// Settings identifiers (§7.2.4.1, RFC 9204 §5).
pub mod setting {
    pub const QPACK_MAX_TABLE_CAPACITY: u64 = 0x1;
    pub const MAX_FIELD_SECTION_SIZE: u64 = 0x6;
    pub const QPACK_BLOCKED_STREAMS: u64 = 0x7;
    pub const ENABLE_CONNECT_PROTOCOL: u64 = 0x8;
    pub const H3_DATAGRAM: u64 = 0x33;
}

/// Unidirectional stream types (§6.2, RFC 9204 §4.2).
pub mod stream_type {
    pub const CONTROL: u64 = 0x0;
    pub const PUSH: u64 = 0x1;
    pub const QPACK_ENCODER: u64 = 0x2;
    pub const QPACK_DECODER: u64 = 0x3;
}

/// The length of a QUIC variable-length integer from its first byte (RFC 9000 §16).
pub fn varint_len(first: u8) -> usize {
    1 << (first >> 6)
}

/// Reads a variable-length integer at the start of `buf`: the value and its length.
pub fn read_varint(buf: &[u8]) -> Option<(u64, usize)> {
    let len = varint_len(*buf.first()?);
    if buf.len() < len {
        return None;
    }
    let mut value = (buf[0] & 0x3f) as u64;
    for &b in &buf[1..len] {
        value = value << 8 | b as u64;
    }
    Some((value, len))
}

/// Appends `value` (< 2^62) as a variable-length integer, in its shortest form.
pub fn write_varint(value: u64, out: &mut impl BufMut) {
    if value < 1 << 6 {
        out.put_u8(value as u8);
    } else if value < 1 << 14 {
        out.put_u16(0x4000 | value as u16);
    } else if value < 1 << 30 {
        out.put_u32(0x8000_0000 | value as u32);
    } else {
        debug_assert!(value < 1 << 62);
        out.put_u64(0xc000_0000_0000_0000 | value);
    }
}

/// Appends a frame's type and length.
pub fn write_header(ty: u64, len: u64, out: &mut impl BufMut) {
    write_varint(ty, out);
    write_varint(len, out);
}

/// A frame, or the piece of one, as the reader gives it.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A frame's header has been read: its type and the length of its payload. Given for every
    /// frame, before its payload, so the stream can refuse it at once.
    Begin { ty: u64, len: u64 },
    /// A piece of a DATA frame's payload.
    Data(Bytes),
    /// The whole payload of a known frame other than DATA.
    Whole { ty: u64, payload: Bytes },
}

/// A frame the reader refuses: its payload is larger than `max_frame` (H3_EXCESSIVE_LOAD) or a
/// frame's own fields do not fit it (H3_FRAME_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameError(pub u64);

#[derive(Debug)]
enum State {
    /// Reading a frame header: the bytes so far are in `head`.
    Head,
    /// A DATA frame's payload, this many bytes still to come.
    Data(u64),
    /// A known frame gathered into `payload`, this many bytes still to come.
    Gather { ty: u64, remaining: u64 },
    /// An unknown frame's payload, skipped.
    Skip(u64),
}

/// Reads frames from one stream's bytes.
#[derive(Debug)]
pub struct FrameReader {
    state: State,
    head: Vec<u8>,
    payload: BytesMut,
    /// The largest payload gathered for a frame other than DATA.
    max_frame: u64,
}

fn is_known(ty: u64) -> bool {
    matches!(ty, HEADERS | CANCEL_PUSH | SETTINGS | PUSH_PROMISE | GOAWAY | MAX_PUSH_ID) || is_http2_reserved(ty)
}

impl FrameReader {
    pub fn new(max_frame: u64) -> FrameReader {
        FrameReader { state: State::Head, head: Vec::with_capacity(16), payload: BytesMut::new(), max_frame }
    }

    /// Whether the reader stands between frames: a stream that ends anywhere else ended inside
    /// a frame (§7.1: H3_FRAME_ERROR).
    pub fn at_boundary(&self) -> bool {
        matches!(self.state, State::Head) && self.head.is_empty()
    }

    /// Reads `chunk`, calling `out` with each frame or piece; `out` returning an error stops the
    /// reading and returns it.
    pub fn read(&mut self, mut chunk: Bytes, out: &mut impl FnMut(Frame) -> Result<(), FrameError>) -> Result<(), FrameError> {
        while !chunk.is_empty() {
            match self.state {
                State::Head => {
                    // Type, then length, each a varint: take bytes one at a time until both are
                    // whole (at most 16).
                    self.head.push(chunk.get_u8());
                    let type_len = varint_len(self.head[0]);
                    if self.head.len() <= type_len {
                        continue;
                    }
                    let len_len = varint_len(self.head[type_len]);
                    if self.head.len() < type_len + len_len {
                        continue;
                    }
                    let (ty, _) = read_varint(&self.head).unwrap();
                    let (len, _) = read_varint(&self.head[type_len..]).unwrap();
                    self.head.clear();
                    out(Frame::Begin { ty, len })?;
                    self.state = if ty == DATA {
                        State::Data(len)
                    } else if is_known(ty) {
                        if len > self.max_frame {
                            return Err(FrameError(code::H3_EXCESSIVE_LOAD));
                        }
                        self.payload.reserve(len as usize);
                        State::Gather { ty, remaining: len }
                    } else {
                        State::Skip(len)
                    };
                }
                State::Data(remaining) => {
                    let n = remaining.min(chunk.len() as u64);
                    self.state = State::Data(remaining - n);
                    out(Frame::Data(chunk.split_to(n as usize)))?;
                }
                State::Gather { ty, remaining } => {
                    let n = remaining.min(chunk.len() as u64);
                    self.payload.extend_from_slice(&chunk.split_to(n as usize));
                    self.state = State::Gather { ty, remaining: remaining - n };
                }
                State::Skip(remaining) => {
                    let n = remaining.min(chunk.len() as u64);
                    chunk.advance(n as usize);
                    self.state = State::Skip(remaining - n);
                }
            }
            // A frame whose payload is complete (or empty) ends here.
            match self.state {
                State::Data(0) | State::Skip(0) => self.state = State::Head,
                State::Gather { ty, remaining: 0 } => {
                    self.state = State::Head;
                    let payload = self.payload.split().freeze();
                    out(Frame::Whole { ty, payload })?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The settings a SETTINGS payload carries, in order (§7.2.4). Refuses a truncated payload
/// (H3_FRAME_ERROR), a setting given twice, or one of HTTP/2's settings HTTP/3 reserves
/// (H3_SETTINGS_ERROR).
pub fn parse_settings(mut payload: &[u8]) -> Result<Vec<(u64, u64)>, FrameError> {
    let mut settings: Vec<(u64, u64)> = Vec::new();
    while !payload.is_empty() {
        let (id, n) = read_varint(payload).ok_or(FrameError(code::H3_FRAME_ERROR))?;
        payload = &payload[n..];
        let (value, n) = read_varint(payload).ok_or(FrameError(code::H3_FRAME_ERROR))?;
        payload = &payload[n..];
        if matches!(id, 0x0 | 0x2 | 0x3 | 0x4 | 0x5) || settings.iter().any(|&(seen, _)| seen == id) {
            return Err(FrameError(code::H3_SETTINGS_ERROR));
        }
        if settings.len() < 64 {
            settings.push((id, value));
        }
    }
    Ok(settings)
}

/// The one varint a GOAWAY, MAX_PUSH_ID or CANCEL_PUSH payload carries (§7.2.6, 7.2.7, 7.2.3).
pub fn parse_single(payload: &[u8]) -> Result<u64, FrameError> {
    match read_varint(payload) {
        Some((value, n)) if n == payload.len() => Ok(value),
        _ => Err(FrameError(code::H3_FRAME_ERROR)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(reader: &mut FrameReader, pieces: &[&[u8]]) -> Result<Vec<Frame>, FrameError> {
        let mut out = Vec::new();
        for piece in pieces {
            reader.read(Bytes::copy_from_slice(piece), &mut |f| {
                out.push(f);
                Ok(())
            })?;
        }
        Ok(out)
    }

    #[test]
    fn varints_round_trip() {
        // RFC 9000 §A.1's examples.
        for (value, bytes) in [
            (151_288_809_941_952_652u64, &[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c][..]),
            (494_878_333, &[0x9d, 0x7f, 0x3e, 0x7d]),
            (15_293, &[0x7b, 0xbd]),
            (37, &[0x25]),
        ] {
            assert_eq!(read_varint(bytes), Some((value, bytes.len())));
            let mut out = Vec::new();
            write_varint(value, &mut out);
            assert_eq!(out, bytes);
        }
        assert_eq!(read_varint(&[0x40, 0x25]), Some((37, 2)));
        assert_eq!(read_varint(&[0x7b]), None);
    }

    #[test]
    fn frames_split_anywhere_read_the_same() {
        let mut wire = Vec::new();
        write_header(HEADERS, 3, &mut wire);
        wire.extend_from_slice(&[0, 0, 0xd1]);
        write_header(0x21, 2, &mut wire); // a reserved (grease) type: skipped
        wire.extend_from_slice(b"zz");
        write_header(DATA, 5, &mut wire);
        wire.extend_from_slice(b"hello");
        write_header(DATA, 0, &mut wire);
        for split in 0..wire.len() {
            let mut reader = FrameReader::new(100);
            let got = frames(&mut reader, &[&wire[..split], &wire[split..]]).unwrap();
            let data: Vec<u8> = got.iter().filter_map(|f| if let Frame::Data(d) = f { Some(d.to_vec()) } else { None }).flatten().collect();
            assert_eq!(data, b"hello");
            assert!(got.contains(&Frame::Whole { ty: HEADERS, payload: Bytes::from_static(&[0, 0, 0xd1]) }));
            assert!(got.contains(&Frame::Begin { ty: 0x21, len: 2 }));
            assert!(reader.at_boundary());
        }
        let mut reader = FrameReader::new(100);
        frames(&mut reader, &[&wire[..wire.len() - 3]]).unwrap();
        assert!(!reader.at_boundary());
    }

    #[test]
    fn oversized_frames_are_refused() {
        let mut wire = Vec::new();
        write_header(HEADERS, 1000, &mut wire);
        let mut reader = FrameReader::new(100);
        assert_eq!(frames(&mut reader, &[&wire]), Err(FrameError(code::H3_EXCESSIVE_LOAD)));
        // An unknown frame of any length is skipped.
        let mut wire = Vec::new();
        write_header(0x1f * 7 + 0x21, 1 << 20, &mut wire);
        assert!(frames(&mut FrameReader::new(100), &[&wire]).is_ok());
    }

    #[test]
    fn settings_are_checked() {
        let mut p = Vec::new();
        for v in [setting::QPACK_MAX_TABLE_CAPACITY, 0, setting::MAX_FIELD_SECTION_SIZE, 16384] {
            write_varint(v, &mut p);
        }
        assert_eq!(parse_settings(&p).unwrap(), vec![(1, 0), (6, 16384)]);
        assert_eq!(parse_settings(&[0x01]), Err(FrameError(code::H3_FRAME_ERROR)));
        assert_eq!(parse_settings(&[0x01, 0, 0x01, 1]), Err(FrameError(code::H3_SETTINGS_ERROR)));
        assert_eq!(parse_settings(&[0x04, 0]), Err(FrameError(code::H3_SETTINGS_ERROR))); // h2's INITIAL_WINDOW_SIZE
        assert_eq!(parse_single(&[0x40, 0x08]), Ok(8));
        assert_eq!(parse_single(&[0x08, 0x00]), Err(FrameError(code::H3_FRAME_ERROR)));
    }
}
