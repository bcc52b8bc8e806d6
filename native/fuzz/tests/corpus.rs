//! The fuzz targets' checks on stable, without libFuzzer: over their seeds (`seeds/<target>/`,
//! also the fuzzer's starting corpus) and inputs made from them by a seeded pseudo-random
//! mutator, so `cargo test` catches a regression a fuzzer found once. `COG_FUZZ_CASES` sets how
//! many inputs each target gets (default 3,000; HTTP/2, slower, a third of that).

use std::path::Path;

/// xorshift64*: deterministic, so a failure names its case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes HTTP and WebSocket parsers care about, picked more often than others.
const INTERESTING: &[u8] = b"\r\n :\t,;0123456789abcdefABCDEF/-\x00\x7f\x80\xff";

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(out.len() + 1);
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] = rng.next() as u8;
            }
            1 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => out.insert(at, INTERESTING[rng.below(INTERESTING.len())]),
            3 if at < out.len() => {
                let end = (at + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            4 if at < out.len() => {
                let end = (at + rng.below(32)).min(out.len());
                let copy = out[at..end].to_vec();
                let to = rng.below(out.len() + 1);
                out.splice(to..to, copy);
            }
            _ => out.insert(at, rng.next() as u8),
        }
    }
    out
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.unwrap().path()).collect();
    files.sort();
    let seeds: Vec<_> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert!(!seeds.is_empty(), "seeds for {target}");
    seeds
}

fn run(target: &str, check: fn(&[u8]), divide: usize) {
    let cases = std::env::var("COG_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(3000) / divide;
    let seeds = seeds(target);
    for seed in &seeds {
        check(seed);
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ target.len() as u64);
    for case in 0..cases {
        let input = mutate(&mut rng, &seeds[case % seeds.len()]);
        if std::panic::catch_unwind(|| check(&input)).is_err() {
            panic!("{target}: case {case} failed on {:?}", String::from_utf8_lossy(&input));
        }
    }
}

#[test]
fn head() {
    run("head", cog_fuzz::head, 1);
}

#[test]
fn chunked() {
    run("chunked", cog_fuzz::chunked, 1);
}

#[test]
fn websocket() {
    run("websocket", cog_fuzz::websocket, 1);
}

#[test]
fn deflate() {
    run("deflate", cog_fuzz::deflate, 1);
}

#[test]
fn http2() {
    run("http2", cog_fuzz::http2, 3);
}

#[test]
fn h3frames() {
    run("h3frames", cog_fuzz::h3frames, 1);
}

#[test]
fn qpack() {
    run("qpack", cog_fuzz::qpack, 1);
}
