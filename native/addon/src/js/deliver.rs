//! Calls into JavaScript. One `napi_make_callback` per batch (so promise jobs and
//! `process.nextTick` callbacks run once, after the batch, as they do after a Node I/O
//! callback) into a native trampoline that calls the app's handler once per request.

use crate::events::{Body, Event, SocketFailure};
use napi::sys;
use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;

/// What a server keeps of JavaScript: the env and the functions it calls (handles, copied out of
/// the engine's state to deliver a batch; `release` drops them once).
#[derive(Clone, Copy)]
pub struct ServerJs {
    env: sys::napi_env,
    uv_loop: *mut crate::uv::uv_loop_t,
    /// `(id, method, url, body, flags, problem)` for each request (`method` indexes `METHODS`;
    /// `body`: the whole body, or when it follows in pieces its declared length, -1 if chunked).
    on_request: sys::napi_ref,
    /// `(kind, id, piece?)` for aborts, drains, and the pieces of a body that follows its request.
    on_event: sys::napi_ref,
    /// `(kind, id, data, code)` for WebSocket events; `(kind, id, data?)` for tunnels'.
    on_socket: sys::napi_ref,
    trampoline: sys::napi_ref,
    async_context: sys::napi_async_context,
}

/// Kinds of `onEvent` calls and WebSocket events (`src/engines/kit/addon.ts` and
/// `src/engines/native/websocket.ts` hold the same numbers).
const EVENT_ABORT: u32 = 1;
const EVENT_DRAIN: u32 = 2;
const EVENT_BODY_PIECE: u32 = 3;
const EVENT_BODY_END: u32 = 4;
const EVENT_BODY_TIMEOUT: u32 = 5;
const EVENT_BODY_TRAILERS: u32 = 6;
/// The server ran out of descriptors (a server's event: no request, id 0).
const EVENT_OUT_OF_DESCRIPTORS: u32 = 7;
const SOCKET_TEXT: u32 = 1;
const SOCKET_BINARY: u32 = 2;
const SOCKET_DRAIN: u32 = 3;
const SOCKET_CLOSE: u32 = 4;
/// Tunnel events, on the same callback as WebSocket events (`src/engines/native/tunnels.ts`).
const TUNNEL_DATA: u32 = 5;
const TUNNEL_END: u32 = 6;
const TUNNEL_DRAIN: u32 = 7;
const TUNNEL_CLOSE: u32 = 8;
const TUNNEL_SHUT: u32 = 9;
/// A tunnel closed after a read (or a write) of its socket failed: the errno is passed along.
const TUNNEL_READ_FAILED: u32 = 10;
const TUNNEL_WRITE_FAILED: u32 = 11;
/// A tunnel closed after its client broke TLS: an Error with node:tls's code for it is passed along.
const TUNNEL_TLS_FAILED: u32 = 12;

/// How the trampoline finds a request's method (its place in `METHODS`) and URL when it hands
/// the request over: it calls `found` with them, and says whether the request is still there.
/// The engine's, passed in so that this boundary knows nothing of where requests are kept.
pub type RequestLine = fn(id: u64, found: &mut dyn FnMut(usize, &[u8])) -> bool;

/// What the trampoline needs of a server to deliver one batch.
#[derive(Clone, Copy)]
struct Targets {
    on_request: sys::napi_ref,
    on_event: sys::napi_ref,
    on_socket: sys::napi_ref,
    request_line: RequestLine,
}

thread_local! {
    /// The batch the trampoline is about to deliver (set just before `napi_make_callback`).
    static PENDING: RefCell<Vec<(Targets, Vec<Event>)>> = const { RefCell::new(Vec::new()) };
}

