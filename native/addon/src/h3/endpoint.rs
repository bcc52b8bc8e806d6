//! A server's HTTP/3 endpoint: `cog_http3::Endpoint` (every QUIC connection of its UDP socket),
//! the streams whose request JavaScript holds, and each connection's client address. Datagrams
//! go in (`recv`) and out (`transmit`) a batch at a time; its events become the engine's
//! (`events`): a request (its body whole when it came in the same batch, else in pieces), body
//! pieces consumed as JavaScript takes them, aborts for streams the client reset, drains.

use crate::events::{trailer_fields, Body, Event, FLAG_HTTP3};
use crate::h2::{body_bytes, check_head, refusal_fields, Arriving, Head, Limits, Overdue, Verdict};
use crate::request::{new_h3_req, H3Stream, Requests};
use crate::spare::Spare;
use cog_http3::{code, ConnId, Event as H3};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Instant;

/// What a server's HTTP/3 connections get: cog-http3's limits, and the app's, which requests'
/// heads are checked against.
pub(crate) struct Settings {
    pub(crate) config: cog_http3::Config,
    pub(crate) limits: Limits,
}

/// Where a stream's response stands (a finished one is forgotten with its stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Response {
    Waiting,
    /// Its head is sent; `body`: false when it has none (HEAD, 204, 304).
    Streaming {
        body: bool,
    },
}

pub(super) struct Stream {
    /// Its request's id.
    pub(super) id: u64,
    body: Option<Arriving>,
    pub(super) response: Response,
    /// A file's range still to be read into the stream, a piece each time it drains.
    pub(super) file: Option<FileLeft>,
}

/// A file's range being read into a stream: the file, where the next piece starts, where the
/// range ends, and the body's end once the app gave it (its trailer fields' block, maybe empty).
pub(crate) struct FileLeft {
    pub(super) file: std::fs::File,
    pub(super) at: u64,
    pub(super) end: u64,
    pub(super) then_end: Option<Vec<u8>>,
}

pub(crate) struct Endpoint {
    pub(super) quic: cog_http3::Endpoint,
    /// The streams in flight, by connection and stream.
    pub(super) streams: HashMap<(usize, u64), Stream>,
    remotes: HashMap<usize, SocketAddr>,
    limits: Limits,
    server: usize,
    /// Where each datagram is written before it is sent.
    tx: Vec<u8>,
}

impl Endpoint {
    /// The endpoint of server `server`, with the TLS configuration its TCP listener has (ALPN
    /// becomes h3; QUIC needs TLS 1.3).
    pub(crate) fn new(server: usize, settings: Settings, tls: rustls::ServerConfig) -> Result<Endpoint, String> {
        let quic =
            cog_http3::Endpoint::new(settings.config, tls).map_err(|e| format!("http3: {e}: HTTP/3 needs TLS 1.3 (tls.minVersion and maxVersion allow it)"))?;
        Ok(Endpoint { quic, streams: HashMap::new(), remotes: HashMap::new(), limits: settings.limits, server, tx: Vec::with_capacity(64 * 1024) })
    }

    pub(crate) fn recv(&mut self, now: Instant, from: SocketAddr, datagram: &[u8]) {
        self.quic.recv(now, from, datagram);
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        self.quic.handle_timeout(now);
    }

    /// When `handle_timeout` is next due.
    pub(crate) fn poll_timeout(&mut self) -> Option<Instant> {
        self.quic.poll_timeout()
    }

    /// Every datagram due now, each given to `send` with its destination.
    pub(crate) fn transmit(&mut self, now: Instant, mut send: impl FnMut(&SocketAddr, &[u8])) {
        while let Some(t) = self.quic.poll_transmit(now, &mut self.tx) {
            let bytes = &self.tx[..t.size];
            match t.segment_size {
                Some(size) if size > 0 => bytes.chunks(size).for_each(|datagram| send(&t.destination, datagram)),
                _ => send(&t.destination, bytes),
            }
        }
    }

    /// The client address of a connection.
    pub(crate) fn remote(&self, conn: usize) -> Option<SocketAddr> {
        self.remotes.get(&conn).copied()
    }

    /// Graceful shutdown: GOAWAY on every connection, each closed once its requests are
    /// answered; new connections are refused.
    pub(crate) fn shutdown(&mut self) {
        self.quic.shutdown_all();
    }

