//! The functions JavaScript calls (`src/engines/kit/addon.ts` declares them), a table of thin
//! ones: each converts its arguments into the engine's terms with `js`, calls the engine, and
//! converts its result back. Nothing here keeps state: the buffers conversions reuse are
//! `js::scratch`'s, the header blocks kept by number the engine's (`engine::keep_header_block`).

use crate::engine::{self, with_state, Settings};
use crate::h1::WholeBody;
use crate::io;
use crate::js::answer::{app_head, header_block, kept_block, reason_phrase, request_id_of, trailers_of};
use crate::js::body::{body_of, Given};
use crate::js::bytes::{bytes_of, Latin1};
use crate::js::options::{ListenOptions, TlsOptions};
use crate::js::peer::{Endpoints, TlsPeer};
use crate::js::scratch::{with_scratch, Scratch};
use crate::js::value::{float64s, is_undefined, uint32_of};
use crate::js::{self, answer, header_list, text};
use crate::uv;
use napi::bindgen_prelude::*;
use napi::{Env, JsError, JsFunction, JsObject, JsString, JsUnknown, NapiRaw, NapiValue};
use napi_derive::napi;

/// The version of the interface between this addon and its JavaScript side: its exports, their
/// arguments and results, the listen options, the flags and the events. The loader
/// (src/engines/kit/addon.ts, `INTERFACE_VERSION`) refuses an addon whose version is not its
/// own, since a prebuilt platform package can be older than the JavaScript that loads it.
/// Bump it here and there together whenever any of that interface changes.
const INTERFACE_VERSION: u32 = 19;

/// See `INTERFACE_VERSION`.
#[napi]
pub fn interface_version() -> u32 {
    INTERFACE_VERSION
}

/// libuv's version number (major << 16 | minor << 8 | patch), checked before the engine is used.
#[napi]
pub fn uv_version() -> u32 {
    // SAFETY: uv_version takes nothing and reads a constant of the libuv Node was built with.
    unsafe { uv::uv_version() }
}

/// The methods the engine accepts, in the order of the numbers `onRequest` gets for them.
#[napi]
pub fn methods() -> Vec<&'static str> {
    cog_framing::METHODS.to_vec()
}

/// Starts a server; returns `[serverId, port]`.
#[napi]
pub fn listen(env: Env, options: ListenOptions, on_request: JsFunction, on_event: JsFunction, on_socket: JsFunction, context: JsObject) -> Result<Vec<u32>> {
    // SAFETY: `#[napi]` hands over the current env and live values of the call's scope; the engine
    // runs on the env's thread.
    let js = unsafe { js::ServerJs::new(env.raw(), on_request.raw(), on_event.raw(), on_socket.raw(), context.raw()) }.map_err(Error::from_reason)?;
    let settings = Settings {
        requests: options.requests(),
        headers_timeout: u64::from(options.headers_timeout),
        request_timeout: u64::from(options.request_timeout),
        keep_alive_timeout: u64::from(options.keep_alive_timeout),
        send_timeout: u64::from(options.send_timeout),
        check_interval: u64::from(options.timeout_check_interval),
        h2: options.h2(),
        h3: options.h3(),
    };
    let tls = options.tls().map_err(Error::from_reason)?;
    let port = u16::try_from(options.port).map_err(|_| Error::from_reason(format!("port {} is out of range", options.port)))?;
    let at = match &options.path {
        Some(path) => engine::ListenAt::Unix(path),
        None => engine::ListenAt::Tcp { host: &options.host, port, reuse_port: options.reuse_port.unwrap_or(false) },
    };
    match engine::listen(js, at, settings, tls) {
        Ok((id, port)) => Ok(vec![id as u32, u32::from(port)]),
        Err(message) => Err(Error::from_reason(message)),
    }
}

/// Replaces a TLS server's certificate, key and client-certificate options: connections made
/// from now on use them, open ones keep theirs.
#[napi]
pub fn set_tls(server: u32, options: TlsOptions) -> Result<()> {
    let http2 = with_state(|s| s.serves_h2(server as usize));
    let config = options.server_config(http2).map_err(Error::from_reason)?;
    with_state(|s| s.set_tls(server as usize, config)).map_err(Error::from_reason)
}

