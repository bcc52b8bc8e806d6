//! The boundary with JavaScript, conversions only: the engine's events into calls of the
//! server's JavaScript functions (`deliver.rs`, one `napi_make_callback` a batch), JavaScript
//! strings into bytes (`text.rs`), the app's Buffers held while they are sent (`held.rs`), and
//! the Buffers a request body's pieces are read into (`piece.rs`) and
//! the memory under them, reused (`blocks.rs`).
//! The functions JavaScript calls are `exports.rs`; what they take and give converts here: the
//! options of `listen` and `set_tls` (`options.rs`), an answer's head (`answer.rs`) and whole body
//! (`body.rs`), values read through Node-API directly (`value.rs`), bytes through napi-rs's types
//! (`bytes.rs`), a request's header fields as one string (`header_list.rs`), what JavaScript reads of a request's connection (`peer.rs`), and the buffers the
//! conversions reuse (`scratch.rs`).

pub(crate) mod answer;
pub(crate) mod blocks;
pub(crate) mod body;
pub(crate) mod bytes;
pub(crate) mod deliver;
pub(crate) mod header_list;
pub(crate) mod held;
pub(crate) mod options;
pub(crate) mod peer;
pub(crate) mod piece;
pub(crate) mod scratch;
pub(crate) mod text;
pub(crate) mod value;

#[cfg(test)]
pub(crate) use deliver::delivered;
pub(crate) use deliver::{deliver, ServerJs};

/// Unit tests have no Node: the Node-API functions that code they reach (a body read into a
/// Buffer, a Buffer held) could call must still link. Never called there (no test reads a body
/// that large or holds a Buffer); each fails if it were.
#[cfg(test)]
mod napi_stubs {
    macro_rules! failing {
        ($($name:ident),*) => {$(
            #[no_mangle]
            extern "C" fn $name() -> i32 {
                9 // napi_generic_failure
            }
        )*};
    }
    failing!(
        napi_add_env_cleanup_hook,
        napi_close_handle_scope,
        napi_create_arraybuffer,
        napi_create_buffer,
        napi_create_external_buffer,
        napi_create_reference,
        napi_delete_reference,
        napi_get_and_clear_last_exception,
        napi_is_exception_pending,
        napi_open_handle_scope
    );
}
