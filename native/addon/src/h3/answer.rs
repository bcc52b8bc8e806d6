//! The app's answers as HTTP/3 responses: the head HTTP/2's would have (`h2::answer_fields`),
//! then a whole body, a streamed one, or a file's range. cog-http3 queues what the stream's
//! flow control does not let out yet; past its high-water mark a streamed body waits for a drain
//! event. Once a response is done its stream is forgotten.

use super::endpoint::{Endpoint, FileLeft, Response, Stream};
use crate::h2::{answer_fields, has_no_body, whole_length, Piece};
use crate::request::{H3Stream, Req};
use cog_framing::response::{AppHead, HeaderBlock};
use cog_http3::{code, ConnId};

/// A piece of a file read at a time into the stream.
const FILE_PIECE: usize = 64 * 1024;

impl Endpoint {
    fn stream_of(&mut self, at: H3Stream) -> Option<&mut Stream> {
        self.streams.get_mut(&(at.conn, at.stream))
    }

    /// Sends a response head, and `body` with it (a whole answer: one buffer for both); a head
    /// cog-http3 refuses (a field HTTP/3 forbids) resets the stream.
    fn head(&mut self, at: H3Stream, answer: &AppHead, length: Option<u64>, body: &[u8], end: bool) -> bool {
        let (mut digits, mut date) = ([0u8; 20], [0u8; 29]);
        let fields = answer_fields(answer, length, &mut digits, &mut date);
        let sent = self.quic.respond_with(ConnId(at.conn), at.stream, answer.status, fields, body, end).is_ok();
        if !sent {
            let _ = self.quic.reset(ConnId(at.conn), at.stream, code::H3_INTERNAL_ERROR);
        }
        sent
    }

    /// A whole response to `req`: its head, then `body` (none for HEAD, 204, 304). False when the
    /// stream can't take it (answered already, or gone); the stream is forgotten either way.
    pub(crate) fn respond(&mut self, req: &Req, answer: &AppHead, body: &[u8]) -> bool {
        let Some(at) = req.h3() else { return false };
        if self.streams.remove(&(at.conn, at.stream)).is_none_or(|s| s.response != Response::Waiting) {
            return false;
        }
        let (length, sends) = whole_length(req, answer, body);
        self.head(at, answer, length, if sends { body } else { b"" }, true)
    }

    /// Starts a streamed response: its head, with the Content-Length the app declared if it
    /// declared one. A HEAD answer, 204 or 304 ends with its head.
    pub(crate) fn stream_start(&mut self, req: &Req, answer: &AppHead) -> bool {
        let Some(at) = req.h3() else { return false };
        if self.stream_of(at).is_none_or(|s| s.response != Response::Waiting) {
            return false;
        }
        let no_body = has_no_body(answer.status);
        let body = !no_body && !req.is_head();
        let length = if no_body { None } else { answer.declared_length };
        if !self.head(at, answer, length, b"", !body) {
            self.streams.remove(&(at.conn, at.stream));
            return false;
        }
        if let Some(stream) = self.stream_of(at) {
            stream.response = Response::Streaming { body };
        }
        true
    }

    /// A piece of a streamed body.
    pub(crate) fn stream_write(&mut self, req: &Req, chunk: &[u8]) -> Piece {
        let Some(at) = req.h3() else { return Piece::Gone };
        match self.stream_of(at).map(|s| s.response) {
            Some(Response::Streaming { body: true }) if !chunk.is_empty() => match self.quic.send_data(ConnId(at.conn), at.stream, chunk, false) {
                Ok(more) => Piece::Written { more },
                Err(_) => Piece::Gone,
            },
            Some(Response::Streaming { .. }) => Piece::Dropped,
            _ => Piece::Gone,
        }
    }

    /// `length` bytes of `file` from `offset` as the streamed body's next bytes, read a piece at
    /// a time into the stream as it drains (so a large file costs a stream's high-water mark of
    /// memory, not its size); only the body's end may follow, sent once the file is.
    pub(crate) fn stream_file(&mut self, req: &Req, file: Option<std::fs::File>, offset: u64, length: u64) -> Piece {
        let Some(at) = req.h3() else { return Piece::Gone };
        let Some(stream) = self.stream_of(at) else { return Piece::Gone };
        match stream.response {
            Response::Streaming { body: true } if length > 0 => {}
            Response::Streaming { .. } => return Piece::Dropped,
            Response::Waiting => return Piece::Gone,
        }
        let Some(file) = file else { return Piece::Gone };
        stream.file = Some(FileLeft { file, at: offset, end: offset + length, then_end: None });
        self.pump_file((at.conn, at.stream));
        Piece::Written { more: true }
    }

    /// Reads the stream's file into it while its buffer is under the high-water mark; once the
    /// file is sent, the body's end the app gave meanwhile follows.
    pub(super) fn pump_file(&mut self, key: (usize, u64)) {
        let (conn, stream) = (ConnId(key.0), key.1);
        let mut piece = [0u8; FILE_PIECE];
        loop {
            let Some(left) = self.streams.get_mut(&key).and_then(|s| s.file.as_mut()) else { return };
            if left.at >= left.end {
                let then_end = left.then_end.take();
                if let Some(state) = self.streams.get_mut(&key) {
                    state.file = None;
                }
                if let Some(block) = then_end {
                    self.end_stream(key, &block);
                }
                return;
            }
            let want = FILE_PIECE.min((left.end - left.at) as usize);
            let read = crate::io::file::read_at(&left.file, &mut piece[..want], left.at);
            left.at += read as u64;
            let sent = if read == 0 { Err(()) } else { self.quic.send_data(conn, stream, &piece[..read], false).map_err(drop) };
            match sent {
                Ok(true) => {}
                // Past the high-water mark: the rest when the stream drains.
                Ok(false) => return,
                // The file is shorter than it was, or the stream is gone.
                Err(()) => {
                    self.streams.remove(&key);
                    let _ = self.quic.reset(conn, stream, code::H3_INTERNAL_ERROR);
                    return;
                }
            }
        }
    }

    /// The end of a streamed body, with trailer fields if the app set any; the stream is then
    /// forgotten. False when the stream can't take it (a trailer field HTTP/3 forbids resets it).
    pub(crate) fn stream_end(&mut self, req: &Req, trailers: Option<HeaderBlock>) -> bool {
        let Some(at) = req.h3() else { return false };
        let key = (at.conn, at.stream);
        let Some(state) = self.streams.get_mut(&key) else { return false };
        match state.response {
            Response::Streaming { body: true } => {
                let block = trailers.as_ref().map(|b| b.as_bytes()).unwrap_or(b"");
                if let Some(left) = state.file.as_mut() {
                    // Sent once the file is (`pump_file`).
                    left.then_end = Some(block.to_vec());
                    return true;
                }
                self.end_stream(key, block)
            }
            Response::Streaming { body: false } => {
                self.streams.remove(&key);
                true
            }
            Response::Waiting => false,
        }
    }

    /// Ends a streamed body, with the trailer fields of `block` if any; the stream is forgotten.
    fn end_stream(&mut self, key: (usize, u64), block: &[u8]) -> bool {
        self.streams.remove(&key);
        let (conn, stream) = (ConnId(key.0), key.1);
        let fields: Vec<(&[u8], &[u8])> = crate::h2::header_lines(block).collect();
        if fields.is_empty() {
            return self.quic.send_data(conn, stream, b"", true).is_ok();
        }
        if self.quic.send_trailers(conn, stream, &fields).is_ok() {
            return true;
        }
        let _ = self.quic.reset(conn, stream, code::H3_INTERNAL_ERROR);
        false
    }
}
