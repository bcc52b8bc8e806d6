//! Buffers the conversions reuse from one call to the next (see `text.rs`): what JavaScript
//! passes is copied out into them, and what it reads of a request's headers is written into one.

use std::cell::RefCell;

#[derive(Default)]
pub(crate) struct Scratch {
    pub(crate) block: Vec<u8>,
    pub(crate) body: Vec<u8>,
    pub(crate) units: Vec<u16>,
    pub(crate) reason: Vec<u8>,
    pub(crate) request_id: Vec<u8>,
    pub(crate) headers: Vec<u8>,
    /// A header's name (`header`), a file's path (`open_file`).
    pub(crate) name: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with the buffers borrowed; `f` must not call into JavaScript (which could call back).
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|scratch| f(&mut scratch.borrow_mut()))
}
