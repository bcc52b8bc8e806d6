//! A sans-IO HTTP/3 server for Cog's native engine: UDP datagrams in (`Endpoint::recv`),
//! datagrams out (`poll_transmit`), a timer (`poll_timeout`, `handle_timeout`), events out
//! (`take_events`: connections, requests, body data, trailers, resets, drains), commands in
//! (`respond`, `send_data`, `send_trailers`, `reset`, `consume`, `shutdown`, `close`). No I/O,
//! no thread, no clock but the `now` it is given: the engine drives it from libuv's callbacks.
//!
//! QUIC is quinn-proto's (TLS 1.3 by rustls, loss recovery, congestion control, flow control,
//! address validation with Retry tokens, the 3x anti-amplification limit, stateless resets,
//! connection IDs); HTTP/3's framing (RFC 9114) and QPACK (RFC 9204, static table only) are
//! this crate's (see docs/decisions/http3-implementation.md).

#![forbid(unsafe_code)]

mod config;
mod connection;
mod endpoint;
pub mod error;
mod events;
pub mod frame;
pub mod huffman;
mod message;
pub mod qpack;
mod tables;

pub use config::Config;
pub use endpoint::{Endpoint, Transmit};
pub use error::{code, Error};
pub use events::{ConnId, Event, Field, Request, StreamId};
pub use quinn_proto;
pub use rustls;
