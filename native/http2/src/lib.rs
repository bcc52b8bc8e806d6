//! A sans-IO HTTP/2 server connection for Cog's native engine: bytes in (`Connection::receive`),
//! events out (`Connection::take_events`: requests, body data, trailers, resets, GOAWAY, PING),
//! commands in (`respond`, `send_data`, `send_trailers`, `reset`, `consume`, `shutdown`,
//! `goaway`), bytes out (`pending_output`, `consume_output`). No I/O, no thread, no clock but
//! when a rate-limited frame arrives: the engine drives it from libuv's read and write callbacks.
//!
//! The protocol is nghttp2's (framing, HPACK, flow control, stream states, RFC 9113's message
//! checks), built from its bundled source; this crate adds the events and buffers the engine
//! needs and the limits of `Config` (see docs/decisions/http2-implementation.md).
//!
//! ```
//! use cog_http2::{Config, Connection, Event};
//! let mut conn = Connection::new(Config::default()).unwrap();
//! // The client's preface and SETTINGS, then a GET / on stream 1 (HPACK: the static table's
//! // :method GET, :scheme http, :path /, and :authority with a literal value).
//! let mut input = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
//! input.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
//! input.extend_from_slice(&[0, 0, 14, 1, 5, 0, 0, 0, 1, 0x82, 0x86, 0x84, 0x01, 9]);
//! input.extend_from_slice(b"localhost");
//! conn.receive(&input).unwrap();
//! let events = conn.take_events();
//! for event in events.iter() {
//!     if let Event::Request(req) = event {
//!         assert_eq!((req.method, req.path), (&b"GET"[..], &b"/"[..]));
//!         conn.respond(req.stream, 200, &[(b"content-type", b"text/plain")], false).unwrap();
//!         conn.send_data(req.stream, b"hello", true).unwrap();
//!     }
//! }
//! let output = conn.pending_output().to_vec(); // SETTINGS, SETTINGS ACK, HEADERS, DATA
//! conn.consume_output(output.len());
//! assert!(output.ends_with(b"hello"));
//! ```

// Every unsafe operation sits in an `unsafe` block of its own (also inside an `unsafe fn`),
// each with a `// SAFETY:` note saying why it holds (docs/decisions/rust-discipline.md).
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod callbacks;
mod checks;
mod config;
mod connection;
mod error;
mod events;
mod memory;
mod rate;
mod streams;

pub use config::Config;
pub use connection::Connection;
pub use error::{code, Error};
pub use events::{Event, Events, Headers, Request, StreamId};
pub use rate::Rate;
