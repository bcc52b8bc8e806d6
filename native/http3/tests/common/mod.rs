//! A client and a server endpoint wired in memory (after quinn-proto's tests/util.rs): the
//! server is this crate's `Endpoint`, the client a bare quinn-proto connection speaking just
//! enough HTTP/3 (with this crate's frame and QPACK code) to send requests, raw bytes included,
//! and read answers. Time is simulated: it moves only to the next timer when nothing is in
//! flight.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use cog_http3::quinn_proto::{
    self, crypto::rustls::QuicClientConfig, ClientConfig, ConnectionHandle, DatagramEvent, Dir, EndpointConfig, StreamEvent, StreamId as QuicStream, VarInt,
};
use cog_http3::{frame, qpack, rustls, Config, ConnId, Endpoint, Event};

pub struct Certificate {
    pub chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    pub key: rustls::pki_types::PrivateKeyDer<'static>,
}

/// A self-signed certificate for "localhost".
pub fn certificate() -> Certificate {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    Certificate { chain: vec![cert.cert.der().clone()], key: rustls::pki_types::PrivateKeyDer::Pkcs8(cert.key_pair.serialize_der().into()) }
}

pub fn client_config(cert: &Certificate) -> ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.chain[0].clone()).unwrap();
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    ClientConfig::new(Arc::new(QuicClientConfig::try_from(tls).unwrap()))
}

/// What the client has of one response.
#[derive(Debug, Default)]
pub struct Response {
    pub heads: Vec<Vec<(String, String)>>,
    pub body: Vec<u8>,
    pub trailers: Option<Vec<(String, String)>>,
    pub finished: bool,
    pub reset: Option<u64>,
    pub stopped: Option<u64>,
    reader: Option<frame::FrameReader>,
}

impl Response {
    pub fn status(&self) -> Option<&str> {
        let head = self.heads.iter().find(|h| h.iter().any(|(n, v)| n == ":status" && !v.starts_with('1')))?;
        head.iter().find(|(n, _)| n == ":status").map(|(_, v)| v.as_str())
    }
}

pub struct Pair {
    pub server: Endpoint,
    pub client: quinn_proto::Endpoint,
    pub conn: quinn_proto::Connection,
    ch: ConnectionHandle,
    pub now: Instant,
    pub server_addr: SocketAddr,
    pub client_addr: SocketAddr,
    to_server: VecDeque<Vec<u8>>,
    to_client: VecDeque<Vec<u8>>,
    pub events: Vec<Event>,
    pub responses: HashMap<u64, Response>,
    /// The server's control stream, raw.
    pub server_control: Vec<u8>,
    pub closed: Option<quinn_proto::ConnectionError>,
    pub connected: bool,
    /// Datagrams carried each way, and their bytes.
    pub sent: [(usize, usize); 2],
    control: Option<QuicStream>,
    /// Drop datagrams from the server instead of delivering them (to hold a flow).
    pub hold_server: bool,
    /// Drop datagrams from the client instead of delivering them.
    pub hold_client: bool,
    /// The first byte of each datagram the server sent (its packet's form and type).
    pub server_firsts: Vec<u8>,
    /// Wall time spent in the server's calls (recv, poll_transmit, timers, take_events).
    pub server_time: Duration,
}

impl Pair {
    pub fn new(config: Config) -> Pair {
        let cert = certificate();
        let server = Endpoint::with_certificate(config, cert.chain.clone(), cert.key.clone_key()).unwrap();
        Pair::with(server, client_config(&cert))
    }

    pub fn with(server: Endpoint, client_config: ClientConfig) -> Pair {
        Pair::build(server, client_config, false)
    }

    /// A pair whose client sends its first flight and is then never heard from again.
    pub fn with_held(server: Endpoint, client_config: ClientConfig) -> Pair {
        Pair::build(server, client_config, true)
    }

    fn build(server: Endpoint, client_config: ClientConfig, held: bool) -> Pair {
        let mut client = quinn_proto::Endpoint::new(Arc::new(EndpointConfig::default()), None, true, None);
        let now = Instant::now();
        let server_addr: SocketAddr = "127.0.0.1:4433".parse().unwrap();
        let client_addr: SocketAddr = "127.0.0.1:50000".parse().unwrap();
        let (ch, conn) = client.connect(now, client_config, server_addr, "localhost").unwrap();
        let mut pair = Pair {
            server,
            client,
            conn,
            ch,
            now,
            server_addr,
            client_addr,
            to_server: VecDeque::new(),
            to_client: VecDeque::new(),
            events: Vec::new(),
            responses: HashMap::new(),
            server_control: Vec::new(),
            closed: None,
            connected: false,
            sent: [(0, 0); 2],
            control: None,
            hold_server: false,
            hold_client: false,
            server_firsts: Vec::new(),
            server_time: Duration::ZERO,
        };
        if held {
            pair.drive_client();
            pair.deliver();
            pair.hold_client = true;
            pair.hold_server = true;
        }
        pair.drive();
        pair
    }

