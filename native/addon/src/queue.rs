//! The queue of responses on one connection, in request order. HTTP/1.1 answers requests in the
//! order they came even when handlers finish out of order, so a response is written straight
//! to the connection's output only while it is the oldest unfinished one; a later one is held
//! (its bytes kept on its entry) until those before it are done, then moved to the output.
//! A body sent in place (a file range, the app's Buffer: `io::in_place`) waits on its entry
//! until the output before it is written.
//!
//! The queue knows bytes and order, not HTTP: what a protocol keeps per response (how a
//! streamed body is framed) rides on each entry as `T`, and what a finished or dropped
//! response means for the connection is its caller's to decide (`promote`'s `on`).

use crate::io::in_place::InPlaceBody;
use std::collections::VecDeque;

/// Where a response stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Progress {
    /// Nothing of it yet (or only bytes held for it).
    Waiting,
    /// Its head is out and its body is being streamed.
    Streaming,
    /// Complete (its bytes may still be held, or its body in place unsent).
    Finished,
}

/// One response in the queue.
pub(crate) struct Entry<T> {
    id: u64,
    progress: Progress,
    /// Its bytes, while an earlier response on the connection is unfinished.
    held: Vec<u8>,
    /// Bytes that go out once this response is finished (the engine's answer to a refused request behind it).
    after: Vec<u8>,
    /// A stream was told to wait for a drain event.
    wants_drain: bool,
    /// It closes the connection: nothing queued behind it is answered.
    closes: bool,
    /// A body sent where it lies, after `held` (see `io::in_place`).
    in_place: Option<InPlaceBody>,
    /// The protocol's own state for this response.
    pub(crate) proto: T,
}

impl<T> Entry<T> {
    /// Bytes held for it, waiting for the responses before it.
    pub(crate) fn held(&self) -> usize {
        self.held.len()
    }

    /// Asks for a drain event once the output is below the high-water mark again.
    pub(crate) fn want_drain(&mut self) {
        self.wants_drain = true;
    }
}

/// Where a response's bytes go now (`Queue::target`), with the protocol's state for it.
pub(crate) enum Target<'a, T> {
    /// Straight to the connection's output.
    Output(&'a mut T),
    /// Into what the response holds.
    Held(&'a mut Vec<u8>, &'a mut T),
}

/// What `promote` did with a response at the front.
pub(crate) enum Promoted {
    /// It is complete and all its bytes are in the output: the queue has let it go.
    Done { id: u64, closes: bool },
    /// It was behind a response that closes the connection, and is let go unanswered (or
    /// answered but never to be sent: `finished`).
    Dropped { id: u64, finished: bool },
}

pub(crate) struct Queue<T> {
    entries: VecDeque<Entry<T>>,
    /// Entries with a body in place still to send: while none, writing skips looking for one.
    in_place: u32,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue { entries: VecDeque::new(), in_place: 0 }
    }
}

