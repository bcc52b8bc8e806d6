//! Each of HTTP/2's known floods fed to a connection: what it answers, that it stays within
//! bounded memory, and (for the per-stream limits) that it goes on serving.
mod common;
use cog_http2::{code, Config, Connection, Error, Event, Rate};
use common::*;

/// Memory a connection may hold under any flood below: its buffers and nghttp2's state for the
/// streams it allows, far below what the floods send.
const BOUND: usize = 1 << 20;

fn requests(conn: &mut Connection) -> Vec<u32> {
    let events = conn.take_events();
    let ids = events.iter().filter_map(|e| if let Event::Request(r) = e { Some(r.stream) } else { None }).collect();
    conn.recycle(events);
    ids
}

/// `count` GETs on fresh streams from `first`.
fn gets(first: u32, count: u32) -> Vec<u8> {
    (0..count).flat_map(|i| get(first + 2 * i, b"/")).collect()
}

#[test]
fn streams_past_max_concurrent_streams_are_refused_and_cost_nothing() {
    // Before the client acknowledged the limit it may not know it: each stream past it is
    // refused (REFUSED_STREAM, retried by clients), and the connection goes on.
    let mut conn = connected(Config::default());
    conn.receive(&gets(1, 100)).unwrap();
    assert_eq!(requests(&mut conn).len(), 100);
    let before = conn.memory();
    let _ = conn.receive(&gets(201, 1000));
    assert!(requests(&mut conn).is_empty(), "no request past the limit");
    let out = frames(&drain(&mut conn));
    let refused = resets(&out);
    assert_eq!(refused.len(), 1000, "{:?}", goaways(&out));
    assert!(refused.iter().all(|&(s, c)| s > 199 && c == code::REFUSED_STREAM), "{refused:?}");
    assert!(conn.memory() <= before + 64 * 1024, "memory {} -> {}", before, conn.memory());
    // The streams open are still answered.
    for i in 0..100 {
        conn.respond(1 + 2 * i, 204, &[], true).unwrap();
    }
    let out = frames(&drain(&mut conn));
    assert_eq!(out.iter().filter(|f| f.ty == HEADERS).count(), 100);
}

#[test]
fn a_client_past_the_limit_it_acknowledged_loses_the_connection() {
    // Once acknowledged, nghttp2 (and so node:http2) takes a stream past the limit as the
    // connection's error: GOAWAY (PROTOCOL_ERROR), the streams before it named as processed.
    let mut conn = connected(Config::default());
    conn.receive(&frame(SETTINGS, ACK, 0, &[])).unwrap();
    conn.receive(&gets(1, 100)).unwrap();
    assert_eq!(requests(&mut conn).len(), 100);
    let _ = conn.receive(&gets(201, 10_000));
    assert!(requests(&mut conn).is_empty(), "no request past the limit");
    let out = frames(&drain(&mut conn));
    assert_eq!(goaways(&out), [(199, code::PROTOCOL_ERROR)]);
    assert!(conn.is_done());
    assert!(conn.memory() < BOUND);
}

#[test]
fn a_header_list_past_its_limit_is_flagged_and_holds_only_the_limit() {
    // Before the client acknowledged the limit, a list past it (within twice it) still reaches
    // the app, for a 431.
    let mut conn = connected(Config { max_header_list_size: 1024, ..Config::default() });
    let big = [b'v'; 100];
    let fields: Vec<(&[u8], &[u8])> = (0..10).map(|_| (&b"x-big"[..], &big[..])).collect();
    let block = request_block(b"GET", b"/", &fields);
    conn.receive(&frame(HEADERS, END_HEADERS | END_STREAM, 1, &block)).unwrap();
    let events = conn.take_events();
    let list: Vec<_> = events.iter().collect();
    let [Event::Request(req)] = &list[..] else { panic!("{list:?}") };
    assert!(req.too_large);
    let size: usize = req.headers.iter().map(|(n, v)| n.len() + v.len() + 32).sum();
    assert!(size <= 1024 && req.headers.len() < 10, "kept {size} bytes in {} fields", req.headers.len());
    drop(list);
    conn.recycle(events);
    conn.respond(1, 431, &[], true).unwrap();
    // The connection goes on.
    conn.receive(&get(3, b"/next")).unwrap();
    assert_eq!(requests(&mut conn), [3]);
}

