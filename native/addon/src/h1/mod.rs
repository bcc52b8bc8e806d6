//! HTTP/1.1 on a connection, over the socket layer (`io`): the connection's state machine
//! (`conn.rs`: what it reads next and whether it outlives its responses, as private enums),
//! requests parsed from its input (`read.rs`, bodies in `body.rs`) and responses written to its
//! output in request order (`write.rs`, over `queue.rs`). It makes events for JavaScript and
//! bytes for the socket; the engine drives it (reads, writes, polls, delivers) and never reaches
//! into its state. An HTTP/2 connection would be its sibling over the same `io::Transport`.

mod body;
mod conn;
#[cfg(test)]
mod harness;
mod read;
mod write;

pub(crate) use conn::{Conn, Swept, Timeouts};
pub(crate) use read::{Parsed, Place, Settings};
pub(crate) use write::{Piece, WholeBody};
