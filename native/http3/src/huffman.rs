//! The Huffman code of RFC 7541 Appendix B, which QPACK uses for string literals (RFC 9204
//! §4.1.2). Encoding packs each byte's code; decoding walks a binary tree built once from the
//! same table, and refuses what §5.2 of RFC 7541 forbids: the EOS symbol inside a string, and
//! padding longer than 7 bits or not made of ones.

use std::sync::OnceLock;

use crate::tables::HUFFMAN;

/// The length in bytes of `data` once Huffman-encoded.
pub fn encoded_len(data: &[u8]) -> usize {
    let bits: usize = data.iter().map(|&b| HUFFMAN[b as usize].1 as usize).sum();
    bits.div_ceil(8)
}

/// Appends `data` Huffman-encoded to `out`, padded with ones (the EOS code's prefix).
pub fn encode(data: &[u8], out: &mut Vec<u8>) {
    let mut acc: u64 = 0;
    let mut bits: u32 = 0;
    for &b in data {
        let (code, len) = HUFFMAN[b as usize];
        acc = (acc << len) | code as u64;
        bits += len as u32;
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        let pad = 8 - bits;
        out.push(((acc << pad) | ((1 << pad) - 1)) as u8);
    }
}

/// A Huffman string that is not one (RFC 7541 §5.2).
#[derive(Debug, PartialEq, Eq)]
pub struct InvalidHuffman;

/// The decoding tree: node `i` has children `nodes[i][0]` and `nodes[i][1]`; a child is another
/// node's index, `LEAF | symbol`, or 0 when no code goes there (the root is never a child).
struct Tree {
    nodes: Vec<[u16; 2]>,
}

const LEAF: u16 = 0x8000;

fn tree() -> &'static Tree {
    static TREE: OnceLock<Tree> = OnceLock::new();
    TREE.get_or_init(|| {
        let mut nodes = vec![[0u16; 2]];
        for (sym, &(code, len)) in HUFFMAN.iter().enumerate() {
            let mut node = 0usize;
            for i in (0..len).rev() {
                let bit = ((code >> i) & 1) as usize;
                if i == 0 {
                    nodes[node][bit] = LEAF | sym as u16;
                } else {
                    if nodes[node][bit] == 0 {
                        nodes.push([0, 0]);
                        nodes[node][bit] = (nodes.len() - 1) as u16;
                    }
                    node = nodes[node][bit] as usize;
                }
            }
        }
        Tree { nodes }
    })
}

/// Appends the decoding of `data` to `out`.
pub fn decode(data: &[u8], out: &mut Vec<u8>) -> Result<(), InvalidHuffman> {
    let tree = tree();
    let mut node = 0usize;
    // Bits read since the last whole symbol, and whether they were all ones.
    let mut depth = 0u32;
    let mut ones = true;
    for &byte in data {
        for i in (0..8).rev() {
            let bit = ((byte >> i) & 1) as usize;
            let next = tree.nodes[node][bit];
            depth += 1;
            ones &= bit == 1;
            if next & LEAF != 0 {
                let sym = next & !LEAF;
                if sym == 256 {
                    return Err(InvalidHuffman);
                }
                out.push(sym as u8);
                node = 0;
                depth = 0;
                ones = true;
            } else if next == 0 {
                return Err(InvalidHuffman);
            } else {
                node = next as usize;
            }
        }
    }
    if depth > 7 || !ones {
        return Err(InvalidHuffman);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    // RFC 7541 Appendix C.4 and C.6: the Huffman-coded strings of its examples.
    const EXAMPLES: [(&str, &str); 8] = [
        ("www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"),
        ("no-cache", "a8eb 1064 9cbf"),
        ("custom-key", "25a8 49e9 5ba9 7d7f"),
        ("custom-value", "25a8 49e9 5bb8 e8b4 bf"),
        ("302", "6402"),
        ("private", "aec3 771a 4b"),
        ("Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"),
        (
            "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
            "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        ),
    ];

    #[test]
    fn rfc7541_examples_encode_and_decode() {
        for (plain, coded) in EXAMPLES {
            let coded = hex(coded);
            let mut out = Vec::new();
            encode(plain.as_bytes(), &mut out);
            assert_eq!(out, coded, "{plain}");
            assert_eq!(encoded_len(plain.as_bytes()), coded.len());
            let mut back = Vec::new();
            decode(&coded, &mut back).unwrap();
            assert_eq!(back, plain.as_bytes());
        }
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        encode(&all, &mut out);
        let mut back = Vec::new();
        decode(&out, &mut back).unwrap();
        assert_eq!(back, all);
    }

    #[test]
    fn bad_padding_and_eos_are_refused() {
        // "a" is 00011 (5 bits): padding of zeros is refused, of ones accepted.
        assert_eq!(decode(&[0b0001_1000], &mut Vec::new()), Err(InvalidHuffman));
        decode(&[0b0001_1111], &mut Vec::new()).unwrap();
        // A whole byte of padding (8 ones) is too long.
        assert_eq!(decode(&[0b0001_1111, 0xff], &mut Vec::new()), Err(InvalidHuffman));
        // The EOS symbol (30 ones) inside a string.
        assert_eq!(decode(&[0xff, 0xff, 0xff, 0xfc], &mut Vec::new()), Err(InvalidHuffman));
    }
}
