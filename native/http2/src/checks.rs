//! RFC 9113's checks that nghttp2 (1.66 and later) no longer makes as the RFC asks, made here by
//! following the input's frame boundaries (9-byte headers, payloads skipped; only the frames
//! checked are read, a few bytes each) before nghttp2 sees the bytes:
//!
//! - PRIORITY frames: nghttp2 stopped parsing them when it dropped RFC 7540's priorities, and
//!   with them two checks RFC 9113 still requires: one on stream 0 (§6.3: connection error), one
//!   making a stream depend on itself (§5.3.1: a stream error, which §5.4 lets an endpoint treat
//!   as the connection's). node:http2's older nghttp2 still makes them;
//! - WINDOW_UPDATE frames on a stream: an increment of 0 (§6.9) and one past 2^31-1 (§6.9.1) are
//!   the stream's errors (RST_STREAM), where nghttp2 now ends the whole connection, and with it
//!   every other stream on it. The connection asks nghttp2 for the stream's window when such a
//!   frame comes (`Connection::receive`), so the frame is held back until nghttp2 has read
//!   everything before it;
//! - DATA or HEADERS on a stream after the client ended it, with END_STREAM or RST_STREAM: a
//!   connection error, STREAM_CLOSED (§5.1). nghttp2 makes it only while the stream is
//!   half-closed, and forgets a stream once it closes (1.66 stopped keeping closed streams), so
//!   the verdict on a late frame depended on whether the answer went out before it was read.
//!   The client's own frames decide it here, whatever the server did meanwhile: a stream the
//!   server reset while the client was still sending is not ended by the client, and its late
//!   frames are left to nghttp2, which ignores them (§5.1: they may have been in flight);
//! - HEADERS on a stream id lower than the highest the client opened, one it never opened: a
//!   connection error, PROTOCOL_ERROR (§5.1.1), where nghttp2 ignores the frame.
//!
//! The last two remember the client's recent stream ids (`ClientStreams`): a window of bits,
//! no allocation, so a stream older than the window gets nghttp2's leniency.

use crate::error::code;

const PREFACE: usize = 24;
const HEAD: usize = 9;
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const PRIORITY: u8 = 0x2;
const RST_STREAM: u8 = 0x3;
const WINDOW_UPDATE: u8 = 0x8;
const END_STREAM: u8 = 0x1;
const SPEC: usize = 5;

/// What a scan of the input found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing to act on: all of it may go to nghttp2.
    Nothing,
    /// The client broke the protocol at `at`: the bytes before it go to nghttp2, then the
    /// connection ends with `code`.
    ConnectionError { at: usize, code: u32, reason: &'static str },
    /// A WINDOW_UPDATE on `stream` lies at `start..end`: what precedes it goes to nghttp2 first.
    /// The scan goes on from `end`.
    StreamWindowUpdate { start: usize, end: usize, stream: u32, increment: u32 },
    /// From `start` the input holds only part of a frame header, or of a stream's WINDOW_UPDATE:
    /// those bytes wait for the rest (give them again, with what follows). The scan goes on from
    /// `start` then.
    Partial { start: usize },
}

pub(crate) struct FrameChecks {
    preface_left: usize,
    payload_left: usize,
    /// The frame being skipped is a PRIORITY frame of the right size, on this stream.
    priority_of: Option<u32>,
    spec: [u8; SPEC],
    spec_len: usize,
    streams: ClientStreams,
}

impl FrameChecks {
    pub(crate) fn new() -> Self {
        FrameChecks { preface_left: PREFACE, payload_left: 0, priority_of: None, spec: [0; SPEC], spec_len: 0, streams: ClientStreams::default() }
    }

