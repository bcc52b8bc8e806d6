//! nghttp2's callbacks: what it parsed becomes events, what the app buffered becomes DATA, and
//! the rate limits are counted. They run inside `nghttp2_session_mem_recv2` and `mem_send2`
//! (called by `Connection::receive` and `pending_output`), with the connection's `Inner` as
//! user data.
//!
//! # Safety
//!
//! The `unsafe extern "C"` callbacks below rely on what nghttp2 promises every callback: the
//! session is live and not re-entered, the frame, header and data pointers are valid for the
//! call, and the user data is the connection's `Inner` (a Box that outlives the session), which
//! nothing else references while nghttp2 runs (`Connection` holds no `&mut Inner` across
//! `nghttp2_session_mem_recv2` or `mem_send2`). Their bodies are unsafe throughout, so this
//! module allows unsafe operations in unsafe functions, against the crate's rule; the helpers
//! above the callbacks keep to it.
#![allow(unsafe_op_in_unsafe_fn)]

use crate::config::Config;
use crate::error::code;
use crate::events::{Events, Field, Pseudo, Span, Stored, StreamId};
use crate::rate::Bucket;
use crate::streams::Streams;
use libnghttp2_sys::*;
use std::os::raw::{c_int, c_void};
use std::time::Instant;

/// The header block being received (one at a time on a connection: RFC 9113 §6.10 forbids
/// interleaving), copied into the events once whole.
#[derive(Default)]
pub(crate) struct Block {
    stream: StreamId,
    bytes: Vec<u8>,
    fields: Vec<Field>,
    pseudo: Pseudo,
    /// RFC 9113's size of the list so far (name, value, 32 a field).
    size: usize,
    /// The size past which the stream is reset rather than answered 431 (see `Config::max_header_list_size`).
    reset_past: usize,
    pairs: u32,
    too_large: bool,
    /// Reset (too many fields, too large a list, a bad Content-Length): no event.
    refused: bool,
}

impl Block {
    fn start(&mut self, stream: StreamId, reset_past: usize) {
        self.stream = stream;
        self.bytes.clear();
        self.fields.clear();
        self.pseudo = Pseudo::default();
        self.size = 0;
        self.reset_past = reset_past;
        self.pairs = 0;
        self.too_large = false;
        self.refused = false;
    }

    /// Moves the block's fields into `events`; returns their range and the pseudo-headers.
    fn copy_into(&self, events: &mut Events) -> ((u32, u32), Pseudo) {
        let shift = events.bytes.len() as u32;
        events.bytes.extend_from_slice(&self.bytes);
        let start = events.fields.len() as u32;
        events.fields.extend(self.fields.iter().map(|f| Field { name: f.name.shifted(shift), value: f.value.shifted(shift) }));
        let p = self.pseudo;
        let pseudo = Pseudo {
            method: p.method.shifted(shift),
            scheme: p.scheme.shifted(shift),
            authority: p.authority.shifted(shift),
            path: p.path.shifted(shift),
            protocol: p.protocol.shifted(shift),
            order: p.order,
        };
        ((start, events.fields.len() as u32), pseudo)
    }
}

/// The state the callbacks share with the connection.
pub(crate) struct Inner {
    pub(crate) config: Config,
    pub(crate) events: Events,
    /// Counts the times `events` was taken: a request event is findable while its batch is current.
    pub(crate) batch: u64,
    pub(crate) streams: Streams,
    pub(crate) block: Block,
    pub(crate) resets: Bucket,
    pub(crate) pings: Bucket,
    pub(crate) settings: Bucket,
    /// Requests refused for their header list (`Config::refused_header_lists`).
    pub(crate) refused_lists: Bucket,
    /// A rate limit was exceeded: the connection is ending with GOAWAY (ENHANCE_YOUR_CALM).
    pub(crate) flooded: bool,
    /// Request body bytes of closed streams the app never consumed: given back to the
    /// connection's window once nghttp2 has returned.
    pub(crate) unconsumed_of_closed: usize,
}

impl Inner {
    pub(crate) fn new(config: Config) -> Self {
        Inner {
            resets: Bucket::new(config.resets),
            pings: Bucket::new(config.pings),
            settings: Bucket::new(config.settings),
            refused_lists: Bucket::new(config.refused_header_lists),
            config,
            events: Events::default(),
            batch: 0,
            streams: Streams::default(),
            block: Block::default(),
            flooded: false,
            unconsumed_of_closed: 0,
        }
    }
}

