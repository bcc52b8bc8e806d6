//! Cog's native engine: an HTTP/1.1 server in Rust on Node's own event loop, as a Node-API
//! addon. `src/engines/native/` is its JavaScript side; this file is the API it calls, and the
//! `cog-framing` crate parses requests and frames responses. A request's way through the addon:
//!
//! - `accept.rs`: a server listens and accepts connections (and stops, and is disposed of);
//! - `serve.rs`: readable connections are read a slice at a time, and each slice's requests
//!   go to JavaScript in one call (`js.rs`, the calls into JavaScript);
//! - `parse.rs`: bytes become requests (`request.rs`, the engine's record of one) and bodies;
//! - `write.rs`: the answers are written in request order, corked per slice, with backpressure;
//! - `timers.rs`: slow and idle connections are swept out.
//!
//! `state.rs` holds the servers and connections all of these share; `spare.rs` the buffers they
//! reuse; `socket.rs` the socket calls; `text.rs` JavaScript strings into bytes; `uv.rs` libuv.

mod accept;
mod js;
mod parse;
mod request;
mod serve;
mod socket;
mod spare;
mod state;
mod text;
mod timers;
mod uv;
mod write;

use napi::bindgen_prelude::*;
use napi::{Env, JsFunction, JsString, JsUnknown, NapiRaw};
use napi_derive::napi;
use cog_framing::response::{AppHead, HeaderBlock, KeptHeaderBlock};
use state::{with_state, Settings};
use std::cell::RefCell;

#[napi(object)]
pub struct ListenOptions {
    pub host: String,
    pub port: u32,
    pub max_header_size: u32,
    pub max_headers: u32,
    pub max_url_length: u32,
    pub strict: bool,
    pub body_limit: f64,
    pub headers_timeout: u32,
    pub request_timeout: u32,
    pub keep_alive_timeout: u32,
    pub timeout_check_interval: u32,
}

/// libuv's version number (major << 16 | minor << 8 | patch), checked before the engine is used.
#[napi]
pub fn uv_version() -> u32 {
    unsafe { uv::uv_version() }
}

/// The methods the engine accepts, in the order of the numbers `onRequest` gets for them.
#[napi]
pub fn methods() -> Vec<&'static str> {
    cog_framing::METHODS.to_vec()
}

/// Starts a server; returns `[serverId, port]`.
#[napi]
pub fn listen(env: Env, options: ListenOptions, on_request: JsFunction, on_event: JsFunction) -> Result<Vec<u32>> {
    let js = unsafe { js::ServerJs::new(env.raw(), on_request.raw(), on_event.raw()) }.map_err(Error::from_reason)?;
    let settings = Settings {
        // The parser's own bound sits one past Cog's, so Cog's 431 (with its message) answers first.
        head: cog_framing::Limits { max_head: options.max_header_size as usize, max_headers: options.max_headers as usize + 1 },
        rules: cog_framing::rules::Rules { max_headers: options.max_headers as usize, max_url_length: options.max_url_length as usize, strict: options.strict },
        body_limit: options.body_limit as u64,
        headers_timeout: u64::from(options.headers_timeout),
        request_timeout: u64::from(options.request_timeout),
        keep_alive_timeout: u64::from(options.keep_alive_timeout),
        check_interval: u64::from(options.timeout_check_interval),
    };
    let port = u16::try_from(options.port).map_err(|_| Error::from_reason(format!("port {} is out of range", options.port)))?;
    match accept::listen(js, &options.host, port, settings) {
        Ok((id, port)) => Ok(vec![id as u32, u32::from(port)]),
        Err(message) => Err(Error::from_reason(message)),
    }
}

/// Accepts what waits in a listening socket's queue (at most `max`): the node engine's
/// connections beyond the one libuv accepts per wakeup. The caller owns the descriptors.
#[napi]
pub fn accept_queued(fd: u32, max: u32) -> Vec<u32> {
    socket::accept_queued(fd as i32, max as usize).into_iter().map(|fd| fd as u32).collect()
}

/// Stops accepting; idle connections close, busy ones after their last response.
#[napi]
pub fn stop_listening(server: u32) {
    accept::stop_listening(server as usize);
}

/// Cuts every connection; returns the ids of requests that were still in flight.
#[napi]
pub fn destroy_connections(server: u32) -> Vec<f64> {
    accept::destroy_connections(server as usize).into_iter().map(|id| id as f64).collect()
}

/// Frees what the server kept (call once it is stopped and drained).
#[napi]
pub fn dispose(server: u32) {
    if let Some(js) = accept::dispose(server as usize) {
        unsafe { js.release() };
    }
}

/// The request's header lines as `[name, value, name, value, …]` (latin1, as Node decodes them).
#[napi]
pub fn headers(id: f64) -> Vec<Latin1> {
    with_state(|s| s.headers(id as u64).map(|list| list.into_iter().flat_map(|(n, v)| [Latin1(n.to_vec()), Latin1(v.to_vec())]).collect()).unwrap_or_default())
}

#[napi]
pub fn remote_address(id: f64) -> Option<String> {
    with_state(|s| s.remote_address(id as u64).map(str::to_string))
}

/// Response flags from JavaScript.
const CLOSE: u32 = 1;
const HAS_DATE: u32 = 2;

