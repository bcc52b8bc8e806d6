//! Cog's native engine: an HTTP/1.1 server in Rust on Node's own event loop, as a Node-API
//! addon. `src/engines/native.ts` is its JavaScript side; `server.rs` holds connections,
//! `js.rs` calls into JavaScript, and the `cog-framing` crate parses and frames.

mod js;
mod server;
mod uv;

use napi::bindgen_prelude::*;
use napi::{Env, JsFunction, NapiRaw};
use napi_derive::napi;
use server::{with_state, Settings};

#[napi(object)]
pub struct ListenOptions {
    pub host: String,
    pub port: u32,
    pub max_header_size: u32,
    pub max_headers: u32,
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

/// Starts a server; returns `[serverId, port]`.
#[napi]
pub fn listen(env: Env, options: ListenOptions, on_request: JsFunction, on_event: JsFunction) -> Result<Vec<u32>> {
    let js = unsafe { js::ServerJs::new(env.raw(), on_request.raw(), on_event.raw()) }.map_err(Error::from_reason)?;
    let settings = Settings {
        head: cog_framing::Limits { max_head: options.max_header_size as usize, max_headers: options.max_headers as usize },
        body_limit: options.body_limit as u64,
        headers_timeout: u64::from(options.headers_timeout),
        request_timeout: u64::from(options.request_timeout),
        keep_alive_timeout: u64::from(options.keep_alive_timeout),
        check_interval: u64::from(options.timeout_check_interval),
    };
    let port = u16::try_from(options.port).map_err(|_| Error::from_reason(format!("port {} is out of range", options.port)))?;
    match server::listen(js, &options.host, port, settings) {
        Ok((id, port)) => Ok(vec![id as u32, u32::from(port)]),
        Err(message) => Err(Error::from_reason(message)),
    }
}

/// Stops accepting; idle connections close, busy ones after their last response.
#[napi]
pub fn stop_listening(server: u32) {
    server::stop_listening(server as usize);
}

/// Cuts every connection; returns the ids of requests that were still in flight.
#[napi]
pub fn destroy_connections(server: u32) -> Vec<f64> {
    server::destroy_connections(server as usize).into_iter().map(|id| id as f64).collect()
}

/// Frees what the server kept (call once it is stopped and drained).
#[napi]
pub fn dispose(server: u32) {
    if let Some(js) = server::dispose(server as usize) {
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

/// A whole response; false when the client is gone.
#[napi]
pub fn respond(id: f64, status: u32, headers: Vec<String>, body: Either<String, Buffer>, close: bool) -> Result<bool> {
    let bytes: &[u8] = match &body {
        Either::A(text) => text.as_bytes(),
        Either::B(buffer) => buffer.as_ref(),
    };
    with_state(|s| s.respond(id as u64, status as u16, &headers, bytes, close)).map_err(Error::from_reason)
}

#[napi]
pub fn stream_start(id: f64, status: u32, headers: Vec<String>, close: bool) -> Result<bool> {
    with_state(|s| s.stream_start(id as u64, status as u16, &headers, close)).map_err(Error::from_reason)
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
