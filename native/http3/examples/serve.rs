//! A tiny HTTP/3 server on a std UDP socket, for interoperability tests: it answers every
//! request with 200 and a text body naming its method and path (a POST's body echoed), from a
//! self-signed certificate for "localhost". One thread, a blocking socket whose read timeout
//! is the endpoint's next timer: the loop the addon will run on libuv.
//!
//! cargo run -p cog-http3 --example serve -- 127.0.0.1:4433 [--no-retry] [--requests N]
//! (with --requests, it exits once it has answered N requests and printed what it saw)

use std::collections::HashMap;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

use cog_http3::{Config, ConnId, Endpoint, Event};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let addr = args.get(1).cloned().unwrap_or_else(|| "127.0.0.1:4433".into());
    let retry = !args.iter().any(|a| a == "--no-retry");
    let limit: Option<usize> = args.iter().position(|a| a == "--requests").and_then(|i| args.get(i + 1)?.parse().ok());
    assert!(addr.starts_with("127.0.0.1:"), "loopback only");

    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let chain = vec![cert.cert.der().clone()];
    let key = cog_http3::rustls::pki_types::PrivateKeyDer::Pkcs8(cert.key_pair.serialize_der().into());
    let config = Config { validate_address: retry, ..Config::default() };
    let mut endpoint = Endpoint::with_certificate(config, chain, key).unwrap();

    let socket = UdpSocket::bind(&addr).unwrap();
    println!("listening on {}", socket.local_addr().unwrap());
    let mut buf = vec![0u8; 65536];
    let mut out = Vec::with_capacity(1500);
    // Request bodies by stream, echoed when they end.
    let mut bodies: HashMap<(ConnId, u64), (String, Vec<u8>)> = HashMap::new();
    let mut answered = 0;
    loop {
        let now = Instant::now();
        let wait = endpoint.poll_timeout().map(|t| t.saturating_duration_since(now)).unwrap_or(Duration::from_secs(1));
        socket.set_read_timeout(Some(wait.max(Duration::from_millis(1)))).unwrap();
        match socket.recv_from(&mut buf) {
            Ok((n, from)) => endpoint.recv(Instant::now(), from, &buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) => panic!("{e}"),
        }
        endpoint.handle_timeout(Instant::now());
        for event in endpoint.take_events() {
            match event {
                Event::Request(r) => {
                    let line = format!("{} {}", String::from_utf8_lossy(&r.method), String::from_utf8_lossy(&r.path));
                    println!("request: {line} ({} fields)", r.headers.len());
                    bodies.insert((r.conn, r.stream), (line, Vec::new()));
                    if r.end_stream {
                        answer(&mut endpoint, r.conn, r.stream, bodies.remove(&(r.conn, r.stream)).unwrap());
                        answered += 1;
                    }
                }
                Event::Data { conn, stream, data, end_stream } => {
                    endpoint.consume(conn, stream, data.len() as u64).ok();
                    if let Some(entry) = bodies.get_mut(&(conn, stream)) {
                        entry.1.extend_from_slice(&data);
                    }
                    if end_stream {
                        if let Some(entry) = bodies.remove(&(conn, stream)) {
                            answer(&mut endpoint, conn, stream, entry);
                            answered += 1;
                        }
                    }
                }
                Event::Reset { conn, stream, code } => {
                    println!("reset: stream {stream} code {code:#x}");
                    bodies.remove(&(conn, stream));
                }
                Event::ConnectionClosed { code, reason, .. } => {
                    println!("closed: {code:?} {reason}")
                }
                Event::Connected { remote, .. } => println!("connected: {remote}"),
                _ => {}
            }
        }
        while let Some(t) = endpoint.poll_transmit(Instant::now(), &mut out) {
            let _ = socket.send_to(&out[..t.size], t.destination);
        }
        if limit.is_some_and(|n| answered >= n) && endpoint.take_events().is_empty() {
            // Let the last answers and acknowledgements go out.
            let end = Instant::now() + Duration::from_millis(300);
            while Instant::now() < end {
                socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                if let Ok((n, from)) = socket.recv_from(&mut buf) {
                    endpoint.recv(Instant::now(), from, &buf[..n]);
                }
                endpoint.handle_timeout(Instant::now());
                while let Some(t) = endpoint.poll_transmit(Instant::now(), &mut out) {
                    let _ = socket.send_to(&out[..t.size], t.destination);
                }
            }
            println!("answered {answered}");
            return;
        }
    }
}

fn answer(endpoint: &mut Endpoint, conn: ConnId, stream: u64, (line, body): (String, Vec<u8>)) {
    let mut text = format!("hello from cog-http3: {line}\n").into_bytes();
    text.extend_from_slice(&body);
    let len = text.len().to_string();
    endpoint.respond(conn, stream, 200, &[(b"content-type", b"text/plain"), (b"content-length", len.as_bytes())], false).unwrap();
    endpoint.send_data(conn, stream, &text, true).unwrap();
}