/// The connection's `Inner`, from nghttp2's user data.
///
/// # Safety
///
/// `user_data` is the one nghttp2 passes to a callback: the connection's live `Inner`, which
/// nothing else references during the callback.
unsafe fn inner<'a>(user_data: *mut c_void) -> &'a mut Inner {
    // SAFETY: the caller's promise.
    unsafe { &mut *(user_data as *mut Inner) }
}

/// The slot of a stream, kept as nghttp2's stream user data (plus one: null is none).
///
/// # Safety
///
/// `session` is a live session.
pub(crate) unsafe fn slot_of(session: *mut nghttp2_session, stream: StreamId) -> Option<usize> {
    // SAFETY: `session` is live (the caller's promise); any stream id is accepted.
    let data = unsafe { nghttp2_session_get_stream_user_data(session, stream as i32) } as usize;
    data.checked_sub(1)
}

/// Ends the connection for a flood: GOAWAY (ENHANCE_YOUR_CALM), nothing more read.
///
/// # Safety
///
/// `session` is a live session.
unsafe fn flooded(session: *mut nghttp2_session, inner: &mut Inner) {
    inner.flooded = true;
    // SAFETY: `session` is live (the caller's promise).
    unsafe { nghttp2_session_terminate_session(session, code::ENHANCE_YOUR_CALM) };
}

/// The callbacks for a new session (null when out of memory); the caller deletes them.
///
/// # Safety
///
/// None beyond the FFI's: a plain constructor (unsafe as the calls it makes are).
pub(crate) unsafe fn callbacks() -> *mut nghttp2_session_callbacks {
    let mut cbs = std::ptr::null_mut();
    // SAFETY: `cbs` is set by nghttp2 when it returns 0, and only then used; the callbacks set
    // have the signatures nghttp2 declares.
    unsafe {
        if nghttp2_session_callbacks_new(&mut cbs) != 0 {
            return std::ptr::null_mut();
        }
        nghttp2_session_callbacks_set_on_begin_frame_callback(cbs, Some(on_begin_frame));
        nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, Some(on_begin_headers));
        nghttp2_session_callbacks_set_on_header_callback(cbs, Some(on_header));
        nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, Some(on_frame_recv));
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, Some(on_data_chunk_recv));
        nghttp2_session_callbacks_set_on_stream_close_callback(cbs, Some(on_stream_close));
        nghttp2_session_callbacks_set_on_frame_send_callback(cbs, Some(on_frame_send));
    }
    cbs
}

/// A request whose body ends at another length than its Content-Length is malformed, which RFC
/// 9113 §8.1.1 makes a stream error; nghttp2 (since 1.6x) ends the whole connection for it when
/// the END_STREAM flag arrives, and with it every other request on it (a client that gives up
/// on an upload, as node:http2's `stream.close()` does, ends its side first). The stream is
/// reset here first (RST_STREAM, PROTOCOL_ERROR), as node:http2's nghttp2 did: nghttp2 then
/// ignores the frame. Padded DATA frames, whose data length only their payload tells, are
/// left to nghttp2.
unsafe extern "C" fn on_begin_frame(session: *mut nghttp2_session, hd: *const nghttp2_frame_hd, user_data: *mut c_void) -> c_int {
    let hd = *hd;
    let ends = hd.flags & NGHTTP2_FLAG_END_STREAM as u8 != 0 && hd.flags & NGHTTP2_FLAG_PADDED as u8 == 0;
    let body = match hd.type_ as u32 {
        NGHTTP2_DATA => hd.length as u64,
        // On a stream whose request came: trailer fields.
        NGHTTP2_HEADERS => 0,
        _ => return 0,
    };
    if !ends {
        return 0;
    }
    let inner = inner(user_data);
    let id = hd.stream_id as StreamId;
    let Some(stream) = slot_of(session, id).and_then(|slot| inner.streams.get(slot, id)) else { return 0 };
    if hd.type_ as u32 == NGHTTP2_HEADERS && !stream.surfaced {
        return 0;
    }
    if stream.content_length.is_some_and(|declared| declared != stream.received + body) {
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE as u8, hd.stream_id, code::PROTOCOL_ERROR);
    }
    0
}