    /// Follows `input` (which continues what was scanned before) up to the first thing to act on.
    pub(crate) fn scan(&mut self, input: &[u8]) -> Found {
        let mut i = self.preface_left.min(input.len());
        self.preface_left -= i;
        while i < input.len() {
            if self.payload_left == 0 {
                // A frame begins here.
                if input.len() - i < HEAD {
                    return Found::Partial { start: i };
                }
                let h = &input[i..i + HEAD];
                let length = (h[0] as usize) << 16 | (h[1] as usize) << 8 | h[2] as usize;
                let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
                if h[3] == WINDOW_UPDATE && stream != 0 && length == 4 {
                    if input.len() - i < HEAD + 4 {
                        return Found::Partial { start: i };
                    }
                    let p = &input[i + HEAD..i + HEAD + 4];
                    let increment = u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & 0x7fff_ffff;
                    return Found::StreamWindowUpdate { start: i, end: i + HEAD + 4, stream, increment };
                }
                // The client's streams have odd ids; frames on the others are nghttp2's errors.
                if stream & 1 == 1 && matches!(h[3], DATA | HEADERS | RST_STREAM) {
                    if let Some((code, reason)) = self.streams.frame(h[3], h[4], stream) {
                        return Found::ConnectionError { at: i, code, reason };
                    }
                }
                self.priority_of = (h[3] == PRIORITY && length == SPEC).then_some(stream);
                self.spec_len = 0;
                self.payload_left = length;
                i += HEAD;
                if length == 0 && self.priority_of.take() == Some(0) {
                    return Found::ConnectionError { at: i, code: code::PROTOCOL_ERROR, reason: "PRIORITY frame on stream 0" };
                }
                continue;
            }
            let n = self.payload_left.min(input.len() - i);
            if self.priority_of.is_some() {
                self.spec[self.spec_len..self.spec_len + n].copy_from_slice(&input[i..i + n]);
                self.spec_len += n;
            }
            self.payload_left -= n;
            i += n;
            if self.payload_left == 0 {
                if let Some(stream) = self.priority_of.take() {
                    let depends_on = u32::from_be_bytes([self.spec[0], self.spec[1], self.spec[2], self.spec[3]]) & 0x7fff_ffff;
                    if stream == 0 {
                        return Found::ConnectionError { at: i, code: code::PROTOCOL_ERROR, reason: "PRIORITY frame on stream 0" };
                    }
                    if depends_on == stream {
                        return Found::ConnectionError { at: i, code: code::PROTOCOL_ERROR, reason: "PRIORITY frame making a stream depend on itself" };
                    }
                }
            }
        }
        Found::Nothing
    }
}

/// How many of the client's latest stream ids (the odd ones) `ClientStreams` remembers.
const REMEMBERED: u32 = 1024;
const WORDS: usize = REMEMBERED as usize / 64;

/// The client's stream ids from `next - REMEMBERED` to `next - 1` (as indexes: id / 2): which it
/// opened (a HEADERS frame came) and which it ended (a frame with END_STREAM, or RST_STREAM),
/// as bits in a ring, index modulo `REMEMBERED`. Its ids only grow, so opening one forgets the
/// oldest.
struct ClientStreams {
    /// The index after the highest id opened (0: none yet).
    next: u32,
    opened: [u64; WORDS],
    ended: [u64; WORDS],
}

impl Default for ClientStreams {
    fn default() -> Self {
        ClientStreams { next: 0, opened: [0; WORDS], ended: [0; WORDS] }
    }
}

fn bit(index: u32) -> (usize, u64) {
    let i = index % REMEMBERED;
    (i as usize / 64, 1 << (i % 64))
}

impl ClientStreams {
    /// A DATA, HEADERS or RST_STREAM frame with `flags` on the client's stream `id` (odd): the
    /// error it is, if it is one.
    #[inline]
    fn frame(&mut self, ty: u8, flags: u8, id: u32) -> Option<(u32, &'static str)> {
        let index = id >> 1;
        let (word, mask) = bit(index);
        let ends = if ty == RST_STREAM || flags & END_STREAM != 0 { mask } else { 0 };
        if index >= self.next {
            // An idle stream: a HEADERS opens it (any other frame on it is nghttp2's error).
            if ty == HEADERS {
                if index != self.next {
                    self.skip(index);
                }
                self.next = index + 1;
                self.opened[word] |= mask;
                self.ended[word] = self.ended[word] & !mask | ends;
            }
            return None;
        }
        if self.next - index > REMEMBERED {
            // Forgotten.
            return None;
        }
        if ty != RST_STREAM {
            if self.ended[word] & mask != 0 {
                return Some((code::STREAM_CLOSED, "DATA or HEADERS on a stream the client ended"));
            }
            if ty == HEADERS && self.opened[word] & mask == 0 {
                return Some((code::PROTOCOL_ERROR, "HEADERS on a stream id lower than one already opened"));
            }
        }
        self.ended[word] |= ends;
        None
    }