/// Accepts what waits in a listening socket's queue (at most `max`): the node engine's
/// connections beyond the one libuv accepts per wakeup. The caller owns the descriptors.
#[napi]
pub fn accept_queued(fd: u32, max: u32) -> Vec<u32> {
    io::socket::accept_queued(fd, max as usize)
}

/// Stops accepting; idle connections close, busy ones after their last response.
#[napi]
pub fn stop_listening(server: u32) {
    engine::stop_listening(server as usize);
}

/// How many of the server's connections are open (a stopping server's drain waits for none).
#[napi]
pub fn open_connections(server: u32) -> u32 {
    engine::open_connections(server as usize) as u32
}

/// Cuts every connection; returns the ids of requests that were still in flight.
#[napi]
pub fn destroy_connections(server: u32) -> Vec<f64> {
    engine::destroy_connections(server as usize).into_iter().map(|id| id as f64).collect()
}

/// HTTP/3 connections still open (closing ones included): a drain waits for none to be left.
#[napi]
pub fn quic_connections(server: u32) -> u32 {
    with_state(|s| s.quic_connections(server as usize)) as u32
}

/// Frees what the server kept (call once it is stopped and drained).
#[napi]
pub fn dispose(server: u32) {
    if let Some(js) = engine::dispose(server as usize) {
        // SAFETY: `dispose` gives a server's JavaScript back once, after the server stopped: its
        // references are not used again.
        unsafe { js.release() };
    }
}

/// The request's header lines as one latin1 string (as Node decodes them; see `js::header_list`),
/// written into a buffer kept from one call to the next.
#[napi]
pub fn headers(env: Env, id: f64) -> Result<JsString> {
    with_scratch(|scratch| {
        let text = &mut scratch.headers;
        with_state(|s| header_list::join(s.headers(id as u64).into_iter().flatten(), text));
        let string = env.create_string_latin1(text);
        text::trim(text);
        string
    })
}

#[napi]
pub fn remote_address(id: f64) -> Option<String> {
    with_state(|s| s.remote_address(id as u64))
}

#[napi]
pub fn endpoints(id: f64) -> Option<Endpoints> {
    with_state(|s| s.endpoints(id as u64)).map(Endpoints::from)
}

/// The client certificate of the request's connection and whether it verified; none when the
/// request is gone or its connection is not TLS.
#[napi]
pub fn tls_peer(id: f64) -> Option<TlsPeer> {
    with_state(|s| s.tls_peer(id as u64)).map(TlsPeer::from)
}

/// `respond(id, status, block, body, flags, declared, reason?, requestId?)`: a whole response; false when
/// the client is gone. `block` holds the app's header lines (`name: value\r\n`, latin1), or is
/// the number `keepHeaderBlock` gave for them; `body` is a string (sent as UTF-8) or a Buffer;
/// `declared` the Content-Length the app set, or -1; `reason`, when passed and not undefined,
/// the status line's reason phrase (node:http's `statusMessage`); `requestId`, when passed, the
/// id to echo in X-Request-Id after the block (so that a kept block serves responses that each
/// echo their own id). Throws, writing nothing, for a status outside 100-999, a reason phrase
/// that isn't a string of tab, space, visible ASCII and U+0080-U+00FF characters (a CR or LF
/// would end the status line), or a request id `RequestId` refuses.
///
/// Bound by hand rather than with `#[napi]`, for the optional arguments: asked for six,
/// Node-API still tells how many were passed, so a response without them pays nothing for
/// them. `#[napi]` asks for all eight (~25 instructions a response more) and can only tell a
/// missing one by asking its type (~100 more), and most responses have neither.
///
/// # Safety
///
/// Called by N-API only, as the `respond` function `respond_export` creates.
#[cfg_attr(test, allow(dead_code))] // Exported only outside tests, as `#[napi]` functions are.
unsafe extern "C" fn respond_callback(env: napi::sys::napi_env, info: napi::sys::napi_callback_info) -> napi::sys::napi_value {
    // SAFETY: N-API calls this on the env's thread with the call's `info`; `argv` has room for the
    // 8 arguments asked for (N-API fills those not passed with undefined); every value read is one
    // of the call's arguments, live in its scope.
    unsafe {
        let mut argv = [std::ptr::null_mut(); 8];
        let mut argc = 6;
        napi::sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), std::ptr::null_mut(), std::ptr::null_mut());
        let more = argc > 6 && {
            argc = 8;
            napi::sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), std::ptr::null_mut(), std::ptr::null_mut());
            true
        };
        let with_reason = more && !is_undefined(env, argv[6]);
        let request_id = (more && argc > 7 && !is_undefined(env, argv[7])).then_some(argv[7]);
        let sent = (|| {
            let (id, status) = (f64::from_napi_value(env, argv[0])?, u32::from_napi_value(env, argv[1])?);
            let (block, body) = (JsUnknown::from_raw_unchecked(env, argv[2]), JsUnknown::from_raw_unchecked(env, argv[3]));
            let (flags, declared) = (u32::from_napi_value(env, argv[4])?, f64::from_napi_value(env, argv[5])?);
            let env = Env::from_raw(env);
            match with_reason {
                false => respond_with::<false>(env, id, status, None, block, body, flags, declared, request_id),
                true => {
                    respond_with::<true>(env, id, status, Some(JsUnknown::from_raw_unchecked(env.raw(), argv[6])), block, body, flags, declared, request_id)
                }
            }
        })();
        match sent {
            Ok(sent) => bool::to_napi_value(env, sent).unwrap_or(std::ptr::null_mut()),
            Err(err) => {
                JsError::from(err).throw_into(env);
                std::ptr::null_mut()
            }
        }
    }
}