unsafe extern "C" fn on_begin_headers(session: *mut nghttp2_session, frame: *const nghttp2_frame, user_data: *mut c_void) -> c_int {
    let inner = inner(user_data);
    let id = (*frame).hd.stream_id as StreamId;
    // Our SETTINGS_MAX_HEADER_LIST_SIZE once the client has acknowledged it (nghttp2 reports
    // the initial "unlimited" until then), and twice it before, when a list past it still gets
    // a 431 (see `Config::max_header_list_size`).
    let acknowledged = nghttp2_session_get_local_settings(session, NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE) as usize;
    inner.block.start(id, acknowledged.min(2 * inner.config.max_header_list_size as usize));
    if (*frame).headers.cat == NGHTTP2_HCAT_REQUEST {
        let slot = inner.streams.open(id);
        nghttp2_session_set_stream_user_data(session, id as i32, (slot + 1) as *mut c_void);
    }
    0
}

unsafe extern "C" fn on_header(
    session: *mut nghttp2_session,
    frame: *const nghttp2_frame,
    name: *const u8,
    namelen: usize,
    value: *const u8,
    valuelen: usize,
    _flags: u8,
    user_data: *mut c_void,
) -> c_int {
    let inner = inner(user_data);
    let block = &mut inner.block;
    block.pairs += 1;
    block.size += namelen + valuelen + 32;
    if block.pairs > inner.config.max_header_pairs || block.size > block.reset_past {
        // As node:http2 past maxHeaderListPairs or the list size: the stream is reset, and
        // nghttp2 decodes the rest of the block (HPACK's state must follow) without checking
        // the fields or calling back per field.
        block.refused = true;
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE as u8, (*frame).hd.stream_id, code::ENHANCE_YOUR_CALM);
        if !inner.refused_lists.take(Instant::now()) {
            flooded(session, inner);
        }
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    if block.size > inner.config.max_header_list_size as usize {
        block.too_large = true;
        return 0;
    }
    let name = std::slice::from_raw_parts(name, namelen);
    let value = std::slice::from_raw_parts(value, valuelen);
    if name == b"content-length" && (*frame).headers.cat == NGHTTP2_HCAT_REQUEST {
        let id = (*frame).hd.stream_id as StreamId;
        let declared = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u64>().ok());
        if let Some(stream) = slot_of(session, id).and_then(|slot| inner.streams.get(slot, id)) {
            stream.content_length = declared;
        }
        if (*frame).hd.flags & NGHTTP2_FLAG_END_STREAM as u8 != 0 && declared != Some(0) {
            // A request without a body that declares one: malformed, a stream error (see `on_begin_frame`).
            let block = &mut inner.block;
            block.refused = true;
            nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE as u8, (*frame).hd.stream_id, code::PROTOCOL_ERROR);
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
    }
    let block = &mut inner.block;
    if name.first() == Some(&b':') {
        // nghttp2 has checked them: known, once each, before the regular fields.
        let span = Span::push(&mut block.bytes, value);
        let kind = match name {
            b":method" => 0,
            b":scheme" => 1,
            b":authority" => 2,
            b":path" => 3,
            b":protocol" => 4,
            _ => return 0,
        };
        block.pseudo.order.push(kind);
        match kind {
            0 => block.pseudo.method = span,
            1 => block.pseudo.scheme = span,
            2 => block.pseudo.authority = span,
            3 => block.pseudo.path = span,
            _ => block.pseudo.protocol = span,
        }
    } else {
        let name = Span::push(&mut block.bytes, name);
        let value = Span::push(&mut block.bytes, value);
        block.fields.push(Field { name, value });
    }
    0
}

