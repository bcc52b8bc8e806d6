//! QPACK (RFC 9204) without a dynamic table: the server advertises
//! SETTINGS_QPACK_MAX_TABLE_CAPACITY 0 and SETTINGS_QPACK_BLOCKED_STREAMS 0, so a field section
//! may only reference the static table (§3.1) and carry literals; one that references the
//! dynamic table is a connection error, QPACK_DECOMPRESSION_FAILED (§2.2.3). The encoder uses
//! the static table and literals, Huffman-coded when shorter, so the client's table is never
//! needed either, and the encoder and decoder streams carry nothing (see `EncoderStream` and
//! `DecoderStream` for what the client may still send on them).

use crate::error::code;
use crate::huffman;
use crate::tables::STATIC;

/// Why a field section or a QPACK stream was refused: the connection error to close with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpackError(pub u64);

const DECOMPRESSION: QpackError = QpackError(code::QPACK_DECOMPRESSION_FAILED);

/// Decodes a prefixed integer (RFC 7541 §5.1) whose first byte is `buf[*pos]`, with an
/// `n`-bit prefix; values past 2^62 are refused.
pub fn decode_int(buf: &[u8], pos: &mut usize, n: u8) -> Option<u64> {
    let mask = ((1u16 << n) - 1) as u8;
    let first = *buf.get(*pos)? & mask;
    *pos += 1;
    if first < mask {
        return Some(first as u64);
    }
    let mut value = mask as u64;
    let mut shift = 0u32;
    loop {
        let byte = *buf.get(*pos)?;
        *pos += 1;
        if shift > 56 {
            return None;
        }
        value += ((byte & 0x7f) as u64) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            break;
        }
    }
    (value < 1 << 62).then_some(value)
}