/// Buffers reused from one response to the next (see `text.rs`).
#[derive(Default)]
struct Scratch {
    block: Vec<u8>,
    body: Vec<u8>,
    units: Vec<u16>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A whole response; false when the client is gone. `block` holds the app's header lines
/// (`name: value\r\n`, latin1), or is the number `keepHeaderBlock` gave for them; `body` is a
/// string (sent as UTF-8) or a Buffer; `declared` the Content-Length the app set, or -1.
#[napi]
pub fn respond(env: Env, id: f64, status: u32, block: JsUnknown, body: JsUnknown, flags: u32, declared: f64) -> Result<bool> {
    let env = env.raw();
    KEPT.with(|kept| SCRATCH.with(|scratch| {
        let (kept, scratch) = (&*kept.borrow(), &mut *scratch.borrow_mut());
        let block = match unsafe { kept_index(env, block.raw()) } {
            Some(index) => kept.get(index).ok_or_else(|| Error::from_reason("unknown kept header block"))?.block(),
            None => {
                unsafe { text::latin1_into(env, block.raw(), &mut scratch.block) };
                HeaderBlock::new(&scratch.block).map_err(Error::from_reason)?
            }
        };
        let answer = AppHead { status: status as u16, block, has_date: flags & HAS_DATE != 0, declared_length: (declared >= 0.0).then_some(declared as u64), close: flags & CLOSE != 0 };
        let body = unsafe { body_bytes(env, body.raw(), &mut scratch.units, &mut scratch.body) }?;
        let sent = with_state(|s| s.respond(id as u64, &answer, body.len(), |out| out.extend_from_slice(body)));
        text::trim(&mut scratch.body);
        text::trim(&mut scratch.units);
        Ok(sent)
    }))
}

/// A header block's number when it is one `keepHeaderBlock` gave (else the block is a string).
unsafe fn kept_index(env: napi::sys::napi_env, value: napi::sys::napi_value) -> Option<usize> {
    let mut index = 0u32;
    (napi::sys::napi_get_value_uint32(env, value, &mut index) == napi::sys::Status::napi_ok).then_some(index as usize)
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
    unsafe { text::latin1_into(env.raw(), block.raw(), &mut bytes) };
    let kept = KeptHeaderBlock::new(&bytes).map_err(Error::from_reason)?;
    KEPT.with(|blocks| {
        let mut blocks = blocks.borrow_mut();
        blocks.push(kept);
        Ok(blocks.len() as u32 - 1)
    })
}

/// A response body's bytes: a string's UTF-8 (written into `out`), or a Buffer's own bytes.
unsafe fn body_bytes<'a>(env: napi::sys::napi_env, value: napi::sys::napi_value, units: &mut Vec<u16>, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
    let mut kind = 0;
    napi::sys::napi_typeof(env, value, &mut kind);
    if kind == napi::sys::ValueType::napi_string {
        text::utf8_into(env, value, units, out);
        return Ok(out);
    }
    let mut data = std::ptr::null_mut();
    let mut len = 0usize;
    if napi::sys::napi_get_buffer_info(env, value, &mut data, &mut len) != napi::sys::Status::napi_ok {
        return Err(Error::from_reason("a response body must be a string or a Buffer"));
    }
    Ok(if len == 0 { &[] } else { std::slice::from_raw_parts(data as *const u8, len) })
}

#[napi]
pub fn stream_start(env: Env, id: f64, status: u32, block: JsString, flags: u32) -> Result<bool> {
    let mut bytes = Vec::new();
    unsafe { text::latin1_into(env.raw(), block.raw(), &mut bytes) };
    let block = HeaderBlock::new(&bytes).map_err(Error::from_reason)?;
    let answer = AppHead { status: status as u16, block, has_date: flags & HAS_DATE != 0, declared_length: None, close: flags & CLOSE != 0 };
    Ok(with_state(|s| s.stream_start(id as u64, &answer)))
}

/// The value of one request header, without building them all: repeats joined as Node joins
/// them, or with `first`, the first one alone (what Node keeps of Content-Type and the like).
#[napi]
pub fn header(id: f64, name: String, first: Option<bool>) -> Option<Latin1> {
    with_state(|s| s.header(id as u64, name.as_bytes(), first.unwrap_or(false)).map(Latin1))
}

/// Returns false when the stream should pause until a drain event (or the client is gone).
#[napi]
pub fn stream_write(id: f64, chunk: Either<String, Buffer>) -> bool {
    let bytes: &[u8] = match &chunk {
        Either::A(text) => text.as_bytes(),
        Either::B(buffer) => buffer.as_ref(),
    };
    with_state(|s| s.stream_write(id as u64, bytes))
}

#[napi]
pub fn stream_end(id: f64) -> bool {
    with_state(|s| s.stream_end(id as u64))
}

/// Closes the request's connection (its response failed half-way).
#[napi]
pub fn destroy(id: f64) {
    with_state(|s| s.destroy(id as u64));
}

/// Bytes handed to JavaScript as a latin1 string.
pub struct Latin1(Vec<u8>);

impl ToNapiValue for Latin1 {
    unsafe fn to_napi_value(env: napi::sys::napi_env, value: Self) -> Result<napi::sys::napi_value> {
        let mut out = std::ptr::null_mut();
        napi::sys::napi_create_string_latin1(env, value.0.as_ptr() as *const _, value.0.len(), &mut out);
        Ok(out)
    }
}
