//! The crate's own cost of a request, for comparing one version with another by instructions
//! counted (repeatable where wall-clock time on a shared machine is not): N requests on one
//! connection, ten a read, each answered with a small body. The difference between two runs,
//! divided by the difference in N, is the cost of one request (without the connection's setup):
//!
//!   cargo build --release --manifest-path native/Cargo.toml -p cog-http2 --example per_request
//!   valgrind --tool=cachegrind --cache-sim=no native/target/release/examples/per_request 2000 [body]
//!   valgrind --tool=cachegrind --cache-sim=no native/target/release/examples/per_request 22000 [body]
//!
//! `body`: POST requests with two DATA frames of 1,000 bytes each, instead of GET.

#[path = "../tests/common/mod.rs"]
mod common;
use cog_http2::{Config, Event};
use common::*;

fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(1000);
    let body = std::env::args().nth(2).as_deref() == Some("body");
    let mut conn = connected(Config::default());
    let (mut input, mut out, mut streams) = (Vec::new(), Vec::new(), Vec::new());
    let mut id = 1u32;
    for _ in 0..n / 10 {
        input.clear();
        for _ in 0..10 {
            if body {
                input.extend(frame(HEADERS, END_HEADERS, id, &request_block(b"POST", b"/upload", &[(b"content-type", b"text/plain")])));
                input.extend(frame(DATA, 0, id, &[b'x'; 1000]));
                input.extend(frame(DATA, END_STREAM, id, &[b'y'; 1000]));
            } else {
                input.extend(get(id, b"/hello"));
            }
            id += 2;
        }
        conn.receive(&input).unwrap();
        let events = conn.take_events();
        for event in events.iter() {
            match event {
                Event::Request(req) => streams.push(req.stream),
                Event::Data { stream, data, .. } => conn.consume(stream, data.len()),
                _ => {}
            }
        }
        conn.recycle(events);
        for stream in streams.drain(..) {
            conn.respond(stream, 200, &[(b"content-type", b"text/plain")], false).unwrap();
            conn.send_data(stream, b"hello", true).unwrap();
        }
        out.clear();
        conn.write_output(&mut out, 1 << 20);
        let events = conn.take_events();
        conn.recycle(events);
    }
    std::hint::black_box(&out);
}
