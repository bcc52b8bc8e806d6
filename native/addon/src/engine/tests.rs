//! The engine on a loop of the tests' own (`uv::fake`): real sockets (a listener on 127.0.0.1,
//! clients from std), the engine's own callbacks run when the test says the loop found their
//! events, JavaScript replaced by a list of what was delivered (`js::delivered`). Each test runs
//! on its own thread, so each has its own state and loop.

use super::state::{with_state, Settings};
use super::{dispose, listen, stop_listening, ListenAt};
use crate::events::{Body, Event};
use crate::h1::{self, WholeBody};
use crate::js::{self, ServerJs};
use crate::uv::{fake, UV_CHECK, UV_DISCONNECT, UV_READABLE};
use cog_framing::response::{AppHead, HeaderBlock};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn settings() -> Settings {
    Settings {
        requests: h1::Settings {
            head: cog_framing::Limits { max_head: 16 * 1024, max_headers: 101 },
            rules: cog_framing::rules::Rules { max_headers: 100, max_url_length: 8192, strict: false },
            web_sockets: false,
        },
        h2: None,
        h3: None,
        headers_timeout: 60_000,
        request_timeout: 300_000,
        keep_alive_timeout: 5_000,
        send_timeout: 0,
        check_interval: 1_000,
    }
}

/// A server listening on an ephemeral port of 127.0.0.1, at loop time `now`.
fn server(now: u64) -> (usize, u16) {
    fake::set_now(now);
    listen(ServerJs::for_tests(), ListenAt::Tcp { host: "127.0.0.1", port: 0, reuse_port: false }, settings(), None).expect("listening")
}

/// The listening socket's poll handle, found by the server's descriptor.
fn listener(id: usize) -> *mut crate::uv::uv_handle_t {
    with_state(|s| s.server(id).unwrap().listen_poll)
}

