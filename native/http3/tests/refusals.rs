//! Malformed frames, QPACK and messages refused with RFC 9114's and RFC 9204's codes, and
//! QUIC's defences (Retry, anti-amplification, 0-RTT refused).

mod common;

use std::sync::Arc;
use std::time::Duration;

use cog_http3::{code, frame, Config, Event};
use common::*;

const GET: [(&str, &str); 4] = [(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/")];

/// A request stream carrying `bytes`, ended; the connection's close code (None if still open).
fn on_request_stream(bytes: &[u8]) -> (Pair, u64) {
    let mut pair = connected(Config::default());
    pair.take();
    let stream = pair.raw_request(bytes, true);
    pair.drive();
    (pair, stream)
}

fn closes_with(bytes: &[u8], expect: u64) {
    let (pair, _) = on_request_stream(bytes);
    assert_eq!(pair.close_code(), Some(expect), "{:?}", pair.closed);
}

/// A stream error: the stream is reset with `expect`, the connection goes on, no request is
/// reported.
fn resets_with(bytes: &[u8], expect: u64) {
    let (mut pair, stream) = on_request_stream(bytes);
    assert_eq!(pair.close_code(), None, "{:?}", pair.closed);
    assert_eq!(pair.response(stream).reset, Some(expect));
    assert!(pair.take().iter().all(|e| !matches!(e, Event::Request(_))));
    let next = pair.get("/");
    pair.drive();
    assert!(pair.take().iter().any(|e| matches!(e, Event::Request(r) if r.stream == next)));
}

fn with_frame(ty: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = headers_frame(&GET);
    frame::write_header(ty, payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

#[test]
fn data_before_headers_is_frame_unexpected() {
    closes_with(&data_frame(b"x"), code::H3_FRAME_UNEXPECTED);
}

#[test]
fn control_frames_on_a_request_stream_are_frame_unexpected() {
    for ty in [frame::SETTINGS, frame::GOAWAY, frame::MAX_PUSH_ID, frame::CANCEL_PUSH, frame::PUSH_PROMISE] {
        closes_with(&with_frame(ty, &[0]), code::H3_FRAME_UNEXPECTED);
    }
}

#[test]
fn http2_frame_types_are_frame_unexpected() {
    for ty in [0x2, 0x6, 0x8, 0x9] {
        closes_with(&with_frame(ty, &[0, 0, 0, 0]), code::H3_FRAME_UNEXPECTED);
    }
}

#[test]
fn data_after_trailers_is_frame_unexpected() {
    let mut bytes = headers_frame(&GET);
    bytes.extend(headers_frame(&[("x", "1")]));
    bytes.extend(data_frame(b"late"));
    closes_with(&bytes, code::H3_FRAME_UNEXPECTED);
}

#[test]
fn unknown_frame_types_are_ignored() {
    let (mut pair, stream) = on_request_stream(&with_frame(0x21, b"grease"));
    assert_eq!(pair.close_code(), None);
    assert!(pair.take().iter().any(|e| matches!(e, Event::Request(r) if r.stream == stream && r.end_stream)));
}

#[test]
fn a_stream_ending_inside_a_frame_is_frame_error() {
    let bytes = headers_frame(&GET);
    closes_with(&bytes[..bytes.len() - 1], code::H3_FRAME_ERROR);
}

#[test]
fn a_stream_ending_without_headers_is_request_incomplete() {
    resets_with(&with_frame(0x21, b"")[headers_frame(&GET).len()..], code::H3_REQUEST_INCOMPLETE);
}

#[test]
fn dynamic_table_references_are_decompression_failed() {
    // Required Insert Count 1 (encoded 2), then an indexed dynamic entry.
    let section = [0x02, 0x00, 0x80];
    let mut bytes = Vec::new();
    frame::write_header(frame::HEADERS, section.len() as u64, &mut bytes);
    bytes.extend_from_slice(&section);
    closes_with(&bytes, code::QPACK_DECOMPRESSION_FAILED);
}

#[test]
fn bad_huffman_is_decompression_failed() {
    // :path with a Huffman value whose padding is zeros.
    let section = [0x00, 0x00, 0xd1, 0x51, 0x81, 0x00];
    let mut bytes = Vec::new();
    frame::write_header(frame::HEADERS, section.len() as u64, &mut bytes);
    bytes.extend_from_slice(&section);
    closes_with(&bytes, code::QPACK_DECOMPRESSION_FAILED);
}

#[test]
fn an_oversized_headers_frame_is_excessive_load() {
    let mut bytes = Vec::new();
    frame::write_header(frame::HEADERS, 1 << 20, &mut bytes);
    closes_with(&bytes, code::H3_EXCESSIVE_LOAD);
}

#[test]
fn malformed_requests_are_message_errors() {
    for fields in [
        vec![(":method", "GET"), (":scheme", "https"), (":authority", "a")], // no :path
        vec![(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/"), ("Upper", "x")],
        vec![(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/"), ("connection", "close")],
        vec![(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/"), ("x", "a\nb")],
        vec![(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/"), (":status", "200")],
        vec![("x", "1"), (":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/")],
    ] {
        resets_with(&headers_frame(&fields), code::H3_MESSAGE_ERROR);
    }
}

#[test]
fn a_body_longer_or_shorter_than_its_content_length_is_a_message_error() {
    let head = [(":method", "POST"), (":scheme", "https"), (":authority", "a"), (":path", "/"), ("content-length", "3")];
    for body in [&b"four"[..], b"tw"] {
        let mut bytes = headers_frame(&head);
        bytes.extend(data_frame(body));
        let (mut pair, stream) = on_request_stream(&bytes);
        assert_eq!(pair.close_code(), None);
        assert_eq!(pair.response(stream).reset, Some(code::H3_MESSAGE_ERROR));
        // The request was handed over: its reset is reported.
        let events = pair.take();
        assert!(events.iter().any(|e| matches!(e, Event::Reset { code: code::H3_MESSAGE_ERROR, .. })), "{events:?}");
    }
}

/// A connection whose client opens its control stream with `bytes`.
fn control_closes_with(bytes: &[u8], expect: u64) {
    let mut pair = Pair::new(Config::default());
    pair.open_control(bytes);
    assert_eq!(pair.close_code(), Some(expect), "{:?}", pair.closed);
}

fn control(frames: &[(u64, &[u8])]) -> Vec<u8> {
    let mut out = vec![frame::stream_type::CONTROL as u8];
    for (ty, payload) in frames {
        frame::write_header(*ty, payload.len() as u64, &mut out);
        out.extend_from_slice(payload);
    }
    out
}

#[test]
fn the_control_stream_must_begin_with_settings() {
    control_closes_with(&control(&[(frame::GOAWAY, &[0])]), code::H3_MISSING_SETTINGS);
    control_closes_with(&control(&[(0x21, b"")]), code::H3_MISSING_SETTINGS);
}

#[test]
fn a_second_settings_is_frame_unexpected() {
    control_closes_with(&control(&[(frame::SETTINGS, &[]), (frame::SETTINGS, &[])]), code::H3_FRAME_UNEXPECTED);
}

#[test]
fn request_frames_on_the_control_stream_are_frame_unexpected() {
    control_closes_with(&control(&[(frame::SETTINGS, &[]), (frame::DATA, b"x")]), code::H3_FRAME_UNEXPECTED);
    control_closes_with(&control(&[(frame::SETTINGS, &[]), (frame::HEADERS, &[0, 0])]), code::H3_FRAME_UNEXPECTED);
}

#[test]
fn http2_settings_are_settings_errors() {
    // SETTINGS_INITIAL_WINDOW_SIZE (0x4) is HTTP/2's; a setting given twice.
    control_closes_with(&control(&[(frame::SETTINGS, &[0x04, 0x00])]), code::H3_SETTINGS_ERROR);
    control_closes_with(&control(&[(frame::SETTINGS, &[0x06, 0x01, 0x06, 0x02])]), code::H3_SETTINGS_ERROR);
}

#[test]
fn closing_the_control_stream_is_closed_critical_stream() {
    let mut pair = connected(Config::default());
    pair.take();
    pair.control_bytes(&[]);
    let id = pair.conn.streams().open(cog_http3::quinn_proto::Dir::Uni).unwrap();
    let _ = id;
    // Finish the control stream (the first uni stream the client opened: id 2).
    let control = cog_http3::quinn_proto::StreamId::from(cog_http3::quinn_proto::VarInt::from_u32(2));
    pair.conn.send_stream(control).finish().unwrap();
    pair.drive();
    assert_eq!(pair.close_code(), Some(code::H3_CLOSED_CRITICAL_STREAM), "{:?}", pair.closed);
}

fn uni_stream_closes_with(bytes: &[u8], expect: Option<u64>) {
    let mut pair = connected(Config::default());
    pair.take();
    let id = pair.conn.streams().open(cog_http3::quinn_proto::Dir::Uni).unwrap();
    pair.conn.send_stream(id).write(bytes).unwrap();
    pair.drive();
    assert_eq!(pair.close_code(), expect, "{:?}", pair.closed);
}

#[test]
fn a_second_control_stream_is_stream_creation_error() {
    uni_stream_closes_with(&control(&[(frame::SETTINGS, &[])]), Some(code::H3_STREAM_CREATION_ERROR));
}

#[test]
fn a_push_stream_from_a_client_is_stream_creation_error() {
    uni_stream_closes_with(&[frame::stream_type::PUSH as u8, 0], Some(code::H3_STREAM_CREATION_ERROR));
}

#[test]
fn an_unknown_unidirectional_stream_is_ignored() {
    uni_stream_closes_with(&[0x21, 1, 2, 3], None);
}

#[test]
fn qpack_encoder_insertions_are_encoder_stream_errors() {
    // Set Dynamic Table Capacity 0 is fine; an insertion is not (the table holds nothing).
    uni_stream_closes_with(&[0x02, 0x20], None);
    uni_stream_closes_with(&[0x02, 0xc0, 0x01, 0x61], Some(code::QPACK_ENCODER_STREAM_ERROR));
    uni_stream_closes_with(&[0x02, 0x3f, 0x01], Some(code::QPACK_ENCODER_STREAM_ERROR));
}

#[test]
fn qpack_decoder_acknowledgements_are_decoder_stream_errors() {
    uni_stream_closes_with(&[0x03, 0x40], None);
    uni_stream_closes_with(&[0x03, 0x80], Some(code::QPACK_DECODER_STREAM_ERROR));
}

#[test]
fn the_client_proves_its_address_with_a_retry_token() {
    // QUIC v1 long header: form bit, fixed bit, type in bits 4-5 (3: Retry).
    let is_retry = |b: u8| b & 0x80 != 0 && (b >> 4) & 0x3 == 3;
    let pair = Pair::new(Config::default());
    assert!(pair.connected);
    assert!(is_retry(pair.server_firsts[0]), "{:x?}", pair.server_firsts);
    let pair = Pair::new(Config { validate_address: false, ..Config::default() });
    assert!(pair.connected);
    assert!(!pair.server_firsts.iter().any(|&b| is_retry(b)));
}

#[test]
fn an_unvalidated_address_gets_at_most_three_times_what_it_sent() {
    // A certificate chain too long for the first flight's 3x budget, and a client that sends
    // its Initial then nothing (a spoofed source address).
    let cert = certificate();
    let chain = vec![cert.chain[0].clone(); 12];
    let server = cog_http3::Endpoint::with_certificate(Config { validate_address: false, ..Config::default() }, chain, cert.key.clone_key()).unwrap();
    let mut client = client_config(&cert);
    let mut transport = cog_http3::quinn_proto::TransportConfig::default();
    transport.max_idle_timeout(Some(Duration::from_secs(30).try_into().unwrap()));
    client.transport_config(Arc::new(transport));
    let mut pair = Pair::with_held(server, client);
    pair.drive_for(Duration::from_secs(20));
    let (received, sent) = (pair.sent[0].1, pair.sent[1].1);
    assert!((1200..2400).contains(&received), "{received}");
    eprintln!("unvalidated: received {received} bytes, sent {sent}");
    assert!(sent > 0 && sent <= 3 * received, "sent {sent} for {received}");
    assert!(!pair.connected);
}

#[test]
fn zero_rtt_is_refused() {
    let cert = certificate();
    let server = cog_http3::Endpoint::with_certificate(Config::default(), cert.chain.clone(), cert.key.clone_key()).unwrap();
    // A client willing to send early data, keeping its session tickets across connections.
    let mut roots = cog_http3::rustls::RootCertStore::empty();
    roots.add(cert.chain[0].clone()).unwrap();
    let mut tls = cog_http3::rustls::ClientConfig::builder_with_provider(Arc::new(cog_http3::rustls::crypto::ring::default_provider()))
        .with_protocol_versions(&[&cog_http3::rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    tls.enable_early_data = true;
    let client =
        cog_http3::quinn_proto::ClientConfig::new(Arc::new(cog_http3::quinn_proto::crypto::rustls::QuicClientConfig::try_from(Arc::new(tls)).unwrap()));
    let mut pair = Pair::with(server, client.clone());
    assert!(pair.connected);
    pair.standard_control();
    pair.drive();
    pair.reconnect(client);
    // The session resumes, but its ticket allows no early data: nothing can be sent in 0-RTT.
    assert!(!pair.conn.has_0rtt());
    pair.drive();
    assert!(pair.connected);
    assert!(!pair.conn.accepted_0rtt());
}
