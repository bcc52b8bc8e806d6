//! The boundary with JavaScript, conversions only: the engine's events into calls of the
//! server's JavaScript functions (`deliver.rs`, one `napi_make_callback` a batch), JavaScript
//! strings into bytes (`text.rs`), the app's Buffers held while they are sent (`held.rs`), and
//! the Buffers a request body's pieces are read into (`piece.rs`) and
//! the memory under them, reused (`blocks.rs`).
//! The functions JavaScript calls are `exports.rs`.

pub(crate) mod blocks;
pub(crate) mod deliver;
pub(crate) mod held;
pub(crate) mod piece;
pub(crate) mod text;

pub(crate) use deliver::{deliver, ServerJs};
