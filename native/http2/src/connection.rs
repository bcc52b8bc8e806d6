//! One server-side HTTP/2 connection, sans IO: the caller hands it the bytes it read
//! (`receive`), takes the events they made (`take_events`), gives its commands (`respond`,
//! `send_data`, `send_trailers`, `reset`, `consume`, `shutdown`, `goaway`) and writes what
//! `pending_output` returns, telling how much the socket took (`consume_output`). Nothing here
//! reads a socket, waits or starts a thread: the native engine drives it from libuv's callbacks.

use crate::callbacks::{self, nv, slot_of, Inner};
use crate::checks::{Found, FrameChecks};
use crate::config::Config;
use crate::error::{code, Error};
use crate::events::{Events, StreamId};
use crate::memory::{self, Counter};
use crate::streams::FileBody;
use libnghttp2_sys::*;
use std::os::raw::c_void;

/// `pending_output` frames at most this much ahead of what the socket took: past it, response
/// bodies wait in their streams' buffers (where `send_data` reports them), not in the output.
const OUTPUT_AHEAD: usize = 64 * 1024;

/// HTTP/1.1's connection-specific fields, which HTTP/2 forbids (RFC 9113 §8.2.2): a response
/// that has them (an app setting `Connection: close`) is sent without them.
const CONNECTION_SPECIFIC: [&[u8]; 5] = [b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"];

/// What every `unsafe` block here relies on: `session` is live from `new` to `drop` (a connection
/// whose session failed to start is never returned); `inner` and `counter` are Boxes leaked in
/// `new` and freed in `drop`, after the session that uses them; nghttp2's callbacks reach `Inner`
/// only inside `nghttp2_session_mem_recv2` and `mem_send2`, so a `&mut Inner` taken here is never
/// held across those.
pub struct Connection {
    session: *mut nghttp2_session,
    /// Shared with nghttp2's callbacks (their user data): reached only through this pointer.
    inner: *mut Inner,
    counter: *mut Counter,
    checks: FrameChecks,
    /// The start of a frame `checks` must see whole before nghttp2 reads it (see `Found::Partial`).
    held: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
    /// The name/value list of the response being submitted, reused (nghttp2 copies it).
    nva: Vec<nghttp2_nv>,
    /// `shutdown` was called: GOAWAY follows once no stream is open.
    draining: bool,
    final_goaway: bool,
}

impl Connection {
    /// A connection whose first output is the server's SETTINGS.
    pub fn new(config: Config) -> Result<Connection, Error> {
        // SAFETY: `Inner` and `Counter` are boxed and leaked here, owned by the connection from now
        // on and freed in `drop`, after the session; the callbacks, option and session are
        // nghttp2's, used as its API says (each checked for failure, callbacks and option deleted
        // once the session copied them); `settings` outlives the call that reads it.
        unsafe {
            let inner = Box::into_raw(Box::new(Inner::new(config.clone())));
            let counter = Box::into_raw(Box::new(Counter { live: 0 }));
            let mut conn = Connection {
                session: std::ptr::null_mut(),
                inner,
                counter,
                checks: FrameChecks::new(),
                held: Vec::new(),
                out: Vec::new(),
                out_pos: 0,
                nva: Vec::new(),
                draining: false,
                final_goaway: false,
            };
            let cbs = callbacks::callbacks();
            let mut option = std::ptr::null_mut();
            if cbs.is_null() || nghttp2_option_new(&mut option) != 0 {
                if !cbs.is_null() {
                    nghttp2_session_callbacks_del(cbs);
                }
                return Err(Error::Connection("out of memory".into()));
            }
            // Request bodies are consumed by the app (flow control as backpressure).
            nghttp2_option_set_no_auto_window_update(option, 1);
            nghttp2_option_set_max_continuations(option, config.max_continuations);
            nghttp2_option_set_max_settings(option, config.max_settings_entries);
            nghttp2_option_set_max_outbound_ack(option, config.max_queued_acks);
            nghttp2_option_set_max_deflate_dynamic_table_size(option, config.encoder_table_size as usize);
            // nghttp2's own reset limit (GOAWAY with INTERNAL_ERROR) stays as a backstop behind
            // ours, which answers ENHANCE_YOUR_CALM and is counted first.
            nghttp2_option_set_stream_reset_rate_limit(option, config.resets.burst as u64 * 2, config.resets.per_second as u64 * 2);
            let mut mem = memory::allocator(counter);
            let rv = nghttp2_session_server_new3(&mut conn.session, cbs, inner as *mut c_void, option, &mut mem);
            nghttp2_session_callbacks_del(cbs);
            nghttp2_option_del(option);
            if rv != 0 {
                return Err(Error::Connection(strerror(rv)));
            }
            let mut settings = vec![
                entry(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, config.max_concurrent_streams),
                entry(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, config.max_header_list_size),
                entry(NGHTTP2_SETTINGS_ENABLE_PUSH, 0),
            ];
            if config.header_table_size != 4096 {
                settings.push(entry(NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, config.header_table_size));
            }
            if config.initial_window_size != 65_535 {
                settings.push(entry(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, config.initial_window_size));
            }
            if config.max_frame_size != 16_384 {
                settings.push(entry(NGHTTP2_SETTINGS_MAX_FRAME_SIZE, config.max_frame_size));
            }
            let rv = nghttp2_submit_settings(conn.session, NGHTTP2_FLAG_NONE as u8, settings.as_ptr(), settings.len());
            if rv != 0 {
                return Err(Error::Connection(strerror(rv)));
            }
            if config.connection_window_size > 65_535 {
                nghttp2_session_set_local_window_size(conn.session, NGHTTP2_FLAG_NONE as u8, 0, config.connection_window_size as i32);
            }
            Ok(conn)
        }
    }

    fn inner(&mut self) -> &mut Inner {
        // Never held across a call into nghttp2, whose callbacks reach `Inner` too.
        // SAFETY: `inner` is the Box leaked in `new`, freed only in `drop`; no other reference to
        // it lives: nghttp2's callbacks reach it only inside calls this borrow of `self` cannot be
        // held across.
        unsafe { &mut *self.inner }
    }

    /// Takes bytes read from the client. Events they make wait in `take_events`. On an error
    /// the connection is over: write what `pending_output` holds (a GOAWAY, but for
    /// `BadPreface`), then close.
    pub fn receive(&mut self, input: &[u8]) -> Result<(), Error> {
        if self.held.is_empty() {
            return self.receive_checked(input);
        }
        let mut joined = std::mem::take(&mut self.held);
        joined.extend_from_slice(input);
        let result = self.receive_checked(&joined);
        if self.held.is_empty() {
            // Kept for the next partial frame (they are a few bytes).
            joined.clear();
            self.held = joined;
            self.held.clear();
        }
        result
    }

    /// `receive`, with RFC 9113's checks nghttp2 no longer makes (see `checks.rs`).
    fn receive_checked(&mut self, mut input: &[u8]) -> Result<(), Error> {
        loop {
            match self.checks.scan(input) {
                Found::Nothing => return self.feed(input),
                Found::Partial { start } => {
                    self.feed(&input[..start])?;
                    self.held.clear();
                    self.held.extend_from_slice(&input[start..]);
                    return Ok(());
                }
                Found::ConnectionError { at, code: error, reason } => {
                    self.feed(&input[..at])?;
                    // SAFETY: `session` is live from `new` to `drop` (the invariant every block
                    // here relies on).
                    unsafe { nghttp2_session_terminate_session(self.session, error) };
                    return Err(Error::Connection(reason.into()));
                }
                Found::StreamWindowUpdate { start, end, stream, increment } => {
                    self.feed(&input[..start])?;
                    // -1 for a stream nghttp2 does not know (idle, or closed): its call.
                    // SAFETY: `session` is live (see `new`); any stream id is accepted (-1 for one
                    // nghttp2 does not know).
                    let window = unsafe { nghttp2_session_get_stream_remote_window_size(self.session, stream as i32) };
                    let error = match increment {
                        0 if window >= 0 => Some(code::PROTOCOL_ERROR),
                        _ if window >= 0 && window as i64 + increment as i64 > i32::MAX as i64 => Some(code::FLOW_CONTROL_ERROR),
                        _ => None,
                    };
                    match error {
                        // The stream's error: it is reset, and the frame never reaches nghttp2.
                        // SAFETY: `session` is live; nghttp2 checks the stream id and queues the
                        // frame.
                        Some(error) => unsafe {
                            nghttp2_submit_rst_stream(self.session, NGHTTP2_FLAG_NONE as u8, stream as i32, error);
                        },
                        None => self.feed(&input[start..end])?,
                    }
                    input = &input[end..];
                }
            }
        }
    }

    /// Hands bytes to nghttp2.
    fn feed(&mut self, input: &[u8]) -> Result<(), Error> {
        if input.is_empty() {
            return Ok(());
        }
        // SAFETY: `session` is live, and `input` a valid slice for the call; the callbacks it runs
        // reach `Inner`, of which no reference is held here.
        let rv = unsafe { nghttp2_session_mem_recv2(self.session, input.as_ptr(), input.len()) };
        self.give_back_window();
        if rv < 0 {
            let rv = rv as i32;
            return Err(match rv {
                NGHTTP2_ERR_BAD_CLIENT_MAGIC => Error::BadPreface,
                NGHTTP2_ERR_FLOODED | NGHTTP2_ERR_TOO_MANY_CONTINUATIONS => {
                    self.inner().flooded = true;
                    // SAFETY: `session` is live.
                    unsafe { nghttp2_session_terminate_session(self.session, code::ENHANCE_YOUR_CALM) };
                    Error::Flooded
                }
                _ => {
                    // SAFETY: `session` is live.
                    unsafe { nghttp2_session_terminate_session(self.session, code::PROTOCOL_ERROR) };
                    Error::Connection(strerror(rv))
                }
            });
        }
        if self.inner().flooded {
            return Err(Error::Flooded);
        }
        Ok(())
    }

    /// The events since the last call, for the caller to read (`Events::iter`) while it gives
    /// commands. Give the value back with `recycle` to reuse its buffers.
    pub fn take_events(&mut self) -> Events {
        let inner = self.inner();
        inner.batch += 1;
        std::mem::take(&mut inner.events)
    }

    /// Hands back taken events, so that their buffers serve the next ones.
    pub fn recycle(&mut self, mut events: Events) {
        let inner = self.inner();
        if inner.events.list.is_empty() && inner.events.bytes.is_empty() {
            events.clear();
            inner.events = events;
        }
    }

    /// Bytes to write to the client: frames up to `OUTPUT_AHEAD` beyond what was consumed.
    /// Tell how much was written with `consume_output`.
    pub fn pending_output(&mut self) -> &[u8] {
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        } else if self.out_pos >= OUTPUT_AHEAD {
            self.out.drain(..self.out_pos);
            self.out_pos = 0;
        }
        let mut out = std::mem::take(&mut self.out);
        let limit = self.out_pos + OUTPUT_AHEAD;
        self.frames_into(&mut out, limit);
        self.out = out;
        &self.out[self.out_pos..]
    }

    /// Appends the frames due to `out` until it holds `limit` bytes (or nothing is left to
    /// send), for a caller that writes from its own buffer: the frames are copied once, from
    /// nghttp2 to `out`. Returns how many bytes were appended. Not to be mixed with
    /// `pending_output` on one connection (its bytes would be skipped).
    pub fn write_output(&mut self, out: &mut Vec<u8>, limit: usize) -> usize {
        let before = out.len();
        self.frames_into(out, limit);
        out.len() - before
    }

    fn frames_into(&mut self, out: &mut Vec<u8>, limit: usize) {
        if self.draining && !self.final_goaway && self.inner().streams.open_count() == 0 {
            self.final_goaway = true;
            // SAFETY: `session` is live.
            unsafe { nghttp2_session_terminate_session(self.session, code::NO_ERROR) };
        }
        while out.len() < limit {
            let mut data = std::ptr::null();
            // SAFETY: `session` is live; the callbacks it runs reach `Inner`, of which no reference
            // is held here.
            let n = unsafe { nghttp2_session_mem_send2(self.session, &mut data) };
            if n <= 0 {
                break;
            }
            // SAFETY: nghttp2 returned `n > 0` bytes at `data`, valid until its next call on the
            // session, and they are copied at once.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(data, n as usize) });
        }
        self.give_back_window();
    }

    /// The socket took `n` bytes of what `pending_output` returned.
    pub fn consume_output(&mut self, n: usize) {
        assert!(self.out_pos + n <= self.out.len(), "consumed more output than was pending");
        self.out_pos += n;
    }

    /// Answers a request: `status` and header fields (names of any case: HTTP/2 sends them in
    /// lower case; HTTP/1.1's connection fields are left out). A 1xx status sends an
    /// informational head, and the final one follows. Without `end_stream`, the body follows
    /// with `send_data`.
    pub fn respond(&mut self, stream: StreamId, status: u16, headers: &[(&[u8], &[u8])], end_stream: bool) -> Result<(), Error> {
        self.respond_with(stream, status, headers.iter().copied(), end_stream)
    }

    /// `respond`, with the header fields from an iterator (no list to build).
    pub fn respond_with<'h>(
        &mut self,
        stream: StreamId,
        status: u16,
        headers: impl IntoIterator<Item = (&'h [u8], &'h [u8])>,
        end_stream: bool,
    ) -> Result<(), Error> {
        if !(100..=999).contains(&status) {
            return Err(Error::InvalidHeader);
        }
        let slot = self.slot(stream)?;
        // SAFETY: `inner` is the Box leaked in `new`; the only reference to it for the rest of this
        // call (the `nghttp2_submit_*` calls below run no callbacks).
        let inner = unsafe { &mut *self.inner };
        let state = inner.streams.get(slot, stream).ok_or(Error::Stream(stream))?;
        if state.responded {
            return Err(Error::Stream(stream));
        }
        let digits = [b'0' + (status / 100) as u8, b'0' + (status / 10 % 10) as u8, b'0' + (status % 10) as u8];
        let mut nva = std::mem::take(&mut self.nva);
        nva.clear();
        nva.push(nv(b":status", &digits));
        for (name, value) in headers {
            if CONNECTION_SPECIFIC.iter().any(|c| name.eq_ignore_ascii_case(c)) {
                continue;
            }
            // SAFETY: `value` is a valid slice for the call.
            if !valid_name(name) || unsafe { nghttp2_check_header_value(value.as_ptr(), value.len()) } == 0 {
                self.nva = nva;
                return Err(Error::InvalidHeader);
            }
            nva.push(nv(name, value));
        }
        // SAFETY: `session` is live; `nva` (and the bytes its pairs point to: `headers`, `status`)
        // outlive the call, which copies them.
        let rv = unsafe {
            if status < 200 {
                nghttp2_submit_headers(self.session, NGHTTP2_FLAG_NONE as u8, stream as i32, std::ptr::null(), nva.as_ptr(), nva.len(), std::ptr::null_mut())
            } else if end_stream {
                nghttp2_submit_response2(self.session, stream as i32, nva.as_ptr(), nva.len(), std::ptr::null())
            } else {
                let provider =
                    nghttp2_data_provider2 { source: nghttp2_data_source { ptr: (slot + 1) as *mut c_void }, read_callback: Some(callbacks::read_body) };
                nghttp2_submit_response2(self.session, stream as i32, nva.as_ptr(), nva.len(), &provider)
            }
        };
        // nghttp2 has copied the fields: the pointers into `headers` are not kept.
        nva.clear();
        self.nva = nva;
        if rv != 0 {
            return Err(Error::Stream(stream));
        }
        if status >= 200 {
            state.responded = true;
            state.ended = end_stream;
        }
        Ok(())
    }

    /// Queues response body bytes (after `respond`); `end_stream` ends the body. They go out as
    /// the client's flow-control window allows. Returns whether the stream's buffer is under
    /// `Config::stream_high_water`; if not, wait for its `Drained` event before sending more.
    pub fn send_data(&mut self, stream: StreamId, data: &[u8], end_stream: bool) -> Result<bool, Error> {
        let slot = self.slot(stream)?;
        // SAFETY: `inner` is the Box leaked in `new`; the only reference to it for the rest of this
        // call (no callback runs below).
        let inner = unsafe { &mut *self.inner };
        let high_water = inner.config.stream_high_water;
        let state = inner.streams.get(slot, stream).ok_or(Error::Stream(stream))?;
        if !state.responded || state.ended || (state.file.is_some() && !data.is_empty()) {
            return Err(Error::Stream(stream));
        }
        if state.out_pos > 0 && state.out_pos >= state.out.len() / 2 {
            state.out.drain(..state.out_pos);
            state.out_pos = 0;
        }
        state.out.extend_from_slice(data);
        state.ended = end_stream;
        let under = state.buffered() < high_water;
        state.wants_drain = !under;
        self.resume(slot, stream);
        Ok(under)
    }

    /// Queues `length` bytes of `file` from `offset` as the body's next bytes, after what
    /// `send_data` queued: they are read from the file into DATA frames as the client's window
    /// allows, never held in a buffer of their own. Only an empty `send_data` (to end the body) or
    /// `send_trailers` may follow. A file that gives fewer bytes than `length` resets the stream.
    pub fn send_file(&mut self, stream: StreamId, file: std::fs::File, offset: u64, length: u64) -> Result<(), Error> {
        let slot = self.slot(stream)?;
        // SAFETY: `inner` is the Box leaked in `new`; the only reference to it for the rest of this
        // call (no callback runs below).
        let inner = unsafe { &mut *self.inner };
        let state = inner.streams.get(slot, stream).ok_or(Error::Stream(stream))?;
        if !state.responded || state.ended || state.file.is_some() {
            return Err(Error::Stream(stream));
        }
        if length > 0 {
            state.file = Some(FileBody { file, offset, left: length });
            self.resume(slot, stream);
        }
        Ok(())
    }

    /// Ends the body with trailer fields.
    pub fn send_trailers(&mut self, stream: StreamId, headers: &[(&[u8], &[u8])]) -> Result<(), Error> {
        let slot = self.slot(stream)?;
        // SAFETY: `inner` is the Box leaked in `new`; the only reference to it for the rest of this
        // call (no callback runs below).
        let inner = unsafe { &mut *self.inner };
        let state = inner.streams.get(slot, stream).ok_or(Error::Stream(stream))?;
        if !state.responded || state.ended {
            return Err(Error::Stream(stream));
        }
        let mut trailers = Vec::with_capacity(headers.len());
        for (name, value) in headers {
            // SAFETY: `value` is a valid slice for the call.
            if name.first() == Some(&b':') || !valid_name(name) || unsafe { nghttp2_check_header_value(value.as_ptr(), value.len()) } == 0 {
                return Err(Error::InvalidHeader);
            }
            trailers.push((name.to_ascii_lowercase(), value.to_vec()));
        }
        state.trailers = Some(trailers);
        state.ended = true;
        self.resume(slot, stream);
        Ok(())
    }

    /// Wakes nghttp2 for a stream whose body waited for data.
    fn resume(&mut self, slot: usize, stream: StreamId) {
        // SAFETY: `inner` is the Box leaked in `new`; resuming data runs no callback that would
        // reach it.
        let inner = unsafe { &mut *self.inner };
        if let Some(state) = inner.streams.get(slot, stream) {
            if std::mem::take(&mut state.deferred) {
                // SAFETY: `session` is live.
                unsafe { nghttp2_session_resume_data(self.session, stream as i32) };
            }
        }
    }

    /// Resets a stream (RST_STREAM with `code`); its `Reset` event follows.
    pub fn reset(&mut self, stream: StreamId, code: u32) -> Result<(), Error> {
        self.slot(stream)?;
        // SAFETY: `session` is live; nghttp2 checks the stream id.
        let rv = unsafe { nghttp2_submit_rst_stream(self.session, NGHTTP2_FLAG_NONE as u8, stream as i32, code) };
        if rv != 0 {
            return Err(Error::Stream(stream));
        }
        Ok(())
    }

    /// The app has taken `n` bytes of a stream's request body: the client may send that many more.
    pub fn consume(&mut self, stream: StreamId, n: usize) {
        let Ok(slot) = self.slot(stream) else { return }; // closed: its window was given back
                                                          // SAFETY: `inner` is the Box leaked in `new`; consuming runs no callback that would reach
                                                          // it.
        let inner = unsafe { &mut *self.inner };
        if let Some(state) = inner.streams.get(slot, stream) {
            let n = n.min(state.unconsumed);
            state.unconsumed -= n;
            // SAFETY: `session` is live.
            unsafe { nghttp2_session_consume(self.session, stream as i32, n) };
        }
    }

    /// Graceful close: GOAWAY tells the client to open no more streams (streams it opened
    /// before reading it are still served); the final GOAWAY follows once none is open, and
    /// then the connection is done.
    pub fn shutdown(&mut self) {
        if !self.draining {
            self.draining = true;
            // SAFETY: `session` is live.
            unsafe { nghttp2_submit_shutdown_notice(self.session) };
        }
    }

    /// Closes now: a GOAWAY with `code` and the last stream processed; streams still open are
    /// abandoned (the caller aborts what it holds of them).
    pub fn goaway(&mut self, code: u32) {
        self.final_goaway = true;
        // SAFETY: `session` is live.
        unsafe { nghttp2_session_terminate_session(self.session, code) };
    }

    /// Response body bytes of a stream not yet framed.
    pub fn buffered(&mut self, stream: StreamId) -> usize {
        let Ok(slot) = self.slot(stream) else { return 0 };
        self.inner().streams.get(slot, stream).map_or(0, |s| s.buffered())
    }

    /// Streams open: requests received and not yet closed or reset.
    pub fn open_streams(&mut self) -> usize {
        self.inner().streams.open_count()
    }

    /// Whether the connection reads on (false once a GOAWAY ended it).
    pub fn wants_read(&self) -> bool {
        // SAFETY: `session` is live.
        unsafe { nghttp2_session_want_read(self.session) != 0 }
    }

    /// Whether nghttp2 has frames to send (frames of streams waiting for the client's window don't count).
    pub fn wants_write(&self) -> bool {
        // SAFETY: `session` is live.
        self.out_pos < self.out.len() || unsafe { nghttp2_session_want_write(self.session) != 0 }
    }

    /// Whether the connection is over: nothing more to read, nothing left to write.
    pub fn is_done(&self) -> bool {
        // SAFETY: `session` is live.
        self.out_pos == self.out.len() && unsafe { nghttp2_session_want_read(self.session) == 0 && nghttp2_session_want_write(self.session) == 0 }
    }

    /// Memory the connection holds: nghttp2's (streams, HPACK tables, queued frames) and its own
    /// buffers.
    pub fn memory(&mut self) -> usize {
        // SAFETY: `counter` is the Box leaked in `new`, freed only in `drop`; its allocator hooks
        // only run inside nghttp2 calls, not during this read.
        let live = unsafe { (*self.counter).live };
        let out = self.out.capacity();
        let inner = self.inner();
        live + out + inner.streams.capacity() + inner.events.bytes.capacity()
    }

    fn slot(&mut self, stream: StreamId) -> Result<usize, Error> {
        // SAFETY: `session` is live.
        unsafe { slot_of(self.session, stream) }.ok_or(Error::Stream(stream))
    }

    /// Gives the connection's window back for body bytes nobody will consume.
    fn give_back_window(&mut self) {
        let n = std::mem::take(&mut self.inner().unconsumed_of_closed);
        if n > 0 {
            // SAFETY: `session` is live.
            unsafe { nghttp2_session_consume_connection(self.session, n) };
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: `session` (if it was created), `inner` and `counter` are the connection's own,
        // freed once, here; the session goes first, as its allocator and callbacks use the other
        // two.
        unsafe {
            if !self.session.is_null() {
                nghttp2_session_del(self.session);
            }
            drop(Box::from_raw(self.inner));
            drop(Box::from_raw(self.counter));
        }
    }
}

fn entry(id: u32, value: u32) -> nghttp2_settings_entry {
    nghttp2_settings_entry { settings_id: id as i32, value }
}

fn strerror(rv: i32) -> String {
    // SAFETY: nghttp2_strerror returns a static NUL-terminated string for any code.
    unsafe { std::ffi::CStr::from_ptr(nghttp2_strerror(rv)) }.to_string_lossy().into_owned()
}

/// A field name of RFC 9110's token characters (any case: it is sent lower-cased).
fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
}
