//! The engine's tunnel calls: JavaScript takes an upgrade request's connection raw (the
//! connection's protocol becomes a tunnel: `tunnel.rs`), writes to it, ends, pauses and cuts it
//! by id. Writes from outside a batch are corked like a batch's answers (`State::cork`).

use super::state::{Connection, Protocol, State};
use crate::tunnel;

impl State {
    /// Says whether requests asking to change protocols wait for the app's answer (it has
    /// WebSocket routes, or a listener for node:http's 'upgrade' event) or are served as any other.
    pub fn set_upgrades(&mut self, server: usize, on: bool) {
        if let Some(server) = self.servers.get_mut(server).and_then(Option::as_mut) {
            server.settings.requests.web_sockets = on;
        }
    }

    /// Takes the connection of request `id`, an upgrade request without a body waiting for the
    /// app, out of HTTP: it becomes a tunnel with the request's id, and the bytes that arrived
    /// after the request's head are returned (node:http's `head`). None when the client is gone
    /// or the request is no such upgrade. Requests before it still unanswered are aborted, as
    /// when a WebSocket is accepted.
    pub fn tunnel_open(&mut self, id: u64) -> Option<Vec<u8>> {
        let (key, gen) = self.reqs.get(id)?.conn();
        let conn = self.conns.get_mut(key).and_then(Option::as_mut).filter(|c| c.gen == gen)?;
        let Protocol::H1(h1) = &mut conn.proto else { return None };
        if !h1.upgrading() {
            return None;
        }
        self.reqs.remove(id);
        h1.upgraded(id);
        let mut aborted = Vec::new();
        h1.close(&mut self.reqs, &mut aborted);
        let head = conn.io.take_input();
        conn.proto = Protocol::Tunnel(tunnel::Conn::new(id));
        self.tunnels.insert(id, (key, gen));
        let (server, in_batch) = (conn.server, conn.in_batch);
        if !aborted.is_empty() {
            self.defer(server, aborted);
        }
        if !in_batch {
            // Polled for reading from now on (and what earlier answers left unsent is written).
            self.cork(key);
        }
        Some(head)
    }

    /// The connection of tunnel `id`, if it is still open.
    fn tunnel(&mut self, id: u64) -> Option<(usize, &mut Connection)> {
        let &(key, gen) = self.tunnels.get(&id)?;
        let conn = self.conns.get_mut(key)?.as_mut().filter(|c| c.gen == gen)?;
        matches!(conn.proto, Protocol::Tunnel(_)).then_some((key, conn))
    }

    /// Writes to tunnel `id`: 1 written (or queued below the high-water mark), 0 queued past it
    /// (a drain event follows), -1 gone (closed, or its side ended).
    pub fn tunnel_write(&mut self, id: u64, data: &[u8]) -> i32 {
        let Some((key, conn)) = self.tunnel(id) else { return -1 };
        let Protocol::Tunnel(tunnel) = &mut conn.proto else { return -1 };
        if !tunnel.write(&mut conn.io, data) {
            return -1;
        }
        let below = tunnel.below_high_water(&conn.io);
        self.cork(key);
        i32::from(below)
    }

    /// Ends tunnel `id`'s write side once what is queued is written.
    pub fn tunnel_end(&mut self, id: u64) {
        let Some((key, conn)) = self.tunnel(id) else { return };
        let Protocol::Tunnel(tunnel) = &mut conn.proto else { return };
        tunnel.end();
        self.cork(key);
    }

    /// Pauses (JavaScript's stream is full) or resumes reading tunnel `id`.
    pub fn tunnel_pause(&mut self, id: u64, paused: bool) {
        let Some((key, conn)) = self.tunnel(id) else { return };
        let Protocol::Tunnel(tunnel) = &mut conn.proto else { return };
        if tunnel.pause(paused) && !paused {
            // Polled for reading again once the connection is written (corked: this runs inside JavaScript).
            self.cork(key);
        }
    }

    /// Turns Nagle's algorithm off or on for tunnel `id`.
    pub fn tunnel_no_delay(&mut self, id: u64, on: bool) {
        if let Some((_, conn)) = self.tunnel(id) {
            conn.io.set_no_delay(on);
        }
    }

    /// Cuts tunnel `id`'s connection (JavaScript, which asked, hears its close from the loop).
    pub fn tunnel_destroy(&mut self, id: u64) {
        let Some((key, conn)) = self.tunnel(id) else { return };
        let server = conn.server;
        let calls = self.close_conn(key);
        self.defer(server, calls);
    }
}
