//! The app's answers as HTTP/2 responses: the head (`:status`, the app's header lines, the
//! echoed request id, Content-Length when the body's length is known, Date), then a whole body,
//! a streamed one, or a file's range read into DATA frames. The same `AppHead` as HTTP/1.1's,
//! without what HTTP/2 has no use for (the reason phrase, Connection: HTTP/2 frames its own
//! messages). Once a response is done its stream is forgotten (`Conn`): what the client still
//! sends of the request is dropped, and cog-http2 asks it to stop (RST_STREAM, NO_ERROR).

use super::streams::{Response, Stream};
use crate::request::Req;
use cog_framing::response::{decimal, refusal_body, with_date, AppHead, HeaderBlock};
use cog_http2::{code, Connection, StreamId};

/// What a piece of a streamed body came to (on an HTTP/2 or an HTTP/3 stream).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Queued; `more`: the stream's buffer is under its high-water mark (else wait for a drain event).
    Written { more: bool },
    /// Nothing to send: an empty piece, or a response without a body (HEAD, 204, 304).
    Dropped,
    /// Its stream is not in flight here.
    Gone,
}

/// 1xx, 204 and 304 have no body and describe none.
pub(crate) fn has_no_body(status: u16) -> bool {
    status < 200 || status == 204 || status == 304
}

/// A whole response to `req` on `stream`: its head, then `body` (none for HEAD, 204, 304).
/// False when the stream can't take it (answered already, or gone).
pub(super) fn respond(conn: &mut Connection, state: &Stream, req: &Req, answer: &AppHead, body: &[u8]) -> bool {
    if state.response != Response::Waiting {
        return false;
    }
    let stream = req.stream();
    let (length, sends) = whole_length(req, answer, body);
    head(conn, stream, answer, length, !sends) && (!sends || conn.send_data(stream, body, true).is_ok())
}

/// A whole answer's Content-Length (none for 1xx, 204, 304) and whether its body goes out (not
/// for those, nor for HEAD, nor when it is empty): HTTP/2's and HTTP/3's rule alike. A HEAD
/// answer reports the length the app declared, if it declared one without a body.
pub(crate) fn whole_length(req: &Req, answer: &AppHead, body: &[u8]) -> (Option<u64>, bool) {
    let no_body = has_no_body(answer.status);
    let sends = !no_body && !req.is_head() && !body.is_empty();
    let length = match answer.declared_length {
        _ if no_body => None,
        Some(declared) if req.is_head() && body.is_empty() => Some(declared),
        _ => Some(body.len() as u64),
    };
    (length, sends)
}

/// Starts a streamed response: its head, with the Content-Length the app declared if it
/// declared one. A HEAD answer, 204 or 304 ends with its head. False when the stream can't take it.
pub(super) fn stream_start(conn: &mut Connection, state: &mut Stream, req: &Req, answer: &AppHead) -> bool {
    if state.response != Response::Waiting {
        return false;
    }
    let no_body = has_no_body(answer.status);
    let body = !no_body && !req.is_head();
    let length = if no_body { None } else { answer.declared_length };
    if !head(conn, req.stream(), answer, length, !body) {
        return false;
    }
    state.response = Response::Streaming { body };
    true
}

/// A piece of a streamed body.
pub(super) fn stream_write(conn: &mut Connection, state: &Stream, stream: StreamId, chunk: &[u8]) -> Piece {
    match state.response {
        Response::Streaming { body: true } if !chunk.is_empty() => match conn.send_data(stream, chunk, false) {
            Ok(more) => Piece::Written { more },
            Err(_) => Piece::Gone,
        },
        Response::Streaming { .. } => Piece::Dropped,
        Response::Waiting => Piece::Gone,
    }
}

/// Sends `length` bytes of `file` from `offset` as the streamed body's next bytes (read into
/// DATA frames as the client's window allows: see `cog_http2::Connection::send_file`); only the
/// body's end may follow.
pub(super) fn stream_file(
    conn: &mut Connection,
    state: &Stream,
    stream: StreamId,
    file: impl FnOnce() -> Option<std::fs::File>,
    offset: u64,
    length: u64,
) -> Piece {
    match state.response {
        Response::Streaming { body: true } if length > 0 => match file().map(|file| conn.send_file(stream, file, offset, length)) {
            Some(Ok(())) => Piece::Written { more: true },
            _ => Piece::Gone,
        },
        Response::Streaming { .. } => Piece::Dropped,
        Response::Waiting => Piece::Gone,
    }
}

