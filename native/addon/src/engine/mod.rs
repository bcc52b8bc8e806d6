//! The engine: servers and their connections on Node's loop, driving the layers below it.
//! libuv says which sockets are ready; the engine reads them (`io`), hands the bytes to each
//! connection's protocol (`h1`, `ws`), delivers the events those make to JavaScript in one call
//! a read slice (`js`), and writes what the answers produced. It owns every server, connection
//! and request in flight, in one thread-local `State` (`state.rs`); the protocols own their own
//! state, behind their methods.
//!
//! - `accept.rs`: a server listens and accepts connections (and stops, and is disposed of);
//! - `serve.rs`: readable connections are read a slice at a time, parsed, and each slice's
//!   events delivered to JavaScript in one call;
//! - `write.rs`: JavaScript's answers go to the connection's HTTP/1.1 machine, and connections
//!   are written, corked per slice, with backpressure;
//! - `sockets.rs`: WebSockets, by socket id;
//! - `tunnels.rs`: connections handed to JavaScript raw (an upgrade), by id;
//! - `lookup.rs`: what JavaScript reads of a request after it was handed over;
//! - `kept.rs`: header blocks JavaScript sends again and again, kept by number;
//! - `files.rs`: files opened for a request's answer, kept on the request until it sends them;
//! - `quic.rs`: HTTP/3: a server's UDP socket and timer driving its `h3::Endpoint`;
//! - `timers.rs`: slow and idle connections are swept out.

mod accept;
mod files;
mod kept;
mod lookup;
mod quic;
mod serve;
mod sockets;
mod state;
mod timers;
mod tunnels;
mod write;

#[cfg(test)]
mod tests;

pub(crate) use accept::{destroy_connections, dispose, listen, open_connections, stop_listening, ListenAt};
pub(crate) use files::Found;
pub(crate) use kept::{keep_header_block, with_kept_blocks};
pub(crate) use state::{with_state, Settings};