/// Connects `n` clients and lets the engine accept them (its listening handle's event).
fn connect(id: usize, port: u16, n: usize) -> Vec<TcpStream> {
    let before = with_state(|s| s.conn_keys(id).len());
    let clients: Vec<_> = (0..n).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
    // The kernel completes the connections asynchronously: wait until all are accepted.
    for _ in 0..200 {
        fake::poll_event(listener(id), UV_READABLE);
        if with_state(|s| s.conn_keys(id).len()) >= before + n {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    clients
}

/// The engine's connection keys and generations, in key order.
fn conns(id: usize) -> Vec<(usize, u32)> {
    with_state(|s| s.conn_keys(id).into_iter().map(|k| (k, s.conns[k].as_ref().unwrap().gen)).collect())
}

/// What a client reads within a moment.
fn read_some(client: &mut TcpStream) -> Vec<u8> {
    client.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    match client.read(&mut buf) {
        Ok(n) => buf[..n].to_vec(),
        Err(_) => Vec::new(),
    }
}

/// The poll handle of server `id`'s connection `key`.
fn poll_of(id: usize, key: usize) -> *mut crate::uv::uv_handle_t {
    let listen = listener(id);
    fake::polls().into_iter().map(|(p, _, _)| p).find(|&p| p != listen && fake::handle_of(p).unwrap().data == key).expect("the connection's poll handle")
}

#[test]
fn listening_starts_the_servers_handles_and_dispose_closes_them() {
    let (id, port) = server(1_000);
    assert!(port > 0);
    let listen = fake::handle_of(listener(id)).unwrap();
    assert!(listen.active && listen.events == UV_READABLE && listen.referenced, "the listener keeps the loop alive");
    assert_eq!(listen.data, id);
    let (timer, kick, check, idle) = with_state(|s| {
        let server = s.server(id).unwrap();
        (server.timer, server.kick, server.check, server.idle)
    });
    let timer = fake::handle_of(timer).unwrap();
    assert!(timer.active && !timer.referenced, "the sweep runs without keeping the loop alive");
    assert_eq!((timer.timeout, timer.repeat, timer.due), (1_000, 1_000, 2_000), "every check_interval");
    for handle in [kick, check, idle] {
        let handle = fake::handle_of(handle).unwrap();
        assert!(!handle.active && !handle.referenced);
    }

    stop_listening(id);
    assert!(fake::handle_of(listener(id)).is_none(), "the listener is closed");
    stop_listening(id);
    let closed = fake::closed();
    assert!(dispose(id).is_some());
    assert_eq!(fake::closed(), closed + 4, "the timer, kick, check and idle handles are closed");
    assert!(dispose(id).is_none(), "disposed once");
    assert!(with_state(|s| s.server(id).is_none()));
}

#[test]
fn accepted_connections_take_free_slots_with_new_generations() {
    let (id, port) = server(0);
    let mut clients = connect(id, port, 3);
    let first = conns(id);
    assert_eq!(first.iter().map(|&(k, _)| k).collect::<Vec<_>>(), [0, 1, 2]);
    let gens: std::collections::HashSet<_> = first.iter().map(|&(_, g)| g).collect();
    assert_eq!(gens.len(), 3, "each connection has its own generation");
    for &(key, _) in &first {
        let poll = fake::handle_of(poll_of(id, key)).unwrap();
        assert_eq!(poll.events, UV_READABLE | UV_DISCONNECT);
    }

    // The second connection closes: its slot is free, and the next connection takes it.
    with_state(|s| s.close_conn(1));
    assert_eq!(conns(id).len(), 2);
    assert!(with_state(|s| !s.is_conn(1, first[1].1)));
    drop(clients.remove(1));
    clients.extend(connect(id, port, 1));
    let now = conns(id);
    assert_eq!(now.len(), 3);
    let reused = now.iter().find(|&&(k, _)| k == 1).expect("slot 1 reused");
    assert_ne!(reused.1, first[1].1, "a reused slot gets a new generation");
    assert!(with_state(|s| s.is_conn(0, first[0].1) && s.is_conn(2, first[2].1)), "the others are untouched");
    assert!(dispose(id).is_some());
    assert!(conns(id).is_empty(), "dispose cuts the connections left");
}

#[test]
fn a_request_is_read_after_the_poll_phase_delivered_and_answered() {
    let (id, port) = server(0);
    let mut clients = connect(id, port, 1);
    let (key, _) = conns(id)[0];
    clients[0].write_all(b"GET /hello?x=1 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(20));

    // Readable: queued for the check phase (one connection is less than a slice).
    fake::poll_event(poll_of(id, key), UV_READABLE);
    assert!(js::delivered().is_empty(), "nothing is read during the poll phase short of a slice");
    assert!(with_state(|s| s.server(id).unwrap().check_armed));
    assert_eq!(fake::run(UV_CHECK), 1);
    let delivered = js::delivered();
    let [(Event::Request { id: request, body: Body::None, .. }, Some((method, url)))] = &delivered[..] else { panic!("{delivered:?}") };
    assert_eq!((cog_framing::METHODS[*method], url.as_slice()), ("GET", &b"/hello?x=1"[..]));
    assert!(!with_state(|s| s.server(id).unwrap().check_armed), "nothing left: the check handle stops");

    let block = HeaderBlock::new(b"content-type: text/plain\r\n").unwrap();
    let answer = AppHead { status: 200, reason: None, block, has_date: false, declared_length: Some(2), close: false, request_id: None };
    assert!(with_state(|s| s.respond(*request, &answer, WholeBody::Bytes(b"hi"))));
    let response = read_some(&mut clients[0]);
    assert!(response.starts_with(b"HTTP/1.1 200 OK\r\n"), "{}", String::from_utf8_lossy(&response));
    assert!(response.ends_with(b"\r\n\r\nhi"));
    assert!(!with_state(|s| s.respond(*request, &answer, WholeBody::Bytes(b"hi"))), "answered once");
    dispose(id);
}

#[test]
fn the_sweep_answers_a_slow_head_408_and_closes_idle_connections() {
    let (id, port) = server(10_000);
    let mut clients = connect(id, port, 2);
    let keys = conns(id);
    // The first client starts a head and stops; the second sends nothing.
    clients[0].write_all(b"GET / HTTP/1.1\r\nHost:").unwrap();
    std::thread::sleep(Duration::from_millis(20));
    fake::poll_event(poll_of(id, keys[0].0), UV_READABLE);
    fake::run(UV_CHECK);
    assert!(js::delivered().is_empty());

    // Sweeps before either timeout change nothing.
    assert!(fake::advance(14_000) >= 4);
    assert_eq!(conns(id).len(), 2);
    // Past the keep-alive timeout (5 s): the connection that never sent a byte is closed.
    fake::advance(16_000);
    assert_eq!(conns(id), [keys[0]], "the idle connection is closed");
    assert_eq!(read_some(&mut clients[1]), b"", "its client reads the end");
    // Past the headers timeout (60 s from its first byte): 408, and the connection closes.
    fake::advance(71_000);
    let answer = read_some(&mut clients[0]);
    assert!(answer.starts_with(b"HTTP/1.1 408 "), "{}", String::from_utf8_lossy(&answer));
    assert!(conns(id).is_empty(), "the connection closes after its 408");
    dispose(id);
}

#[test]
fn a_whole_slice_of_ready_connections_is_served_in_the_poll_phase() {
    let (id, port) = server(0);
    let mut clients = connect(id, port, 17);
    for client in clients.iter_mut() {
        client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    }
    std::thread::sleep(Duration::from_millis(20));
    let keys = conns(id);
    for (i, &(key, _)) in keys.iter().enumerate() {
        fake::poll_event(poll_of(id, key), UV_READABLE);
        let delivered = js::delivered();
        // The 16th ready connection makes a slice (READ_SLICE): read and delivered at once.
        assert_eq!(delivered.len(), if i == 15 { 16 } else { 0 }, "after {} readable", i + 1);
    }
    // The 17th waits for the check phase.
    assert_eq!(fake::run(UV_CHECK), 1);
    assert_eq!(js::delivered().len(), 1);
    dispose(id);
}

#[test]
fn the_sweep_takes_a_lost_reserve_again_before_it_polls_the_listener_again() {
    let (id, port) = server(0);
    // Paused for want of descriptors, the reserve lost to another thread of the process.
    with_state(|s| {
        s.reserve = None;
        s.servers[id].as_mut().unwrap().accept_paused = true;
    });
    // SAFETY: the server's listening handle, as `out_of_descriptors` stops it.
    unsafe { crate::uv::uv_poll_stop(listener(id)) };
    assert!(!fake::handle_of(listener(id)).unwrap().active);

    fake::advance(1_000);
    assert!(with_state(|s| s.reserve.is_some()), "the reserve is taken again");
    assert!(fake::handle_of(listener(id)).unwrap().active, "the listener is polled again");
    let _clients = connect(id, port, 1);
    assert_eq!(conns(id).len(), 1, "and accepts");
    dispose(id);
}

/// Issue #49: with tens of thousands of connections each waiting for its answer, what a
/// connection and its request hold inline is most of the engine's memory per connection; a field
/// added inline is paid by every one of them (box what is rare, as a body's state is).
#[test]
#[cfg(target_pointer_width = "64")]
fn a_connection_and_a_request_record_stay_small() {
    use std::mem::size_of;
    // 264 bytes, and 8 more for closing in stages (when a connection began to linger, h1::Conn).
    assert!(size_of::<super::state::Connection>() <= 272, "a connection's slot is {} bytes", size_of::<super::state::Connection>());
    assert!(size_of::<crate::request::Req>() <= 120, "a request's record is {} bytes", size_of::<crate::request::Req>());
}