/// An HPACK literal with incremental indexing (RFC 7541 §6.2.1), new name: the field enters
/// the dynamic table, at index 62 while it is the newest.
fn indexed_literal(block: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    block.push(0x40);
    hpack_integer(block, name.len(), 7, 0);
    block.extend_from_slice(name);
    hpack_integer(block, value.len(), 7, 0);
    block.extend_from_slice(value);
}

fn hpack_integer(block: &mut Vec<u8>, mut value: usize, bits: u32, mask: u8) {
    let max = (1usize << bits) - 1;
    if value < max {
        block.push(mask | value as u8);
        return;
    }
    block.push(mask | max as u8);
    value -= max;
    while value >= 128 {
        block.push((value & 127) as u8 | 128);
        value >>= 7;
    }
    block.push(value as u8);
}

/// A request that stores a 4,000-byte field in the table (answered), on stream 1.
fn store_a_large_field(conn: &mut Connection) {
    let mut block = request_block(b"GET", b"/", &[]);
    indexed_literal(&mut block, b"x-bomb", &[b'b'; 4000]);
    conn.receive(&frame(HEADERS, END_HEADERS | END_STREAM, 1, &block)).unwrap();
    assert_eq!(requests(conn), [1]);
    conn.respond(1, 204, &[], true).unwrap();
    drain(conn);
    // Its Closed event.
    let events = conn.take_events();
    conn.recycle(events);
}

/// A GET whose block is `refs` one-byte references to the field `store_a_large_field` stored.
fn references(stream: u32, refs: usize) -> Vec<u8> {
    let mut block = request_block(b"GET", b"/", &[]);
    block.extend(std::iter::repeat_n(0x80 | 62, refs));
    frame(HEADERS, END_HEADERS | END_STREAM, stream, &block)
}

#[test]
fn a_list_past_twice_its_limit_is_reset_before_the_limit_is_acknowledged() {
    let mut conn = connected(Config::default());
    store_a_large_field(&mut conn);
    // 5 references: 20 KB, past 16 KiB but within 32: a 431 to give.
    conn.receive(&references(3, 5)).unwrap();
    let events = conn.take_events();
    assert!(events.iter().any(|e| matches!(e, Event::Request(r) if r.too_large && r.stream == 3)));
    conn.recycle(events);
    // 510 references (2 MB decoded): reset at the ninth, past 32 KiB; the next request is read
    // with the table as the client left it.
    let mut input = references(5, 510);
    input.extend(references(7, 1));
    conn.receive(&input).unwrap();
    let events = conn.take_events();
    let list: Vec<_> = events.iter().collect();
    let [Event::Request(req)] = &list[..] else { panic!("{list:?}") };
    assert_eq!((req.stream, req.too_large, req.headers.get(b"x-bomb").map(<[u8]>::len)), (7, false, Some(4000)));
    drop(list);
    conn.recycle(events);
    let out = frames(&drain(&mut conn));
    assert_eq!(resets(&out), [(5, code::ENHANCE_YOUR_CALM)], "{out:?}");
    assert!(goaways(&out).is_empty());
}

#[test]
fn a_list_past_an_acknowledged_limit_is_reset_at_the_field_that_crosses_it() {
    let mut conn = connected(Config::default());
    conn.receive(&frame(SETTINGS, ACK, 0, &[])).unwrap();
    store_a_large_field(&mut conn);
    // The client knew the limit: past it, no 431, as node:http2 resets such a stream.
    let mut input = references(3, 5);
    input.extend(references(5, 16_000));
    input.extend(references(7, 3));
    conn.receive(&input).unwrap();
    assert_eq!(requests(&mut conn), [7]);
    let out = frames(&drain(&mut conn));
    assert_eq!(resets(&out), [(3, code::ENHANCE_YOUR_CALM), (5, code::ENHANCE_YOUR_CALM)], "{out:?}");
    assert!(goaways(&out).is_empty());
    assert!(conn.memory() < BOUND);
}

