//! A tiny h2c server over std::net, a thread per connection, driving the sans-IO `Connection`
//! as the engine will from libuv: read, `receive`, answer the events, write `pending_output`.
//! Routes: `/big` answers 1 MiB (sent as the client's window and `Drained` allow), `/trailers`
//! a body then trailers, a request with a body gets it back, anything else "Hello, World!".
#![allow(dead_code)]

use cog_http2::{Config, Connection, Event, StreamId};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

pub const BIG: usize = 1 << 20;
const PIECE: usize = 64 * 1024;

pub fn listen(listener: TcpListener) {
    for socket in listener.incoming() {
        let Ok(socket) = socket else { continue };
        std::thread::spawn(move || {
            let _ = serve(socket);
        });
    }
}

/// What a stream still has to send of `/big`, and what a request with a body sent so far.
#[derive(Default)]
struct Pending {
    big_left: HashMap<StreamId, usize>,
    bodies: HashMap<StreamId, Vec<u8>>,
}

fn serve(mut socket: TcpStream) -> std::io::Result<()> {
    socket.set_nodelay(true)?;
    let mut conn = Connection::new(Config::default()).expect("a connection");
    let mut pending = Pending::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        loop {
            let out = conn.pending_output();
            if out.is_empty() {
                break;
            }
            socket.write_all(out)?;
            let n = out.len();
            conn.consume_output(n);
            // Writing may have drained streams: they take more.
            answer(&mut conn, &mut pending);
        }
        if conn.is_done() {
            return Ok(());
        }
        let n = socket.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let result = conn.receive(&buf[..n]);
        answer(&mut conn, &mut pending);
        if let Err(e) = result {
            let out = conn.pending_output().to_vec();
            socket.write_all(&out)?;
            eprintln!("connection closed: {e}");
            return Ok(());
        }
    }
}

fn answer(conn: &mut Connection, pending: &mut Pending) {
    let events = conn.take_events();
    for event in events.iter() {
        match event {
            Event::Request(req) => {
                let stream = req.stream;
                if req.too_large {
                    conn.respond(stream, 431, &[], true).unwrap();
                } else if req.path == b"/big" {
                    conn.respond(stream, 200, &[(b"content-type", b"application/octet-stream"), (b"content-length", BIG.to_string().as_bytes())], false)
                        .unwrap();
                    pending.big_left.insert(stream, BIG);
                    more_big(conn, pending, stream);
                } else if req.end_stream {
                    hello(conn, stream, req.path == b"/trailers");
                } else {
                    pending.bodies.insert(stream, Vec::new());
                }
            }
            Event::Data { stream, data, end_stream } => {
                conn.consume(stream, data.len());
                if let Some(body) = pending.bodies.get_mut(&stream) {
                    body.extend_from_slice(data);
                }
                if end_stream {
                    echo(conn, pending, stream);
                }
            }
            Event::Trailers { stream, .. } => echo(conn, pending, stream),
            Event::Drained { stream } => more_big(conn, pending, stream),
            Event::Closed { stream } | Event::Reset { stream, .. } => {
                pending.big_left.remove(&stream);
                pending.bodies.remove(&stream);
            }
            Event::GoAway { .. } | Event::Ping => {}
        }
    }
    conn.recycle(events);
}

fn hello(conn: &mut Connection, stream: StreamId, trailers: bool) {
    conn.respond(stream, 200, &[(b"content-type", b"text/plain")], false).unwrap();
    if trailers {
        conn.send_data(stream, b"Hello, World!", false).unwrap();
        conn.send_trailers(stream, &[(b"x-checksum", b"abc")]).unwrap();
    } else {
        conn.send_data(stream, b"Hello, World!", true).unwrap();
    }
}

fn echo(conn: &mut Connection, pending: &mut Pending, stream: StreamId) {
    let Some(body) = pending.bodies.remove(&stream) else { return };
    let length = body.len().to_string();
    conn.respond(stream, 200, &[(b"content-type", b"application/octet-stream"), (b"content-length", length.as_bytes())], false).unwrap();
    conn.send_data(stream, &body, true).unwrap();
}

/// Sends `/big` a piece at a time while the stream's buffer takes it (the backpressure an app
/// streaming a body sees).
fn more_big(conn: &mut Connection, pending: &mut Pending, stream: StreamId) {
    let Some(left) = pending.big_left.get_mut(&stream) else { return };
    while *left > 0 {
        let n = (*left).min(PIECE);
        *left -= n;
        let piece = vec![b'x'; n];
        match conn.send_data(stream, &piece, *left == 0) {
            Ok(true) => {}
            Ok(false) | Err(_) => break,
        }
    }
}
