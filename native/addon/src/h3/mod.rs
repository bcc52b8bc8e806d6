//! HTTP/3 on a server's UDP socket, beside `h1` and `h2` over TCP: QUIC and HTTP/3's framing are
//! `cog-http3` (quinn-proto driven sans-IO), as HTTP/2's are `cog-http2`; this module feeds it
//! datagrams, turns what it reports into the engine's events (requests recorded in
//! `request::Requests` as HTTP/2's are, on no TCP connection: `Req::h3` says where they came),
//! and gives it the app's answers. Requests' heads are checked, and answers' heads made, as
//! HTTP/2's (`h2::check_head`, `h2::answer_fields`): the same rules and the same fields.
//!
//! - `endpoint.rs`: a server's HTTP/3 endpoint, its streams in flight, its events;
//! - `answer.rs`: the app's answers as HTTP/3 responses (heads, whole and streamed bodies, files).

mod answer;
mod endpoint;

pub(crate) use crate::h2::Piece;
pub(crate) use endpoint::{Endpoint, Settings};