#[test]
fn a_client_that_keeps_sending_refused_header_lists_loses_the_connection() {
    let mut conn = connected(Config::default());
    conn.receive(&frame(SETTINGS, ACK, 0, &[])).unwrap();
    store_a_large_field(&mut conn);
    // The burst of 100 refusals, one at a time, each answered: the connection goes on.
    for i in 0..100u32 {
        conn.receive(&references(3 + 2 * i, 510)).unwrap();
        assert!(requests(&mut conn).is_empty());
        assert_eq!(resets(&frames(&drain(&mut conn))), [(3 + 2 * i, code::ENHANCE_YOUR_CALM)]);
    }
    // The next one ends it.
    assert_eq!(conn.receive(&references(203, 510)), Err(Error::Flooded));
    let out = frames(&drain(&mut conn));
    assert_eq!(goaways(&out), [(203, code::ENHANCE_YOUR_CALM)], "{out:?}");
    assert!(conn.is_done());
}

#[test]
fn requests_answered_431_count_as_refused_header_lists() {
    // Before the acknowledgement: lists past the limit reach the app (431), at the rate.
    let mut conn = connected(Config { refused_header_lists: Rate { burst: 3, per_second: 1 }, ..Config::default() });
    store_a_large_field(&mut conn);
    for i in 0..3u32 {
        conn.receive(&references(3 + 2 * i, 5)).unwrap();
        assert_eq!(requests(&mut conn), [3 + 2 * i]);
        conn.respond(3 + 2 * i, 431, &[], true).unwrap();
        drain(&mut conn);
    }
    assert_eq!(conn.receive(&references(9, 5)), Err(Error::Flooded));
    assert!(requests(&mut conn).is_empty());
    let out = frames(&drain(&mut conn));
    assert_eq!(goaways(&out).iter().map(|g| g.1).collect::<Vec<_>>(), [code::ENHANCE_YOUR_CALM], "{out:?}");
}

#[test]
fn too_many_fields_reset_the_stream_with_enhance_your_calm_and_the_connection_goes_on() {
    let mut conn = connected(Config::default());
    // 10,000 one-byte HPACK references to a static entry: a small block, many fields.
    let mut block = request_block(b"GET", b"/", &[]);
    block.extend(std::iter::repeat_n(0x90, 10_000)); // static index 16: accept-encoding: gzip, deflate
    let mut input = frame(HEADERS, END_HEADERS | END_STREAM, 1, &block[..16_000.min(block.len())]);
    input.extend(get(3, b"/after"));
    conn.receive(&input).unwrap();
    assert_eq!(requests(&mut conn), [3], "the flooded stream never reaches the app");
    let out = frames(&drain(&mut conn));
    assert_eq!(resets(&out).first(), Some(&(1, code::ENHANCE_YOUR_CALM)), "{out:?}");
    assert!(goaways(&out).is_empty());
    assert!(conn.memory() < BOUND);
}

#[test]
fn an_hpack_table_larger_than_announced_is_a_compression_error() {
    let mut conn = connected(Config::default());
    conn.receive(&frame(SETTINGS, ACK, 0, &[])).unwrap();
    // A dynamic table size update to 1 MiB (5-bit prefix integer), over the 4,096 allowed.
    let mut block = vec![0x3f, 0xe1, 0xff, 0x3f];
    block.extend(request_block(b"GET", b"/", &[]));
    let result = conn.receive(&frame(HEADERS, END_HEADERS | END_STREAM, 1, &block));
    assert!(requests(&mut conn).is_empty());
    let out = frames(&drain(&mut conn));
    assert_eq!(goaways(&out).iter().map(|g| g.1).collect::<Vec<_>>(), [code::COMPRESSION_ERROR], "{result:?} {out:?}");
    assert!(conn.is_done());
}