    /// A new connection from the same client endpoint (its TLS session cache kept).
    pub fn reconnect(&mut self, config: ClientConfig) {
        let (ch, conn) = self.client.connect(self.now, config, self.server_addr, "localhost").unwrap();
        self.ch = ch;
        self.conn = conn;
        self.connected = false;
        self.closed = None;
        self.responses.clear();
        self.server_control.clear();
        self.control = None;
    }

    /// Opens the client's control stream with an empty SETTINGS frame (or `settings` raw).
    pub fn open_control(&mut self, bytes: &[u8]) {
        let id = self.conn.streams().open(Dir::Uni).unwrap();
        self.conn.send_stream(id).write(bytes).unwrap();
        self.control = Some(id);
        self.drive();
    }

    pub fn control_bytes(&mut self, bytes: &[u8]) {
        let id = self.control.unwrap();
        self.conn.send_stream(id).write(bytes).unwrap();
        self.drive();
    }

    pub fn standard_control(&mut self) {
        let mut out = vec![frame::stream_type::CONTROL as u8];
        frame::write_header(frame::SETTINGS, 0, &mut out);
        self.open_control(&out);
    }

    /// Opens a request stream and writes `bytes` on it (ending it with `fin`).
    pub fn raw_request(&mut self, bytes: &[u8], fin: bool) -> u64 {
        let id = self.conn.streams().open(Dir::Bi).expect("stream limit");
        let mut written = 0;
        while written < bytes.len() {
            written += self.conn.send_stream(id).write(&bytes[written..]).unwrap();
            if written < bytes.len() {
                self.drive();
            }
        }
        if fin {
            self.conn.send_stream(id).finish().unwrap();
        }
        self.responses.insert(id.into(), Response::default());
        id.into()
    }

    pub fn write(&mut self, stream: u64, bytes: &[u8], fin: bool) {
        let id = QuicStream::from(VarInt::from_u64(stream).unwrap());
        let mut written = 0;
        while written < bytes.len() {
            written += self.conn.send_stream(id).write(&bytes[written..]).unwrap_or(0);
            if written < bytes.len() {
                self.drive();
            }
        }
        if fin {
            self.conn.send_stream(id).finish().unwrap();
        }
    }

    pub fn reset_stream(&mut self, stream: u64, code: u64) {
        let id = QuicStream::from(VarInt::from_u64(stream).unwrap());
        self.conn.send_stream(id).reset(VarInt::from_u64(code).unwrap()).unwrap();
        let _ = self.conn.recv_stream(id).stop(VarInt::from_u64(code).unwrap());
    }

    /// A GET (or any head), with an optional body, ended.
    pub fn request(&mut self, fields: &[(&str, &str)], body: Option<&[u8]>) -> u64 {
        let mut out = headers_frame(fields);
        if let Some(body) = body {
            frame::write_header(frame::DATA, body.len() as u64, &mut out);
            out.extend_from_slice(body);
        }
        self.raw_request(&out, true)
    }

