//! Requests in, responses out: heads, bodies, trailers, flow control, resets, GOAWAY.
mod common;
use cog_http2::{code, Config, Connection, Event};
use common::*;

#[test]
fn a_get_is_answered() {
    let mut conn = connected(Config::default());
    conn.receive(&get(1, b"/hello?x=1")).unwrap();
    let events = conn.take_events();
    let list: Vec<_> = events.iter().collect();
    assert_eq!(list.len(), 1, "{list:?}");
    let Event::Request(req) = &list[0] else { panic!("{list:?}") };
    assert_eq!((req.stream, req.method, req.scheme, req.authority, req.path), (1, &b"GET"[..], &b"http"[..], &b"localhost"[..], &b"/hello?x=1"[..]));
    assert!(req.end_stream && !req.too_large && req.headers.is_empty());
    conn.respond(1, 200, &[(b"Content-Type", b"text/plain")], false).unwrap();
    conn.send_data(1, b"hello", true).unwrap();
    let out = frames(&drain(&mut conn));
    let kinds: Vec<_> = out.iter().map(|f| (f.ty, f.flags, f.stream)).collect();
    assert_eq!(kinds, [(HEADERS, END_HEADERS, 1), (DATA, END_STREAM, 1)], "{out:?}");
    assert_eq!(out[1].payload, b"hello");
    let events = conn.take_events();
    assert!(matches!(events.iter().collect::<Vec<_>>()[..], [Event::Closed { stream: 1 }]));
    assert_eq!(conn.open_streams(), 0);
}