unsafe extern "C" fn on_frame_recv(session: *mut nghttp2_session, frame: *const nghttp2_frame, user_data: *mut c_void) -> c_int {
    let inner = inner(user_data);
    let hd = (*frame).hd;
    let id = hd.stream_id as StreamId;
    let end_stream = hd.flags & NGHTTP2_FLAG_END_STREAM as u8 != 0;
    match hd.type_ as u32 {
        NGHTTP2_HEADERS => {
            if inner.block.stream != id || inner.block.refused {
                return 0;
            }
            let Some(slot) = slot_of(session, id) else { return 0 };
            let batch = inner.batch;
            let index = inner.events.list.len();
            let Some(stream) = inner.streams.get(slot, id) else { return 0 };
            if (*frame).headers.cat == NGHTTP2_HCAT_REQUEST {
                if inner.block.too_large && !inner.refused_lists.take(Instant::now()) {
                    // One 431 too many: the connection ends instead.
                    flooded(session, inner);
                    return 0;
                }
                let (fields, pseudo) = inner.block.copy_into(&mut inner.events);
                inner.events.list.push(Stored::Request { stream: id, pseudo, fields, end_stream, too_large: inner.block.too_large });
                stream.request_event = Some((batch, index));
                stream.surfaced = true;
            } else if stream.surfaced && end_stream {
                // nghttp2 refuses a trailing HEADERS without END_STREAM (RFC 9113 §8.1).
                let (fields, _) = inner.block.copy_into(&mut inner.events);
                inner.events.list.push(Stored::Trailers { stream: id, fields });
            }
        }
        NGHTTP2_DATA if end_stream => {
            // The body's end: on the last chunk's event when it came in the same batch.
            match inner.events.list.last_mut() {
                Some(Stored::Data { stream, end_stream, .. }) if *stream == id => *end_stream = true,
                _ => {
                    let surfaced = slot_of(session, id).and_then(|slot| inner.streams.get(slot, id)).is_some_and(|s| s.surfaced);
                    if surfaced {
                        inner.events.list.push(Stored::Data { stream: id, data: Span::default(), end_stream: true });
                    }
                }
            }
        }
        NGHTTP2_RST_STREAM if !inner.resets.take(Instant::now()) => flooded(session, inner),
        NGHTTP2_PING if hd.flags & NGHTTP2_FLAG_ACK as u8 == 0 => {
            if !inner.pings.take(Instant::now()) {
                flooded(session, inner);
            }
            inner.events.list.push(Stored::Ping);
        }
        NGHTTP2_SETTINGS if hd.flags & NGHTTP2_FLAG_ACK as u8 == 0 && !inner.settings.take(Instant::now()) => flooded(session, inner),
        NGHTTP2_GOAWAY => {
            let goaway = (*frame).goaway;
            inner.events.list.push(Stored::GoAway { last_stream: goaway.last_stream_id as StreamId, code: goaway.error_code });
        }
        _ => {}
    }
    0
}

unsafe extern "C" fn on_data_chunk_recv(
    session: *mut nghttp2_session,
    _flags: u8,
    stream_id: i32,
    data: *const u8,
    len: usize,
    user_data: *mut c_void,
) -> c_int {
    let inner = inner(user_data);
    let id = stream_id as StreamId;
    if let Some(stream) = slot_of(session, id).and_then(|slot| inner.streams.get(slot, id)) {
        stream.received += len as u64;
    }
    let stream = slot_of(session, id).and_then(|slot| inner.streams.get(slot, id)).filter(|s| s.surfaced);
    match stream {
        Some(stream) => {
            stream.unconsumed += len;
            let data = Span::push(&mut inner.events.bytes, std::slice::from_raw_parts(data, len));
            inner.events.list.push(Stored::Data { stream: id, data, end_stream: false });
        }
        // Nobody will consume it: the window is given back now.
        None => inner.unconsumed_of_closed += len,
    }
    0
}

unsafe extern "C" fn on_stream_close(session: *mut nghttp2_session, stream_id: i32, error_code: u32, user_data: *mut c_void) -> c_int {
    let inner = inner(user_data);
    let id = stream_id as StreamId;
    let Some(slot) = slot_of(session, id) else { return 0 };
    let batch = inner.batch;
    let Some(stream) = inner.streams.get(slot, id) else { return 0 };
    inner.unconsumed_of_closed += std::mem::take(&mut stream.unconsumed);
    if stream.surfaced {
        let completed = error_code == code::NO_ERROR && stream.ended && stream.buffered() == 0 && stream.file.is_none();
        match stream.request_event {
            // Reset before the app was told of it (rapid reset's HEADERS then RST_STREAM, read
            // together): the request and what came with it are left out, so the app does no work.
            Some((b, index)) if b == batch && !completed => {
                for stored in &mut inner.events.list[index..] {
                    let ours = match stored {
                        Stored::Request { stream, .. } | Stored::Data { stream, .. } | Stored::Trailers { stream, .. } => *stream == id,
                        _ => false,
                    };
                    if ours {
                        *stored = Stored::Dropped;
                    }
                }
            }
            _ if completed => inner.events.list.push(Stored::Closed { stream: id }),
            _ => inner.events.list.push(Stored::Reset { stream: id, code: error_code }),
        }
    }
    inner.streams.close(slot);
    nghttp2_session_set_stream_user_data(session, stream_id, std::ptr::null_mut());
    0
}

