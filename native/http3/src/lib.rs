//! A sans-IO HTTP/3 server for Cog's native engine (work in progress).

pub mod error;
pub mod frame;
pub mod huffman;
pub mod qpack;
mod tables;
