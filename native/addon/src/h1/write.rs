//! Responses into the connection's output, in request order (`queue.rs` holds a response back
//! until those before it are done): heads written by `cog-framing`, whole bodies copied after
//! them or sent in place, streamed bodies framed by their declared length or chunked. After each
//! of these the engine `advance`s the connection: it moves what is complete to the output
//! (`promote`) and writes it, unless a batch is being answered (then the batch's end writes it
//! all at once: the output is corked).

use super::body::Handover;
use super::conn::{CloseBy, Conn, Stream};
use crate::events::Event;
use crate::io::in_place::{Held, InPlaceBody};
use crate::io::{Transport, HIGH_WATER};
use crate::queue::{Progress, Promoted, Target};
use crate::request::{Req, Requests};
use crate::spare::Spare;
use cog_framing::response::{write_head, AppHead, BodyFraming, HeadOptions, HeaderBlock};

/// The body of a whole response, as `respond` takes it.
pub(crate) enum WholeBody<'a> {
    Bytes(&'a [u8]),
    /// A large Buffer of the app's, held and sent where it lies.
    Held(Held),
    /// `length` bytes of an open file from `offset`, sent where they lie (sendfile(2)).
    File {
        file: std::fs::File,
        offset: u64,
        length: u64,
    },
}

impl WholeBody<'_> {
    fn len(&self) -> usize {
        match self {
            WholeBody::Bytes(bytes) => bytes.len(),
            WholeBody::Held(held) => (**held).as_ref().len(),
            WholeBody::File { length, .. } => *length as usize,
        }
    }
}

/// What a piece of a streamed body came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Bytes were added for it (the engine advances, then asks `below_high_water`).
    Written,
    /// Nothing to send: an empty piece, or a body the response has none of (HEAD, 204…).
    Dropped,
    /// Its response is not queued here.
    Gone,
}

impl Conn {
    /// A whole response to `req` (request `id`): the head (see `AppHead`), then the body: bytes
    /// copied after the head, or a Buffer or a file range sent in place (`io::in_place`). False
    /// when the response is not queued here.
    pub(crate) fn respond(&mut self, io: &mut Transport, spare: &mut Spare, req: &Req, id: u64, answer: &AppHead, body: WholeBody) -> bool {
        let no_body = answer.status < 200 || answer.status == 204 || answer.status == 304;
        let framing = if no_body { BodyFraming::NoBody } else { BodyFraming::Length(body.len()) };
        let sends_body = !no_body && !req.is_head();
        let options = head_options(answer, req, framing, self.last_answer(id));
        let Some(close) = self.write(io, spare, id, |out, _| {
            let close = write_head(out, &options);
            if let (true, WholeBody::Bytes(bytes)) = (sends_body, &body) {
                out.extend_from_slice(bytes);
            }
            close
        }) else {
            return false;
        };
        match body {
            WholeBody::Held(held) if sends_body => self.queue.put_in_place(id, InPlaceBody::buffer(held)),
            WholeBody::File { file, offset, length } if sends_body && length > 0 => self.queue.put_in_place(id, InPlaceBody::file(file, offset, length)),
            _ => {}
        }
        self.headed(id, close, Progress::Finished);
        true
    }

    /// Starts a streamed response: framed by the Content-Length the app declared, if it declared
    /// one (as node:http does), else chunked on HTTP/1.1. False when it is not queued here.
    pub(crate) fn stream_start(&mut self, io: &mut Transport, spare: &mut Spare, req: &Req, id: u64, answer: &AppHead) -> bool {
        let no_body = answer.status < 200 || answer.status == 204 || answer.status == 304;
        let framing = match answer.declared_length {
            _ if no_body => BodyFraming::NoBody,
            // A HEAD answer reports the declared length and sends no body.
            Some(_) if req.is_head() => BodyFraming::Length(0),
            Some(length) => BodyFraming::Length(length as usize),
            None if req.is_head() => BodyFraming::NoBody,
            None => BodyFraming::Stream,
        };
        let stream = match framing {
            BodyFraming::Length(length) if !req.is_head() => Stream::Length(length as u64),
            // 1xx, 204 and 304 have no body: what the app writes is dropped, as node:http drops it.
            BodyFraming::NoBody => Stream::NoBody,
            _ => Stream::Open,
        };
        let options = head_options(answer, req, framing, self.last_answer(id));
        let Some(close) = self.write(io, spare, id, |out, framed| {
            *framed = stream;
            write_head(out, &options)
        }) else {
            return false;
        };
        self.headed(id, close, Progress::Streaming);
        true
    }

