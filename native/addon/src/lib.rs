//! Cog's native engine: HTTP/1.1, HTTP/2 and WebSockets in Rust on Node's own event loop, as a Node-API
//! addon. `src/engines/native/` is its JavaScript side; the `cog-framing` crate holds the pure
//! protocol parsers and writers (request heads, chunked bodies, response heads, Cog's rules,
//! WebSocket frames, permessage-deflate).
//!
//! The addon is in layers, each using only those below it (`tests/layers.rs` checks that no
//! module depends on itself through others, and that each uses only the layers below it):
//!
//! - `exports`: the functions JavaScript calls, converting their arguments for the engine;
//! - `engine`: servers, connections and requests in flight on Node's loop: it reads ready
//!   sockets, hands their bytes to each connection's protocol, delivers the events to
//!   JavaScript, writes the answers, sweeps timeouts;
//! - `js`: the boundary's other half, conversions only: events into calls of JavaScript,
//!   JavaScript strings into bytes, the app's Buffers held while they are sent;
//! - `h1`, `h2`, `ws` and `tunnel`: a connection's protocol, as a state machine over its socket
//!   layer's bytes, side by side: HTTP/1.1 (requests in, responses out in request order), HTTP/2
//!   (streams multiplexed: `cog-http2`, nghttp2 driven sans-IO), HTTP/3 a layer above them (QUIC on
//!   a UDP socket: `cog-http3`, quinn-proto driven sans-IO, with HTTP/2's head rules and answer heads), WebSockets (frames in and out)
//!   and tunnels (an upgraded connection's bytes handed to JavaScript as they are);
//! - `queue`: the responses of one HTTP/1.1 connection, in request order;
//! - `request`: the engine's record of a request (its head, read lazily by JavaScript);
//! - `io`: sockets and their bytes, plain or TLS (rustls), bodies sent in place (sendfile);
//! - `uv` (the libuv functions Node exports), `events` (what the engine tells JavaScript) and
//!   `spare` (buffers reused from request to request), below everything.

// Every unsafe operation sits in an `unsafe` block of its own (also inside an `unsafe fn`),
// each with a `// SAFETY:` note saying why it holds (docs/decisions/rust-discipline.md).
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod engine;
mod events;
pub mod exports;
mod h1;
mod h2;
mod h3;
mod io;
mod js;
mod queue;
mod request;
mod spare;
mod tunnel;
mod uv;
mod ws;