#[test]
fn an_hpack_table_filled_over_and_over_stays_within_its_size() {
    let mut conn = connected(Config::default());
    let value = vec![b'a'; 100];
    let mut seen = 0;
    for round in 0..2000u32 {
        // Literal with incremental indexing, a new name each time: every field enters the table.
        let name = format!("x-{round}");
        let mut block = request_block(b"GET", b"/", &[]);
        block.push(0x40);
        block.push(name.len() as u8);
        block.extend_from_slice(name.as_bytes());
        block.push(value.len() as u8);
        block.extend_from_slice(&value);
        conn.receive(&frame(HEADERS, END_HEADERS | END_STREAM, 1 + 2 * round, &block)).unwrap();
        for id in requests(&mut conn) {
            conn.respond(id, 204, &[], true).unwrap();
            seen += 1;
        }
        drain(&mut conn);
        assert!(conn.memory() < BOUND, "round {round}: {}", conn.memory());
    }
    assert_eq!(seen, 2000);
}

#[test]
fn a_continuation_flood_ends_the_connection_with_enhance_your_calm() {
    let mut conn = connected(Config::default());
    let block = request_block(b"GET", b"/", &[]);
    let mut input = frame(HEADERS, 0, 1, &block);
    let empty = frame(CONTINUATION, 0, 1, &[]);
    for _ in 0..100_000 {
        input.extend_from_slice(&empty);
    }
    assert_eq!(conn.receive(&input), Err(Error::Flooded));
    assert!(requests(&mut conn).is_empty());
    let out = frames(&drain(&mut conn));
    assert_eq!(goaways(&out), [(1, code::ENHANCE_YOUR_CALM)], "{out:?}");
    assert!(conn.is_done());
    assert!(conn.memory() < BOUND);
    // More of the same is ignored.
    let _ = conn.receive(&input);
    assert!(drain(&mut conn).is_empty());
}

#[test]
fn continuations_within_the_limit_make_one_request() {
    let mut conn = connected(Config::default());
    let block = request_block(b"GET", b"/split", &[(b"x-a", b"1")]);
    let (a, b) = block.split_at(10);
    let mut input = frame(HEADERS, END_STREAM, 1, a);
    for _ in 0..6 {
        input.extend(frame(CONTINUATION, 0, 1, &[]));
    }
    input.extend(frame(CONTINUATION, END_HEADERS, 1, b));
    conn.receive(&input).unwrap();
    let events = conn.take_events();
    let list: Vec<_> = events.iter().collect();
    let [Event::Request(req)] = &list[..] else { panic!("{list:?}") };
    assert_eq!((req.path, req.headers.get(b"x-a")), (&b"/split"[..], Some(&b"1"[..])));
}

#[test]
fn rapid_reset_ends_the_connection_with_enhance_your_calm_and_no_request_reaches_the_app() {
    let mut conn = connected(Config::default());
    let mut input = Vec::new();
    for i in 0..5000u32 {
        input.extend(get(1 + 2 * i, b"/"));
        input.extend(frame(RST_STREAM, 0, 1 + 2 * i, &code::CANCEL.to_be_bytes()));
    }
    assert_eq!(conn.receive(&input), Err(Error::Flooded));
    let events = conn.take_events();
    assert!(events.is_empty(), "requests reset in the batch that opened them are dropped: {:?}", events.iter().take(3).collect::<Vec<_>>());
    let out = frames(&drain(&mut conn));
    let goaway = goaways(&out);
    assert_eq!(goaway.len(), 1, "{goaway:?}");
    assert_eq!(goaway[0].1, code::ENHANCE_YOUR_CALM);
    assert!(goaway[0].0 <= 2 * 1001 + 1, "the last stream is the one past the burst of 1,000: {}", goaway[0].0);
    assert!(conn.is_done());
    assert!(conn.memory() < BOUND);
}