    pub fn get(&mut self, path: &str) -> u64 {
        self.request(&[(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", path)], None)
    }

    /// Carries datagrams both ways until none is in flight, moving time to timers due within
    /// `horizon`.
    pub fn drive_for(&mut self, horizon: Duration) {
        let end = self.now + horizon;
        for _ in 0..100_000 {
            self.drive_client();
            self.drive_server();
            if !self.to_server.is_empty() || !self.to_client.is_empty() {
                self.deliver();
                continue;
            }
            let next = [self.conn.poll_timeout(), self.server.poll_timeout()].into_iter().flatten().min();
            match next {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    if self.conn.poll_timeout().is_some_and(|c| c <= self.now) {
                        self.conn.handle_timeout(self.now);
                    }
                    let t = Instant::now();
                    self.server.handle_timeout(self.now);
                    self.server_time += t.elapsed();
                }
                _ => return,
            }
        }
        panic!("no end to the exchange");
    }

    /// Drives with a horizon of 200 ms (ACK delays and loss timers, never the idle timeout).
    pub fn drive(&mut self) {
        self.drive_for(Duration::from_millis(200));
    }

    fn deliver(&mut self) {
        while let Some(d) = self.to_server.pop_front() {
            if self.hold_client {
                continue;
            }
            self.sent[0].0 += 1;
            self.sent[0].1 += d.len();
            let t = Instant::now();
            self.server.recv(self.now, self.client_addr, &d);
            self.server_time += t.elapsed();
        }
        let mut buf = Vec::new();
        while let Some(d) = self.to_client.pop_front() {
            self.sent[1].0 += 1;
            self.sent[1].1 += d.len();
            self.server_firsts.push(d[0]);
            if self.hold_server {
                continue;
            }
            match self.client.handle(self.now, self.server_addr, None, None, BytesMut::from(&d[..]), &mut buf) {
                Some(DatagramEvent::ConnectionEvent(ch, ev)) if ch == self.ch => self.conn.handle_event(ev),
                Some(DatagramEvent::Response(t)) => self.to_server.push_back(buf[..t.size].to_vec()),
                _ => {}
            }
            buf.clear();
        }
    }

    fn drive_server(&mut self) {
        let mut buf = Vec::new();
        let start = Instant::now();
        while let Some(t) = self.server.poll_transmit(self.now, &mut buf) {
            assert_eq!(t.destination, self.client_addr);
            self.to_client.push_back(buf[..t.size].to_vec());
        }
        self.events.extend(self.server.take_events());
        self.server_time += start.elapsed();
    }

    fn drive_client(&mut self) {
        loop {
            while let Some(ev) = self.conn.poll_endpoint_events() {
                if let Some(back) = self.client.handle_event(self.ch, ev) {
                    self.conn.handle_event(back);
                }
            }
            let Some(ev) = self.conn.poll() else { break };
            match ev {
                quinn_proto::Event::Connected => self.connected = true,
                quinn_proto::Event::ConnectionLost { reason } => self.closed = Some(reason),
                quinn_proto::Event::Stream(StreamEvent::Readable { id }) => self.client_read(id),
                quinn_proto::Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = self.conn.streams().accept(Dir::Uni) {
                        self.client_read(id);
                    }
                }
                quinn_proto::Event::Stream(StreamEvent::Stopped { id, error_code }) => {
                    if let Some(r) = self.responses.get_mut(&u64::from(id)) {
                        r.stopped = Some(error_code.into_inner());
                    }
                }
                _ => {}
            }
        }
        let mut buf = Vec::new();
        while let Some(t) = self.conn.poll_transmit(self.now, 1, &mut buf) {
            self.to_server.push_back(buf[..t.size].to_vec());
            buf.clear();
        }
    }

    fn client_read(&mut self, id: QuicStream) {
        let mut pieces = Vec::new();
        let (mut fin, mut reset) = (false, None);
        {
            let mut recv = self.conn.recv_stream(id);
            let Ok(mut chunks) = recv.read(true) else {
                return;
            };
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(c)) => pieces.push(c.bytes),
                    Ok(None) => {
                        fin = true;
                        break;
                    }
                    Err(quinn_proto::ReadError::Blocked) => break,
                    Err(quinn_proto::ReadError::Reset(code)) => {
                        reset = Some(code.into_inner());
                        break;
                    }
                }
            }
            let _ = chunks.finalize();
        }
        if id.dir() == Dir::Uni {
            for p in pieces {
                self.server_control.extend_from_slice(&p);
            }
            return;
        }
        let r = self.responses.entry(id.into()).or_default();
        let reader = r.reader.get_or_insert_with(|| frame::FrameReader::new(1 << 20));
        let mut frames = Vec::new();
        for p in pieces {
            reader
                .read(p, &mut |f| {
                    frames.push(f);
                    Ok(())
                })
                .unwrap();
        }
        for f in frames {
            match f {
                frame::Frame::Data(d) => r.body.extend_from_slice(&d),
                frame::Frame::Whole { ty: frame::HEADERS, payload } => {
                    let fields = decode(&payload);
                    if fields.iter().any(|(n, _)| n == ":status") {
                        r.heads.push(fields);
                    } else {
                        r.trailers = Some(fields);
                    }
                }
                _ => {}
            }
        }
        r.finished |= fin;
        r.reset = r.reset.or(reset);
    }

    /// The server's events since last taken.
    pub fn take(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    pub fn response(&self, stream: u64) -> &Response {
        &self.responses[&stream]
    }

    /// The server's connection (the only one).
    pub fn conn_id(&self) -> ConnId {
        self.events.iter().find_map(|e| if let Event::Connected { conn, .. } = e { Some(*conn) } else { None }).unwrap_or(ConnId(0))
    }

    /// The application error code the client's connection was closed with.
    pub fn close_code(&self) -> Option<u64> {
        match &self.closed {
            Some(quinn_proto::ConnectionError::ApplicationClosed(c)) => Some(c.error_code.into_inner()),
            _ => None,
        }
    }
}

pub fn headers_frame(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut section = Vec::new();
    qpack::encode_section(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())), &mut section);
    let mut out = Vec::new();
    frame::write_header(frame::HEADERS, section.len() as u64, &mut out);
    out.extend_from_slice(&section);
    out
}

pub fn data_frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::write_header(frame::DATA, body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

pub fn decode(section: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    qpack::decode_section(section, |n, v| out.push((String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned()))).unwrap();
    out
}

/// A connected pair whose client has opened its control stream.
pub fn connected(config: Config) -> Pair {
    let mut pair = Pair::new(config);
    assert!(pair.connected, "handshake");
    pair.standard_control();
    pair
}

pub fn bytes(b: &[u8]) -> Bytes {
    Bytes::copy_from_slice(b)
}
