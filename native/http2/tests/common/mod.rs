//! A client's side, byte by byte: frames to feed a connection and a parser for what it answers.
#![allow(dead_code)]

use cog_http2::{Config, Connection, Event};

pub const DATA: u8 = 0;
pub const HEADERS: u8 = 1;
pub const RST_STREAM: u8 = 3;
pub const SETTINGS: u8 = 4;
pub const PING: u8 = 6;
pub const GOAWAY: u8 = 7;
pub const WINDOW_UPDATE: u8 = 8;
pub const CONTINUATION: u8 = 9;
pub const END_STREAM: u8 = 1;
pub const ACK: u8 = 1;
pub const END_HEADERS: u8 = 4;

pub fn frame(ty: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let n = payload.len();
    let mut f = vec![(n >> 16) as u8, (n >> 8) as u8, n as u8, ty, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// The client's connection preface and an empty SETTINGS.
pub fn preface() -> Vec<u8> {
    let mut p = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    p.extend(frame(SETTINGS, 0, 0, &[]));
    p
}

/// An HPACK literal field without indexing (new name): never touches the dynamic table.
pub fn literal(block: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    assert!(name.len() < 127 && value.len() < 127);
    block.push(0x00);
    block.push(name.len() as u8);
    block.extend_from_slice(name);
    block.push(value.len() as u8);
    block.extend_from_slice(value);
}

/// A request's header block: `method`, `path`, scheme http, authority localhost, and `fields`.
pub fn request_block(method: &[u8], path: &[u8], fields: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut b = Vec::new();
    literal(&mut b, b":method", method);
    literal(&mut b, b":scheme", b"http");
    literal(&mut b, b":authority", b"localhost");
    literal(&mut b, b":path", path);
    for (n, v) in fields {
        literal(&mut b, n, v);
    }
    b
}

pub fn get(stream: u32, path: &[u8]) -> Vec<u8> {
    frame(HEADERS, END_HEADERS | END_STREAM, stream, &request_block(b"GET", path, &[]))
}

#[derive(Debug, Clone)]
pub struct Frame {
    pub ty: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

/// Splits output into frames (a partial last frame is left out).
pub fn frames(mut bytes: &[u8]) -> Vec<Frame> {
    let mut out = Vec::new();
    while bytes.len() >= 9 {
        let len = (bytes[0] as usize) << 16 | (bytes[1] as usize) << 8 | bytes[2] as usize;
        if bytes.len() < 9 + len {
            break;
        }
        out.push(Frame {
            ty: bytes[3],
            flags: bytes[4],
            stream: u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) & 0x7fff_ffff,
            payload: bytes[9..9 + len].to_vec(),
        });
        bytes = &bytes[9 + len..];
    }
    out
}

/// The GOAWAY frames' (last stream, error code).
pub fn goaways(frames: &[Frame]) -> Vec<(u32, u32)> {
    frames
        .iter()
        .filter(|f| f.ty == GOAWAY)
        .map(|f| (u32::from_be_bytes(f.payload[0..4].try_into().unwrap()) & 0x7fff_ffff, u32::from_be_bytes(f.payload[4..8].try_into().unwrap())))
        .collect()
}

/// The RST_STREAM frames' (stream, error code).
pub fn resets(frames: &[Frame]) -> Vec<(u32, u32)> {
    frames.iter().filter(|f| f.ty == RST_STREAM).map(|f| (f.stream, u32::from_be_bytes(f.payload[0..4].try_into().unwrap()))).collect()
}

/// Everything pending, consumed.
pub fn drain(conn: &mut Connection) -> Vec<u8> {
    let mut all = Vec::new();
    loop {
        let out = conn.pending_output().to_vec();
        if out.is_empty() {
            return all;
        }
        conn.consume_output(out.len());
        all.extend(out);
    }
}

/// A connection past the preface, its first output read.
pub fn connected(config: Config) -> Connection {
    let mut conn = Connection::new(config).unwrap();
    conn.receive(&preface()).unwrap();
    drain(&mut conn);
    conn
}

/// Answers every request of the events with 200 and `body`.
pub fn answer_all(conn: &mut Connection, body: &[u8]) -> usize {
    let events = conn.take_events();
    let mut n = 0;
    for event in events.iter() {
        if let Event::Request(req) = event {
            conn.respond(req.stream, 200, &[(b"content-type", b"text/plain")], false).unwrap();
            conn.send_data(req.stream, body, true).unwrap();
            n += 1;
        }
    }
    conn.recycle(events);
    n
}
