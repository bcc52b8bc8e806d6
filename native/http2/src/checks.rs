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
//!   everything before it.

const PREFACE: usize = 24;
const HEAD: usize = 9;
const PRIORITY: u8 = 0x2;
const WINDOW_UPDATE: u8 = 0x8;
const SPEC: usize = 5;

/// What a scan of the input found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing to act on: all of it may go to nghttp2.
    Nothing,
    /// An invalid PRIORITY frame ends here: the bytes up to it go to nghttp2, then the connection ends.
    InvalidPriority { end: usize },
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
}

impl FrameChecks {
    pub(crate) fn new() -> Self {
        FrameChecks { preface_left: PREFACE, payload_left: 0, priority_of: None, spec: [0; SPEC], spec_len: 0 }
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
                self.priority_of = (h[3] == PRIORITY && length == SPEC).then_some(stream);
                self.spec_len = 0;
                self.payload_left = length;
                i += HEAD;
                if length == 0 && self.priority_of.take() == Some(0) {
                    return Found::InvalidPriority { end: i };
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
                    if stream == 0 || depends_on == stream {
                        return Found::InvalidPriority { end: i };
                    }
                }
            }
        }
        Found::Nothing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ty: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let n = payload.len();
        let mut f = vec![(n >> 16) as u8, (n >> 8) as u8, n as u8, ty, 0];
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
                    Found::InvalidPriority { end } => {
                        found.push(Found::InvalidPriority { end: base + from + end });
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
            assert_eq!(findings(&zero, size), [Found::InvalidPriority { end: zero.len() - 14 }], "{size}");
            assert_eq!(findings(&own, size), [Found::InvalidPriority { end: own.len() - 14 }], "{size}");
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
                [Found::StreamWindowUpdate { start: at, end: at + 13, stream: 3, increment: 7 }, Found::StreamWindowUpdate { start: at + 13, end: at + 26, stream: 5, increment: 0 }],
                "{size}"
            );
        }
    }
}