    /// After a response's head (and maybe its body) was written: note a close, and how far it is.
    fn headed(&mut self, id: u64, close: bool, progress: Progress) {
        if close {
            self.close_after_answers();
        }
        self.queue.set_progress(id, progress, close);
    }

    /// A piece of a streamed body, framed as its response's head said.
    pub(crate) fn stream_write(&mut self, io: &mut Transport, spare: &mut Spare, req: &Req, id: u64, chunk: &[u8]) -> Piece {
        let Some(entry) = self.queue.get(id) else { return Piece::Gone };
        if chunk.is_empty() || req.is_head() || entry.proto == Stream::NoBody {
            return Piece::Dropped;
        }
        if let Stream::Length(left) = entry.proto {
            // Framed by the declared length: the chunk as it is, and never past the length (what
            // lies beyond would be read as the next response); a body that overruns it closes
            // the connection after what fits.
            let fits = chunk.len().min(left as usize);
            entry.proto = Stream::Length(left - fits as u64);
            if fits < chunk.len() {
                self.close_after_answers();
            }
            self.write(io, spare, id, |out, _| out.extend_from_slice(&chunk[..fits]));
            return Piece::Written;
        }
        let mut bytes = Vec::with_capacity(chunk.len() + 16);
        if req.minor() >= 1 {
            bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            bytes.extend_from_slice(chunk);
            bytes.extend_from_slice(b"\r\n");
        } else {
            bytes.extend_from_slice(chunk);
        }
        self.write(io, spare, id, |out, _| out.extend_from_slice(&bytes));
        Piece::Written
    }

    /// Whether the stream of request `id` may go on writing; if not, it is told to wait for a
    /// drain event.
    pub(crate) fn below_high_water(&mut self, io: &Transport, id: u64) -> bool {
        let Some(entry) = self.queue.get(id) else { return false };
        if io.unsent() + entry.held() > HIGH_WATER {
            entry.want_drain();
            return false;
        }
        true
    }

    /// The end of a streamed body: the last chunk, or a close for a body shorter than declared
    /// (the client would wait for the rest; closing tells it the body ended). False when the
    /// response is not queued here.
    /// `trailers`: the app's trailer fields, sent after the last chunk of a chunked body (as
    /// node:http sends them: on any chunked body, whatever the request's TE said).
    pub(crate) fn stream_end(&mut self, io: &mut Transport, spare: &mut Spare, req: &Req, id: u64, trailers: Option<HeaderBlock>) -> bool {
        let Some(entry) = self.queue.get(id) else { return false };
        let stream = entry.proto;
        self.queue.finish(id);
        let chunked = matches!(stream, Stream::Open) && req.minor() >= 1 && !req.is_head();
        if let Stream::Length(left) = stream {
            if left > 0 {
                self.close_after_answers();
            }
        }
        self.write(io, spare, id, |out, _| {
            if chunked {
                out.extend_from_slice(b"0\r\n");
                if let Some(trailers) = trailers {
                    out.extend_from_slice(trailers.as_bytes());
                }
                out.extend_from_slice(b"\r\n");
            }
        });
        true
    }

    /// Sends `length` bytes of `file` from `offset` as the next piece of a streamed body framed by
    /// its declared Content-Length (never past it). `Gone` when it can't: the response is not
    /// queued here, its body is chunked (the caller streams it instead), or `file` gave none.
    pub(crate) fn stream_file(&mut self, req: &Req, id: u64, file: impl FnOnce() -> Option<std::fs::File>, offset: u64, length: u64) -> Piece {
        let Some(entry) = self.queue.get(id) else { return Piece::Gone };
        let Stream::Length(due) = entry.proto else { return if req.is_head() || entry.proto == Stream::NoBody { Piece::Dropped } else { Piece::Gone } };
        if length == 0 || req.is_head() {
            return Piece::Dropped;
        }
        let length = length.min(due);
        let Some(file) = file() else { return Piece::Gone };
        entry.proto = Stream::Length(due - length);
        self.queue.put_in_place(id, InPlaceBody::file(file, offset, length));
        Piece::Written
    }

