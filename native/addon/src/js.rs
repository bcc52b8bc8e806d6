//! Calls into JavaScript. One `napi_make_callback` per batch (so promise jobs and
//! `process.nextTick` callbacks run once, after the batch, as they do after a Node I/O
//! callback) into a native trampoline that calls the app's handler once per request.

use crate::state::with_state;
use napi::sys;
use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;

/// What a server keeps of JavaScript: the env and the functions it calls.
pub struct ServerJs {
    pub env: sys::napi_env,
    pub uv_loop: *mut crate::uv::uv_loop_t,
    /// `(id, method, url, body, flags, problem)` for each request (`method` indexes `METHODS`;
    /// `body`: the whole body, or when it follows in pieces its declared length, -1 if chunked).
    pub on_request: sys::napi_ref,
    /// `(kind, id, piece?)` for aborts, drains, and the pieces of a body that follows its request.
    pub on_event: sys::napi_ref,
    /// `(kind, id, data, code)` for WebSocket events.
    pub on_socket: sys::napi_ref,
    trampoline: sys::napi_ref,
    async_context: sys::napi_async_context,
}

/// Flags of a request handed to JavaScript, and kinds of events (`src/engines/native/load.ts`
/// holds the same numbers).
pub const FLAG_HTTP11: u32 = 1;
/// The request broke one of Cog's rules: the status is in the high 16 bits, the message is passed along.
pub const FLAG_REFUSED: u32 = 4;
/// The request has a body and a Content-Encoding header.
pub const FLAG_ENCODED: u32 = 8;
pub const EVENT_ABORT: u32 = 1;
pub const EVENT_DRAIN: u32 = 2;
/// The request asks to change protocols (a WebSocket handshake, say): its connection closes after a non-101 answer.
pub const FLAG_UPGRADE: u32 = 16;
/// WebSocket events (`onSocket(kind, id, data, code)`).
pub const SOCKET_TEXT: u32 = 1;
pub const SOCKET_BINARY: u32 = 2;
pub const SOCKET_DRAIN: u32 = 3;
pub const SOCKET_CLOSE: u32 = 4;
pub const EVENT_BODY_PIECE: u32 = 3;
pub const EVENT_BODY_END: u32 = 4;
/// A body JavaScript is receiving did not arrive within its requestTimeout: the app answers the 408.
pub const EVENT_BODY_TIMEOUT: u32 = 5;

/// The body a request is handed over with.
pub enum Body {
    None,
    Whole(Vec<u8>),
    /// It follows in pieces (`BodyPiece`, then `BodyEnd`): its declared length, None if chunked.
    Follows(Option<u64>),
}

pub enum Call {
    /// A request for the app (its method and URL are read from the engine's record when delivered).
    Request { id: u64, body: Body, flags: u32, problem: Option<String> },
    Event { kind: u32, id: u64 },
    /// A WebSocket message (text is checked UTF-8).
    WsMessage { id: u64, data: Vec<u8>, text: bool },
    WsDrain { id: u64 },
    /// The socket closed: the peer's code (1005 if none, 1006 if cut, or the code it was failed with) and reason.
    WsClose { id: u64, code: u16, reason: Vec<u8> },
    /// Bytes of a body that follows its request.
    BodyPiece { id: u64, piece: Vec<u8> },
    /// The body that followed its request is whole.
    BodyEnd { id: u64 },
}

thread_local! {
    /// The batch the trampoline is about to deliver (set just before `napi_make_callback`).
    static PENDING: RefCell<Vec<(usize, Vec<Call>)>> = const { RefCell::new(Vec::new()) };
}