    /// The client opens stream `index`, past `next`: the ids it skipped are never opened, closed
    /// now (§5.1.1), and the slots they take are cleared of older ids.
    #[cold]
    fn skip(&mut self, index: u32) {
        if index - self.next >= REMEMBERED {
            self.opened = [0; WORDS];
            self.ended = [0; WORDS];
            return;
        }
        for skipped in self.next..index {
            let (word, mask) = bit(skipped);
            self.opened[word] &= !mask;
            self.ended[word] &= !mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ty: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        flagged(ty, 0, stream, payload)
    }

    fn flagged(ty: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let n = payload.len();
        let mut f = vec![(n >> 16) as u8, (n >> 8) as u8, n as u8, ty, flags];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn input(frames: &[Vec<u8>]) -> Vec<u8> {
        let mut v = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        for f in frames {
            v.extend_from_slice(f);
        }
        v
    }

    /// What the scan finds (with offsets into `bytes`), fed in pieces of `size` as the
    /// connection feeds it: a partial frame given again with the next piece, the scan going on
    /// past each window update.
    fn findings(bytes: &[u8], size: usize) -> Vec<Found> {
        let mut check = FrameChecks::new();
        let mut found = Vec::new();
        let (mut held, mut offset) = (Vec::new(), 0);
        for piece in bytes.chunks(size) {
            let mut input = std::mem::take(&mut held);
            let base = offset - input.len();
            input.extend_from_slice(piece);
            offset += piece.len();
            let mut from = 0;
            loop {
                match check.scan(&input[from..]) {
                    Found::Nothing => break,
                    Found::Partial { start } => {
                        held = input[from + start..].to_vec();
                        break;
                    }
                    Found::ConnectionError { at, code, reason } => {
                        found.push(Found::ConnectionError { at: base + from + at, code, reason });
                        return found;
                    }
                    Found::StreamWindowUpdate { start, end, stream, increment } => {
                        found.push(Found::StreamWindowUpdate { start: base + from + start, end: base + from + end, stream, increment });
                        from += end;
                    }
                }
            }
        }
        found
    }

    #[test]
    fn finds_the_invalid_priority_frames_wherever_the_input_is_cut() {
        let settings = frame(4, 0, &[0, 3, 0, 0, 0, 100]);
        let data = frame(0, 1, &[2; 300]); // a DATA frame holding bytes that look like a PRIORITY header
        let fine = frame(PRIORITY, 3, &[0, 0, 0, 1, 16]);
        let on_zero = frame(PRIORITY, 0, &[0, 0, 0, 1, 16]);
        let itself = frame(PRIORITY, 5, &[0x80, 0, 0, 5, 16]);
        let good = input(&[settings.clone(), data.clone(), fine.clone()]);
        let zero = input(&[settings.clone(), data.clone(), on_zero.clone(), fine.clone()]);
        let own = input(&[settings, data, fine, itself.clone(), on_zero.clone()]);
        for size in [1, 2, 5, 9, 10, 64, 10_000] {
            assert_eq!(findings(&good, size), [], "{size}");
            assert_eq!(
                findings(&zero, size),
                [Found::ConnectionError { at: zero.len() - 14, code: code::PROTOCOL_ERROR, reason: "PRIORITY frame on stream 0" }],
                "{size}"
            );
            assert_eq!(
                findings(&own, size),
                [Found::ConnectionError { at: own.len() - 14, code: code::PROTOCOL_ERROR, reason: "PRIORITY frame making a stream depend on itself" }],
                "{size}"
            );
        }
    }

    #[test]
    fn finds_each_window_update_on_a_stream_whole_wherever_the_input_is_cut() {
        let data = frame(0, 1, &[8; 40]); // bytes that look like a WINDOW_UPDATE header
        let on_connection = frame(WINDOW_UPDATE, 0, &[0, 0, 1, 0]);
        let on_stream = frame(WINDOW_UPDATE, 3, &[0x80, 0, 0, 7]);
        let zero = frame(WINDOW_UPDATE, 5, &[0, 0, 0, 0]);
        let bytes = input(&[data, on_connection, on_stream, zero]);
        let at = bytes.len() - 26;
        for size in [1, 3, 9, 12, 13, 14, 64, 10_000] {
            assert_eq!(
                findings(&bytes, size),
                [
                    Found::StreamWindowUpdate { start: at, end: at + 13, stream: 3, increment: 7 },
                    Found::StreamWindowUpdate { start: at + 13, end: at + 26, stream: 5, increment: 0 }
                ],
                "{size}"
            );
        }
    }

    const CLOSED: &str = "DATA or HEADERS on a stream the client ended";
    const LOWER: &str = "HEADERS on a stream id lower than one already opened";

    /// Where the first connection error of `frames` is found, whatever the pieces the input comes in.
    fn error_in(frames: &[Vec<u8>]) -> Option<(usize, u32, &'static str)> {
        let bytes = input(frames);
        let mut seen = None;
        for size in [1, 2, 9, 10, 13, 64, 100_000] {
            let error = findings(&bytes, size).into_iter().find_map(|f| match f {
                Found::ConnectionError { at, code, reason } => Some((at, code, reason)),
                _ => None,
            });
            assert!(seen.is_none() || seen == Some(error), "{size}: {error:?}, {seen:?}");
            seen = Some(error);
        }
        seen.unwrap()
    }

    /// Where the last of `frames` starts.
    fn last_at(frames: &[Vec<u8>]) -> usize {
        input(frames).len() - frames.last().unwrap().len()
    }

    #[test]
    fn data_or_headers_after_the_clients_end_of_a_stream_are_found_wherever_the_input_is_cut() {
        let ended = flagged(HEADERS, END_STREAM, 1, b"a request");
        // What may follow the end: PRIORITY, RST_STREAM, a WINDOW_UPDATE (found for its own check).
        let allowed = [frame(PRIORITY, 1, &[0, 0, 0, 3, 16]), frame(RST_STREAM, 1, &[0, 0, 0, 8]), frame(WINDOW_UPDATE, 1, &[0, 0, 1, 0])];
        let mut frames = vec![ended.clone()];
        frames.extend(allowed.iter().cloned());
        assert_eq!(error_in(&frames), None);
        for late in [frame(DATA, 1, b"late"), flagged(HEADERS, END_STREAM, 1, b"again")] {
            let mut frames = frames.clone();
            frames.push(late);
            assert_eq!(error_in(&frames), Some((last_at(&frames), code::STREAM_CLOSED, CLOSED)));
        }
        // A body then trailers end it; CONTINUATION frames of a block are not late.
        let mut frames = vec![frame(HEADERS, 3, b"a request"), frame(DATA, 3, &[0; 40]), flagged(HEADERS, END_STREAM, 3, b"trailers"), frame(0x9, 3, b"more")];
        assert_eq!(error_in(&frames), None);
        frames.push(frame(DATA, 3, b"late"));
        assert_eq!(error_in(&frames), Some((last_at(&frames), code::STREAM_CLOSED, CLOSED)));
        // The client's RST_STREAM ends it as well.
        let frames = [frame(HEADERS, 5, b"a request"), frame(DATA, 5, b"part"), frame(RST_STREAM, 5, &[0, 0, 0, 8]), frame(DATA, 5, b"late")];
        assert_eq!(error_in(&frames), Some((last_at(&frames), code::STREAM_CLOSED, CLOSED)));
        // Frames on a stream the client did not end are nghttp2's to judge (open, or reset by the server).
        assert_eq!(error_in(&[frame(HEADERS, 7, b"a request"), frame(DATA, 7, b"part"), frame(DATA, 9, b"idle"), frame(RST_STREAM, 11, &[0; 4])]), None);
    }

    #[test]
    fn headers_on_a_lower_stream_id_never_opened_are_found() {
        let frames = [flagged(HEADERS, END_STREAM, 5, b"a request"), flagged(HEADERS, END_STREAM, 3, b"another")];
        assert_eq!(error_in(&frames), Some((last_at(&frames), code::PROTOCOL_ERROR, LOWER)));
        // A PRIORITY frame does not open a stream; DATA on a skipped one is nghttp2's to judge.
        let frames = [frame(PRIORITY, 1, &[0, 0, 0, 0, 16]), frame(HEADERS, 3, b"a request"), frame(DATA, 1, b"x"), frame(HEADERS, 1, b"late")];
        assert_eq!(error_in(&frames), Some((last_at(&frames), code::PROTOCOL_ERROR, LOWER)));
    }

    #[test]
    fn the_oldest_streams_are_forgotten_past_the_window() {
        let newest = 1 + 2 * REMEMBERED; // index REMEMBERED: stream 1 (index 0) is out, stream 3 (index 1) in
        let start = [flagged(HEADERS, END_STREAM, 1, b"a"), flagged(HEADERS, END_STREAM, 3, b"b"), flagged(HEADERS, END_STREAM, newest, b"c")];
        let mut frames = start.to_vec();
        frames.push(frame(DATA, 1, b"late"));
        assert_eq!(error_in(&frames), None, "forgotten: nghttp2's leniency");
        let mut frames = start.to_vec();
        frames.push(frame(DATA, 3, b"late"));
        assert_eq!(error_in(&frames), Some((last_at(&frames), code::STREAM_CLOSED, CLOSED)));
        // The ids skipped over are closed, with what their slots held of older ids cleared:
        // `newest` takes stream 1's slot.
        let skip = [flagged(HEADERS, END_STREAM, 1, b"a"), flagged(HEADERS, END_STREAM, newest + 2, b"b")];
        let mut frames = skip.to_vec();
        frames.push(frame(DATA, newest, b"never opened"));
        assert_eq!(error_in(&frames), None);
        frames.push(frame(HEADERS, newest, b"never opened"));
        assert_eq!(error_in(&frames), Some((last_at(&frames), code::PROTOCOL_ERROR, LOWER)));
        // A jump past the whole window clears it.
        let mut frames = start.to_vec();
        frames.push(flagged(HEADERS, END_STREAM, newest + 4 * REMEMBERED, b"d"));
        frames.push(frame(DATA, newest, b"late"));
        assert_eq!(error_in(&frames), None);
    }
}
