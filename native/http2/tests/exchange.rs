//! Requests in, responses out: heads, bodies, trailers, flow control, resets, GOAWAY.
mod common;
use cog_http2::{code, Config, Connection, Error, Event};
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

fn post(stream: u32, end_stream: bool) -> Vec<u8> {
    frame(HEADERS, END_HEADERS | if end_stream { END_STREAM } else { 0 }, stream, &request_block(b"POST", b"/upload", &[(b"content-type", b"text/plain")]))
}

fn list(events: &cog_http2::Events) -> Vec<Event<'_>> {
    events.iter().collect()
}

#[test]
fn a_request_body_arrives_in_order_and_its_window_reopens_only_when_consumed() {
    let mut conn = connected(Config { connection_window_size: 65_535, ..Config::default() });
    let mut input = post(1, false);
    // Past half the windows (65,535 each): what makes nghttp2 send WINDOW_UPDATE once consumed.
    input.extend(frame(DATA, 0, 1, &[b'a'; 16_000]));
    input.extend(frame(DATA, 0, 1, &[b'b'; 16_000]));
    input.extend(frame(DATA, 0, 1, &[b'c'; 8_000]));
    input.extend(frame(DATA, END_STREAM, 1, b"end"));
    conn.receive(&input).unwrap();
    let events = conn.take_events();
    let got = list(&events);
    assert!(matches!(&got[0], Event::Request(r) if r.method == b"POST" && !r.end_stream && r.headers.get(b"content-type") == Some(b"text/plain")));
    let body: Vec<u8> = got[1..].iter().flat_map(|e| if let Event::Data { data, .. } = e { data.to_vec() } else { panic!("{e:?}") }).collect();
    assert_eq!(body.len(), 40_003);
    assert!(matches!(got.last(), Some(Event::Data { end_stream: true, .. })));
    drop(got);
    conn.recycle(events);
    // Nothing consumed: no WINDOW_UPDATE.
    assert!(frames(&drain(&mut conn)).iter().all(|f| f.ty != WINDOW_UPDATE));
    conn.consume(1, 40_003);
    let out = frames(&drain(&mut conn));
    assert!(out.iter().any(|f| f.ty == WINDOW_UPDATE && f.stream == 0), "the connection's window reopens: {out:?}");
}

#[test]
fn body_bytes_of_a_stream_reset_unconsumed_go_back_to_the_connection() {
    let mut conn = connected(Config { connection_window_size: 65_535, ..Config::default() });
    let mut input = post(1, false);
    for _ in 0..3 {
        input.extend(frame(DATA, 0, 1, &[b'a'; 12_000]));
    }
    conn.receive(&input).unwrap();
    assert_eq!(conn.take_events().len(), 4);
    conn.receive(&frame(RST_STREAM, 0, 1, &code::CANCEL.to_be_bytes())).unwrap();
    let out = frames(&drain(&mut conn));
    assert!(out.iter().any(|f| f.ty == WINDOW_UPDATE && f.stream == 0), "{out:?}");
    let events = conn.take_events();
    assert!(matches!(list(&events)[..], [Event::Reset { stream: 1, code: code::CANCEL }]));
}

#[test]
fn request_trailers_end_the_body() {
    let mut conn = connected(Config::default());
    let mut input = post(1, false);
    input.extend(frame(DATA, 0, 1, b"x"));
    let mut trailers = Vec::new();
    literal(&mut trailers, b"x-sum", b"42");
    input.extend(frame(HEADERS, END_HEADERS | END_STREAM, 1, &trailers));
    conn.receive(&input).unwrap();
    let events = conn.take_events();
    let got = list(&events);
    assert!(matches!(&got[2], Event::Trailers { stream: 1, headers } if headers.get(b"x-sum") == Some(b"42")), "{got:?}");
}