/// Appends `value` as a prefixed integer with an `n`-bit prefix; `flags` fills the first byte's
/// bits above the prefix.
pub fn encode_int(value: u64, n: u8, flags: u8, out: &mut Vec<u8>) {
    let mask = ((1u16 << n) - 1) as u64;
    if value < mask {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | mask as u8);
    let mut rest = value - mask;
    while rest >= 128 {
        out.push((rest as u8 & 0x7f) | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// Decodes a string literal whose length has an `n`-bit prefix and whose Huffman flag is the
/// bit just above it.
fn decode_str(buf: &[u8], pos: &mut usize, n: u8, out: &mut Vec<u8>) -> Result<(), QpackError> {
    let huffman = *buf.get(*pos).ok_or(DECOMPRESSION)? & (1 << n) != 0;
    let len = decode_int(buf, pos, n).ok_or(DECOMPRESSION)? as usize;
    let end = pos.checked_add(len).filter(|&end| end <= buf.len()).ok_or(DECOMPRESSION)?;
    let data = &buf[*pos..end];
    *pos = end;
    if huffman {
        huffman::decode(data, out).map_err(|_| DECOMPRESSION)
    } else {
        out.extend_from_slice(data);
        Ok(())
    }
}

/// Appends a string literal, Huffman-coded when that is shorter, with an `n`-bit length prefix
/// under `flags`.
fn encode_str(data: &[u8], n: u8, flags: u8, out: &mut Vec<u8>) {
    let coded = huffman::encoded_len(data);
    if coded < data.len() {
        encode_int(coded as u64, n, flags | 1 << n, out);
        huffman::encode(data, out);
    } else {
        encode_int(data.len() as u64, n, flags, out);
        out.extend_from_slice(data);
    }
}

/// Decodes one field section (the payload of a HEADERS frame), calling `field` with each name
/// and value in order. Any reference to the dynamic table is refused.
pub fn decode_section(buf: &[u8], mut field: impl FnMut(&[u8], &[u8])) -> Result<(), QpackError> {
    let mut pos = 0;
    // §4.5.1: Required Insert Count (8-bit prefix), then the Base's sign and delta (7-bit).
    let required = decode_int(buf, &mut pos, 8).ok_or(DECOMPRESSION)?;
    if required != 0 {
        return Err(DECOMPRESSION);
    }
    decode_int(buf, &mut pos, 7).ok_or(DECOMPRESSION)?;
    let mut name = Vec::new();
    let mut value = Vec::new();
    while pos < buf.len() {
        let first = buf[pos];
        name.clear();
        value.clear();
        if first & 0x80 != 0 {
            // §4.5.2 Indexed Field Line: 1 T index(6).
            if first & 0x40 == 0 {
                return Err(DECOMPRESSION);
            }
            let index = decode_int(buf, &mut pos, 6).ok_or(DECOMPRESSION)?;
            let &(n, v) = STATIC.get(index as usize).ok_or(DECOMPRESSION)?;
            field(n, v);
        } else if first & 0x40 != 0 {
            // §4.5.4 Literal Field Line with Name Reference: 0 1 N T index(4), value.
            if first & 0x10 == 0 {
                return Err(DECOMPRESSION);
            }
            let index = decode_int(buf, &mut pos, 4).ok_or(DECOMPRESSION)?;
            let &(n, _) = STATIC.get(index as usize).ok_or(DECOMPRESSION)?;
            decode_str(buf, &mut pos, 7, &mut value)?;
            field(n, &value);
        } else if first & 0x20 != 0 {
            // §4.5.6 Literal Field Line with Literal Name: 0 0 1 N H len(3), name, value.
            decode_str(buf, &mut pos, 3, &mut name)?;
            decode_str(buf, &mut pos, 7, &mut value)?;
            field(&name, &value);
        } else {
            // §4.5.3 and §4.5.5: post-base references, to the dynamic table only.
            return Err(DECOMPRESSION);
        }
    }
    Ok(())
}

/// The static table's entry for `name` and `value` exactly, or the first with `name`.
fn find_static(name: &[u8], value: &[u8]) -> (Option<usize>, Option<usize>) {
    let mut by_name = None;
    for (i, &(n, v)) in STATIC.iter().enumerate() {
        if n == name {
            if v == value {
                return (Some(i), by_name.or(Some(i)));
            }
            by_name = by_name.or(Some(i));
        }
    }
    (None, by_name)
}

/// Appends a field section's prefix (no dynamic table: Required Insert Count 0, Base 0).
pub fn begin_section(out: &mut Vec<u8>) {
    out.extend_from_slice(&[0, 0]);
}

/// Appends one field line: the static entry when it matches whole, else a literal with the
/// static table's name when it has the name, else a literal name. `name` must be lower case.
pub fn encode_field(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    match find_static(name, value) {
        (Some(index), _) => encode_int(index as u64, 6, 0xc0, out),
        (None, Some(index)) => {
            encode_int(index as u64, 4, 0x50, out);
            encode_str(value, 7, 0, out);
        }
        (None, None) => {
            encode_str(name, 3, 0x20, out);
            encode_str(value, 7, 0, out);
        }
    }
}

/// Appends a whole field section.
pub fn encode_section<'a>(fields: impl IntoIterator<Item = (&'a [u8], &'a [u8])>, out: &mut Vec<u8>) {
    begin_section(out);
    for (name, value) in fields {
        encode_field(name, value, out);
    }
}

/// What the client sends on its QPACK encoder stream (RFC 9204 §4.3). With a table capacity of
/// 0, only Set Dynamic Table Capacity to 0 is allowed; an insertion or a larger capacity is a
/// connection error, QPACK_ENCODER_STREAM_ERROR (§4.3.1, §2.1.3).
#[derive(Debug, Default)]
pub struct EncoderStream {
    partial: Vec<u8>,
}

impl EncoderStream {
    pub fn receive(&mut self, data: &[u8]) -> Result<(), QpackError> {
        const ERR: QpackError = QpackError(code::QPACK_ENCODER_STREAM_ERROR);
        self.partial.extend_from_slice(data);
        let mut pos = 0;
        while pos < self.partial.len() {
            if self.partial[pos] & 0xe0 != 0x20 {
                return Err(ERR);
            }
            let start = pos;
            match decode_int(&self.partial, &mut pos, 5) {
                Some(0) => {}
                Some(_) => return Err(ERR),
                None if self.partial.len() - start > 10 => return Err(ERR),
                None => {
                    pos = start;
                    break;
                }
            }
        }
        self.partial.drain(..pos);
        Ok(())
    }
}

/// What the client sends on its QPACK decoder stream (RFC 9204 §4.4). The server's field
/// sections never reference the dynamic table, so Section Acknowledgement and Insert Count
/// Increment have nothing to refer to: a connection error, QPACK_DECODER_STREAM_ERROR (§4.4.1,
/// §4.4.3). Stream Cancellation is allowed.
#[derive(Debug, Default)]
pub struct DecoderStream {
    partial: Vec<u8>,
}

impl DecoderStream {
    pub fn receive(&mut self, data: &[u8]) -> Result<(), QpackError> {
        const ERR: QpackError = QpackError(code::QPACK_DECODER_STREAM_ERROR);
        self.partial.extend_from_slice(data);
        let mut pos = 0;
        while pos < self.partial.len() {
            if self.partial[pos] & 0xc0 != 0x40 {
                return Err(ERR);
            }
            let start = pos;
            if decode_int(&self.partial, &mut pos, 6).is_none() {
                if self.partial.len() - start > 10 {
                    return Err(ERR);
                }
                pos = start;
                break;
            }
        }
        self.partial.drain(..pos);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn decode(buf: &[u8]) -> Result<Vec<(String, String)>, QpackError> {
        let mut out = Vec::new();
        decode_section(buf, |n, v| out.push((String::from_utf8(n.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap())))?;
        Ok(out)
    }

    #[test]
    fn rfc7541_integer_examples() {
        // C.1.1: 10 with a 5-bit prefix; C.1.2: 1337 with a 5-bit prefix; C.1.3: 42, 8-bit.
        for (value, n, bytes) in [(10u64, 5u8, vec![0x0a]), (1337, 5, vec![0x1f, 0x9a, 0x0a]), (42, 8, vec![0x2a])] {
            let mut out = Vec::new();
            encode_int(value, n, 0, &mut out);
            assert_eq!(out, bytes);
            let mut pos = 0;
            assert_eq!(decode_int(&bytes, &mut pos, n), Some(value));
            assert_eq!(pos, bytes.len());
        }
        // Truncated, and past 2^62.
        assert_eq!(decode_int(&[0x1f, 0x9a], &mut 0, 5), None);
        assert_eq!(decode_int(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], &mut 0, 8), None);
    }

    #[test]
    fn rfc9204_b1_literal_with_static_name_reference() {
        // B.1: ":path: /index.html", a literal field line with name reference to static entry 1.
        let section = hex("0000 510b 2f69 6e64 6578 2e68 746d 6c");
        assert_eq!(decode(&section).unwrap(), vec![(":path".into(), "/index.html".into())]);
    }

    #[test]
    fn rfc9204_b2_dynamic_table_references_are_refused() {
        // B.2: a section that needs two insertions (Required Insert Count 2, encoded 03), then a
        // post-base indexed line: this server has no dynamic table.
        let section = hex("0381 10 11");
        assert_eq!(decode(&section), Err(QpackError(code::QPACK_DECOMPRESSION_FAILED)));
        // Required Insert Count 0 but an indexed line with T=0 (dynamic), and a literal with a
        // dynamic name reference (N=0, T=0).
        assert_eq!(decode(&hex("0000 80")), Err(QpackError(code::QPACK_DECOMPRESSION_FAILED)));
        assert_eq!(decode(&hex("0000 4001 61")), Err(QpackError(code::QPACK_DECOMPRESSION_FAILED)));
        // Post-base name reference (0000xxxx).
        assert_eq!(decode(&hex("0000 0001 61")), Err(QpackError(code::QPACK_DECOMPRESSION_FAILED)));
    }

    #[test]
    fn malformed_sections_are_refused() {
        let failed = Err(QpackError(code::QPACK_DECOMPRESSION_FAILED));
        assert_eq!(decode(&hex("00")), failed); // no Base
        assert_eq!(decode(&hex("0000 ff63")), failed); // static index 99+63: past the table
        assert_eq!(decode(&hex("0000 5f")), failed); // truncated index
        assert_eq!(decode(&hex("0000 510b 2f")), failed); // value shorter than its length
        assert_eq!(decode(&hex("0000 5181 00")), failed); // Huffman value: bad padding
    }

    #[test]
    fn encoded_sections_decode_to_themselves() {
        let fields: Vec<(&[u8], &[u8])> = vec![
            (b":status", b"200"),                  // indexed: static 25
            (b":status", b"201"),                  // name reference
            (b"content-type", b"text/plain"),      // name reference
            (b"x-custom", b"Some Value \x01\xff"), // literal name
            (b"content-length", b"0"),
            (b"x-empty", b""),
        ];
        let mut out = Vec::new();
        encode_section(fields.iter().copied(), &mut out);
        assert_eq!(&out[..3], &[0, 0, 0xc0 | 25]);
        let mut back = Vec::new();
        decode_section(&out, |n, v| back.push((n.to_vec(), v.to_vec()))).unwrap();
        let expect: Vec<(Vec<u8>, Vec<u8>)> = fields.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
        assert_eq!(back, expect);
    }

    #[test]
    fn encoder_stream_allows_only_capacity_zero() {
        let mut s = EncoderStream::default();
        s.receive(&[0x20]).unwrap(); // Set Dynamic Table Capacity 0
        assert_eq!(s.receive(&[0x3f, 0xe1, 0x1f]), Err(QpackError(code::QPACK_ENCODER_STREAM_ERROR)));
        let mut s = EncoderStream::default();
        s.receive(&[0x3f]).unwrap(); // an incomplete capacity waits for more
        assert_eq!(s.receive(&[0x01]), Err(QpackError(code::QPACK_ENCODER_STREAM_ERROR)));
        let mut s = EncoderStream::default();
        // Insert with static name reference (B.2's "c00f 7777 772e 6578 616d 706c 652e 636f 6d").
        assert_eq!(s.receive(&hex("c00f 7777")), Err(QpackError(code::QPACK_ENCODER_STREAM_ERROR)));
    }

    #[test]
    fn decoder_stream_allows_only_stream_cancellation() {
        let mut s = DecoderStream::default();
        s.receive(&[0x48]).unwrap(); // Stream Cancellation, stream 8
        assert_eq!(s.receive(&[0x84]), Err(QpackError(code::QPACK_DECODER_STREAM_ERROR))); // Section Ack
        let mut s = DecoderStream::default();
        assert_eq!(s.receive(&[0x01]), Err(QpackError(code::QPACK_DECODER_STREAM_ERROR)));
        // Increment
    }
}
