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
