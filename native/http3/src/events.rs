//! What an endpoint reports: connections made and closed, requests, their body and trailers,
//! streams answered, drained or reset, and a client's GOAWAY.

use std::net::SocketAddr;

use bytes::Bytes;

/// A connection of an endpoint (its slot; reused once the connection is gone).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub usize);

/// A QUIC stream id (a request stream: client-initiated, bidirectional).
pub type StreamId = u64;

/// A header field: name and value.
pub type Field = (Vec<u8>, Vec<u8>);

/// A request's head: its pseudo-header fields (empty when absent, as `:scheme` and `:path` of
/// a CONNECT) and its fields, in the order they came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub conn: ConnId,
    pub stream: StreamId,
    pub method: Vec<u8>,
    pub scheme: Vec<u8>,
    pub authority: Vec<u8>,
    pub path: Vec<u8>,
    pub headers: Vec<Field>,
    /// The request has no body: nothing follows on its stream.
    pub end_stream: bool,
    /// The field section was past `Config::max_header_list_size`: `headers` holds only the
    /// fields that fit (the app answers 431).
    pub too_large: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A connection's handshake is done.
    Connected { conn: ConnId, remote: SocketAddr },
    /// A request's head (and, with `end_stream`, the whole request).
    Request(Request),
    /// A piece of a request's body; `end_stream` on the last (which may be empty).
    Data { conn: ConnId, stream: StreamId, data: Bytes, end_stream: bool },
    /// A request's trailer fields; the request is whole.
    Trailers { conn: ConnId, stream: StreamId, headers: Vec<Field> },
    /// The stream was reset: by the client (its RESET_STREAM or STOP_SENDING code), because
    /// the request was malformed once delivered (H3_MESSAGE_ERROR), or because the connection
    /// closed. Nothing more is reported of it, and commands for it fail.
    Reset { conn: ConnId, stream: StreamId, code: u64 },
    /// The stream's response buffer is under `Config::stream_high_water` again after
    /// `send_data` said to wait.
    Drained { conn: ConnId, stream: StreamId },
    /// The response was sent whole and acknowledged.
    Closed { conn: ConnId, stream: StreamId },
    /// The client's GOAWAY (it will accept no push past `id`; informative for a server).
    GoAway { conn: ConnId, id: u64 },
    /// The connection is closed: `code` is the HTTP/3 (application) error code when there was
    /// one, `reason` a description.
    ConnectionClosed { conn: ConnId, code: Option<u64>, reason: String },
}