/// Exports `respond` as `#[napi]` exports its functions.
#[cfg(not(test))]
#[napi::bindgen_prelude::ctor]
fn register_respond() {
    napi::bindgen_prelude::register_module_export(None, "respond\0", respond_export);
}

/// # Safety
///
/// Called by napi-rs only, when it registers the module's exports.
#[cfg(not(test))]
unsafe fn respond_export(env: napi::sys::napi_env) -> Result<napi::sys::napi_value> {
    // SAFETY: `env` is the env the module is being registered on (napi-rs's promise to an export's
    // constructor); the name is NUL-terminated and 7 bytes long.
    unsafe {
        let mut function = std::ptr::null_mut();
        napi::check_status!(
            napi::sys::napi_create_function(env, c"respond".as_ptr(), 7, Some(respond_callback), std::ptr::null_mut(), &mut function),
            "could not export respond"
        )?;
        Ok(function)
    }
}

/// A response, with or without a reason phrase. The const parameter makes a copy for each, each
/// inlined whole: one copy called for both cost a response ~50 instructions more.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn respond_with<const WITH_REASON: bool>(
    env: Env,
    id: f64,
    status: u32,
    reason: Option<JsUnknown>,
    block: JsUnknown,
    body: JsUnknown,
    flags: u32,
    declared: f64,
    request_id: Option<napi::sys::napi_value>,
) -> Result<bool> {
    let env = env.raw();
    let status = answer::status(status)?;
    engine::with_kept_blocks(|kept| {
        with_scratch(|scratch| {
            let reason = match reason {
                // SAFETY: `env` and the value are this call's, live in its scope (see
                // `respond_callback`).
                Some(value) if WITH_REASON => Some(unsafe { reason_phrase(env, value.raw(), &mut scratch.units, &mut scratch.reason) }?),
                _ => None,
            };
            // SAFETY: `env` and the value are this call's, live in its scope.
            let block = match unsafe { uint32_of(env, block.raw()) } {
                Some(index) => kept.get(index as usize).ok_or_else(|| Error::from_reason("unknown kept header block"))?.block(),
                // SAFETY: `env` and the value are this call's, live in its scope.
                None => unsafe { header_block(env, block.raw(), &mut scratch.block) }?,
            };
            let request_id = match request_id {
                // SAFETY: `env` and the value are this call's, live in its scope.
                Some(value) => Some(unsafe { request_id_of(env, value, &mut scratch.request_id) }?),
                None => None,
            };
            let answer = app_head(status, reason, block, flags, declared, request_id);
            // SAFETY: `env` and the value are this call's, live in its scope.
            let body = match unsafe { body_of(env, body.raw(), declared, &mut scratch.units, &mut scratch.body) }? {
                Given::Body(body) => body,
                Given::FileAt(offset) => file_body(id as u64, offset, declared)?,
            };
            let sent = with_state(|s| s.respond(id as u64, &answer, body));
            text::trim(&mut scratch.body);
            text::trim(&mut scratch.units);
            if WITH_REASON {
                text::trim(&mut scratch.reason);
            }
            Ok(sent)
        })
    })
}