#[test]
fn a_body_larger_than_the_clients_window_waits_for_window_updates_and_reports_drained() {
    let mut conn = connected(Config { stream_high_water: 1000, ..Config::default() });
    // The client's streams get 100 bytes of window.
    conn.receive(&frame(SETTINGS, 0, 0, &[0, 4, 0, 0, 0, 100])).unwrap();
    conn.receive(&get(1, b"/")).unwrap();
    conn.take_events();
    conn.respond(1, 200, &[], false).unwrap();
    assert_eq!(conn.send_data(1, &[b'z'; 5000], true), Ok(false), "past the high water: wait");
    let out = frames(&drain(&mut conn));
    let sent: usize = out.iter().filter(|f| f.ty == DATA).map(|f| f.payload.len()).sum();
    assert_eq!(sent, 100, "only the window's worth");
    assert_eq!(conn.buffered(1), 4900);
    let mut total = sent;
    let mut drained = false;
    while total < 5000 {
        conn.receive(&frame(WINDOW_UPDATE, 0, 1, &1000u32.to_be_bytes())).unwrap();
        let out = frames(&drain(&mut conn));
        total += out.iter().filter(|f| f.ty == DATA).map(|f| f.payload.len()).sum::<usize>();
        let events = conn.take_events();
        drained |= list(&events).iter().any(|e| matches!(e, Event::Drained { stream: 1 }));
    }
    assert_eq!(total, 5000);
    assert!(drained, "Drained once the buffer fell under the high water");
}

#[test]
fn response_trailers_follow_the_body() {
    let mut conn = connected(Config::default());
    conn.receive(&get(1, b"/")).unwrap();
    conn.take_events();
    conn.respond(1, 200, &[], false).unwrap();
    conn.send_data(1, b"body", false).unwrap();
    conn.send_trailers(1, &[(b"X-Checksum", b"abc")]).unwrap();
    let out = frames(&drain(&mut conn));
    let kinds: Vec<_> = out.iter().map(|f| (f.ty, f.flags & END_STREAM)).collect();
    assert_eq!(kinds, [(HEADERS, 0), (DATA, 0), (HEADERS, END_STREAM)]);
    assert_eq!(conn.send_data(1, b"more", true), Err(Error::Stream(1)), "nothing after the end");
}

#[test]
fn a_response_with_forbidden_characters_is_refused_and_connection_fields_are_left_out() {
    let mut conn = connected(Config::default());
    conn.receive(&get(1, b"/")).unwrap();
    conn.take_events();
    assert_eq!(conn.respond(1, 200, &[(b"x-a", b"one\r\ntwo")], true), Err(Error::InvalidHeader));
    assert_eq!(conn.respond(1, 200, &[(b"x a", b"v")], true), Err(Error::InvalidHeader));
    assert_eq!(conn.respond(1, 1000, &[], true), Err(Error::InvalidHeader));
    conn.respond(1, 103, &[(b"link", b"</a.css>")], false).unwrap();
    conn.respond(1, 200, &[(b"Connection", b"close"), (b"Transfer-Encoding", b"chunked"), (b"X-Kept", b"yes")], true).unwrap();
    assert_eq!(conn.respond(1, 200, &[], true), Err(Error::Stream(1)), "answered once");
    let out = frames(&drain(&mut conn));
    let heads: Vec<_> = out.iter().filter(|f| f.ty == HEADERS).collect();
    assert_eq!(heads.len(), 2, "the 103 then the 200");
    assert_eq!(heads[1].flags & END_STREAM, END_STREAM);
    // HPACK literal strings of this size are sent as they are or Huffman-coded: look for the
    // names nghttp2 would send raw, or their absence in both forms via a decoder-free check.
    assert!(!out.iter().any(|f| f.payload.windows(10).any(|w| w == b"connection")));
    assert!(matches!(list(&conn.take_events())[..], [Event::Closed { stream: 1 }]));
}

#[test]
fn a_reset_after_the_request_was_handed_over_is_reported_and_commands_then_fail() {
    let mut conn = connected(Config::default());
    conn.receive(&post(1, false)).unwrap();
    assert_eq!(conn.take_events().len(), 1);
    conn.receive(&frame(RST_STREAM, 0, 1, &code::CANCEL.to_be_bytes())).unwrap();
    assert!(matches!(list(&conn.take_events())[..], [Event::Reset { stream: 1, code: code::CANCEL }]));
    assert_eq!(conn.respond(1, 200, &[], true), Err(Error::Stream(1)));
    assert_eq!(conn.open_streams(), 0);
}

#[test]
fn the_server_resets_a_stream() {
    let mut conn = connected(Config::default());
    conn.receive(&post(1, false)).unwrap();
    conn.take_events();
    conn.reset(1, code::REFUSED_STREAM).unwrap();
    let out = frames(&drain(&mut conn));
    assert_eq!(resets(&out), [(1, code::REFUSED_STREAM)]);
    assert!(matches!(list(&conn.take_events())[..], [Event::Reset { stream: 1, code: code::REFUSED_STREAM }]));
}