impl ServerJs {
    /// # Safety
    /// `env` must be the current env, the three callbacks functions and `context` an object:
    /// the async resource every batch runs in (see `src/engines/native/request-context.ts`).
    pub unsafe fn new(
        env: sys::napi_env,
        on_request: sys::napi_value,
        on_event: sys::napi_value,
        on_socket: sys::napi_value,
        context: sys::napi_value,
    ) -> Result<ServerJs, String> {
        // SAFETY: `env` is the current env and the values are live (the caller's promise); every
        // out-pointer is a local the call writes; the function and string passed are valid for
        // their lengths.
        unsafe {
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
            check(
                sys::napi_create_function(env, name.as_ptr() as *const _, name.len(), Some(trampoline), ptr::null_mut(), &mut function),
                "napi_create_function",
            )?;
            let mut trampoline_ref = ptr::null_mut();
            check(sys::napi_create_reference(env, function, 1, &mut trampoline_ref), "napi_create_reference")?;
            let mut resource_name = ptr::null_mut();
            let label = "CogNativeRequest";
            check(sys::napi_create_string_utf8(env, label.as_ptr() as *const _, label.len(), &mut resource_name), "napi_create_string_utf8")?;
            let mut async_context = ptr::null_mut();
            check(sys::napi_async_init(env, context, resource_name, &mut async_context), "napi_async_init")?;
            Ok(ServerJs {
                env,
                uv_loop: uv_loop as *mut _,
                on_request: request_ref,
                on_event: event_ref,
                on_socket: socket_ref,
                trampoline: trampoline_ref,
                async_context,
            })
        }
    }

    /// A Buffer for a body's next `len` bytes, to be read into (see `piece.rs`).
    pub fn new_piece(&self, len: usize) -> Option<(crate::events::ReadPiece, *mut u8)> {
        // SAFETY: the engine runs on the env's thread.
        unsafe { super::piece::new_piece(self.env, len) }
    }

    /// The loop's time in milliseconds (libuv's cached `uv_now`), which the engine's timeouts count in.
    pub fn now(&self) -> u64 {
        // SAFETY: uv_now reads the loop's cached time; the loop is Node's (from
        // `napi_get_uv_event_loop`), alive as long as the env.
        unsafe { crate::uv::uv_now(self.uv_loop) }
    }

    /// Node's loop, which the server's handles run on.
    pub fn uv_loop(&self) -> *mut crate::uv::uv_loop_t {
        self.uv_loop
    }

    /// Drops the references (the server is gone).
    ///
    /// # Safety
    ///
    /// Called once, on the env's thread, when the server is gone: the references are not used
    /// again.
    pub unsafe fn release(self) {
        // SAFETY: `env` and the references are this server's (the caller's promise), deleted once.
        unsafe {
            sys::napi_delete_reference(self.env, self.on_request);
            sys::napi_delete_reference(self.env, self.on_event);
            sys::napi_delete_reference(self.env, self.on_socket);
            sys::napi_delete_reference(self.env, self.trampoline);
            sys::napi_async_destroy(self.env, self.async_context);
        }
    }
}

/// For the engine's unit tests, which have no JavaScript: a server's JavaScript that is never
/// called (`deliver` keeps the events instead, for `delivered`).
#[cfg(test)]
impl ServerJs {
    pub fn for_tests() -> ServerJs {
        let null = ptr::null_mut();
        ServerJs {
            env: null as _,
            uv_loop: null as _,
            on_request: null as _,
            on_event: null as _,
            on_socket: null as _,
            trampoline: null as _,
            async_context: null as _,
        }
    }
}

/// An event delivered in a unit test, with its request's method (index) and URL if a request.
#[cfg(test)]
pub type Delivered = (Event, Option<(usize, Vec<u8>)>);

#[cfg(test)]
thread_local! {
    static DELIVERED: RefCell<Vec<Delivered>> = const { RefCell::new(Vec::new()) };
}

/// In unit tests: keeps the events (with each request's method and URL, read as the trampoline
/// reads them) for `delivered`.
#[cfg(test)]
pub fn deliver(_js: &ServerJs, events: Vec<Event>, request_line: RequestLine) {
    for event in events {
        let line = match &event {
            Event::Request { id, .. } => {
                let mut line = None;
                request_line(*id, &mut |method, url| line = Some((method, url.to_vec())));
                line
            }
            _ => None,
        };
        DELIVERED.with(|d| d.borrow_mut().push((event, line)));
    }
}

/// The events delivered since the last call (unit tests).
#[cfg(test)]
pub fn delivered() -> Vec<Delivered> {
    DELIVERED.with(|d| std::mem::take(&mut *d.borrow_mut()))
}

fn check(status: sys::napi_status, what: &str) -> Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

