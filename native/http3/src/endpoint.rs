//! A server endpoint: every connection of one UDP socket. Datagrams in (`recv`), datagrams out
//! (`poll_transmit`), a timer (`poll_timeout`, `handle_timeout`), events out (`take_events`),
//! and the app's answers in (`respond`, `send_data`, `send_trailers`, `reset`, `consume`,
//! `shutdown`, `close`). No I/O, no thread, no clock but the `now` it is given.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;
use quinn_proto::crypto::rustls::QuicServerConfig;
use quinn_proto::{ConnectionHandle, DatagramEvent, EndpointConfig, IdleTimeout, ServerConfig, TransportConfig, VarInt};

use crate::config::Config;
use crate::connection::Conn;
use crate::error::{code, Error};
use crate::events::{ConnId, Event, StreamId};

/// A datagram to send: `size` bytes at the start of the buffer given to `poll_transmit`, to
/// `destination` (from `source` when the socket has several addresses). With `segment_size`,
/// the buffer holds several datagrams of that size (the last may be shorter), for UDP GSO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    pub destination: SocketAddr,
    pub size: usize,
    pub segment_size: Option<usize>,
    pub source: Option<IpAddr>,
}

pub struct Endpoint {
    quic: quinn_proto::Endpoint,
    config: Config,
    conns: HashMap<usize, Conn>,
    events: Vec<Event>,
    /// Datagrams the endpoint itself answered with (Retry, version negotiation, stateless
    /// reset, a refusal).
    replies: VecDeque<(Transmit, Vec<u8>)>,
    /// Where `poll_transmit`'s round looks first, so that one busy connection does not starve others.
    next: usize,
    /// The connection that sent the last datagram, and how many it has sent in a row: it goes on,
    /// up to `BURST`, before a round of the others.
    current: Option<usize>,
    burst: u32,
}

/// Datagrams one connection may send in a row before the others get a turn. Without it every
/// datagram began a round of every connection (each polled and driven, their keys sorted): with
/// 64 connections and a file answer of many datagrams, that round was most of the server's work.
const BURST: u32 = 16;

impl Endpoint {
    /// An endpoint serving with this TLS configuration, which must allow TLS 1.3: its ALPN is
    /// set to `h3`, and its early data (0-RTT) is refused (replayable requests: RFC 9114 §10.9).
    pub fn new(config: Config, mut tls: rustls::ServerConfig) -> Result<Endpoint, Error> {
        tls.alpn_protocols = vec![b"h3".to_vec()];
        tls.max_early_data_size = 0;
        let crypto = QuicServerConfig::try_from(tls).map_err(|e| Error::Tls(e.to_string()))?;
        let mut transport = TransportConfig::default();
        transport
            .max_concurrent_bidi_streams(VarInt::from_u32(config.max_concurrent_streams))
            // The client's control and two QPACK streams (§6.2: at least 3 must be allowed).
            .max_concurrent_uni_streams(VarInt::from_u32(3))
            .stream_receive_window(VarInt::from_u32(config.stream_receive_window))
            .receive_window(VarInt::from_u32(config.connection_receive_window))
            .send_window(config.send_window)
            .max_idle_timeout(Some(IdleTimeout::try_from(config.idle_timeout).map_err(|e| Error::Tls(e.to_string()))?))
            .datagram_receive_buffer_size(None);
        let mut server = ServerConfig::with_crypto(Arc::new(crypto));
        server.transport_config(Arc::new(transport));
        let quic = quinn_proto::Endpoint::new(Arc::new(EndpointConfig::default()), Some(Arc::new(server)), true, None);
        Ok(Endpoint { quic, config, conns: HashMap::new(), events: Vec::new(), replies: VecDeque::new(), next: 0, current: None, burst: 0 })
    }