    /// Closes every connection at once (H3_NO_ERROR): the drain is over.
    pub(crate) fn close_all(&mut self) {
        let conns: Vec<usize> = self.remotes.keys().copied().collect();
        for conn in conns {
            let _ = self.quic.close(ConnId(conn), code::H3_NO_ERROR);
        }
    }

    /// Connections open (handshaking, established or closing).
    pub(crate) fn connections(&self) -> usize {
        self.quic.connections()
    }

    /// Pauses or resumes a request body as it arrives: paused, what it hands over is not
    /// consumed, so the stream is read no further than cog-http3's body window.
    pub(crate) fn pause_body(&mut self, at: H3Stream, paused: bool) {
        let Some(body) = self.streams.get_mut(&(at.conn, at.stream)).and_then(|s| s.body.as_mut()) else { return };
        body.paused = paused;
        if !paused {
            let n = std::mem::take(&mut body.unconsumed);
            let _ = self.quic.consume(ConnId(at.conn), at.stream, n as u64);
        }
    }

    /// Cuts a request's stream (a failed answer, a destroyed response): H3_REQUEST_CANCELLED.
    pub(crate) fn cancel(&mut self, at: H3Stream) {
        self.streams.remove(&(at.conn, at.stream));
        let _ = self.quic.reset(ConnId(at.conn), at.stream, code::H3_REQUEST_CANCELLED);
    }

    /// Forgets every stream (the server is disposed of); returns abort events for the requests
    /// JavaScript held.
    pub(crate) fn forget_all(&mut self, reqs: &mut Requests) -> Vec<Event> {
        let ids: Vec<u64> = self.streams.drain().map(|(_, s)| s.id).collect();
        ids.into_iter().filter(|&id| reqs.remove(id).is_some()).map(|id| Event::Abort { id }).collect()
    }

    /// Gives the body of a request still arriving its route's `requestTimeout` (ms; 0: none).
    pub(crate) fn set_body_timeout(&mut self, at: H3Stream, ms: u64) {
        if let Some(body) = self.streams.get_mut(&(at.conn, at.stream)).and_then(|s| s.body.as_mut()) {
            body.set_timeout(ms);
        }
    }

    /// The timeout sweep, as HTTP/2's (`h2::Conn::sweep`): a body not whole within its
    /// `requestTimeout` gets its 408 from the app (`Event::BodyTimeout`), or, answered already
    /// or told once, its stream is cut and its request aborted.
    pub(crate) fn sweep(&mut self, now: u64, request_timeout: u64, reqs: &mut Requests, events: &mut Vec<Event>) {
        let mut cut = Vec::new();
        for (&key, state) in self.streams.iter_mut() {
            let Some(body) = state.body.as_mut() else { continue };
            match body.overdue(now, request_timeout, state.response != Response::Waiting) {
                Overdue::No => {}
                Overdue::Tell => events.push(Event::BodyTimeout { id: state.id }),
                Overdue::Cut => cut.push(key),
            }
        }
        for key in cut {
            let _ = self.quic.reset(ConnId(key.0), key.1, code::H3_REQUEST_CANCELLED);
            if let Some(state) = self.streams.remove(&key) {
                if reqs.remove(state.id).is_some() {
                    events.push(Event::Abort { id: state.id });
                }
            }
        }
    }