#[test]
fn shutdown_lets_open_streams_finish_then_sends_the_final_goaway() {
    let mut conn = connected(Config::default());
    conn.receive(&get(1, b"/")).unwrap();
    conn.take_events();
    conn.shutdown();
    let out = frames(&drain(&mut conn));
    assert_eq!(goaways(&out), [(0x7fff_ffff, code::NO_ERROR)], "first: open no more streams");
    assert!(!conn.is_done());
    // A stream the client opened before it read that is still served.
    conn.receive(&get(3, b"/late")).unwrap();
    assert_eq!(conn.take_events().len(), 1);
    conn.respond(1, 204, &[], true).unwrap();
    conn.respond(3, 204, &[], true).unwrap();
    let out = frames(&drain(&mut conn));
    assert_eq!(out.iter().filter(|f| f.ty == HEADERS).count(), 2);
    assert_eq!(goaways(&out), [(3, code::NO_ERROR)], "then the final one");
    assert!(conn.is_done());
}

#[test]
fn goaway_closes_now_and_the_clients_goaway_and_pings_are_reported() {
    let mut conn = connected(Config::default());
    conn.receive(&frame(PING, 0, 0, b"12345678")).unwrap();
    let out = frames(&drain(&mut conn));
    assert!(out.iter().any(|f| f.ty == PING && f.flags == ACK && f.payload == b"12345678"));
    let mut payload = 0u32.to_be_bytes().to_vec();
    payload.extend(code::NO_ERROR.to_be_bytes());
    conn.receive(&frame(GOAWAY, 0, 0, &payload)).unwrap();
    assert!(matches!(list(&conn.take_events())[..], [Event::Ping, Event::GoAway { last_stream: 0, code: code::NO_ERROR }]));
    conn.goaway(code::INTERNAL_ERROR);
    assert_eq!(goaways(&frames(&drain(&mut conn))), [(0, code::INTERNAL_ERROR)]);
    assert!(conn.is_done());
}