/// Delivers `events` to the server's JavaScript, from the event loop (never from inside JavaScript).
#[cfg(not(test))]
pub fn deliver(js: &ServerJs, events: Vec<Event>, request_line: RequestLine) {
    let (env, trampoline, async_context) = (js.env, js.trampoline, js.async_context);
    PENDING.with(|p| p.borrow_mut().push((Targets { on_request: js.on_request, on_event: js.on_event, on_socket: js.on_socket, request_line }, events)));
    // SAFETY: the engine runs on the env's thread, on Node's loop and outside any JavaScript (so a
    // handle scope may open and a callback be made); the references are the server's own, alive
    // until `release`; every out-pointer is a local.
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
///
/// # Safety
///
/// `env` is the current env, on its thread.
unsafe fn report_exception(env: sys::napi_env) {
    // SAFETY: `env` is the current env (the caller's promise); `error` is written before it is
    // used.
    unsafe {
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
}

/// # Safety
///
/// Called by N-API only, as the function `deliver` makes its callback to.
unsafe extern "C" fn trampoline(env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: N-API calls the trampoline on the env's thread with a handle scope open
    // (`deliver`'s); the references in `PENDING` are live servers' (they are released only after
    // their last batch); every argument is a value just created in that scope, and every
    // out-pointer a local.
    unsafe {
        let batches = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
        for (Targets { on_request, on_event, on_socket, request_line }, events) in batches {
            let mut request_fn = ptr::null_mut();
            let mut event_fn = ptr::null_mut();
            let mut socket_fn = ptr::null_mut();
            sys::napi_get_reference_value(env, on_socket, &mut socket_fn);
            let mut undefined = ptr::null_mut();
            sys::napi_get_reference_value(env, on_request, &mut request_fn);
            sys::napi_get_reference_value(env, on_event, &mut event_fn);
            sys::napi_get_undefined(env, &mut undefined);
            // One handle scope for the whole batch (`call` opened it): values die when the batch ends.
            for event in events {
                let mut result = ptr::null_mut();
                let status = match event {
                    Event::Abort { id } => call_on_event(env, event_fn, EVENT_ABORT, id, None, &mut result),
                    Event::Drain { id } => call_on_event(env, event_fn, EVENT_DRAIN, id, None, &mut result),
                    Event::BodyTimeout { id } => call_on_event(env, event_fn, EVENT_BODY_TIMEOUT, id, None, &mut result),
                    Event::OutOfDescriptors => call_on_event(env, event_fn, EVENT_OUT_OF_DESCRIPTORS, 0, None, &mut result),
                    Event::BodyPiece { id, piece } => call_on_event(env, event_fn, EVENT_BODY_PIECE, id, Some(buffer_of(env, &piece)), &mut result),
                    Event::BodyRead { id, piece } => {
                        call_on_event(env, event_fn, EVENT_BODY_PIECE, id, Some(super::piece::piece_value(env, &piece)), &mut result)
                    }
                    Event::BodyEnd { id } => call_on_event(env, event_fn, EVENT_BODY_END, id, None, &mut result),
                    Event::BodyTrailers { id, fields } => call_on_event(env, event_fn, EVENT_BODY_TRAILERS, id, Some(buffer_of(env, &fields)), &mut result),
                    Event::WsMessage { id, data, text } => {
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
                    Event::TunnelData { id, data } => call_on_event(env, socket_fn, TUNNEL_DATA, id, Some(buffer_of(env, &data)), &mut result),
                    Event::TunnelEnd { id } => call_on_event(env, socket_fn, TUNNEL_END, id, None, &mut result),
                    Event::TunnelDrain { id } => call_on_event(env, socket_fn, TUNNEL_DRAIN, id, None, &mut result),
                    Event::TunnelShut { id } => call_on_event(env, socket_fn, TUNNEL_SHUT, id, None, &mut result),
                    Event::TunnelClose { id, failure: None } => call_on_event(env, socket_fn, TUNNEL_CLOSE, id, None, &mut result),
                    Event::TunnelClose { id, failure: Some(SocketFailure::Os { errno, writing }) } => {
                        let mut number = ptr::null_mut();
                        sys::napi_create_int32(env, errno, &mut number);
                        call_on_event(env, socket_fn, if writing { TUNNEL_WRITE_FAILED } else { TUNNEL_READ_FAILED }, id, Some(number), &mut result)
                    }
                    Event::TunnelClose { id, failure: Some(SocketFailure::Tls { code, message }) } => {
                        let (mut code_value, mut message_value, mut error) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
                        sys::napi_create_string_utf8(env, code.as_ptr() as *const _, code.len(), &mut code_value);
                        sys::napi_create_string_utf8(env, message.as_ptr() as *const _, message.len(), &mut message_value);
                        sys::napi_create_error(env, code_value, message_value, &mut error);
                        call_on_event(env, socket_fn, TUNNEL_TLS_FAILED, id, Some(error), &mut result)
                    }
                    Event::WsDrain { id } => {
                        let mut args = [ptr::null_mut(); 2];
                        sys::napi_create_uint32(env, SOCKET_DRAIN, &mut args[0]);
                        sys::napi_create_double(env, id as f64, &mut args[1]);
                        sys::napi_call_function(env, undefined, socket_fn, 2, args.as_ptr(), &mut result)
                    }
                    Event::WsClose { id, code, reason } => {
                        let mut args = [ptr::null_mut(); 4];
                        sys::napi_create_uint32(env, SOCKET_CLOSE, &mut args[0]);
                        sys::napi_create_double(env, id as f64, &mut args[1]);
                        sys::napi_create_string_utf8(env, reason.as_ptr() as *const _, reason.len(), &mut args[2]);
                        sys::napi_create_uint32(env, u32::from(code), &mut args[3]);
                        sys::napi_call_function(env, undefined, socket_fn, 4, args.as_ptr(), &mut result)
                    }
                    Event::Request { id, body, flags, problem } => {
                        let mut args = [ptr::null_mut(); 6];
                        sys::napi_create_double(env, id as f64, &mut args[0]);
                        let alive = request_line(id, &mut |method, url| {
                            // A number: JavaScript holds the method names (see `methods`), one string each.
                            sys::napi_create_uint32(env, method as u32, &mut args[1]);
                            sys::napi_create_string_latin1(env, url.as_ptr() as *const _, url.len(), &mut args[2]);
                        });
                        if !alive {
                            continue;
                        }
                        match body {
                            Body::Whole(body) => args[3] = buffer_of(env, &body),
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
}

/// Calls `onEvent(kind, id)`, or `onEvent(kind, id, piece)` with a body's piece (a Buffer) (or
/// the socket callback so, for a tunnel's events).
///
/// # Safety
///
/// `env` is the current env inside a handle scope, `event_fn` a function value of that scope.
unsafe fn call_on_event(
    env: sys::napi_env,
    event_fn: sys::napi_value,
    kind: u32,
    id: u64,
    piece: Option<sys::napi_value>,
    result: &mut sys::napi_value,
) -> sys::napi_status {
    // SAFETY: `env` and `event_fn` are the caller's (see its Safety); `args` and `undefined` are
    // locals written before they are read.
    unsafe {
        let mut args = [ptr::null_mut(); 3];
        let mut undefined = ptr::null_mut();
        sys::napi_get_undefined(env, &mut undefined);
        sys::napi_create_uint32(env, kind, &mut args[0]);
        sys::napi_create_double(env, id as f64, &mut args[1]);
        let argc = match piece {
            Some(buffer) => {
                args[2] = buffer;
                3
            }
            None => 2,
        };
        sys::napi_call_function(env, undefined, event_fn, argc, args.as_ptr(), result)
    }
}

/// A Buffer of `bytes`, copied into memory of V8's own: a body whole with its head, and the
/// pieces that went through the connection's input (what came with the head, a slow sender's
/// small reads, chunked bodies, TLS). A long body's other pieces are read straight into Buffers
/// of their own and not copied (`piece.rs`). Handed over where they lie instead
/// (`napi_create_external_buffer`, the Buffer owning the bytes), the arena's uploads cost twice
/// the CPU: on Node 20 such Buffers made V8 run ~40 full (mark-compact) collections in 5 s of
/// uploads where copies made none (docs/decisions/request-bodies.md).
///
/// # Safety
///
/// `env` is the current env, inside a handle scope.
unsafe fn buffer_of(env: sys::napi_env, bytes: &[u8]) -> sys::napi_value {
    // SAFETY: `env` is the current env (the caller's promise); `bytes` is valid for its length, and
    // copied.
    unsafe {
        let (mut buffer, mut data) = (ptr::null_mut(), ptr::null_mut());
        sys::napi_create_buffer_copy(env, bytes.len(), bytes.as_ptr() as *const c_void, &mut data, &mut buffer);
        buffer
    }
}