/// The end of a streamed body: with trailer fields, a last HEADERS frame (END_STREAM) after the
/// DATA. False when the stream can't take it (nghttp2 refuses a trailer field HTTP/2 forbids:
/// the stream is then reset rather than left open).
pub(super) fn stream_end(conn: &mut Connection, state: &Stream, stream: StreamId, trailers: Option<HeaderBlock>) -> bool {
    match state.response {
        Response::Streaming { body: true } => match trailers.map(|block| lines(block.as_bytes()).collect::<Vec<_>>()).filter(|fields| !fields.is_empty()) {
            None => conn.send_data(stream, b"", true).is_ok(),
            Some(fields) => {
                if conn.send_trailers(stream, &fields).is_ok() {
                    return true;
                }
                let _ = conn.reset(stream, code::INTERNAL_ERROR);
                false
            }
        },
        Response::Streaming { body: false } => true,
        Response::Waiting => false,
    }
}

/// Submits a response's head; on a head nghttp2 refuses (a value HTTP/2 forbids), the stream is
/// reset rather than left open. `length`: the Content-Length to send.
fn head(conn: &mut Connection, stream: StreamId, answer: &AppHead, length: Option<u64>, end_stream: bool) -> bool {
    let (mut digits, mut date) = ([0u8; 20], [0u8; 29]);
    if conn.respond_with(stream, answer.status, answer_fields(answer, length, &mut digits, &mut date), end_stream).is_ok() {
        return true;
    }
    let _ = conn.reset(stream, code::INTERNAL_ERROR);
    false
}

/// A response head's fields (HTTP/2's and HTTP/3's): the app's header lines, the echoed
/// request id, `length` as Content-Length (written in `digits`), Date unless the app set one
/// (written in `date`).
pub(crate) fn answer_fields<'a>(
    answer: &'a AppHead,
    length: Option<u64>,
    digits: &'a mut [u8; 20],
    date: &'a mut [u8; 29],
) -> impl Iterator<Item = (&'a [u8], &'a [u8])> {
    let length = length.map(|n| (&b"content-length"[..], decimal(n, digits)));
    let date = (!answer.has_date).then(|| {
        with_date(|now| date[..now.len().min(29)].copy_from_slice(&now[..now.len().min(29)]));
        (&b"date"[..], &date[..])
    });
    let id = answer.request_id.map(|id| (&b"x-request-id"[..], id.as_bytes()));
    lines(answer.block.as_bytes()).chain(id).chain(length).chain(date)
}

/// The fields of a header block (`name: value\r\n` lines, checked by `HeaderBlock`).
pub(crate) fn lines(block: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    block.split(|&b| b == b'\n').filter(|line| line.len() > 1).map(|line| {
        let line = &line[..line.len() - 1];
        let colon = line.iter().position(|&b| b == b':').unwrap_or(line.len());
        (&line[..colon], line.get(colon + 2..).unwrap_or(b""))
    })
}

/// Answers a request the engine refuses itself (a method it can't hand to JavaScript): the
/// status and a JSON body in Cog's error format, as HTTP/1.1's refusals.
pub(super) fn refuse(conn: &mut Connection, stream: StreamId, status: u16, message: &str) {
    refusal_fields(status, message, |fields, body| {
        if conn.respond(stream, status, fields, false).is_ok() {
            let _ = conn.send_data(stream, body, true);
        }
    });
}

/// A refusal's head fields and body (see `refuse`), given to `with`.
pub(crate) fn refusal_fields(status: u16, message: &str, with: impl FnOnce(&[(&[u8], &[u8])], &[u8])) {
    let body = refusal_body(status, message);
    let mut digits = [0u8; 20];
    let mut date = [0u8; 29];
    with_date(|now| date[..now.len().min(29)].copy_from_slice(&now[..now.len().min(29)]));
    let fields: [(&[u8], &[u8]); 3] =
        [(b"content-type", b"application/json; charset=utf-8"), (b"content-length", decimal(body.len() as u64, &mut digits)), (b"date", &date)];
    with(&fields, body.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_block_reads_as_fields() {
        let fields: Vec<_> = lines(b"content-type: text/plain\r\nx-empty: \r\nset-cookie: a=b; Path=/\r\n").collect();
        assert_eq!(fields, [(&b"content-type"[..], &b"text/plain"[..]), (b"x-empty", b""), (b"set-cookie", b"a=b; Path=/")]);
        assert_eq!(lines(b"").count(), 0);
    }
}