/// nghttp2 asks for a stream's response body: what the app buffered, the end once it has ended
/// (and trailers, if any), or a deferral until it gives more.
pub(crate) unsafe extern "C" fn read_body(
    session: *mut nghttp2_session,
    stream_id: i32,
    buf: *mut u8,
    length: usize,
    data_flags: *mut u32,
    source: *mut nghttp2_data_source,
    user_data: *mut c_void,
) -> nghttp2_ssize {
    let inner = inner(user_data);
    let id = stream_id as StreamId;
    let slot = ((*source).ptr as usize).wrapping_sub(1);
    let high_water = inner.config.stream_high_water;
    let Some(stream) = inner.streams.get(slot, id) else { return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE as nghttp2_ssize };
    let mut n = stream.buffered().min(length);
    std::ptr::copy_nonoverlapping(stream.out.as_ptr().add(stream.out_pos), buf, n);
    stream.out_pos += n;
    if stream.out_pos == stream.out.len() {
        stream.out.clear();
        stream.out_pos = 0;
    }
    if n == 0 {
        if let Some(file) = stream.file.as_mut() {
            // Read straight into the frame: the file's bytes are never held anywhere else.
            let want = (file.left.min(length as u64)) as usize;
            let read = read_at(&file.file, std::slice::from_raw_parts_mut(buf, want), file.offset);
            match read {
                Ok(got) if got > 0 => {
                    n = got;
                    file.offset += got as u64;
                    file.left -= got as u64;
                    if file.left == 0 {
                        stream.file = None;
                    }
                }
                // The file shrank, or can't be read: the body can't be what its head said.
                _ => return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE as nghttp2_ssize,
            }
        }
    }
    if stream.buffered() == 0 && stream.file.is_none() {
        if stream.ended {
            *data_flags |= NGHTTP2_DATA_FLAG_EOF;
            if let Some(trailers) = stream.trailers.take() {
                *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
                let nva: Vec<nghttp2_nv> = trailers.iter().map(|(n, v)| nv(n, v)).collect();
                nghttp2_submit_trailer(session, stream_id, nva.as_ptr(), nva.len());
            }
        } else if n == 0 {
            stream.deferred = true;
            return NGHTTP2_ERR_DEFERRED as nghttp2_ssize;
        }
    }
    if stream.wants_drain && stream.buffered() < high_water {
        stream.wants_drain = false;
        inner.events.list.push(Stored::Drained { stream: id });
    }
    n as nghttp2_ssize
}

/// A response ended (its last DATA or HEADERS sent) while its request is still arriving: the
/// client is told to stop sending it (RST_STREAM with NO_ERROR, RFC 9113 §8.1), as nghttpd and
/// node:http2 do, so that an unread upload does not hold the stream's window and the client's
/// stream open.
unsafe extern "C" fn on_frame_send(session: *mut nghttp2_session, frame: *const nghttp2_frame, _user_data: *mut c_void) -> c_int {
    let hd = (*frame).hd;
    let ends = hd.flags & NGHTTP2_FLAG_END_STREAM as u8 != 0 && (hd.type_ as u32 == NGHTTP2_DATA || hd.type_ as u32 == NGHTTP2_HEADERS);
    if ends && nghttp2_session_get_stream_remote_close(session, hd.stream_id) == 0 {
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE as u8, hd.stream_id, code::NO_ERROR);
    }
    0
}

/// A name/value pair for nghttp2, which copies it.
pub(crate) fn nv(name: &[u8], value: &[u8]) -> nghttp2_nv {
    nghttp2_nv {
        name: name.as_ptr() as *mut u8,
        value: value.as_ptr() as *mut u8,
        namelen: name.len(),
        valuelen: value.len(),
        flags: NGHTTP2_NV_FLAG_NONE as u8,
    }
}

/// A positioned read of a file: pread on Unix; on Windows a read at an offset (which moves the
/// file's cursor, which nothing here relies on).
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_at(file, buf, offset);
    #[cfg(windows)]
    return std::os::windows::fs::FileExt::seek_read(file, buf, offset);
}
