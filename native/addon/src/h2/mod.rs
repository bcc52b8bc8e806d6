//! HTTP/2 on a connection, over the socket layer (`io`), beside `h1`: the protocol itself is
//! `cog-http2` (nghttp2 driven sans-IO), as HTTP/1.1's framing is `cog-framing`; this module
//! feeds it the transport's input, turns what it reports into the engine's events (requests by
//! id, recorded in `request::Requests` as HTTP/1.1's are, their body pieces, aborts, drains),
//! gives it the app's answers, and moves its frames to the transport's output when the engine
//! writes the connection (once a batch: the output is corked as HTTP/1.1's is).
//!
//! - `conn.rs`: the connection: which protocol a client speaks (`Choosing`, until its first bytes
//!   or TLS's ALPN tell), then the HTTP/2 connection, its input, output, events and timeouts;
//! - `settings.rs`: a server's HTTP/2 limits; `head.rs`: a request's head against Cog's rules
//!   (the limits, the methods the engine knows);
//! - `answer.rs`: the app's answers as HTTP/2 responses (heads, whole and streamed bodies, files);
//! - `streams.rs`: what the engine keeps per stream in flight (its request's id, its body's
//!   progress and pause, where its response stands).
//!
//! `head.rs` and `answer.rs` serve HTTP/3's streams too (`h3`): the same rules and answer heads.

mod answer;
mod conn;
mod head;
mod settings;
mod streams;

pub(crate) use answer::{answer_fields, has_no_body, lines as header_lines, refusal_fields, whole_length, Piece};
pub(crate) use conn::{Conn, Parsed, Swept};
pub(crate) use head::{check_head, Head, Verdict};
pub(crate) use settings::{Limits, Settings};
pub(crate) use streams::{body_bytes, Arriving, Overdue};
