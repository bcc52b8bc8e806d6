//! For the HTTP/1.1 machine's unit tests: a connection over a socket pair, driven as the engine
//! drives it (parse, answer, promote, write), with the client's end to send and receive bytes.

use super::{Conn, Parsed, Place, Settings, WholeBody};
use crate::events::Event;
use crate::io::socket::{client_send as send, client_shutdown, close, read_all, Socket};
use crate::io::Transport;
use crate::request::Requests;
use crate::spare::Spare;
use cog_framing::response::{AppHead, HeaderBlock};

pub(super) struct Harness {
    pub(super) conn: Conn,
    pub(super) io: Transport,
    pub(super) client: Socket,
    pub(super) reqs: Requests,
    pub(super) spare: Spare,
    pub(super) settings: Settings,
    pub(super) now: u64,
}

impl Harness {
    pub(super) fn new() -> Harness {
        let (io, client) = Transport::pair();
        let settings = Settings {
            head: cog_framing::Limits { max_head: 16 * 1024, max_headers: 101 },
            rules: cog_framing::rules::Rules { max_headers: 100, max_url_length: 200, strict: false },
            web_sockets: true,
        };
        Harness { conn: Conn::new(None), io, client, reqs: Requests::default(), spare: Spare::default(), settings, now: 1000 }
    }

    /// The client sends `bytes`; the connection reads and parses them.
    pub(super) fn send(&mut self, bytes: &[u8]) -> (Vec<Event>, Parsed) {
        assert_eq!(send(self.client, bytes), bytes.len() as isize);
        self.read()
    }

    /// The connection reads what arrived and parses it.
    pub(super) fn read(&mut self) -> (Vec<Event>, Parsed) {
        self.io.read(&mut Vec::new());
        self.parse()
    }

    pub(super) fn parse(&mut self) -> (Vec<Event>, Parsed) {
        let mut events = Vec::new();
        let place = Place { reqs: &mut self.reqs, spare: &mut self.spare, key: 0, gen: 1 };
        let parsed = self.conn.parse(&mut self.io, place, &self.settings, self.now, &mut events);
        (events, parsed)
    }

    /// Answers request `id` with `status` and `body` (a whole response), as JavaScript's
    /// `respond` does, then promotes what is complete.
    pub(super) fn respond(&mut self, id: u64, status: u16, body: &[u8]) -> Vec<Event> {
        let head =
            AppHead { status, reason: None, block: HeaderBlock::new(b"").unwrap(), has_date: true, declared_length: None, close: false, request_id: None };
        let req = self.reqs.get(id).expect("a request in flight");
        assert!(self.conn.respond(&mut self.io, &mut self.spare, req, id, &head, WholeBody::Bytes(body)));
        self.promote()
    }

    pub(super) fn promote(&mut self) -> Vec<Event> {
        self.conn.promote(&mut self.io, &mut self.reqs, &mut self.spare)
    }

    /// Writes the output and returns what the client received.
    pub(super) fn received(&mut self) -> String {
        self.io.write();
        String::from_utf8(read_all(self.client)).unwrap()
    }

    /// The client ends its side.
    pub(super) fn client_ends(&mut self) {
        client_shutdown(self.client);
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        close(self.client);
    }
}

/// The ids of the requests among `events`.
pub(super) fn requests(events: &[Event]) -> Vec<u64> {
    events.iter().filter_map(|e| if let Event::Request { id, .. } = e { Some(*id) } else { None }).collect()
}