impl ServerJs {
    /// # Safety
    /// `env` must be the current env, the three callbacks functions and `context` an object:
    /// the async resource every batch runs in (see `src/engines/native/request-context.ts`).
    pub unsafe fn new(env: sys::napi_env, on_request: sys::napi_value, on_event: sys::napi_value, on_socket: sys::napi_value, context: sys::napi_value) -> Result<ServerJs, String> {
        let mut uv_loop = ptr::null_mut();
        check(sys::napi_get_uv_event_loop(env, &mut uv_loop), "napi_get_uv_event_loop")?;
        let mut request_ref = ptr::null_mut();
        let mut event_ref = ptr::null_mut();
        check(sys::napi_create_reference(env, on_request, 1, &mut request_ref), "napi_create_reference")?;
        check(sys::napi_create_reference(env, on_event, 1, &mut event_ref), "napi_create_reference")?;
        let mut socket_ref = ptr::null_mut();
        check(sys::napi_create_reference(env, on_socket, 1, &mut socket_ref), "napi_create_reference")?;
        let mut function = ptr::null_mut();
        let name = "cogNativeBatch";
        check(sys::napi_create_function(env, name.as_ptr() as *const _, name.len(), Some(trampoline), ptr::null_mut(), &mut function), "napi_create_function")?;
        let mut trampoline_ref = ptr::null_mut();
        check(sys::napi_create_reference(env, function, 1, &mut trampoline_ref), "napi_create_reference")?;
        let mut resource_name = ptr::null_mut();
        let label = "CogNativeRequest";
        check(sys::napi_create_string_utf8(env, label.as_ptr() as *const _, label.len(), &mut resource_name), "napi_create_string_utf8")?;
        let mut async_context = ptr::null_mut();
        check(sys::napi_async_init(env, context, resource_name, &mut async_context), "napi_async_init")?;
        Ok(ServerJs { env, uv_loop: uv_loop as *mut _, on_request: request_ref, on_event: event_ref, on_socket: socket_ref, trampoline: trampoline_ref, async_context })
    }

    /// Drops the references (the server is gone).
    pub unsafe fn release(self) {
        sys::napi_delete_reference(self.env, self.on_request);
        sys::napi_delete_reference(self.env, self.on_event);
        sys::napi_delete_reference(self.env, self.on_socket);
        sys::napi_delete_reference(self.env, self.trampoline);
        sys::napi_async_destroy(self.env, self.async_context);
    }
}

fn check(status: sys::napi_status, what: &str) -> Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

/// Delivers `calls` to the server's JavaScript, from the event loop (never from inside JavaScript).
pub fn call(server: usize, calls: Vec<Call>) {
    let Some((env, trampoline, async_context)) = with_state(|s| s.server(server).map(|s| (s.js.env, s.js.trampoline, s.js.async_context))) else { return };
    PENDING.with(|p| p.borrow_mut().push((server, calls)));
    unsafe {
        let mut scope = ptr::null_mut();
        sys::napi_open_handle_scope(env, &mut scope);
        let mut function = ptr::null_mut();
        let mut global = ptr::null_mut();
        sys::napi_get_reference_value(env, trampoline, &mut function);
        sys::napi_get_global(env, &mut global);
        let mut result = ptr::null_mut();
        let status = sys::napi_make_callback(env, async_context, global, function, 0, ptr::null(), &mut result);
        if status != sys::Status::napi_ok {
            report_exception(env);
        }
        sys::napi_close_handle_scope(env, scope);
    }
}

/// The handler runs inside Cog's engine code, which catches what a handler throws; an exception
/// reaching here is a bug in that code: print it rather than let it take the process down.
unsafe fn report_exception(env: sys::napi_env) {
    let mut pending = false;
    sys::napi_is_exception_pending(env, &mut pending);
    if pending {
        // What Node does with any exception nothing caught: 'uncaughtException' (or the
        // process ends printing it). Swallowing it here instead would leave Node's async
        // context stack unbalanced, which Node later aborts on.
        let mut error = ptr::null_mut();
        sys::napi_get_and_clear_last_exception(env, &mut error);
        sys::napi_fatal_exception(env, error);
    }
}

