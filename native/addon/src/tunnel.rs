//! A connection handed to JavaScript raw: what node:http's 'upgrade' event gives its listener
//! (the socket, to speak whatever protocol the upgrade agreed on: `ws`'s WebSockets, say). A
//! sibling of `h1::Conn` and `ws::Conn` over the same `io::Transport`: the bytes that arrive
//! (plaintext, on TLS too) go to JavaScript as they are, and what JavaScript writes goes to the
//! socket, on the loop HTTP is served on, with backpressure both ways: JavaScript pauses the
//! reading when its stream is full, and a write past `HIGH_WATER` unsent bytes asks for a drain
//! event. Ending is half a close, as on a Node socket that allows half-open connections: the
//! write side shuts once the output is written, and the connection closes once the client has
//! ended its side too.

use crate::events::{Event, SocketFailure};
use crate::io::{Input, Transport, HIGH_WATER};

/// A tunnelled connection's state.
pub(crate) struct Conn {
    /// Its id: the upgrade request's.
    id: u64,
    /// JavaScript's stream of it is full: nothing is read until it resumes.
    paused: bool,
    /// JavaScript waits for a drain event (a write found the output past `HIGH_WATER`).
    wants_drain: bool,
    /// JavaScript ended its side: the write side shuts once the output is written.
    ending: bool,
    /// The write side is shut.
    shut: bool,
    /// JavaScript was told the client ended its side.
    told_end: bool,
}

impl Conn {
    pub(crate) fn new(id: u64) -> Box<Conn> {
        Box::new(Conn { id, paused: false, wants_drain: false, ending: false, shut: false, told_end: false })
    }

    /// Its id.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// What to do with the socket's input now.
    pub(crate) fn input(&self) -> Input {
        if self.paused {
            Input::Wait
        } else {
            Input::Read
        }
    }

    /// Whether the socket should be polled for input.
    pub(crate) fn wants_input(&self, io: &Transport) -> bool {
        !(self.paused || io.ended())
    }

    /// Pauses or resumes the reading; returns whether that changed anything.
    pub(crate) fn pause(&mut self, paused: bool) -> bool {
        std::mem::replace(&mut self.paused, paused) != paused
    }

    /// Hands what arrived to JavaScript, and the end of the client's side once it came.
    pub(crate) fn parse(&mut self, io: &mut Transport, events: &mut Vec<Event>) {
        if !io.input().is_empty() {
            events.push(Event::TunnelData { id: self.id, data: io.take_input() });
        }
        if io.ended() && !self.told_end {
            self.told_end = true;
            events.push(Event::TunnelEnd { id: self.id });
        }
    }

    /// Appends what JavaScript writes to the output; false once its side is ended. Past
    /// `HIGH_WATER` unsent bytes a drain event is asked for (`below_high_water` says so).
    pub(crate) fn write(&mut self, io: &mut Transport, data: &[u8]) -> bool {
        if self.ending {
            return false;
        }
        io.output().extend_from_slice(data);
        true
    }

    /// Whether the output is below the high-water mark; if not, a drain event will follow.
    pub(crate) fn below_high_water(&mut self, io: &Transport) -> bool {
        if io.unsent() <= HIGH_WATER {
            return true;
        }
        self.wants_drain = true;
        false
    }

    /// JavaScript ended its side: nothing more is written after what is queued.
    pub(crate) fn end(&mut self) {
        self.ending = true;
    }

    /// The output is all written (`unsent` 0): an ended side is shut now, and JavaScript told.
    pub(crate) fn written(&mut self, io: &mut Transport, events: &mut Vec<Event>) {
        if self.ending && !self.shut {
            self.shut = true;
            io.shut_write();
            events.push(Event::TunnelShut { id: self.id });
        }
    }

    /// Whether the connection is done: both sides ended.
    pub(crate) fn finished(&self, io: &Transport) -> bool {
        self.shut && io.ended()
    }

    /// A drain event, when the output is below the high-water mark and JavaScript waits for it.
    pub(crate) fn drained(&mut self, io: &Transport, events: &mut Vec<Event>) {
        if self.wants_drain && io.unsent() <= HIGH_WATER {
            self.wants_drain = false;
            events.push(Event::TunnelDrain { id: self.id });
        }
    }

    /// The connection closed, `failure` if its socket failed: JavaScript is told (once: the
    /// connection closes once).
    pub(crate) fn closed(&self, failure: Option<SocketFailure>, events: &mut Vec<Event>) {
        events.push(Event::TunnelClose { id: self.id, failure });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::socket::{client_recv, client_send as send, client_shutdown, read_all};

    #[test]
    fn bytes_go_both_ways_as_they_are() {
        let (mut io, client) = Transport::pair();
        let mut t = Conn::new(3);
        send(client, b"\x81\x02hi");
        io.read(&mut Vec::new());
        let mut events = Vec::new();
        t.parse(&mut io, &mut events);
        assert_eq!(events, [Event::TunnelData { id: 3, data: b"\x81\x02hi".to_vec() }]);
        assert!(io.input().is_empty());
        assert!(t.write(&mut io, b"back") && t.below_high_water(&io));
        io.write();
        assert_eq!(read_all(client), b"back");
        io.close_pair(client);
    }

    #[test]
    fn past_the_high_water_mark_a_drain_is_asked_for_and_follows() {
        let (mut io, client) = Transport::pair();
        let mut t = Conn::new(3);
        assert!(t.write(&mut io, &vec![b'a'; HIGH_WATER + 1]));
        assert!(!t.below_high_water(&io));
        let mut events = Vec::new();
        t.drained(&io, &mut events);
        assert!(events.is_empty(), "still past it");
        io.write();
        read_all(client);
        io.write();
        let mut spare = crate::spare::Spare::default();
        io.settle_output(&mut spare, HIGH_WATER);
        t.drained(&io, &mut events);
        assert_eq!(events, [Event::TunnelDrain { id: 3 }]);
        io.close_pair(client);
    }

    #[test]
    fn a_paused_tunnel_reads_nothing() {
        let (io, client) = Transport::pair();
        let mut t = Conn::new(3);
        assert!(t.pause(true) && !t.pause(true));
        assert_eq!(t.input(), Input::Wait);
        assert!(!t.wants_input(&io));
        assert!(t.pause(false));
        assert_eq!(t.input(), Input::Read);
        io.close_pair(client);
    }

    #[test]
    fn ending_shuts_the_write_side_once_written_and_closes_once_the_client_ends_too() {
        let (mut io, client) = Transport::pair();
        let mut t = Conn::new(3);
        t.write(&mut io, b"bye");
        t.end();
        assert!(!t.write(&mut io, b"late"), "nothing after the end");
        io.write();
        let mut events = Vec::new();
        t.written(&mut io, &mut events);
        assert_eq!(events, [Event::TunnelShut { id: 3 }]);
        assert_eq!(read_all(client), b"bye");
        let mut buf = [0u8; 4];
        assert_eq!(client_recv(client, &mut buf), 0, "the client reads the end");
        assert!(!t.finished(&io), "the client's side is still open");
        client_shutdown(client);
        io.read(&mut Vec::new());
        let mut events = Vec::new();
        t.parse(&mut io, &mut events);
        assert_eq!(events, [Event::TunnelEnd { id: 3 }]);
        assert!(t.finished(&io));
        let mut closed = Vec::new();
        t.closed(io.failure(), &mut closed);
        assert_eq!(closed, [Event::TunnelClose { id: 3, failure: None }], "an end is no failure");
        io.close_pair(client);
    }
}