    /// Moves every response complete at the head of the queue to the output, up to one still being
    /// written or with a body in place due; returns abort events for requests dropped behind a
    /// response that closes the connection (RFC 9112 9.6: no later request is answered, as
    /// node:http drops them too; handlers still holding one see it aborted).
    pub(crate) fn promote(&mut self, io: &mut Transport, reqs: &mut Requests, spare: &mut Spare) -> Vec<Event> {
        let mut dropped = Vec::new();
        let Conn { queue, reading, close_by, .. } = self;
        queue.promote(io.output(), |promoted| match promoted {
            Promoted::Done { id, closes } => {
                if let Some(body) = reading.body_of(id) {
                    // Answered before its body was read: read the rest and drop it.
                    body.handover = Handover::Discard;
                    body.paused = false;
                }
                if let Some(req) = reqs.remove(id) {
                    let (head, headers) = req.into_buffers();
                    spare.keep(head, headers);
                }
                if closes {
                    if let Some(body) = reading.take_body() {
                        *close_by = if body.timed_out { CloseBy::AtOnce } else { CloseBy::Stages };
                        if !body.delivered() {
                            reqs.remove(body.id);
                        }
                    }
                }
            }
            Promoted::Dropped { id, finished } => {
                if reqs.remove(id).is_some() && !finished {
                    dropped.push(Event::Abort { id });
                }
            }
        });
        dropped
    }

    /// Writes bytes of response `id` where they belong now (`Queue::target`): the output (a buffer
    /// from `spare` if it has none), or what the response holds. None if it isn't queued.
    fn write<R>(&mut self, io: &mut Transport, spare: &mut Spare, id: u64, write: impl FnOnce(&mut Vec<u8>, &mut Stream) -> R) -> Option<R> {
        Some(match self.queue.target(id)? {
            Target::Output(stream) => write(io.output_from(spare), stream),
            Target::Held(held, stream) => write(held, stream),
        })
    }
}