#[test]
fn resets_within_the_rate_are_reported_for_requests_already_handed_over() {
    let mut conn = connected(Config { resets: Rate { burst: 10, per_second: 1 }, ..Config::default() });
    for i in 0..5u32 {
        conn.receive(&get(1 + 2 * i, b"/")).unwrap();
        assert_eq!(requests(&mut conn), [1 + 2 * i]);
        conn.receive(&frame(RST_STREAM, 0, 1 + 2 * i, &code::CANCEL.to_be_bytes())).unwrap();
        let events = conn.take_events();
        let list: Vec<_> = events.iter().collect();
        assert!(matches!(list[..], [Event::Reset { code: code::CANCEL, .. }]), "{list:?}");
    }
    assert_eq!(conn.open_streams(), 0);
    assert!(goaways(&frames(&drain(&mut conn))).is_empty());
}

#[test]
fn a_ping_flood_ends_the_connection_with_enhance_your_calm() {
    let mut conn = connected(Config::default());
    let ping = frame(PING, 0, 0, &[7; 8]);
    let mut input = Vec::new();
    for _ in 0..5000 {
        input.extend_from_slice(&ping);
    }
    // Read as a client that reads its answers would: in pieces, output written between.
    let mut result = Ok(());
    let mut acks = 0;
    for piece in input.chunks(17 * 100) {
        result = conn.receive(piece);
        acks += frames(&drain(&mut conn)).iter().filter(|f| f.ty == PING).count();
        if result.is_err() {
            break;
        }
    }
    assert_eq!(result, Err(Error::Flooded));
    assert!((1000..=1100).contains(&acks), "pings answered before the limit: {acks}");
    assert!(conn.is_done());
    assert!(conn.memory() < BOUND);
}

#[test]
fn pings_a_client_does_not_read_are_bounded_by_the_queued_acks() {
    // No rate limit: only the queue of unread acknowledgements stops this one.
    let mut conn = connected(Config { pings: Rate { burst: u32::MAX, per_second: u32::MAX }, ..Config::default() });
    let ping = frame(PING, 0, 0, &[7; 8]);
    let mut result = Ok(());
    for _ in 0..100 {
        let mut input = Vec::new();
        for _ in 0..1000 {
            input.extend_from_slice(&ping);
        }
        result = conn.receive(&input);
        assert!(conn.memory() < BOUND, "{}", conn.memory());
        if result.is_err() {
            break;
        }
    }
    assert_eq!(result, Err(Error::Flooded));
    let out = frames(&drain(&mut conn));
    assert!(out.iter().filter(|f| f.ty == PING).count() <= 1001);
    assert_eq!(goaways(&out).last().map(|g| g.1), Some(code::ENHANCE_YOUR_CALM));
}

#[test]
fn a_settings_flood_ends_the_connection_with_enhance_your_calm() {
    let mut conn = connected(Config::default());
    // SETTINGS_INITIAL_WINDOW_SIZE changes: each one makes work for every stream.
    let settings = frame(SETTINGS, 0, 0, &[0, 4, 0, 1, 0, 0]);
    let mut result = Ok(());
    let mut n = 0;
    while n < 10_000 && result.is_ok() {
        result = conn.receive(&settings);
        drain(&mut conn);
        n += 1;
    }
    assert_eq!(result, Err(Error::Flooded));
    assert!((100..=102).contains(&n), "the burst of 100 then refused: {n}");
    assert!(conn.is_done());
    assert!(conn.memory() < BOUND);
}

#[test]
fn a_settings_frame_with_too_many_entries_ends_the_connection() {
    let mut conn = connected(Config::default());
    let payload: Vec<u8> = (0..100).flat_map(|_| [0, 4, 0, 1, 0, 0]).collect();
    let _ = conn.receive(&frame(SETTINGS, 0, 0, &payload));
    let out = frames(&drain(&mut conn));
    assert_eq!(goaways(&out).iter().map(|g| g.1).collect::<Vec<_>>(), [code::ENHANCE_YOUR_CALM], "{out:?}");
    assert!(conn.is_done());
}
