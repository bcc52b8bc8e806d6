//! The app's answers as HTTP/3 responses: the head HTTP/2's would have (`h2::answer_fields`),
//! then a whole body, a streamed one, or a file's range. cog-http3 queues what the stream's
//! flow control does not let out yet; past its high-water mark a streamed body waits for a drain
//! event. Once a response is done its stream is forgotten.

use super::endpoint::{Endpoint, Response, Stream};
use crate::h2::{answer_fields, has_no_body};
use crate::request::{H3Stream, Req};
use cog_framing::response::{AppHead, HeaderBlock};
use cog_http3::{code, ConnId};

/// A piece of a file read at a time into the stream.
const FILE_PIECE: usize = 64 * 1024;

/// What a piece of a streamed body came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Queued; `more`: the stream's buffer is under its high-water mark (else wait for a drain event).
    Written { more: bool },
    /// Nothing to send: an empty piece, or a response without a body (HEAD, 204, 304).
    Dropped,
    /// Its stream is not in flight here.
    Gone,
}

impl Endpoint {
    fn stream_of(&mut self, at: H3Stream) -> Option<&mut Stream> {
        self.streams.get_mut(&(at.conn, at.stream))
    }

    /// Sends a response head; a head cog-http3 refuses (a field HTTP/3 forbids) resets the stream.
    fn head(&mut self, at: H3Stream, answer: &AppHead, length: Option<u64>, end: bool) -> bool {
        let (mut digits, mut date) = ([0u8; 20], [0u8; 29]);
        let fields: Vec<(&[u8], &[u8])> = answer_fields(answer, length, &mut digits, &mut date).collect();
        let sent = self.quic.respond(ConnId(at.conn), at.stream, answer.status, &fields, end).is_ok();
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
        let no_body = has_no_body(answer.status);
        let sends = !no_body && !req.is_head() && !body.is_empty();
        let length = match answer.declared_length {
            _ if no_body => None,
            Some(declared) if req.is_head() && body.is_empty() => Some(declared),
            _ => Some(body.len() as u64),
        };
        self.head(at, answer, length, !sends) && (!sends || self.quic.send_data(ConnId(at.conn), at.stream, body, true).is_ok())
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
        if !self.head(at, answer, length, !body) {
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
    /// a time into the stream (cog-http3 holds what the client's window does not let out yet).
    pub(crate) fn stream_file(&mut self, req: &Req, file: Option<std::fs::File>, offset: u64, length: u64) -> Piece {
        let Some(at) = req.h3() else { return Piece::Gone };
        match self.stream_of(at).map(|s| s.response) {
            Some(Response::Streaming { body: true }) if length > 0 => {}
            Some(Response::Streaming { .. }) => return Piece::Dropped,
            _ => return Piece::Gone,
        }
        let Some(file) = file else { return Piece::Gone };
        let mut piece = vec![0u8; FILE_PIECE.min(length as usize)];
        let (mut at_byte, end) = (offset, offset + length);
        while at_byte < end {
            let want = piece.len().min((end - at_byte) as usize);
            let read = crate::io::file::read_at(&file, &mut piece[..want], at_byte);
            if read == 0 || self.quic.send_data(ConnId(at.conn), at.stream, &piece[..read], false).is_err() {
                return Piece::Gone;
            }
            at_byte += read as u64;
        }
        Piece::Written { more: true }
    }

    /// The end of a streamed body, with trailer fields if the app set any; the stream is then
    /// forgotten. False when the stream can't take it (a trailer field HTTP/3 forbids resets it).
    pub(crate) fn stream_end(&mut self, req: &Req, trailers: Option<HeaderBlock>) -> bool {
        let Some(at) = req.h3() else { return false };
        let Some(state) = self.streams.remove(&(at.conn, at.stream)) else { return false };
        let conn = ConnId(at.conn);
        match state.response {
            Response::Streaming { body: true } => {
                let block = trailers.as_ref().map(|b| b.as_bytes()).unwrap_or(b"");
                let fields: Vec<(&[u8], &[u8])> = crate::h2::header_lines(block).collect();
                if fields.is_empty() {
                    return self.quic.send_data(conn, at.stream, b"", true).is_ok();
                }
                if self.quic.send_trailers(conn, at.stream, &fields).is_ok() {
                    return true;
                }
                let _ = self.quic.reset(conn, at.stream, code::H3_INTERNAL_ERROR);
                false
            }
            Response::Streaming { body: false } => true,
            Response::Waiting => false,
        }
    }
}