/// The head options for the app's answer to `req`; `last`: the connection closes after it.
fn head_options<'a>(app: &'a AppHead<'a>, req: &Req, framing: BodyFraming, last: bool) -> HeadOptions<'a> {
    HeadOptions { app, framing, minor: req.minor(), request_close: last || !req.keep_alive(), head_request: req.is_head() }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use super::*;
    use crate::io::in_place::InPlaceSend;
    use cog_framing::response::HeaderBlock;

    fn head(status: u16, declared: Option<u64>, close: bool) -> AppHead<'static> {
        AppHead { status, reason: None, block: HeaderBlock::new(b"").unwrap(), has_date: true, declared_length: declared, close, request_id: None }
    }

    /// Starts a streamed response to request `id` on the harness.
    fn start(h: &mut Harness, id: u64, status: u16, declared: Option<u64>) {
        let req = h.reqs.get(id).unwrap();
        assert!(h.conn.stream_start(&mut h.io, &mut h.spare, req, id, &head(status, declared, false)));
        h.promote();
    }

    fn write(h: &mut Harness, id: u64, chunk: &[u8]) -> Piece {
        let req = h.reqs.get(id).unwrap();
        let piece = h.conn.stream_write(&mut h.io, &mut h.spare, req, id, chunk);
        h.promote();
        piece
    }

    fn end(h: &mut Harness, id: u64) {
        let req = h.reqs.get(id).unwrap();
        assert!(h.conn.stream_end(&mut h.io, &mut h.spare, req, id, None));
        h.promote();
    }

    #[test]
    fn answers_go_out_in_request_order() {
        let mut h = Harness::new();
        h.send(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n");
        h.respond(2, 200, b"two");
        assert_eq!(h.received(), "", "2 waits for 1");
        h.respond(1, 200, b"one");
        assert_eq!(h.received(), "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\noneHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\ntwo");
        assert!(h.reqs.get(1).is_none() && h.reqs.get(2).is_none(), "answered requests are let go");
        assert!(!h.conn.finished(), "the connection is kept alive");
    }

    /// The drain: the server stops while request 1 is in flight; request 2, pipelined behind it,
    /// is refused (503, closing) before 1 is answered, and both answers are given before anything
    /// is written (the engine corks a batch's answers, and cuts the connections left when the
    /// drain ends, inside that batch: it writes them first). What is written then is 1's answer,
    /// then 2's, in order; nothing is aborted, and the connection is done.
    #[test]
    fn a_refusal_while_draining_follows_the_answer_before_it() {
        let mut h = Harness::new();
        h.send(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(!h.conn.close_when_idle(&h.io), "busy: it closes once answered");
        let (events, _) = h.send(b"GET /late HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(super::super::harness::requests(&events), [2], "a request arriving meanwhile is read, for the app to refuse");
        let late = h.reqs.get(2).unwrap();
        assert!(h.conn.respond(&mut h.io, &mut h.spare, late, 2, &head(503, None, true), WholeBody::Bytes(b"draining")));
        assert!(h.promote().is_empty(), "held behind the answer still due before it");
        let first = h.reqs.get(1).unwrap();
        assert!(h.conn.respond(&mut h.io, &mut h.spare, first, 1, &head(200, None, false), WholeBody::Bytes(b"done")));
        assert!(h.promote().is_empty(), "nothing aborted");
        let out = h.received();
        let (first, late) = out.split_at(out.find("HTTP/1.1 503").expect(&out));
        assert!(first.starts_with("HTTP/1.1 200 OK\r\n") && first.ends_with("\r\n\r\ndone"), "{out}");
        assert!(late.contains("Connection: close\r\n") && late.ends_with("\r\n\r\ndraining"), "{out}");
        assert!(h.conn.finished(), "nothing left: the connection closes");
    }

    #[test]
    fn a_closing_answer_drops_the_requests_behind_it() {
        let mut h = Harness::new();
        h.send(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n");
        let req = h.reqs.get(1).unwrap();
        assert!(h.conn.respond(&mut h.io, &mut h.spare, req, 1, &head(200, None, true), WholeBody::Bytes(b"bye")));
        assert_eq!(h.promote(), [Event::Abort { id: 2 }]);
        let out = h.received();
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n") && out.contains("Connection: close\r\n"), "{out}");
        assert!(h.conn.finished());
    }

    #[test]
    fn a_head_request_gets_the_length_and_no_body() {
        let mut h = Harness::new();
        h.send(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
        h.respond(1, 200, b"hello");
        assert_eq!(h.received(), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
    }

    #[test]
    fn a_stream_is_chunked_on_http_1_1_and_ends_with_the_last_chunk() {
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        start(&mut h, 1, 200, None);
        assert_eq!(write(&mut h, 1, b"hello"), Piece::Written);
        assert_eq!(write(&mut h, 1, b""), Piece::Dropped);
        assert!(h.conn.below_high_water(&h.io, 1));
        end(&mut h, 1);
        assert_eq!(h.received(), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        assert!(h.conn.queue.is_empty());
    }

    #[test]
    fn trailers_follow_the_last_chunk_and_only_a_chunked_body() {
        let trailers = HeaderBlock::new(b"grpc-status: 0\r\nx-sum: abc\r\n").unwrap();
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        start(&mut h, 1, 200, None);
        write(&mut h, 1, b"hello");
        let req = h.reqs.get(1).unwrap();
        assert!(h.conn.stream_end(&mut h.io, &mut h.spare, req, 1, Some(trailers)));
        h.promote();
        assert_eq!(h.received(), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\ngrpc-status: 0\r\nx-sum: abc\r\n\r\n");
        // Framed by its length, or on HTTP/1.0: no room for them.
        for (request, declared, expected) in
            [(&b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..], Some(5), "\r\n\r\nhello"), (b"GET / HTTP/1.0\r\n\r\n", None, "\r\n\r\nhello")]
        {
            let mut h = Harness::new();
            h.send(request);
            start(&mut h, 1, 200, declared);
            write(&mut h, 1, b"hello");
            let req = h.reqs.get(1).unwrap();
            assert!(h.conn.stream_end(&mut h.io, &mut h.spare, req, 1, Some(trailers)));
            h.promote();
            assert!(h.received().ends_with(expected), "{}", h.received());
        }
    }

    #[test]
    fn a_stream_framed_by_its_length_never_passes_it() {
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        start(&mut h, 1, 200, Some(4));
        write(&mut h, 1, b"abcdef");
        end(&mut h, 1);
        assert_eq!(h.received(), "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd");
        assert!(h.conn.finished(), "an overrun closes the connection after what fits");
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        start(&mut h, 1, 200, Some(4));
        write(&mut h, 1, b"ab");
        end(&mut h, 1);
        assert!(h.conn.finished(), "a body shorter than declared closes the connection to say it ended");
    }

    #[test]
    fn a_stream_on_http_1_0_is_not_chunked_and_one_without_a_body_drops_what_is_written() {
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.0\r\n\r\n");
        start(&mut h, 1, 200, None);
        write(&mut h, 1, b"raw");
        end(&mut h, 1);
        assert!(h.received().ends_with("\r\n\r\nraw"));
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        start(&mut h, 1, 204, None);
        assert_eq!(write(&mut h, 1, b"dropped"), Piece::Dropped);
        end(&mut h, 1);
        assert_eq!(h.received(), "HTTP/1.1 204 No Content\r\n\r\n");
    }

    #[test]
    fn a_file_goes_in_place_only_for_a_body_framed_by_its_length() {
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n");
        start(&mut h, 1, 200, None);
        let req = h.reqs.get(1).unwrap();
        assert_eq!(h.conn.stream_file(req, 1, || unreachable!("a chunked body is streamed instead"), 0, 10), Piece::Gone);
        start(&mut h, 2, 200, Some(3));
        let file = std::env::temp_dir().join(format!("cog-h1-{}", std::process::id()));
        std::fs::write(&file, b"xyz").unwrap();
        let req = h.reqs.get(2).unwrap();
        let piece = h.conn.stream_file(req, 2, || std::fs::File::open(&file).ok(), 0, 100);
        std::fs::remove_file(&file).unwrap();
        assert_eq!(piece, Piece::Written);
        assert_eq!(h.conn.in_place_left(), 0, "2 is behind 1, still streaming");
    }

    #[test]
    fn a_whole_response_with_a_file_sends_its_range_after_the_head_and_none_to_head() {
        let path = std::env::temp_dir().join(format!("cog-h1-whole-{}", std::process::id()));
        std::fs::write(&path, b"0123456789").unwrap();
        let mut h = Harness::new();
        h.send(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nHEAD /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n");
        for (id, offset) in [(1, 2), (2, 0)] {
            let req = h.reqs.get(id).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            assert!(h.conn.respond(&mut h.io, &mut h.spare, req, id, &head(200, Some(4), false), WholeBody::File { file, offset, length: 4 }));
        }
        h.respond(3, 200, b"after");
        std::fs::remove_file(&path).unwrap();
        let mut out = String::new();
        loop {
            out += &h.received();
            match h.conn.send_in_place(&mut h.io) {
                InPlaceSend::Done => drop(h.promote()),
                InPlaceSend::Idle => break,
                _ => panic!("blocked or failed"),
            }
        }
        assert_eq!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n2345HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nafter"
        );
        assert!(h.conn.queue.is_empty());
    }

    #[test]
    fn a_slow_reader_makes_a_stream_wait_for_a_drain() {
        let mut h = Harness::new();
        h.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        start(&mut h, 1, 200, None);
        write(&mut h, 1, &vec![b'a'; HIGH_WATER + 1]);
        assert!(!h.conn.below_high_water(&h.io, 1));
        let mut events = Vec::new();
        h.conn.drained(&mut events);
        assert_eq!(events, [Event::Drain { id: 1 }]);
    }
}
