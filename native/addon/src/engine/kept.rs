//! Header blocks JavaScript sends again and again, checked once and kept by number: `respond`
//! takes the number in place of the block. A store of its own beside the `State` (not in it):
//! a response borrows its kept block while the state is borrowed to send it. JavaScript keeps a
//! bounded set (its cache of header blocks), so this never grows past that.

use cog_framing::response::KeptHeaderBlock;
use std::cell::RefCell;

thread_local! {
    static KEPT: RefCell<Vec<KeptHeaderBlock>> = const { RefCell::new(Vec::new()) };
}

/// Keeps a checked block; returns its number.
pub(crate) fn keep_header_block(block: KeptHeaderBlock) -> u32 {
    KEPT.with(|blocks| {
        let mut blocks = blocks.borrow_mut();
        blocks.push(block);
        blocks.len() as u32 - 1
    })
}

/// Runs `f` with the kept blocks borrowed (`f` may borrow the state, not keep a block).
pub(crate) fn with_kept_blocks<R>(f: impl FnOnce(&[KeptHeaderBlock]) -> R) -> R {
    KEPT.with(|blocks| f(&blocks.borrow()))
}
