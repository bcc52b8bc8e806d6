//! The functions JavaScript calls (`src/engines/kit/addon.ts` declares them): conversions of
//! their arguments into the engine's terms, then the engine (`engine`); results converted back.
//! Nothing here keeps state of its own but the buffers conversions reuse and the header blocks
//! JavaScript sends again and again.

use crate::engine::{self, with_state, Settings};
use crate::h1::{self, WholeBody};
use crate::h2;
use crate::h3;
use crate::io;
use crate::js::{self, held, text};
use crate::uv;
use cog_framing::response::{status_code, AppHead, HeaderBlock, KeptHeaderBlock, ReasonPhrase, RequestId};
use napi::bindgen_prelude::*;
use napi::{Env, JsError, JsFunction, JsObject, JsString, JsUnknown, NapiRaw, NapiValue};
use napi_derive::napi;
use std::cell::RefCell;

#[napi(object)]
pub struct ListenOptions {
    pub host: String,
    pub port: u32,
    /// A Unix domain socket to listen on instead of `host` and `port`.
    pub path: Option<String>,
    pub max_header_size: u32,
    pub max_headers: u32,
    pub max_url_length: u32,
    pub strict: bool,
    pub headers_timeout: u32,
    pub request_timeout: u32,
    pub keep_alive_timeout: u32,
    /// See `Settings::send_timeout`.
    pub send_timeout: u32,
    pub timeout_check_interval: u32,
    /// The app has WebSocket routes, or a listener of 'upgrade': a request with an Upgrade header
    /// waits for its answer (`set_upgrades` changes it).
    pub web_sockets: bool,
    /// Share the port with other processes (SO_REUSEPORT): Cog's workers.
    pub reuse_port: Option<bool>,
    /// Serve TLS (see `io::tls`).
    pub tls: Option<TlsOptions>,
    /// Serve HTTP/2 beside HTTP/1.1: by ALPN on TLS, by the connection preface on cleartext (see `h2`).
    pub http2: Option<bool>,
    /// Serve HTTP/3 on UDP, on the TCP listener's port number (needs `tls`; see `h3`).
    pub http3: Option<bool>,
}

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
        requests: h1::Settings {
            // The parser's own bound sits one past Cog's, so Cog's 431 (with its message) answers first.
            head: cog_framing::Limits { max_head: options.max_header_size as usize, max_headers: options.max_headers as usize + 1 },
            rules: cog_framing::rules::Rules {
                max_headers: options.max_headers as usize,
                max_url_length: options.max_url_length as usize,
                strict: options.strict,
            },
            web_sockets: options.web_sockets,
        },
        headers_timeout: u64::from(options.headers_timeout),
        request_timeout: u64::from(options.request_timeout),
        keep_alive_timeout: u64::from(options.keep_alive_timeout),
        send_timeout: u64::from(options.send_timeout),
        check_interval: u64::from(options.timeout_check_interval),
        h2: options.http2.unwrap_or(false).then(|| h2_settings(&options)),
        h3: options.http3.unwrap_or(false).then(|| h3_settings(&options)),
    };
    let tls =
        options.tls.as_ref().map(|tls| io::tls::server_config(&tls_options(tls, options.http2.unwrap_or(false)))).transpose().map_err(Error::from_reason)?;
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

/// An HTTP/2 connection's limits from the app's: those the node engine gives node:http2 (its
/// header list as `maxHeaderSize`, room for every field that fits in it before a stream is
/// reset), and cog-http2's defaults for the rest (see docs/decisions/http2-implementation.md).
fn h2_settings(options: &ListenOptions) -> h2::Settings {
    let (max_headers, max_header_size) = (options.max_headers as usize, options.max_header_size as usize);
    let config = cog_http2::Config {
        max_header_list_size: options.max_header_size,
        // As node:http2's maxHeaderListPairs in the node engine (src/engines/node/engine.ts).
        max_header_pairs: (max_headers + 5).max(max_header_size.div_ceil(32) + 1) as u32,
        ..cog_http2::Config::default()
    };
    h2::Settings { config, max_headers, max_header_size, max_url_length: options.max_url_length as usize }
}

/// An HTTP/3 endpoint's limits: the app's on request heads (checked as on HTTP/2), its header
/// list size announced as SETTINGS_MAX_FIELD_SECTION_SIZE, cog-http3's defaults for the rest.
fn h3_settings(options: &ListenOptions) -> h3::Settings {
    let config = cog_http3::Config { max_header_list_size: u64::from(options.max_header_size), ..cog_http3::Config::default() };
    let limits = h2::Limits {
        max_headers: options.max_headers as usize,
        max_header_size: options.max_header_size as usize,
        max_url_length: options.max_url_length as usize,
    };
    h3::Settings { config, limits }
}

