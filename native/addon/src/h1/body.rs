//! A request body being read on an HTTP/1.1 connection: by its Content-Length or chunk by chunk
//! (`cog_framing::ChunkedDecoder`). A body that is whole in the input read with its head goes
//! to JavaScript with its request; a longer one is handed over as it arrives (the request first,
//! then its pieces), with backpressure: JavaScript pauses it while its stream is full.

use cog_framing::{ChunkedDecoder, Framing, Refusal};

/// Where the body stands with JavaScript.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Handover {
    /// Its request waits for it: the body is collected, and goes with the request once whole.
    Collecting,
    /// Its request went to JavaScript before the body was whole: the rest follows in pieces.
    Pieces,
    /// Its request was answered before the body was read: the rest is read and dropped (as
    /// node:http dumps it), so that the next request on the connection can be parsed.
    Discard,
}

pub(super) struct BodyState {
    /// The request it belongs to.
    pub(super) id: u64,
    framing: Framing,
    remaining: u64,
    decoder: ChunkedDecoder,
    /// What was read and not handed over yet.
    pub(super) buf: Vec<u8>,
    pub(super) handover: Handover,
    /// JavaScript's stream is full: read and parse nothing more on the connection until it resumes.
    pub(super) paused: bool,
    /// When its head was read (the request timeout counts from it).
    pub(super) started: u64,
    /// The route's own `requestTimeout` (ms, 0: none), set by JavaScript once it has routed the
    /// request (`set_body_timeout`); the server's otherwise.
    pub(super) timeout: Option<u64>,
    /// Its requestTimeout passed and JavaScript was told (`Event::BodyTimeout`) to answer the 408.
    pub(super) timed_out: bool,
    /// The request asks to change protocols: its connection closes after the answer (a
    /// handshake with a body is refused, never accepted: `ws_accept`).
    pub(super) upgrade: bool,
}

impl BodyState {
    pub(super) fn new(id: u64, framing: Framing, started: u64, upgrade: bool) -> BodyState {
        let remaining = if let Framing::Length(n) = framing { n } else { 0 };
        BodyState {
            id,
            framing,
            remaining,
            decoder: ChunkedDecoder::new(),
            buf: Vec::new(),
            handover: Handover::Collecting,
            paused: false,
            started,
            timeout: None,
            timed_out: false,
            upgrade,
        }
    }

    /// Reads what `input` holds of the body into `buf`; returns the bytes used and whether the
    /// body is whole, or why the framing is refused.
    pub(super) fn read(&mut self, input: &[u8]) -> Result<(usize, bool), Refusal> {
        match self.framing {
            Framing::Length(_) => {
                let take = (self.remaining.min(input.len() as u64)) as usize;
                self.buf.extend_from_slice(&input[..take]);
                self.remaining -= take as u64;
                Ok((take, self.remaining == 0))
            }
            _ => self.decoder.decode(input, &mut self.buf).map(|n| (n, self.decoder.is_done())),
        }
    }

    /// `n` more bytes of a body by its Content-Length were read past the input (into a buffer of
    /// their own: `Conn::took_piece`); returns whether the body is whole.
    pub(super) fn took(&mut self, n: usize) -> bool {
        self.remaining -= n as u64;
        self.remaining == 0
    }

    /// Bytes still to come of a body by its Content-Length (None: chunked).
    pub(super) fn left(&self) -> Option<u64> {
        matches!(self.framing, Framing::Length(_)).then_some(self.remaining)
    }

    /// The length it declared (None: chunked).
    pub(super) fn declared(&self) -> Option<u64> {
        if let Framing::Length(total) = self.framing {
            Some(total)
        } else {
            None
        }
    }

    /// The trailer fields of a chunked body that is done, for JavaScript (see `events::trailer_fields`).
    pub(super) fn trailers(&mut self) -> Option<Vec<u8>> {
        let lines = self.decoder.take_trailers();
        (!lines.is_empty()).then(|| {
            crate::events::trailer_fields(lines.split(|&b| b == b'\n').filter(|line| line.len() > 1).map(|line| {
                let line = &line[..line.len() - 1];
                let colon = line.iter().position(|&b| b == b':').unwrap_or(line.len());
                (&line[..colon], line.get(colon + 1..).unwrap_or(b"").trim_ascii())
            }))
        })
    }

    /// Whether its request went to JavaScript (before the body was whole).
    pub(super) fn delivered(&self) -> bool {
        self.handover != Handover::Collecting
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_by_its_length_takes_no_byte_past_it() {
        let mut body = BodyState::new(1, Framing::Length(5), 0, false);
        assert_eq!(body.read(b"abc").unwrap(), (3, false));
        assert_eq!(body.read(b"deGET /").unwrap(), (2, true));
        assert_eq!(body.buf, b"abcde");
        assert_eq!(body.declared(), Some(5));
    }

    #[test]
    fn a_chunked_body_ends_with_its_last_chunk_and_bad_framing_is_refused() {
        let mut body = BodyState::new(1, Framing::Chunked, 0, false);
        assert_eq!(body.read(b"3\r\nabc\r\n").unwrap(), (8, false));
        assert_eq!(body.read(b"0\r\n\r\nnext").unwrap(), (5, true));
        assert_eq!((body.buf.as_slice(), body.declared()), (&b"abc"[..], None));
        let mut bad = BodyState::new(2, Framing::Chunked, 0, false);
        assert_eq!(bad.read(b"+3\r\nabc\r\n").unwrap_err().status, 400);
    }

    #[test]
    fn it_is_delivered_once_its_request_went_ahead_of_it() {
        let mut body = BodyState::new(1, Framing::Length(5), 0, false);
        assert!(!body.delivered());
        body.handover = Handover::Pieces;
        assert!(body.delivered());
        body.handover = Handover::Discard;
        assert!(body.delivered());
    }
}