#[test]
fn an_http1_client_is_told_apart() {
    let mut conn = Connection::new(Config::default()).unwrap();
    assert_eq!(conn.receive(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Err(Error::BadPreface));
}

#[test]
fn bytes_in_any_pieces_make_the_same_events() {
    let mut input = preface();
    input.extend(post(1, false));
    input.extend(frame(DATA, END_STREAM, 1, b"hello"));
    input.extend(get(3, b"/two"));
    for size in [1, 2, 7, 9, 50] {
        let mut conn = Connection::new(Config::default()).unwrap();
        let mut seen = Vec::new();
        for piece in input.chunks(size) {
            conn.receive(piece).unwrap();
            let events = conn.take_events();
            for e in events.iter() {
                seen.push(match e {
                    Event::Request(r) => format!("req {} {}", r.stream, String::from_utf8_lossy(r.path)),
                    Event::Data { stream, data, end_stream } => format!("data {stream} {} {end_stream}", String::from_utf8_lossy(data)),
                    other => format!("{other:?}"),
                });
            }
        }
        let joined = seen.join("|").replace("false|data 1 ", "");
        assert!(joined.starts_with("req 1 /upload|data 1 "), "{size}: {joined}");
        assert!(joined.contains("req 3 /two"), "{size}: {joined}");
        let body: String = seen.iter().filter_map(|s| s.strip_prefix("data 1 ")).map(|s| s.trim_end_matches(" false").trim_end_matches(" true")).collect();
        assert_eq!(body, "hello", "{size}");
    }
}

#[test]
fn priority_frames_on_stream_0_or_depending_on_themselves_end_the_connection() {
    for (stream, spec) in [(0u32, [0u8, 0, 0, 1, 16]), (3, [0, 0, 0, 3, 16])] {
        let mut conn = connected(Config::default());
        let mut input = get(1, b"/");
        input.extend(frame(2, 0, stream, &spec));
        input.extend(get(5, b"/after"));
        assert!(matches!(conn.receive(&input), Err(Error::Connection(_))));
        let out = frames(&drain(&mut conn));
        assert_eq!(goaways(&out), [(1, code::PROTOCOL_ERROR)], "{out:?}");
        assert!(conn.is_done());
    }
    // A valid one changes nothing.
    let mut conn = connected(Config::default());
    conn.receive(&frame(2, 0, 3, &[0, 0, 0, 1, 16])).unwrap();
    conn.receive(&get(1, b"/")).unwrap();
    assert_eq!(conn.take_events().len(), 1);
}

#[test]
fn pseudo_headers_are_reported_in_the_order_they_came() {
    let mut conn = connected(Config::default());
    let mut block = Vec::new();
    literal(&mut block, b":path", b"/p");
    literal(&mut block, b":method", b"GET");
    literal(&mut block, b":authority", b"h");
    literal(&mut block, b":scheme", b"https");
    literal(&mut block, b"x-a", b"1");
    conn.receive(&frame(HEADERS, END_HEADERS | END_STREAM, 1, &block)).unwrap();
    let events = conn.take_events();
    let got = list(&events);
    let Event::Request(req) = &got[0] else { panic!("{got:?}") };
    let pseudo: Vec<_> = req.pseudo_headers().collect();
    assert_eq!(pseudo, [(&b":path"[..], &b"/p"[..]), (b":method", b"GET"), (b":authority", b"h"), (b":scheme", b"https")]);
    assert_eq!(req.headers.iter().collect::<Vec<_>>(), [(&b"x-a"[..], &b"1"[..])]);
}

#[test]
fn output_is_written_into_the_callers_buffer_up_to_its_limit() {
    let mut conn = connected(Config::default());
    conn.receive(&get(1, b"/")).unwrap();
    conn.take_events();
    conn.respond_with(1, 200, [(&b"content-type"[..], &b"text/plain"[..])], false).unwrap();
    conn.send_data(1, &[b'x'; 40_000], true).unwrap();
    let mut out = b"before".to_vec();
    let first = conn.write_output(&mut out, 20_000);
    assert!(first > 0 && out.len() >= 20_000 && out.starts_with(b"before"), "frames are appended until the limit is passed");
    let mut rest = Vec::new();
    while conn.write_output(&mut rest, usize::MAX) > 0 {}
    let mut all = out[6..].to_vec();
    all.extend(rest);
    let got = frames(&all);
    assert_eq!(got.iter().filter(|f| f.ty == DATA).map(|f| f.payload.len()).sum::<usize>(), 40_000);
    assert!(got.iter().any(|f| f.ty == DATA && f.flags & END_STREAM != 0));
}

#[test]
fn a_file_body_is_read_into_data_frames_as_the_window_allows() {
    use std::io::Write;
    let path = std::env::temp_dir().join(format!("cog-http2-file-{}", std::process::id()));
    let content: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::File::create(&path).unwrap().write_all(&content).unwrap();
    let mut conn = connected(Config::default());
    conn.receive(&get(1, b"/")).unwrap();
    conn.take_events();
    conn.respond(1, 200, &[], false).unwrap();
    conn.send_data(1, b"head-", false).unwrap();
    conn.send_file(1, std::fs::File::open(&path).unwrap(), 10, 80_000).unwrap();
    assert_eq!(conn.send_data(1, b"more", false), Err(Error::Stream(1)), "nothing but the end after a file");
    conn.send_data(1, b"", true).unwrap();
    let mut body = Vec::new();
    let mut ended = false;
    for _ in 0..10 {
        for f in frames(&drain(&mut conn)) {
            if f.ty == DATA {
                body.extend_from_slice(&f.payload);
                ended |= f.flags & END_STREAM != 0;
            }
        }
        // The client reads and reopens both windows.
        conn.receive(&frame(WINDOW_UPDATE, 0, 0, &65_535u32.to_be_bytes())).unwrap();
        conn.receive(&frame(WINDOW_UPDATE, 0, 1, &65_535u32.to_be_bytes())).unwrap();
    }
    std::fs::remove_file(&path).unwrap();
    assert!(ended);
    assert_eq!(&body[..5], b"head-");
    assert_eq!(&body[5..], &content[10..80_010]);
    let events = conn.take_events();
    assert!(list(&events).iter().any(|e| matches!(e, Event::Closed { stream: 1 })));
}

#[test]
fn a_response_that_ends_before_its_request_tells_the_client_to_stop_sending() {
    let mut conn = connected(Config::default());
    let mut input = post(1, false);
    input.extend(frame(DATA, 0, 1, b"part of a body"));
    conn.receive(&input).unwrap();
    conn.take_events();
    conn.respond(1, 413, &[], false).unwrap();
    conn.send_data(1, b"too large", true).unwrap();
    let out = frames(&drain(&mut conn));
    let kinds: Vec<_> = out.iter().map(|f| (f.ty, f.flags & END_STREAM)).collect();
    assert_eq!(kinds, [(HEADERS, 0), (DATA, END_STREAM), (RST_STREAM, 0)], "{out:?}");
    assert_eq!(resets(&out), [(1, code::NO_ERROR)]);
    let events = conn.take_events();
    assert!(matches!(list(&events)[..], [Event::Closed { stream: 1 }]), "answered whole");
    // A request that ended is not reset.
    conn.receive(&post(3, true)).unwrap();
    conn.take_events();
    conn.respond(3, 200, &[], true).unwrap();
    assert!(resets(&frames(&drain(&mut conn))).is_empty());
}

#[test]
fn a_body_that_disagrees_with_its_content_length_resets_its_stream_not_the_connection() {
    let mut conn = connected(Config::default());
    let with_length = |stream: u32, end_stream: bool| {
        frame(HEADERS, END_HEADERS | if end_stream { END_STREAM } else { 0 }, stream, &request_block(b"POST", b"/", &[(b"content-length", b"100")]))
    };
    // Shorter than declared, ended by an empty DATA frame (a client giving up on an upload).
    let mut input = with_length(1, false);
    input.extend(frame(DATA, 0, 1, b"half a bo"));
    input.extend(frame(DATA, END_STREAM, 1, b""));
    // Declared, but the head ends the stream.
    input.extend(with_length(3, true));
    // Shorter, ended by trailer fields.
    input.extend(with_length(5, false));
    input.extend(frame(DATA, 0, 5, b"abc"));
    let mut trailers = Vec::new();
    literal(&mut trailers, b"x-checksum", b"1");
    input.extend(frame(HEADERS, END_HEADERS | END_STREAM, 5, &trailers));
    input.extend(get(7, b"/after"));
    conn.receive(&input).unwrap();
    let out = frames(&drain(&mut conn));
    assert!(goaways(&out).is_empty(), "{out:?}");
    assert_eq!(resets(&out), [(1, code::PROTOCOL_ERROR), (3, code::PROTOCOL_ERROR), (5, code::PROTOCOL_ERROR)]);
    let events = conn.take_events();
    assert!(list(&events).iter().any(|e| matches!(e, Event::Request(r) if r.path == b"/after")), "the connection goes on");
    assert!(!list(&events).iter().any(|e| matches!(e, Event::Request(r) if r.stream == 3)), "a request reset as it came is not reported");
    // A body of the declared length is taken.
    let mut input = with_length(9, false);
    input.extend(frame(DATA, END_STREAM, 9, &[b'x'; 100]));
    conn.receive(&input).unwrap();
    assert!(resets(&frames(&drain(&mut conn))).is_empty());
}

#[test]
fn a_streams_window_update_of_zero_or_past_the_maximum_resets_the_stream_not_the_connection() {
    let mut conn = connected(Config::default());
    let mut input = post(1, false);
    input.extend(post(3, false));
    input.extend(frame(WINDOW_UPDATE, 0, 1, &0x7fff_ffffu32.to_be_bytes()));
    input.extend(frame(WINDOW_UPDATE, 0, 3, &0u32.to_be_bytes()));
    input.extend(frame(WINDOW_UPDATE, 0, 0, &1000u32.to_be_bytes()));
    // Cut inside the last frames: they are read once whole.
    let cut = input.len() - 20;
    conn.receive(&input[..cut]).unwrap();
    conn.receive(&input[cut..]).unwrap();
    conn.receive(&get(5, b"/after")).unwrap();
    let out = frames(&drain(&mut conn));
    assert!(goaways(&out).is_empty(), "{out:?}");
    assert_eq!(resets(&out), [(1, code::FLOW_CONTROL_ERROR), (3, code::PROTOCOL_ERROR)]);
    let events = conn.take_events();
    assert!(list(&events).iter().any(|e| matches!(e, Event::Request(r) if r.path == b"/after")));
    // On the connection, they are the connection's errors.
    conn.receive(&frame(WINDOW_UPDATE, 0, 0, &0u32.to_be_bytes())).unwrap_or(());
    assert_eq!(goaways(&frames(&drain(&mut conn))), [(5, code::PROTOCOL_ERROR)]);
}

#[test]
fn a_frame_after_the_clients_end_of_a_stream_ends_the_connection_whether_or_not_the_stream_has_closed() {
    for late in [frame(DATA, END_STREAM, 1, b"late"), get(1, b"/again")] {
        // Read with the request: the stream is half-closed (remote), nghttp2's own case.
        let mut conn = connected(Config::default());
        let mut input = get(1, b"/");
        input.extend(&late);
        assert!(matches!(conn.receive(&input), Err(Error::Connection(_))));
        answer_all(&mut conn, b"hello");
        assert_eq!(goaways(&frames(&drain(&mut conn))), [(1, code::STREAM_CLOSED)]);
        // Read once the request was answered and its stream closed: the same.
        let mut conn = connected(Config::default());
        conn.receive(&get(1, b"/")).unwrap();
        answer_all(&mut conn, b"hello");
        let out = frames(&drain(&mut conn));
        assert!(matches!(out.last(), Some(f) if f.ty == DATA && f.flags == END_STREAM), "{out:?}");
        assert!(matches!(list(&conn.take_events())[..], [Event::Closed { stream: 1 }]));
        assert!(matches!(conn.receive(&late), Err(Error::Connection(_))));
        assert_eq!(goaways(&frames(&drain(&mut conn))), [(1, code::STREAM_CLOSED)]);
        assert!(conn.is_done());
    }
    // Ended by the client's RST_STREAM (RFC 9113 §5.1 makes that a stream error; §5.4.1 lets it be the connection's).
    let mut conn = connected(Config::default());
    conn.receive(&post(1, false)).unwrap();
    conn.receive(&frame(RST_STREAM, 0, 1, &code::CANCEL.to_be_bytes())).unwrap();
    assert!(matches!(conn.receive(&frame(DATA, 0, 1, b"late")), Err(Error::Connection(_))));
    assert_eq!(goaways(&frames(&drain(&mut conn))), [(1, code::STREAM_CLOSED)]);
}

#[test]
fn late_frames_on_a_stream_the_server_reset_are_ignored() {
    let mut conn = connected(Config::default());
    conn.receive(&post(1, false)).unwrap();
    conn.take_events();
    conn.reset(1, code::CANCEL).unwrap();
    assert_eq!(resets(&frames(&drain(&mut conn))), [(1, code::CANCEL)]);
    conn.take_events();
    // What the client sent before it read the reset.
    let mut input = frame(DATA, 0, 1, b"in flight");
    input.extend(frame(DATA, END_STREAM, 1, b"end"));
    input.extend(frame(WINDOW_UPDATE, 0, 1, &1000u32.to_be_bytes()));
    input.extend(frame(RST_STREAM, 0, 1, &code::CANCEL.to_be_bytes()));
    input.extend(get(3, b"/after"));
    conn.receive(&input).unwrap();
    assert!(goaways(&frames(&drain(&mut conn))).is_empty());
    assert!(list(&conn.take_events()).iter().any(|e| matches!(e, Event::Request(r) if r.path == b"/after")), "the connection goes on");
    // Likewise a request still arriving when its response ended (RST_STREAM NO_ERROR).
    conn.respond(3, 204, &[], true).unwrap();
    conn.receive(&post(5, false)).unwrap();
    conn.take_events();
    conn.respond(5, 413, &[], true).unwrap();
    assert_eq!(resets(&frames(&drain(&mut conn))), [(5, code::NO_ERROR)]);
    conn.receive(&frame(DATA, END_STREAM, 5, b"in flight")).unwrap();
    assert!(goaways(&frames(&drain(&mut conn))).is_empty());
    assert!(!conn.is_done());
}

#[test]
fn a_request_on_a_stream_id_lower_than_one_already_opened_ends_the_connection() {
    let mut conn = connected(Config::default());
    conn.receive(&get(5, b"/")).unwrap();
    answer_all(&mut conn, b"hello");
    drain(&mut conn);
    assert!(matches!(conn.receive(&get(3, b"/lower")), Err(Error::Connection(_))));
    assert_eq!(goaways(&frames(&drain(&mut conn))), [(5, code::PROTOCOL_ERROR)]);
    assert!(!list(&conn.take_events()).iter().any(|e| matches!(e, Event::Request(_))));
}
