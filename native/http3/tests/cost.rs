//! What a handshake and a request cost the server, in memory (no sockets): run with
//! `cargo test --release -p cog-http3 --test cost -- --ignored --nocapture`.

mod common;

use std::time::Duration;

use cog_http3::{Config, Event};
use common::*;

fn one_connection(config: Config) -> (Duration, Duration, [(usize, usize); 2]) {
    let mut pair = Pair::new(config);
    assert!(pair.connected);
    let handshake = pair.server_time;
    pair.standard_control();
    let conn = pair.conn_id();
    pair.take();
    let stream = pair.get("/");
    pair.drive();
    for e in pair.take() {
        if let Event::Request(r) = e {
            pair.server.respond(conn, r.stream, 200, &[(b"content-type", b"text/plain")], false).unwrap();
            pair.server.send_data(conn, r.stream, b"Hello, World!", true).unwrap();
        }
    }
    pair.drive();
    assert!(pair.response(stream).finished);
    (handshake, pair.server_time, pair.sent)
}

fn requests_on_one_connection(n: usize) -> Duration {
    let mut pair = connected(Config::default());
    let conn = pair.conn_id();
    pair.take();
    let start = pair.server_time;
    for _ in 0..n / 50 {
        for _ in 0..50 {
            pair.get("/");
        }
        pair.drive();
        for e in pair.take() {
            if let Event::Request(r) = e {
                pair.server.respond(conn, r.stream, 200, &[(b"content-type", b"text/plain")], false).unwrap();
                pair.server.send_data(conn, r.stream, b"Hello, World!", true).unwrap();
            }
        }
        pair.drive();
    }
    pair.server_time - start
}

#[test]
#[ignore]
fn cost_of_a_handshake_and_a_request() {
    for (name, config) in [("with Retry", Config::default()), ("without Retry", Config { validate_address: false, ..Config::default() })] {
        let mut handshakes = Vec::new();
        let mut totals = Vec::new();
        let mut sent = [(0, 0); 2];
        for _ in 0..200 {
            let (h, t, s) = one_connection(config.clone());
            handshakes.push(h);
            totals.push(t);
            sent = s;
        }
        handshakes.sort();
        totals.sort();
        println!(
            "{name}: server time, median of 200: handshake {:?}, handshake + GET + answer {:?}; datagrams client->server {} ({} B), server->client {} ({} B)",
            handshakes[100], totals[100], sent[0].0, sent[0].1, sent[1].0, sent[1].1
        );
    }
    let mut per = Vec::new();
    for _ in 0..5 {
        per.push(requests_on_one_connection(5000) / 5000);
    }
    per.sort();
    println!("5000 GETs on one connection, 50 at a time: server time per request, median of 5 runs: {:?}", per[2]);
}