fn tls_options(o: &TlsOptions, http2: bool) -> io::tls::TlsOptions {
    io::tls::TlsOptions { http2, ..o.into() }
}

/// What `listen` and `set_tls` take (see `io::tls::TlsOptions`).
#[napi(object)]
pub struct TlsOptions {
    pub key: String,
    pub cert: String,
    pub ca: Option<String>,
    pub request_cert: bool,
    pub reject_unauthorized: bool,
    pub tls12: bool,
    pub tls13: bool,
}

impl From<&TlsOptions> for io::tls::TlsOptions {
    fn from(o: &TlsOptions) -> Self {
        io::tls::TlsOptions {
            key: o.key.clone(),
            cert: o.cert.clone(),
            ca: o.ca.clone(),
            request_cert: o.request_cert,
            reject_unauthorized: o.reject_unauthorized,
            tls12: o.tls12,
            tls13: o.tls13,
            http2: false,
        }
    }
}

/// Replaces a TLS server's certificate, key and client-certificate options: connections made
/// from now on use them, open ones keep theirs.
#[napi]
pub fn set_tls(server: u32, options: TlsOptions) -> Result<()> {
    let http2 = with_state(|s| s.serves_h2(server as usize));
    let config = io::tls::server_config(&tls_options(&options, http2)).map_err(Error::from_reason)?;
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

/// The request's header lines as one latin1 string (as Node decodes them), `name\0value\0name\0value`
/// (a head holds no NUL: the parser refuses one), written into a buffer kept from one call to
/// the next. One string for JavaScript to take apart: a list of strings cost a string and an
/// element store each, about 7,500 instructions for two headers.
#[napi]
pub fn headers(env: Env, id: f64) -> Result<JsString> {
    SCRATCH.with(|scratch| {
        let text = &mut scratch.borrow_mut().headers;
        text.clear();
        with_state(|s| {
            for (name, value) in s.headers(id as u64).into_iter().flatten() {
                if !text.is_empty() {
                    text.push(0);
                }
                text.extend_from_slice(name);
                text.push(0);
                text.extend_from_slice(value);
            }
        });
        let string = env.create_string_latin1(text);
        text::trim(text);
        string
    })
}

#[napi]
pub fn remote_address(id: f64) -> Option<String> {
    with_state(|s| s.remote_address(id as u64))
}

/// The request's connection beyond its client's address: the client's port, and the local
/// address and port it reached.
#[napi(object)]
pub struct Endpoints {
    pub remote_port: u32,
    pub local_address: String,
    pub local_port: u32,
}

#[napi]
pub fn endpoints(id: f64) -> Option<Endpoints> {
    with_state(|s| s.endpoints(id as u64)).map(|(remote_port, local_address, local_port)| Endpoints {
        remote_port: u32::from(remote_port),
        local_address,
        local_port: u32::from(local_port),
    })
}

/// What the client of a TLS connection proved (see `tls::Peer`), as node:tls reports it.
#[napi(object)]
pub struct TlsPeer {
    pub authorized: bool,
    pub authorization_error: Option<String>,
    /// The client's certificate, DER.
    pub certificate: Option<Buffer>,
}

/// The client certificate of the request's connection and whether it verified; none when the
/// request is gone or its connection is not TLS.
#[napi]
pub fn tls_peer(id: f64) -> Option<TlsPeer> {
    with_state(|s| s.tls_peer(id as u64)).map(|peer| TlsPeer {
        authorized: peer.authorized,
        authorization_error: peer.error.map(str::to_string),
        certificate: peer.certificate.map(Buffer::from),
    })
}

/// Response flags from JavaScript.
const RESPONSE_CLOSE: u32 = 1;
const RESPONSE_HAS_DATE: u32 = 2;

/// Buffers reused from one response to the next (see `js::text`).
#[derive(Default)]
struct Scratch {
    block: Vec<u8>,
    body: Vec<u8>,
    units: Vec<u16>,
    reason: Vec<u8>,
    request_id: Vec<u8>,
    headers: Vec<u8>,
    /// A header's name (`header`), a file's path (`open_file`).
    name: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
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
    let Some(status) = status_code(status) else { return Err(invalid_status(status)) };
    KEPT.with(|kept| {
        SCRATCH.with(|scratch| {
            let (kept, scratch) = (&*kept.borrow(), &mut *scratch.borrow_mut());
            let reason = match reason {
                // SAFETY: `env` and the value are this call's, live in its scope (see
                // `respond_callback`).
                Some(value) if WITH_REASON => Some(unsafe { reason_phrase(env, value.raw(), &mut scratch.units, &mut scratch.reason) }?),
                _ => None,
            };
            // SAFETY: `env` and the value are this call's, live in its scope.
            let block = match unsafe { kept_index(env, block.raw()) } {
                Some(index) => kept.get(index).ok_or_else(|| Error::from_reason("unknown kept header block"))?.block(),
                None => {
                    // SAFETY: `env` and the value are this call's, live in its scope.
                    unsafe { text::latin1_into(env, block.raw(), &mut scratch.block) };
                    HeaderBlock::new(&scratch.block).map_err(Error::from_reason)?
                }
            };
            let request_id = match request_id {
                // SAFETY: `env` and the value are this call's, live in its scope.
                Some(value) => Some(unsafe { request_id_of(env, value, &mut scratch.request_id) }?),
                None => None,
            };
            let answer = app_head(status, reason, block, flags, declared, request_id);
            // SAFETY: `env` and the value are this call's, live in its scope.
            let body = unsafe { body_bytes(env, body.raw(), id as u64, declared, &mut scratch.units, &mut scratch.body) }?;
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

#[cold]
fn invalid_status(status: u32) -> Error {
    Error::from_reason(format!("Invalid status code {status}: a status is 100 to 999"))
}

/// A header block's number when it is one `keepHeaderBlock` gave (else the block is a string).
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
unsafe fn kept_index(env: napi::sys::napi_env, value: napi::sys::napi_value) -> Option<usize> {
    // SAFETY: `env` and `value` are live (the caller's promise); `index` is a local.
    unsafe {
        let mut index = 0u32;
        (napi::sys::napi_get_value_uint32(env, value, &mut index) == napi::sys::Status::napi_ok).then_some(index as usize)
    }
}

thread_local! {
    /// Header blocks JavaScript sends again and again, checked once: `respond` takes their numbers.
    static KEPT: RefCell<Vec<KeptHeaderBlock>> = const { RefCell::new(Vec::new()) };
}

/// Checks and keeps a header block (latin1 `name: value\r\n` lines); returns the number
/// `respond` takes in its place. JavaScript keeps a bounded set (its cache of header blocks),
/// so this never grows past that.
#[napi]
pub fn keep_header_block(env: Env, block: JsString) -> Result<u32> {
    let mut bytes = Vec::new();
    // SAFETY: `#[napi]` hands over the current env and the string argument, live in the call's
    // scope.
    unsafe { text::latin1_into(env.raw(), block.raw(), &mut bytes) };
    let kept = KeptHeaderBlock::new(&bytes).map_err(Error::from_reason)?;
    KEPT.with(|blocks| {
        let mut blocks = blocks.borrow_mut();
        blocks.push(kept);
        Ok(blocks.len() as u32 - 1)
    })
}

/// A response body: a string's UTF-8 (written into `out`), a small Buffer's own bytes, a
/// large Buffer held where it lies (see `js::held`), or a file range (see `file_body`).
/// Inlined into both copies of `respond_with`: called instead, it cost a response ~30 instructions.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
#[inline(always)]
unsafe fn body_bytes<'a>(
    env: napi::sys::napi_env,
    value: napi::sys::napi_value,
    id: u64,
    declared: f64,
    units: &mut Vec<u16>,
    out: &'a mut Vec<u8>,
) -> Result<WholeBody<'a>> {
    // SAFETY: `env` and `value` are live (the caller's promise); `data` and `len` describe the
    // Buffer N-API reported, which lives for the rest of the call, and the slice is made only from
    // a non-null pointer (`len` > 0); a large Buffer is held by reference instead
    // (`held::HeldBuffer`) so it outlives the call.
    unsafe {
        let mut kind = 0;
        napi::sys::napi_typeof(env, value, &mut kind);
        if kind == napi::sys::ValueType::napi_string {
            text::utf8_into(env, value, units, out);
            return Ok(WholeBody::Bytes(out));
        }
        let mut data = std::ptr::null_mut();
        let mut len = 0usize;
        if napi::sys::napi_get_buffer_info(env, value, &mut data, &mut len) != napi::sys::Status::napi_ok {
            return file_body(env, value, id, declared);
        }
        if len >= held::HOLD_FROM {
            if let Some(held) = held::HeldBuffer::new(env, value, data as *const u8, len) {
                return Ok(WholeBody::Held(Box::new(held)));
            }
        }
        Ok(WholeBody::Bytes(if len == 0 { &[] } else { std::slice::from_raw_parts(data as *const u8, len) }))
    }
}

/// A body given as a number: `declared` bytes, from that position, of the file opened for
/// request `id`'s answer (`open_file`), sent in place. Nothing when the request is gone (the
/// response then finds no client); an error when no file was opened for it.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
#[cold]
unsafe fn file_body(env: napi::sys::napi_env, value: napi::sys::napi_value, id: u64, declared: f64) -> Result<WholeBody<'static>> {
    // SAFETY: `env` and `value` are live (the caller's promise); `offset` is a local.
    unsafe {
        let mut offset = 0f64;
        if napi::sys::napi_get_value_double(env, value, &mut offset) != napi::sys::Status::napi_ok {
            return Err(Error::from_reason("a response body must be a string, a Buffer or the position of an opened file"));
        }
        if !(offset >= 0.0 && declared >= 0.0) {
            return Err(Error::from_reason("a file body needs a position and a Content-Length (declared), neither negative"));
        }
        match with_state(|s| s.take_file(id)) {
            Some(Some(file)) => Ok(WholeBody::File { file, offset: offset as u64, length: declared as u64 }),
            Some(None) => Err(Error::from_reason("no file was opened for this response (openFile)")),
            None => Ok(WholeBody::Bytes(&[])),
        }
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
    let (mut kind, mut length, mut data, mut buffer, mut offset) = (0, 0usize, std::ptr::null_mut(), std::ptr::null_mut(), 0usize);
    // SAFETY: `#[napi]` hands over the current env and the argument, live in the call's scope; the
    // out-pointers are locals.
    let status = unsafe { napi::sys::napi_get_typedarray_info(env, stat.raw(), &mut kind, &mut length, &mut data, &mut buffer, &mut offset) };
    if status != napi::sys::Status::napi_ok || kind != napi::sys::TypedarrayType::float64_array || length < 3 {
        return Err(Error::from_reason("openFile writes the file's size and time into a Float64Array of 3"));
    }
    let opened = SCRATCH.with(|scratch| {
        let Scratch { units, name: bytes, .. } = &mut *scratch.borrow_mut();
        // SAFETY: `#[napi]` hands over the current env and the string argument, live in the call's
        // scope.
        unsafe { text::utf8_into(env, path.raw(), units, bytes) };
        with_state(|s| s.open_file(id as u64, bytes))
    });
    Ok(match opened {
        Ok(engine::Found::File { size, mtime: (seconds, nanoseconds) }) => {
            // SAFETY: a Float64Array of at least 3 elements, checked above.
            let stat = unsafe { std::slice::from_raw_parts_mut(data as *mut f64, 3) };
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
    SCRATCH.with(|scratch| {
        let Scratch { units, name: bytes, .. } = &mut *scratch.borrow_mut();
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
    let Some(status) = status_code(status) else { return Err(invalid_status(status)) };
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
    unsafe { text::latin1_into(env.raw(), block.raw(), &mut bytes) };
    let block = HeaderBlock::new(&bytes).map_err(Error::from_reason)?;
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

/// A JavaScript value's type (`napi::sys::ValueType`).
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
unsafe fn type_of(env: napi::sys::napi_env, value: napi::sys::napi_value) -> napi::sys::napi_valuetype {
    // SAFETY: `env` and `value` are live (the caller's promise); `kind` is a local.
    unsafe {
        let mut kind = 0;
        napi::sys::napi_typeof(env, value, &mut kind);
        kind
    }
}

/// Whether an argument is `undefined` (or was not passed).
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
unsafe fn is_undefined(env: napi::sys::napi_env, value: napi::sys::napi_value) -> bool {
    // SAFETY: the caller's promise, passed on.
    unsafe { type_of(env, value) == napi::sys::ValueType::napi_undefined }
}

/// The request id JavaScript passed to echo: a string `RequestId` takes, kept in `out`.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
unsafe fn request_id_of<'a>(env: napi::sys::napi_env, value: napi::sys::napi_value, out: &'a mut Vec<u8>) -> Result<RequestId<'a>> {
    // SAFETY: the caller's promise, passed on (`value` checked to be a string).
    unsafe {
        if type_of(env, value) != napi::sys::ValueType::napi_string {
            return Err(Error::from_reason("A request id to echo must be a string"));
        }
        text::latin1_into(env, value, out);
        RequestId::new(out).map_err(Error::from_reason)
    }
}

/// The reason phrase JavaScript passed: a string of latin1 characters that `ReasonPhrase` takes
/// (no CR, LF or other control character but tab), kept in `out`.
///
/// # Safety
///
/// `env` is the current env and `value` a value of the current scope.
unsafe fn reason_phrase<'a>(env: napi::sys::napi_env, value: napi::sys::napi_value, units: &mut Vec<u16>, out: &'a mut Vec<u8>) -> Result<ReasonPhrase<'a>> {
    // SAFETY: the caller's promise, passed on (`value` checked to be a string).
    unsafe {
        if type_of(env, value) != napi::sys::ValueType::napi_string {
            return Err(Error::from_reason("A reason phrase (statusMessage) must be a string"));
        }
        text::utf16_into(env, value, units);
        let latin1 = text::latin1_from_utf16(units, out);
        text::trim(units);
        if !latin1 {
            return Err(Error::from_reason("Invalid character in the reason phrase (statusMessage): past U+00FF"));
        }
        ReasonPhrase::new(out).map_err(Error::from_reason)
    }
}

/// The value of one request header, without building them all: repeats joined as Node joins
/// them, or with `first`, the first one alone (what Node keeps of Content-Type and the like).
///
/// The name is copied out as latin1 into a buffer kept for the next call: taken as a `String`,
/// its conversion (Node-API's UTF-8 path, asked for the length first, and an allocation) cost
/// ~1,100 instructions a call, more than the lookup.
#[napi]
pub fn header(env: Env, id: f64, name: JsString, first: Option<bool>) -> Option<Latin1> {
    SCRATCH.with(|scratch| {
        let name_bytes = &mut scratch.borrow_mut().name;
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
    // SAFETY: `#[napi]` hands over the current env and the argument, live in the call's scope.
    if unsafe { is_undefined(env.raw(), trailers.raw()) } {
        return Ok(with_state(|s| s.stream_end(id as u64, None)));
    }
    // SAFETY: as above.
    if unsafe { type_of(env.raw(), trailers.raw()) } != napi::sys::ValueType::napi_string {
        return Err(Error::from_reason("Trailers must be a string of header lines"));
    }
    let mut bytes = Vec::new();
    // SAFETY: as above; the argument is a string, checked just before.
    unsafe { text::latin1_into(env.raw(), trailers.raw(), &mut bytes) };
    let block = HeaderBlock::new(&bytes).map_err(|_| Error::from_reason("Invalid trailer line in the response"))?;
    Ok(with_state(|s| s.stream_end(id as u64, Some(block))))
}

/// Closes the request's connection (its response failed half-way).
#[napi]
pub fn destroy(id: f64) {
    with_state(|s| s.destroy(id as u64));
}

/// The bytes of what JavaScript writes: a string's UTF-8, or a Buffer's own.
fn bytes_of(data: &Either<String, Buffer>) -> &[u8] {
    match data {
        Either::A(text) => text.as_bytes(),
        Either::B(buffer) => buffer.as_ref(),
    }
}

/// Bytes handed to JavaScript as a latin1 string.
pub struct Latin1(Vec<u8>);

impl ToNapiValue for Latin1 {
    unsafe fn to_napi_value(env: napi::sys::napi_env, value: Self) -> Result<napi::sys::napi_value> {
        // SAFETY: napi-rs calls this with the current env; the bytes are valid for their length,
        // and copied.
        unsafe {
            let mut out = std::ptr::null_mut();
            napi::sys::napi_create_string_latin1(env, value.0.as_ptr() as *const _, value.0.len(), &mut out);
            Ok(out)
        }
    }
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

/// The app's answer head from what JavaScript passed: its flags (`RESPONSE_HAS_DATE`, `RESPONSE_CLOSE`) and the
/// Content-Length it declared (negative: none).
fn app_head<'a>(
    status: u16,
    reason: Option<ReasonPhrase<'a>>,
    block: HeaderBlock<'a>,
    flags: u32,
    declared: f64,
    request_id: Option<RequestId<'a>>,
) -> AppHead<'a> {
    AppHead {
        status,
        reason,
        block,
        has_date: flags & RESPONSE_HAS_DATE != 0,
        declared_length: (declared >= 0.0).then_some(declared as u64),
        close: flags & RESPONSE_CLOSE != 0,
        request_id,
    }
}