/// Checks and keeps a header block (latin1 `name: value\r\n` lines); returns the number
/// `respond` takes in its place. JavaScript keeps a bounded set (its cache of header blocks),
/// so this never grows past that.
#[napi]
pub fn keep_header_block(env: Env, block: JsString) -> Result<u32> {
    // SAFETY: `#[napi]` hands over the current env and the string argument, live in the call's
    // scope.
    let kept = unsafe { kept_block(env.raw(), block.raw()) }?;
    Ok(engine::keep_header_block(kept))
}

/// The file opened for request `id`'s answer (`open_file`), `declared` bytes of it from
/// `offset`. Nothing when the request is gone (the response then finds no client); an error
/// when no file was opened for it.
#[cold]
fn file_body(id: u64, offset: u64, declared: f64) -> Result<WholeBody<'static>> {
    match with_state(|s| s.take_file(id)) {
        Some(Some(file)) => Ok(WholeBody::File { file, offset, length: declared as u64 }),
        Some(None) => Err(Error::from_reason("no file was opened for this response (openFile)")),
        None => Ok(WholeBody::Bytes(&[])),
    }
}

/// Opens `path` (a string, as Node's fs takes it: UTF-8) for request `id`'s answer, on the
/// loop's thread (see `engine::files`). Returns 0 for a regular file, kept for the answer
/// (`respond` with its position as the body sends it), its size and modification time
/// (seconds, nanoseconds) written into `stat`, a Float64Array of 3; 1 for a directory; 2 for
/// anything else (not served); otherwise the negated errno of open(2) or fstat(2), as libuv
/// reports errors.
#[napi]
pub fn open_file(env: Env, id: f64, path: JsString, stat: JsUnknown) -> Result<i32> {
    let env = env.raw();
    // SAFETY: `#[napi]` hands over the current env and the argument, live in the call's scope; the
    // slice is written before the call returns.
    let Some(stat) = (unsafe { float64s(env, stat.raw(), 3) }) else {
        return Err(Error::from_reason("openFile writes the file's size and time into a Float64Array of 3"));
    };
    let opened = with_scratch(|scratch| {
        let Scratch { units, name: bytes, .. } = scratch;
        // SAFETY: `#[napi]` hands over the current env and the string argument, live in the call's
        // scope.
        unsafe { text::utf8_into(env, path.raw(), units, bytes) };
        with_state(|s| s.open_file(id as u64, bytes))
    });
    Ok(match opened {
        Ok(engine::Found::File { size, mtime: (seconds, nanoseconds) }) => {
            stat.copy_from_slice(&[size as f64, seconds as f64, nanoseconds as f64]);
            0
        }
        Ok(engine::Found::Directory) => 1,
        Ok(engine::Found::Other) => 2,
        Err(errno) => -errno,
    })
}

/// `statFile(path)`: what is at `path`, without opening it or keeping anything: 0 for a regular
/// file, 1 for a directory, 2 for anything else, otherwise the negated errno of stat(2).
#[napi]
pub fn stat_file(env: Env, path: JsString) -> i32 {
    with_scratch(|scratch| {
        let Scratch { units, name: bytes, .. } = scratch;
        // SAFETY: `#[napi]` hands over the current env and the string argument, live in the call's
        // scope.
        unsafe { text::utf8_into(env.raw(), path.raw(), units, bytes) };
        match io::file::kind(bytes) {
            Ok(io::file::Kind::Regular) => 0,
            Ok(io::file::Kind::Directory) => 1,
            Ok(io::file::Kind::Other) => 2,
            Err(errno) => -errno,
        }
    })
}