impl<T> Queue<T> {
    /// Queues the response to request `id`, behind every response queued before it.
    pub(crate) fn push(&mut self, id: u64, proto: T) {
        // Room for one at first, not the four a VecDeque's first push makes (an entry is 120
        // bytes): a connection usually has one response in flight, and keeps this room for as
        // long as it lives, so with thousands of connections each held on a pending request, the
        // three unused entries were a sixth of the engine's memory per connection. Pipelining
        // grows it as ever, by doubling.
        if self.entries.capacity() == 0 {
            self.entries.reserve_exact(1);
        }
        self.entries.push_back(Entry {
            id,
            progress: Progress::Waiting,
            held: Vec::new(),
            after: Vec::new(),
            wants_drain: false,
            closes: false,
            in_place: None,
            proto,
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the response to request `id` is the newest queued, with nothing of the engine's
    /// to follow it (a refusal of a request behind it).
    pub(crate) fn is_last(&self, id: u64) -> bool {
        self.entries.back().is_some_and(|e| e.id == id && e.after.is_empty())
    }

    /// The oldest response's request.
    pub(crate) fn front(&self) -> Option<u64> {
        self.entries.front().map(|e| e.id)
    }

    /// The response to request `id`. The oldest is the one usually asked for: it is looked at first.
    pub(crate) fn get(&mut self, id: u64) -> Option<&mut Entry<T>> {
        match self.entries.front() {
            Some(front) if front.id == id => self.entries.front_mut(),
            _ => self.entries.iter_mut().find(|e| e.id == id),
        }
    }

    /// Whether any response is being streamed.
    pub(crate) fn any_streaming(&self) -> bool {
        self.entries.iter().any(|e| e.progress == Progress::Streaming)
    }

    /// Whether any response is unfinished.
    pub(crate) fn any_unfinished(&self) -> bool {
        self.entries.iter().any(|e| e.progress != Progress::Finished)
    }

    /// Whether the oldest response has begun (bytes of it were written or held).
    pub(crate) fn front_begun(&self) -> bool {
        self.entries.front().is_some_and(|e| e.progress != Progress::Waiting || !e.held.is_empty())
    }

    /// Whether the oldest response is request `id`'s and nothing of it is written yet.
    pub(crate) fn front_untouched(&self, id: u64) -> bool {
        self.entries.front().is_some_and(|e| e.id == id && e.progress == Progress::Waiting && e.held.is_empty())
    }

    /// Where bytes of response `id` go: the connection's output when it is the oldest and nothing
    /// of it is held, else what it holds until its turn.
    pub(crate) fn target(&mut self, id: u64) -> Option<Target<'_, T>> {
        let front = self.entries.front().is_some_and(|e| e.id == id);
        let entry = self.get(id)?;
        Some(if front && entry.held.is_empty() { Target::Output(&mut entry.proto) } else { Target::Held(&mut entry.held, &mut entry.proto) })
    }

    /// Bytes that go out after every response queued now (straight to `out` when none is).
    pub(crate) fn write_after(&mut self, out: &mut Vec<u8>, bytes: &[u8]) {
        match self.entries.back_mut() {
            Some(last) => last.after.extend_from_slice(bytes),
            None => out.extend_from_slice(bytes),
        }
    }

    /// Notes how far response `id` is, and whether it closes the connection.
    pub(crate) fn set_progress(&mut self, id: u64, progress: Progress, closes: bool) {
        if let Some(entry) = self.get(id) {
            entry.progress = progress;
            entry.closes = closes;
        }
    }

    /// Marks response `id` finished (its streamed body ended).
    pub(crate) fn finish(&mut self, id: u64) {
        if let Some(entry) = self.get(id) {
            entry.progress = Progress::Finished;
        }
    }

    /// Gives response `id` a body sent in place after its bytes.
    pub(crate) fn put_in_place(&mut self, id: u64, body: InPlaceBody) {
        if let Some(entry) = self.get(id) {
            entry.in_place = Some(body);
            self.in_place += 1;
        }
    }

    /// The body in place due now: the oldest response's, once nothing of it is held.
    pub(crate) fn in_place_due(&mut self) -> Option<&mut InPlaceBody> {
        if self.in_place == 0 {
            return None;
        }
        self.entries.front_mut().filter(|e| e.held.is_empty()).and_then(|e| e.in_place.as_mut())
    }

    /// Whether a body in place is due as soon as the output is written (its response is the
    /// oldest, all its bytes before the body in the output), with bytes left to send.
    pub(crate) fn in_place_follows(&self) -> bool {
        self.in_place > 0 && self.entries.front().is_some_and(|e| e.held.is_empty() && e.in_place.as_ref().is_some_and(|body| body.left() > 0))
    }

    /// The body in place due now was all sent.
    pub(crate) fn in_place_sent(&mut self) {
        self.in_place -= 1;
        if let Some(front) = self.entries.front_mut() {
            front.in_place = None;
        }
    }

    /// What is left of the oldest response's body in place (0 if none): output still to send.
    pub(crate) fn in_place_left(&self) -> u64 {
        if self.in_place == 0 {
            return 0;
        }
        self.entries.front().and_then(|e| e.in_place.as_ref()).map_or(0, InPlaceBody::left)
    }

    /// Moves every response complete at the front to `out`, up to one still being written or
    /// with a body in place due (the bytes held by that one go out too). After a response that
    /// closes the connection, nothing behind it is answered (RFC 9112 9.6): the rest are dropped.
    /// `on` hears of each response let go.
    pub(crate) fn promote(&mut self, out: &mut Vec<u8>, mut on: impl FnMut(Promoted)) {
        while let Some(front) = self.entries.front_mut() {
            if !front.held.is_empty() {
                out.extend_from_slice(&front.held);
                front.held = Vec::new();
            }
            if front.progress != Progress::Finished || front.in_place.is_some() {
                break;
            }
            let done = self.entries.pop_front().unwrap();
            if !done.closes {
                out.extend_from_slice(&done.after);
            }
            on(Promoted::Done { id: done.id, closes: done.closes });
            if done.closes {
                self.drop_all(|id, finished| on(Promoted::Dropped { id, finished }));
            }
        }
    }

    /// Requests whose streams asked for a drain event: each is told once (`on`).
    pub(crate) fn drained(&mut self, mut on: impl FnMut(u64)) {
        for entry in self.entries.iter_mut().filter(|e| e.wants_drain) {
            entry.wants_drain = false;
            on(entry.id);
        }
    }

    /// Takes response `id` out of the queue (its request became something else: a WebSocket).
    pub(crate) fn remove(&mut self, id: u64) {
        if let Some(at) = self.entries.iter().position(|e| e.id == id) {
            if self.entries.remove(at).is_some_and(|e| e.in_place.is_some()) {
                self.in_place -= 1;
            }
        }
    }

    /// Empties the queue (the connection closes): `on` hears each request, and whether its
    /// response was finished.
    pub(crate) fn drop_all(&mut self, mut on: impl FnMut(u64, bool)) {
        self.in_place = 0;
        for entry in self.entries.drain(..) {
            on(entry.id, entry.progress == Progress::Finished);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_makes_room_for_one_response_and_more_only_when_pipelined() {
        let mut q: Queue<()> = Queue::default();
        q.push(1, ());
        assert_eq!(q.entries.capacity(), 1, "one response in flight, room for one (issue #49)");
        q.push(2, ());
        q.push(3, ());
        assert!(q.entries.capacity() >= 3 && q.entries.len() == 3, "pipelined: it grows");
    }

    fn write(queue: &mut Queue<()>, out: &mut Vec<u8>, id: u64, bytes: &[u8]) {
        match queue.target(id).unwrap() {
            Target::Output(_) => out.extend_from_slice(bytes),
            Target::Held(held, _) => held.extend_from_slice(bytes),
        }
    }

    fn promoted(queue: &mut Queue<()>, out: &mut Vec<u8>) -> Vec<String> {
        let mut seen = Vec::new();
        queue.promote(out, |p| {
            seen.push(match p {
                Promoted::Done { id, closes } => format!("done {id}{}", if closes { " closes" } else { "" }),
                Promoted::Dropped { id, finished } => format!("dropped {id}{}", if finished { " finished" } else { "" }),
            })
        });
        seen
    }

    #[test]
    fn the_oldest_response_is_written_straight_out() {
        let (mut q, mut out) = (Queue::default(), Vec::new());
        q.push(1, ());
        write(&mut q, &mut out, 1, b"one");
        assert_eq!(out, b"one");
        q.set_progress(1, Progress::Finished, false);
        assert_eq!(promoted(&mut q, &mut out), ["done 1"]);
        assert!(q.is_empty());
    }

    #[test]
    fn a_later_response_waits_for_the_ones_before_it() {
        let (mut q, mut out) = (Queue::default(), Vec::new());
        for id in 1..=3 {
            q.push(id, ());
        }
        write(&mut q, &mut out, 3, b"three");
        q.set_progress(3, Progress::Finished, false);
        write(&mut q, &mut out, 2, b"two");
        q.set_progress(2, Progress::Finished, false);
        assert!(promoted(&mut q, &mut out).is_empty(), "1 is unanswered");
        assert!(out.is_empty() && q.get(2).unwrap().held() == 3);
        write(&mut q, &mut out, 1, b"one");
        assert_eq!(out, b"one");
        q.set_progress(1, Progress::Finished, false);
        assert_eq!(promoted(&mut q, &mut out), ["done 1", "done 2", "done 3"]);
        assert_eq!(out, b"onetwothree");
    }

    #[test]
    fn a_streaming_response_passes_on_what_it_holds_and_stays() {
        let (mut q, mut out) = (Queue::default(), Vec::new());
        q.push(1, ());
        q.push(2, ());
        write(&mut q, &mut out, 2, b"head2");
        q.set_progress(2, Progress::Streaming, false);
        write(&mut q, &mut out, 1, b"one");
        q.set_progress(1, Progress::Finished, false);
        assert_eq!(promoted(&mut q, &mut out), ["done 1"]);
        assert_eq!(out, b"onehead2", "2's head went out; its body follows straight");
        assert!(q.any_streaming() && q.front_begun());
        write(&mut q, &mut out, 2, b"-body");
        assert_eq!(out, b"onehead2-body");
    }

    #[test]
    fn nothing_behind_a_closing_response_is_answered() {
        let (mut q, mut out) = (Queue::default(), Vec::new());
        for id in 1..=3 {
            q.push(id, ());
        }
        write(&mut q, &mut out, 3, b"three");
        q.set_progress(3, Progress::Finished, false);
        write(&mut q, &mut out, 1, b"one");
        q.set_progress(1, Progress::Finished, true);
        assert_eq!(promoted(&mut q, &mut out), ["done 1 closes", "dropped 2", "dropped 3 finished"]);
        assert_eq!(out, b"one");
        assert!(q.is_empty());
    }

    #[test]
    fn bytes_after_the_last_response_follow_it_unless_it_closes() {
        let (mut q, mut out) = (Queue::default(), Vec::new());
        q.write_after(&mut out, b"nothing queued: now ");
        q.push(1, ());
        q.write_after(&mut out, b"400");
        write(&mut q, &mut out, 1, b"200 ");
        q.set_progress(1, Progress::Finished, false);
        promoted(&mut q, &mut out);
        assert_eq!(out, b"nothing queued: now 200 400");
        q.push(2, ());
        q.write_after(&mut out, b"never");
        q.set_progress(2, Progress::Finished, true);
        promoted(&mut q, &mut out);
        assert_eq!(out, b"nothing queued: now 200 400");
    }

    #[test]
    fn a_body_in_place_holds_back_the_responses_behind_it() {
        let (mut q, mut out) = (Queue::default(), Vec::new());
        q.push(1, ());
        q.push(2, ());
        assert!(q.in_place_due().is_none() && q.in_place_left() == 0 && !q.in_place_follows());
        q.put_in_place(1, InPlaceBody::buffer(Box::new(vec![0u8; 10])));
        q.set_progress(1, Progress::Finished, false);
        write(&mut q, &mut out, 2, b"two");
        q.set_progress(2, Progress::Finished, false);
        assert!(promoted(&mut q, &mut out).is_empty());
        assert_eq!(q.in_place_left(), 10);
        assert!(q.in_place_follows(), "the output is followed by 1's body at once");
        assert!(q.in_place_due().is_some());
        q.in_place_sent();
        assert!(!q.in_place_follows());
        assert_eq!(promoted(&mut q, &mut out), ["done 1", "done 2"]);
        assert_eq!(out, b"two");
    }

    #[test]
    fn drains_are_told_once_and_closing_tells_what_was_unfinished() {
        let mut q: Queue<()> = Queue::default();
        for id in 1..=3 {
            q.push(id, ());
        }
        q.get(2).unwrap().want_drain();
        let mut told = Vec::new();
        q.drained(|id| told.push(id));
        q.drained(|id| told.push(id));
        assert_eq!(told, [2]);
        q.set_progress(1, Progress::Finished, false);
        q.remove(3);
        assert!(q.get(3).is_none() && q.get(2).is_some());
        assert!(q.any_unfinished() && !q.front_untouched(1));
        let mut dropped = Vec::new();
        q.drop_all(|id, finished| dropped.push((id, finished)));
        assert_eq!(dropped, [(1, true), (2, false)]);
    }
}
