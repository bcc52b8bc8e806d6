//! What the engine keeps for each HTTP/2 stream whose request JavaScript holds: the request's
//! id, its body while it arrives (when it started, its timeout, whether JavaScript paused it and
//! the bytes it has not taken), and where its response stands. A stream is forgotten once its
//! response is done (or it is reset): what still arrives on it is dropped, and nghttp2 keeps what
//! the protocol needs.

use crate::events::{Body, Event};
use crate::request::IdHasher;
use cog_http2::StreamId;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// A request body still arriving.
#[derive(Debug)]
pub(crate) struct Arriving {
    /// When its request came (the request timeout counts from it).
    pub(crate) started: u64,
    /// The route's own `requestTimeout` (ms; `u64::MAX`: none), once JavaScript routed it.
    pub(crate) timeout: Option<u64>,
    /// JavaScript's stream of it is full: what arrives is handed over, and not consumed (the
    /// client's window stays shut) until it resumes.
    pub(crate) paused: bool,
    /// Bytes handed over while paused, consumed when it resumes.
    pub(crate) unconsumed: usize,
    /// Its timeout passed and JavaScript was told to answer the 408.
    pub(crate) told: bool,
}

impl Arriving {
    pub(crate) fn new(started: u64) -> Arriving {
        Arriving { started, timeout: None, paused: false, unconsumed: 0, told: false }
    }

    /// Its route's `requestTimeout` (ms; 0: none) in place of the server's.
    pub(crate) fn set_timeout(&mut self, ms: u64) {
        self.timeout = Some(if ms == 0 { u64::MAX } else { ms });
    }

    /// What its timeout comes to at `now` (the server's `request_timeout` unless its route set
    /// one): the app is told once to answer the 408 (`Tell`), unless it is answering already;
    /// past that the stream is cut.
    pub(crate) fn overdue(&mut self, now: u64, request_timeout: u64, answering: bool) -> Overdue {
        let timeout = self.timeout.unwrap_or(if request_timeout == 0 { u64::MAX } else { request_timeout });
        if now.saturating_sub(self.started) < timeout {
            Overdue::No
        } else if !answering && !self.told {
            self.told = true;
            Overdue::Tell
        } else {
            Overdue::Cut
        }
    }
}

/// What a body's timeout comes to (`Arriving::overdue`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Overdue {
    No,
    Tell,
    Cut,
}

/// Where a stream's response stands (a finished one is forgotten with its stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Response {
    /// Not begun.
    Waiting,
    /// Its head is sent and its body is being streamed; `body`: false when it has none (HEAD,
    /// 204, 304), and what the app writes is dropped.
    Streaming { body: bool },
}

#[derive(Debug)]
pub(super) struct Stream {
    /// Its request's id.
    pub(super) id: u64,
    /// Its request's body, while it arrives (and the app may read it).
    pub(super) body: Option<Arriving>,
    pub(super) response: Response,
}

/// The streams in flight on a connection, by stream id.
#[derive(Default)]
pub(super) struct Streams {
    map: HashMap<u64, Stream, BuildHasherDefault<IdHasher>>,
}

impl Streams {
    pub(super) fn insert(&mut self, stream: StreamId, state: Stream) {
        self.map.insert(u64::from(stream), state);
    }

    pub(super) fn get_mut(&mut self, stream: StreamId) -> Option<&mut Stream> {
        self.map.get_mut(&u64::from(stream))
    }

    pub(super) fn remove(&mut self, stream: StreamId) -> Option<Stream> {
        self.map.remove(&u64::from(stream))
    }

    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (StreamId, &mut Stream)> {
        self.map.iter_mut().map(|(stream, state)| (*stream as StreamId, state))
    }

    /// Forgets every stream, each given to `forget`.
    pub(super) fn drain(&mut self, mut forget: impl FnMut(Stream)) {
        for (_, state) in self.map.drain() {
            forget(state);
        }
    }
}

/// Request body bytes on a stream (HTTP/2's and HTTP/3's): gathered for a request still in this
/// batch (`gathering`: its stream, its place in `events`, the bytes so far), handed over as a
/// piece (consumed unless JavaScript paused the body), or dropped (the request is answered, or
/// has no body for the app) and consumed at once. `state`: the stream's request id and body, if
/// JavaScript holds its request; `consume` gives the protocol back the window for `n` bytes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn body_bytes<K: PartialEq>(
    gathering: &mut Vec<(K, usize, Vec<u8>)>,
    key: K,
    state: Option<(u64, &mut Option<Arriving>)>,
    data: &[u8],
    end_stream: bool,
    events: &mut Vec<Event>,
    mut consume: impl FnMut(usize),
) {
    if let Some(at) = gathering.iter().position(|g| g.0 == key) {
        // JavaScript takes it with its request.
        consume(data.len());
        gathering[at].2.extend_from_slice(data);
        if end_stream {
            let (_, index, whole) = gathering.swap_remove(at);
            if let Some(Event::Request { body, .. }) = events.get_mut(index) {
                *body = Body::Whole(whole);
            }
            if let Some((_, body)) = state {
                *body = None;
            }
        }
        return;
    }
    let Some((id, slot)) = state else { return consume(data.len()) };
    let Some(body) = slot.as_mut() else { return consume(data.len()) };
    if !data.is_empty() {
        events.push(Event::BodyPiece { id, piece: data.to_vec() });
        if body.paused {
            body.unconsumed += data.len();
        } else {
            consume(data.len());
        }
    }
    if end_stream {
        *slot = None;
        events.push(Event::BodyEnd { id });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_found_by_id_and_forgotten() {
        let mut streams = Streams::default();
        streams.insert(1, Stream { id: 10, body: None, response: Response::Waiting });
        streams.insert(3, Stream { id: 11, body: Some(Arriving::new(5)), response: Response::Waiting });
        assert_eq!(streams.get_mut(3).unwrap().id, 11);
        assert!(streams.get_mut(5).is_none());
        assert_eq!(streams.remove(1).unwrap().id, 10);
        assert!(streams.remove(1).is_none());
        let mut left = Vec::new();
        streams.drain(|s| left.push(s.id));
        assert_eq!(left, [11]);
        assert!(streams.iter_mut().next().is_none());
    }
}