    /// An endpoint serving one certificate chain and its key (TLS 1.3, *ring*).
    pub fn with_certificate(
        config: Config,
        chain: Vec<rustls::pki_types::CertificateDer<'static>>,
        key: rustls::pki_types::PrivateKeyDer<'static>,
    ) -> Result<Endpoint, Error> {
        let tls = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| Error::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| Error::Tls(e.to_string()))?;
        Endpoint::new(config, tls)
    }

    /// A datagram from `from`.
    pub fn recv(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        let mut buf = Vec::new();
        let event = self.quic.handle(now, from, None, None, BytesMut::from(data), &mut buf);
        match event {
            None => {}
            Some(DatagramEvent::Response(t)) => self.reply(t, buf),
            Some(DatagramEvent::NewConnection(incoming)) => {
                if self.conns.len() >= self.config.max_connections {
                    let t = self.quic.refuse(incoming, &mut buf);
                    self.reply(t, buf);
                } else if self.config.validate_address && !incoming.remote_address_validated() && incoming.may_retry() {
                    if let Ok(t) = self.quic.retry(incoming, &mut buf) {
                        self.reply(t, buf);
                    }
                } else {
                    match self.quic.accept(incoming, now, &mut buf, None) {
                        Ok((ch, quic)) => {
                            let id = ConnId(ch.0);
                            self.conns.insert(ch.0, Conn::new(quic, id, self.config.clone(), now));
                            self.drive(ch.0, now);
                        }
                        Err(e) => {
                            if let Some(t) = e.response {
                                self.reply(t, buf);
                            }
                        }
                    }
                }
            }
            Some(DatagramEvent::ConnectionEvent(ch, event)) => {
                if let Some(conn) = self.conns.get_mut(&ch.0) {
                    conn.quic.handle_event(event);
                    self.drive(ch.0, now);
                }
            }
        }
    }

    fn reply(&mut self, t: quinn_proto::Transmit, buf: Vec<u8>) {
        let transmit = Transmit { destination: t.destination, size: t.size, segment_size: t.segment_size, source: t.src_ip };
        self.replies.push_back((transmit, buf));
    }

    /// Runs a connection's state machine after anything changed it: endpoint events both ways,
    /// then its HTTP/3 events; a connection that is over is forgotten.
    fn drive(&mut self, key: usize, now: Instant) {
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        conn.now = now;
        loop {
            let mut any = false;
            while let Some(event) = conn.quic.poll_endpoint_events() {
                any = true;
                if let Some(back) = self.quic.handle_event(ConnectionHandle(key), event) {
                    conn.quic.handle_event(back);
                }
            }
            let before = self.events.len();
            conn.poll_quic(&mut self.events);
            if conn.is_quiet() && !conn.closed {
                conn.close(code::H3_NO_ERROR, "", &mut self.events);
            }
            if !any && self.events.len() == before {
                break;
            }
        }
        if conn.quic.is_drained() {
            self.conns.remove(&key);
        }
    }

    /// The next datagram to send, written into `buf` (cleared first), or `None` when nothing is
    /// due now.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        buf.clear();
        if let Some((t, bytes)) = self.replies.pop_front() {
            buf.extend_from_slice(&bytes[..t.size]);
            return Some(t);
        }
        if let Some(key) = self.current.filter(|_| self.burst < BURST) {
            if let Some(t) = self.conns.get_mut(&key).and_then(|c| c.quic.poll_transmit(now, self.config.max_datagrams_per_transmit, buf)) {
                self.burst += 1;
                self.drive(key, now);
                return Some(Transmit { destination: t.destination, size: t.size, segment_size: t.segment_size, source: t.src_ip });
            }
        }
        let mut keys: Vec<usize> = self.conns.keys().copied().collect();
        keys.sort_unstable();
        let start = keys.iter().position(|&k| k >= self.next).unwrap_or(0);
        for i in 0..keys.len() {
            let key = keys[(start + i) % keys.len()];
            let conn = self.conns.get_mut(&key).unwrap();
            if let Some(t) = conn.quic.poll_transmit(now, self.config.max_datagrams_per_transmit, buf) {
                self.next = key + 1;
                self.current = Some(key);
                self.burst = 1;
                self.drive(key, now);
                return Some(Transmit { destination: t.destination, size: t.size, segment_size: t.segment_size, source: t.src_ip });
            }
            self.drive(key, now);
        }
        None
    }

    /// When `handle_timeout` is next due (the earliest of the connections' timers).
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.conns.values_mut().filter_map(|c| c.quic.poll_timeout()).min()
    }

    /// Runs the timers due at `now` (loss detection, idle timeout, draining).
    pub fn handle_timeout(&mut self, now: Instant) {
        let due: Vec<usize> = self.conns.iter_mut().filter_map(|(&k, c)| c.quic.poll_timeout().is_some_and(|t| t <= now).then_some(k)).collect();
        for key in due {
            if let Some(conn) = self.conns.get_mut(&key) {
                conn.quic.handle_timeout(now);
            }
            self.drive(key, now);
        }
    }

    /// The events since they were last taken.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn conn(&mut self, conn: ConnId) -> Result<&mut Conn, Error> {
        self.conns.get_mut(&conn.0).ok_or(Error::Connection)
    }

    fn after(&mut self, conn: ConnId) {
        if let Some(now) = self.conns.get(&conn.0).map(|c| c.now) {
            self.drive(conn.0, now);
        }
    }

    /// Answers a request with a head (1xx first if wanted); `end` when there is no body.
    /// `Ok(false)`: the stream's buffer is past its high-water mark (`Drained` follows).
    pub fn respond(&mut self, conn: ConnId, stream: StreamId, status: u16, headers: &[(&[u8], &[u8])], end: bool) -> Result<bool, Error> {
        self.respond_with(conn, stream, status, headers.iter().copied(), b"", end)
    }

    /// A response head from any iterator of fields, and the whole `body` after it (a final
    /// head's only; empty for none), queued as one buffer: the engine's answers, whose fields
    /// are read from the app's header block, with no list built for them.
    pub fn respond_with<'a>(
        &mut self,
        conn: ConnId,
        stream: StreamId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
        body: &[u8],
        end: bool,
    ) -> Result<bool, Error> {
        let c = self.conns.get_mut(&conn.0).ok_or(Error::Connection)?;
        let r = c.respond(stream, status, headers, body, end, &mut self.events);
        self.after(conn);
        r
    }

    /// A piece of the response body; `end` on the last (which may be empty).
    pub fn send_data(&mut self, conn: ConnId, stream: StreamId, data: &[u8], end: bool) -> Result<bool, Error> {
        let c = self.conns.get_mut(&conn.0).ok_or(Error::Connection)?;
        let r = c.send_data(stream, data, end, &mut self.events);
        self.after(conn);
        r
    }

    /// Trailer fields, ending the response.
    pub fn send_trailers(&mut self, conn: ConnId, stream: StreamId, headers: &[(&[u8], &[u8])]) -> Result<bool, Error> {
        let c = self.conns.get_mut(&conn.0).ok_or(Error::Connection)?;
        let r = c.send_trailers(stream, headers, &mut self.events);
        self.after(conn);
        r
    }

    /// Resets a stream both ways (H3_REQUEST_CANCELLED, H3_INTERNAL_ERROR…).
    pub fn reset(&mut self, conn: ConnId, stream: StreamId, code: u64) -> Result<(), Error> {
        let c = self.conns.get_mut(&conn.0).ok_or(Error::Connection)?;
        let r = c.reset(stream, code, &mut self.events);
        self.after(conn);
        r
    }

    /// The app took `n` bytes of the request body (the stream is read again past
    /// `Config::body_window`).
    pub fn consume(&mut self, conn: ConnId, stream: StreamId, n: u64) -> Result<(), Error> {
        let c = self.conns.get_mut(&conn.0).ok_or(Error::Connection)?;
        let r = c.consume(stream, n, &mut self.events);
        self.after(conn);
        r
    }

    /// Graceful shutdown of one connection: GOAWAY, then H3_NO_ERROR once its requests are
    /// answered.
    pub fn shutdown(&mut self, conn: ConnId) -> Result<(), Error> {
        self.conn(conn)?.shutdown();
        self.after(conn);
        Ok(())
    }

    /// Graceful shutdown of every connection; new connections are refused from now on.
    pub fn shutdown_all(&mut self) {
        self.quic.set_server_config(None);
        let keys: Vec<usize> = self.conns.keys().copied().collect();
        for key in keys {
            let _ = self.shutdown(ConnId(key));
        }
    }

    /// Closes a connection at once with an HTTP/3 error code.
    pub fn close(&mut self, conn: ConnId, code: u64) -> Result<(), Error> {
        let c = self.conns.get_mut(&conn.0).ok_or(Error::Connection)?;
        c.close(code, "", &mut self.events);
        self.after(conn);
        Ok(())
    }

    /// Connections open (handshaking, established or draining).
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// A connection's QUIC statistics (round-trip time, bytes and packets, congestion).
    pub fn stats(&self, conn: ConnId) -> Option<quinn_proto::ConnectionStats> {
        self.conns.get(&conn.0).map(|c| c.quic.stats())
    }
}