/// The head of a streamed response (its body follows through `stream_write`); `declared`, the
/// Content-Length the app set (the body is then framed by it rather than chunked), or -1;
/// `reason`, when not undefined, the status line's reason phrase; `requestId`, when not
/// undefined, the id to echo. Throws as `respond` does.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn stream_start(env: Env, id: f64, status: u32, block: JsString, flags: u32, declared: f64, reason: JsUnknown, request_id: JsUnknown) -> Result<bool> {
    let status = answer::status(status)?;
    let (mut units, mut phrase) = (Vec::new(), Vec::new());
    // SAFETY: `#[napi]` hands over the current env and the arguments, live in the call's scope.
    let reason = unsafe {
        if is_undefined(env.raw(), reason.raw()) {
            None
        } else {
            Some(reason_phrase(env.raw(), reason.raw(), &mut units, &mut phrase)?)
        }
    };
    let mut bytes = Vec::new();
    // SAFETY: `#[napi]` hands over the current env and the string argument, live in the call's
    // scope.
    let block = unsafe { header_block(env.raw(), block.raw(), &mut bytes) }?;
    let mut id_bytes = Vec::new();
    // SAFETY: `#[napi]` hands over the current env and the arguments, live in the call's scope.
    let request_id = unsafe {
        if is_undefined(env.raw(), request_id.raw()) {
            None
        } else {
            Some(request_id_of(env.raw(), request_id.raw(), &mut id_bytes)?)
        }
    };
    let answer = app_head(status, reason, block, flags, declared, request_id);
    Ok(with_state(|s| s.stream_start(id as u64, &answer)))
}

/// The value of one request header, without building them all: repeats joined as Node joins
/// them, or with `first`, the first one alone (what Node keeps of Content-Type and the like).
///
/// The name is copied out as latin1 into a buffer kept for the next call: taken as a `String`,
/// its conversion (Node-API's UTF-8 path, asked for the length first, and an allocation) cost
/// ~1,100 instructions a call, more than the lookup.
#[napi]
pub fn header(env: Env, id: f64, name: JsString, first: Option<bool>) -> Option<Latin1> {
    with_scratch(|scratch| {
        let name_bytes = &mut scratch.name;
        // SAFETY: `#[napi]` hands over the current env and the string argument, live in the call's
        // scope.
        unsafe { text::latin1_into(env.raw(), name.raw(), name_bytes) };
        with_state(|s| s.header(id as u64, name_bytes, first.unwrap_or(false)).map(Latin1))
    })
}

/// `mayBeConditional(id)`: whether the request has a Range or an "If-" header, which a file's
/// answer reads one by one only then (one call where they were five).
#[napi]
pub fn may_be_conditional(id: f64) -> bool {
    with_state(|s| s.may_be_conditional(id as u64))
}

/// Returns false when the stream should pause until a drain event (or the client is gone).
#[napi]
pub fn stream_write(id: f64, chunk: Either<String, Buffer>) -> bool {
    let bytes = bytes_of(&chunk);
    with_state(|s| s.stream_write(id as u64, bytes))
}

/// Sends `length` bytes of the open file `fd` from `position` as the next piece of a streamed body
/// framed by its Content-Length (the engine keeps a duplicate of `fd`). False: stream it instead.
#[napi]
pub fn stream_file(id: f64, fd: u32, position: f64, length: f64) -> bool {
    with_state(|s| s.stream_file(id as u64, fd, position as u64, length as u64))
}

/// Ends a streamed body; `trailers`, when not undefined, the trailer fields to send after it
/// (`name: value\r\n` lines, latin1, checked as a head's block is): on HTTP/2 a last HEADERS
/// frame, on HTTP/1.1 lines after the last chunk of a chunked body. Throws, ending nothing, for
/// a block that isn't well-formed header lines.
#[napi]
pub fn stream_end(env: Env, id: f64, trailers: JsUnknown) -> Result<bool> {
    let mut bytes = Vec::new();
    // SAFETY: `#[napi]` hands over the current env and the argument, live in the call's scope.
    let trailers = unsafe { trailers_of(env.raw(), trailers.raw(), &mut bytes) }?;
    Ok(with_state(|s| s.stream_end(id as u64, trailers)))
}

/// Closes the request's connection (its response failed half-way).
#[napi]
pub fn destroy(id: f64) {
    with_state(|s| s.destroy(id as u64));
}

/// Completes the WebSocket handshake of request `id` (101) and makes its connection a socket
/// with that id; false when the client is gone, or when its permessage-deflate offer is invalid
/// (answered 400, as `ws` answers it). `maxFragments` 0: no limit; `idleTimeout` in ms (0: none).
#[napi]
pub fn ws_accept(
    id: f64,
    max_payload: f64,
    max_fragments: f64,
    idle_timeout: f64,
    max_backpressure: f64,
    close_on_backpressure: bool,
    per_message_deflate: bool,
) -> bool {
    let limits = crate::ws::Limits {
        max_payload: max_payload as usize,
        max_fragments: max_fragments as usize,
        idle_timeout: idle_timeout as u64,
        max_backpressure: max_backpressure as usize,
        close_on_backpressure,
    };
    with_state(|s| s.ws_accept(id as u64, limits, per_message_deflate))
}

