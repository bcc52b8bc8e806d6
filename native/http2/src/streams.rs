//! What the connection keeps for each open request stream beside nghttp2's own state: the
//! response body the app gave and nghttp2 has not framed yet, its end and trailers, and the
//! request body bytes the app has not consumed. Slots are reused, with their buffers, so a
//! stream costs no allocation once the connection has seen as many at once.

use crate::events::StreamId;

/// A response buffer larger than this is given back when its stream closes.
const KEEP_CAPACITY: usize = 64 * 1024;

#[derive(Default)]
pub(crate) struct Stream {
    pub(crate) id: StreamId,
    /// Response body not yet framed: `out[out_pos..]`.
    pub(crate) out: Vec<u8>,
    pub(crate) out_pos: usize,
    /// The app has answered (HEADERS submitted).
    pub(crate) responded: bool,
    /// The app has ended the body; nghttp2 ends the stream once `out` is framed.
    pub(crate) ended: bool,
    /// Body bytes read from a file once `out` is sent (`Connection::send_file`).
    pub(crate) file: Option<FileBody>,
    /// Trailer fields to send after the body.
    pub(crate) trailers: Option<Vec<(Vec<u8>, Vec<u8>)>>,
    /// nghttp2 found the body buffer empty and waits for `nghttp2_session_resume_data`.
    pub(crate) deferred: bool,
    /// `send_data` said to wait: a `Drained` event is due once `out` is under the high water.
    pub(crate) wants_drain: bool,
    /// Request body bytes received and not yet consumed by the app (given back to the
    /// connection's window if the stream closes first).
    pub(crate) unconsumed: usize,
    /// Where its request event is: the batch of events and the index in it. While that batch
    /// is not taken, a reset drops the request instead of reporting it.
    pub(crate) request_event: Option<(u64, usize)>,
    /// The app has been told of the request (or will be, with the events not yet taken).
    pub(crate) surfaced: bool,
    /// The request's Content-Length, and the body bytes received so far.
    pub(crate) content_length: Option<u64>,
    pub(crate) received: u64,
}

/// A range of a file still to send as a stream's body.
pub(crate) struct FileBody {
    pub(crate) file: std::fs::File,
    pub(crate) offset: u64,
    pub(crate) left: u64,
}

impl Stream {
    pub(crate) fn buffered(&self) -> usize {
        self.out.len() - self.out_pos
    }
}

#[derive(Default)]
pub(crate) struct Streams {
    slots: Vec<Stream>,
    live: Vec<bool>,
    free: Vec<usize>,
    open: usize,
}

impl Streams {
    /// A slot for a new stream; its index.
    pub(crate) fn open(&mut self, id: StreamId) -> usize {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(Stream::default());
                self.live.push(false);
                self.slots.len() - 1
            }
        };
        let stream = &mut self.slots[slot];
        let mut out = std::mem::take(&mut stream.out);
        out.clear();
        *stream = Stream { id, out, ..Stream::default() };
        self.live[slot] = true;
        self.open += 1;
        slot
    }

    pub(crate) fn close(&mut self, slot: usize) {
        if !self.live[slot] {
            return;
        }
        self.live[slot] = false;
        self.open -= 1;
        let stream = &mut self.slots[slot];
        if stream.out.capacity() > KEEP_CAPACITY {
            stream.out = Vec::new();
        }
        stream.trailers = None;
        stream.file = None;
        self.free.push(slot);
    }

    pub(crate) fn get(&mut self, slot: usize, id: StreamId) -> Option<&mut Stream> {
        if *self.live.get(slot)? && self.slots[slot].id == id {
            Some(&mut self.slots[slot])
        } else {
            None
        }
    }

    /// Streams open (a request received and not yet closed).
    pub(crate) fn open_count(&self) -> usize {
        self.open
    }

    /// The slots' memory: what the response buffers hold at most.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.iter().map(|s| s.out.capacity()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_with_their_buffer_and_a_stale_id_finds_nothing() {
        let mut streams = Streams::default();
        let a = streams.open(1);
        streams.get(a, 1).unwrap().out.extend_from_slice(b"hello");
        streams.close(a);
        assert_eq!(streams.open_count(), 0);
        assert!(streams.get(a, 1).is_none(), "a closed stream is gone");
        let b = streams.open(3);
        assert_eq!(a, b, "the slot is reused");
        let stream = streams.get(b, 3).unwrap();
        assert_eq!(stream.buffered(), 0);
        assert!(stream.out.capacity() >= 5, "with its buffer");
        assert!(streams.get(b, 1).is_none(), "the old id does not find the new stream");
        streams.close(b);
        streams.close(b);
        assert_eq!(streams.open_count(), 0, "closing twice counts once");
    }
}
