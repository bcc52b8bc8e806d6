//! RFC 9113's two checks of PRIORITY frames that nghttp2 stopped making when it dropped RFC 7540's
//! priorities (1.66): a PRIORITY frame on stream 0 (§6.3: connection error) and one that makes a
//! stream depend on itself (§5.3.1: a stream error, which §5.4 lets an endpoint treat as the
//! connection's). node:http2's older nghttp2 still makes them. This follows the input's frame
//! boundaries (9-byte headers, payloads skipped) to find PRIORITY frames; it reads only frame
//! headers and PRIORITY payloads, a few bytes a frame.

const PREFACE: usize = 24;
const HEAD: usize = 9;
const PRIORITY: u8 = 0x2;
const SPEC: usize = 5;

pub(crate) struct PriorityCheck {
    preface_left: usize,
    head: [u8; HEAD],
    head_len: usize,
    payload_left: usize,
    /// The frame being skipped is a PRIORITY frame of the right size, on this stream.
    priority_of: Option<u32>,
    spec: [u8; SPEC],
    spec_len: usize,
}

impl PriorityCheck {
    pub(crate) fn new() -> Self {
        PriorityCheck { preface_left: PREFACE, head: [0; HEAD], head_len: 0, payload_left: 0, priority_of: None, spec: [0; SPEC], spec_len: 0 }
    }

    /// Follows `input`; returns how many of its bytes precede the end of the first invalid
    /// PRIORITY frame in it (`Some`: the bytes up to there go to nghttp2, then the connection
    /// ends), or `None` when there is none.
    pub(crate) fn scan(&mut self, input: &[u8]) -> Option<usize> {
        let mut i = 0;
        let skip = self.preface_left.min(input.len());
        self.preface_left -= skip;
        i += skip;
        while i < input.len() {
            if self.payload_left == 0 && self.head_len < HEAD {
                let n = (HEAD - self.head_len).min(input.len() - i);
                self.head[self.head_len..self.head_len + n].copy_from_slice(&input[i..i + n]);
                self.head_len += n;
                i += n;
                if self.head_len < HEAD {
                    break;
                }
                let h = self.head;
                let length = (h[0] as usize) << 16 | (h[1] as usize) << 8 | h[2] as usize;
                let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
                self.priority_of = (h[3] == PRIORITY && length == SPEC).then_some(stream);
                self.spec_len = 0;
                self.payload_left = length;
                if length > 0 {
                    continue;
                }
                self.head_len = 0;
                if self.priority_of == Some(0) {
                    return Some(i);
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
                self.head_len = 0;
                if let Some(stream) = self.priority_of.take() {
                    let depends_on = u32::from_be_bytes([self.spec[0], self.spec[1], self.spec[2], self.spec[3]]) & 0x7fff_ffff;
                    if stream == 0 || depends_on == stream {
                        return Some(i);
                    }
                }
            }
        }
        None
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

    /// Where the scan stops, fed in pieces of `size`.
    fn stop(bytes: &[u8], size: usize) -> Option<usize> {
        let mut check = PriorityCheck::new();
        let mut offset = 0;
        for piece in bytes.chunks(size) {
            if let Some(n) = check.scan(piece) {
                return Some(offset + n);
            }
            offset += piece.len();
        }
        None
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
            assert_eq!(stop(&good, size), None, "{size}");
            assert_eq!(stop(&zero, size), Some(zero.len() - 14), "{size}");
            assert_eq!(stop(&own, size), Some(own.len() - 14), "{size}");
        }
    }
}