/// Sends a message: 1 sent, 0 queued behind unsent bytes (a drain event follows), -1 dropped
/// (the socket is closing, or the message would pass maxBackpressure).
#[napi]
pub fn ws_send(id: f64, data: Either<String, Buffer>, binary: bool) -> i32 {
    let bytes = bytes_of(&data);
    with_state(|s| s.ws_send(id as u64, bytes, binary))
}

/// Sends one message to many sockets, framed once (dropped for those past maxBackpressure).
#[napi]
pub fn ws_send_many(ids: Vec<f64>, data: Either<String, Buffer>, binary: bool) {
    let bytes = bytes_of(&data);
    let ids: Vec<u64> = ids.into_iter().map(|id| id as u64).collect();
    with_state(|s| s.ws_send_many(&ids, bytes, binary));
}

/// Unsent bytes of a socket.
#[napi]
pub fn ws_buffered(id: f64) -> f64 {
    with_state(|s| s.ws_buffered(id as u64)) as f64
}

/// Starts the closing handshake: a Close frame with `code` (none when undefined) and `reason`.
#[napi]
pub fn ws_close(id: f64, code: Option<u32>, reason: String) {
    let code = code.map_or(cog_framing::websocket::NO_STATUS, |c| c as u16);
    with_state(|s| s.ws_close(id as u64, code, reason.as_bytes()));
}

/// Cuts a socket's connection.
#[napi]
pub fn ws_terminate(id: f64) {
    with_state(|s| s.ws_terminate(id as u64));
}

/// Whether requests asking to change protocols wait for the app's answer (it has WebSocket
/// routes, or listens for 'upgrade') or are served as any other request.
#[napi]
pub fn set_upgrades(server: u32, on: bool) {
    with_state(|s| s.set_upgrades(server as usize, on));
}

/// Takes upgrade request `id`'s connection raw (node:http's 'upgrade'): it becomes a tunnel with
/// that id, and the bytes that came after the request's head are returned; null when the client
/// is gone, or the request is no upgrade waiting for the app (one with a body is not).
#[napi]
pub fn tunnel_open(id: f64) -> Option<Buffer> {
    with_state(|s| s.tunnel_open(id as u64)).map(Buffer::from)
}

/// Writes to a tunnel: 1 written, 0 queued past the high-water mark (a drain event follows), -1 gone.
#[napi]
pub fn tunnel_write(id: f64, data: Either<String, Buffer>) -> i32 {
    let bytes = bytes_of(&data);
    with_state(|s| s.tunnel_write(id as u64, bytes))
}

/// Ends a tunnel's write side once what is queued is written.
#[napi]
pub fn tunnel_end(id: f64) {
    with_state(|s| s.tunnel_end(id as u64));
}

/// Pauses (JavaScript's stream is full) or resumes reading a tunnel.
#[napi]
pub fn tunnel_pause(id: f64, paused: bool) {
    with_state(|s| s.tunnel_pause(id as u64, paused));
}

/// Turns Nagle's algorithm off (true) or on for a tunnel's connection.
#[napi]
pub fn tunnel_no_delay(id: f64, on: bool) {
    with_state(|s| s.tunnel_no_delay(id as u64, on));
}

/// Cuts a tunnel's connection.
#[napi]
pub fn tunnel_destroy(id: f64) {
    with_state(|s| s.tunnel_destroy(id as u64));
}

/// Pauses (JavaScript's stream of the request's body is full) or resumes reading a body that
/// follows its request.
#[napi]
pub fn pause_body(id: f64, paused: bool) {
    with_state(|s| s.pause_body(id as u64, paused));
}

/// Gives a body still arriving its route's own `requestTimeout` (ms, 0: none) in place of the server's.
#[napi]
pub fn set_body_timeout(id: f64, ms: f64) {
    with_state(|s| s.set_body_timeout(id as u64, ms as u64));
}