unsafe extern "C" fn trampoline(env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
    let batches = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    for (server, calls) in batches {
        let Some((on_request, on_event, on_socket)) = with_state(|s| s.server(server).map(|s| (s.js.on_request, s.js.on_event, s.js.on_socket))) else { continue };
        let mut request_fn = ptr::null_mut();
        let mut event_fn = ptr::null_mut();
        let mut socket_fn = ptr::null_mut();
        sys::napi_get_reference_value(env, on_socket, &mut socket_fn);
        let mut undefined = ptr::null_mut();
        sys::napi_get_reference_value(env, on_request, &mut request_fn);
        sys::napi_get_reference_value(env, on_event, &mut event_fn);
        sys::napi_get_undefined(env, &mut undefined);
        // One handle scope for the whole batch (`call` opened it): values die when the batch ends.
        for call in calls {
            let mut result = ptr::null_mut();
            let status = match call {
                Call::Event { kind, id } => event(env, event_fn, kind, id, None, &mut result),
                Call::BodyPiece { id, piece } => event(env, event_fn, EVENT_BODY_PIECE, id, Some(&piece), &mut result),
                Call::BodyEnd { id } => event(env, event_fn, EVENT_BODY_END, id, None, &mut result),
                Call::WsMessage { id, data, text } => {
                    let mut args = [ptr::null_mut(); 3];
                    sys::napi_create_uint32(env, if text { SOCKET_TEXT } else { SOCKET_BINARY }, &mut args[0]);
                    sys::napi_create_double(env, id as f64, &mut args[1]);
                    if text {
                        sys::napi_create_string_utf8(env, data.as_ptr() as *const _, data.len(), &mut args[2]);
                    } else {
                        let mut bytes = ptr::null_mut();
                        sys::napi_create_buffer_copy(env, data.len(), data.as_ptr() as *const c_void, &mut bytes, &mut args[2]);
                    }
                    sys::napi_call_function(env, undefined, socket_fn, 3, args.as_ptr(), &mut result)
                }
                Call::WsDrain { id } => {
                    let mut args = [ptr::null_mut(); 2];
                    sys::napi_create_uint32(env, SOCKET_DRAIN, &mut args[0]);
                    sys::napi_create_double(env, id as f64, &mut args[1]);
                    sys::napi_call_function(env, undefined, socket_fn, 2, args.as_ptr(), &mut result)
                }
                Call::WsClose { id, code, reason } => {
                    let mut args = [ptr::null_mut(); 4];
                    sys::napi_create_uint32(env, SOCKET_CLOSE, &mut args[0]);
                    sys::napi_create_double(env, id as f64, &mut args[1]);
                    sys::napi_create_string_utf8(env, reason.as_ptr() as *const _, reason.len(), &mut args[2]);
                    sys::napi_create_uint32(env, u32::from(code), &mut args[3]);
                    sys::napi_call_function(env, undefined, socket_fn, 4, args.as_ptr(), &mut result)
                }
                Call::Request { id, body, flags, problem } => {
                    let mut args = [ptr::null_mut(); 6];
                    sys::napi_create_double(env, id as f64, &mut args[0]);
                    let alive = with_state(|s| match s.request_line(id) {
                        Some((method, url)) => {
                            // A number: JavaScript holds the method names (see `methods`), one string each.
                            sys::napi_create_uint32(env, method as u32, &mut args[1]);
                            sys::napi_create_string_latin1(env, url.as_ptr() as *const _, url.len(), &mut args[2]);
                            true
                        }
                        None => false,
                    });
                    if !alive {
                        continue;
                    }
                    match body {
                        Body::Whole(body) => {
                            let mut data = ptr::null_mut();
                            sys::napi_create_buffer_copy(env, body.len(), body.as_ptr() as *const c_void, &mut data, &mut args[3]);
                        }
                        Body::Follows(declared) => {
                            sys::napi_create_double(env, declared.map_or(-1.0, |n| n as f64), &mut args[3]);
                        }
                        Body::None => args[3] = undefined,
                    }
                    sys::napi_create_uint32(env, flags, &mut args[4]);
                    match problem {
                        Some(message) => {
                            sys::napi_create_string_utf8(env, message.as_ptr() as *const _, message.len(), &mut args[5]);
                        }
                        None => args[5] = undefined,
                    }
                    sys::napi_call_function(env, undefined, request_fn, 6, args.as_ptr(), &mut result)
                }
            };
            if status != sys::Status::napi_ok {
                report_exception(env);
            }
        }
    }
    ptr::null_mut()
}

/// Calls `onEvent(kind, id)`, or `onEvent(kind, id, piece)` with a body's piece as a Buffer.
unsafe fn event(env: sys::napi_env, event_fn: sys::napi_value, kind: u32, id: u64, piece: Option<&[u8]>, result: &mut sys::napi_value) -> sys::napi_status {
    let mut args = [ptr::null_mut(); 3];
    let mut undefined = ptr::null_mut();
    sys::napi_get_undefined(env, &mut undefined);
    sys::napi_create_uint32(env, kind, &mut args[0]);
    sys::napi_create_double(env, id as f64, &mut args[1]);
    let argc = match piece {
        Some(bytes) => {
            let mut data = ptr::null_mut();
            sys::napi_create_buffer_copy(env, bytes.len(), bytes.as_ptr() as *const c_void, &mut data, &mut args[2]);
            3
        }
        None => 2,
    };
    sys::napi_call_function(env, undefined, event_fn, argc, args.as_ptr(), result)
}