    /// The endpoint's events since they were last taken, as the engine's; `now`: the loop's
    /// clock (a body's timeout counts from its request).
    pub(crate) fn events(&mut self, now: u64, reqs: &mut Requests, spare: &mut Spare, events: &mut Vec<Event>) {
        // Requests with a body handed over in this batch, whose body is gathered while it
        // arrives with them: (conn, stream), the request's place in `events`, the bytes so far.
        let mut gathering: Vec<((usize, u64), usize, Vec<u8>)> = Vec::new();
        for event in self.quic.take_events() {
            match event {
                H3::Connected { conn, remote } => drop(self.remotes.insert(conn.0, remote)),
                H3::Request(req) => {
                    let head = Head {
                        method: &req.method,
                        path: &req.path,
                        fields: req.headers.len(),
                        too_large: req.too_large,
                        end_stream: req.end_stream,
                        content_length: field(&req.headers, b"content-length"),
                        encoded: field(&req.headers, b"content-encoding").is_some(),
                    };
                    let key = (req.conn.0, req.stream);
                    match check_head(&head, &self.limits, FLAG_HTTP3) {
                        Verdict::Refuse { status, message } => refusal_fields(status, message, |fields, body| {
                            if self.quic.respond(req.conn, req.stream, status, fields, false).is_ok() {
                                let _ = self.quic.send_data(req.conn, req.stream, body, true);
                            }
                        }),
                        Verdict::App { method, body, flags, problem } => {
                            let id = reqs.next_id();
                            // The pseudo-header fields first, as node:http2 lists them.
                            let pseudo = [(&b":method"[..], &req.method), (b":scheme", &req.scheme), (b":authority", &req.authority), (b":path", &req.path)];
                            let pseudo = pseudo.into_iter().filter(|(_, v)| !v.is_empty()).map(|(n, v)| (n, v.as_slice()));
                            let fields = pseudo.chain(req.headers.iter().map(|(n, v)| (n.as_slice(), v.as_slice())));
                            let at = H3Stream { server: self.server, conn: req.conn.0, stream: req.stream };
                            reqs.insert(id, new_h3_req(at, method, &req.path, fields, (spare.head(), spare.headers())));
                            let arriving = matches!(body, Body::Follows(_));
                            if arriving {
                                gathering.push((key, events.len(), Vec::new()));
                            }
                            let body_state = arriving.then(|| Arriving::new(now));
                            self.streams.insert(key, Stream { id, body: body_state, response: Response::Waiting, file: None });
                            events.push(Event::Request { id, body, flags, problem });
                        }
                    }
                }
                H3::Data { conn, stream, data, end_stream } => self.body_bytes(&mut gathering, (conn.0, stream), &data, end_stream, events),
                // Trailer fields end the body: before its end, or after its request when the body came whole with it.
                H3::Trailers { conn, stream, headers } => {
                    let key = (conn.0, stream);
                    let reading = self.streams.get(&key).filter(|s| s.body.is_some()).map(|s| s.id);
                    let gathered = gathering.iter().any(|g| g.0 == key);
                    let trailers =
                        reading.map(|id| Event::BodyTrailers { id, fields: trailer_fields(headers.iter().map(|(n, v)| (n.as_slice(), v.as_slice()))) });
                    let (before, after) = if gathered { (None, trailers) } else { (trailers, None) };
                    events.extend(before);
                    self.body_bytes(&mut gathering, key, &[], true, events);
                    events.extend(after);
                }
                H3::Reset { conn, stream, .. } => {
                    if let Some(state) = self.streams.remove(&(conn.0, stream)) {
                        if reqs.remove(state.id).is_some() {
                            events.push(Event::Abort { id: state.id });
                        }
                    }
                }
                // A file being sent takes the room itself; else the app's stream may write again.
                H3::Drained { conn, stream } => match self.streams.get(&(conn.0, stream)) {
                    Some(state) if state.file.is_some() => self.pump_file((conn.0, stream)),
                    Some(state) => events.push(Event::Drain { id: state.id }),
                    None => {}
                },
                H3::Closed { conn, stream } => drop(self.streams.remove(&(conn.0, stream))),
                H3::ConnectionClosed { conn, .. } => drop(self.remotes.remove(&conn.0)),
                H3::GoAway { .. } => {}
            }
        }
        // Bodies not whole in this batch: what came of them follows their request, the rest as it arrives.
        for (key, _, piece) in gathering {
            let Some(state) = self.streams.get(&key) else { continue };
            if !piece.is_empty() {
                events.push(Event::BodyPiece { id: state.id, piece });
            }
        }
    }

    /// Request body bytes (see `h2::body_bytes`).
    fn body_bytes(&mut self, gathering: &mut Vec<((usize, u64), usize, Vec<u8>)>, key: (usize, u64), data: &[u8], end_stream: bool, events: &mut Vec<Event>) {
        let state = self.streams.get_mut(&key).map(|s| (s.id, &mut s.body));
        let quic = &mut self.quic;
        body_bytes(gathering, key, state, data, end_stream, events, |n| {
            let _ = quic.consume(ConnId(key.0), key.1, n as u64);
        });
    }
}

/// The first value of a field (names arrive lower-case: RFC 9114 §4.2).
fn field<'a>(fields: &'a [cog_http3::Field], name: &[u8]) -> Option<&'a [u8]> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice())
}
