//! An endpoint's limits. QUIC's own (streams, windows, idle time, address validation) become
//! quinn-proto's transport and server settings; HTTP/3's are applied by this crate.

use std::time::Duration;

/// The limits and settings of an endpoint and of each of its connections.
#[derive(Clone, Debug)]
pub struct Config {
    /// Request streams a client may have open at once (QUIC's initial_max_streams_bidi: a
    /// client that opens more breaks QUIC's stream limit, STREAM_LIMIT_ERROR).
    pub max_concurrent_streams: u32,
    /// SETTINGS_MAX_FIELD_SECTION_SIZE, counted as RFC 9114 §4.2.2 does (name, value and 32
    /// bytes a field). A request past it is still delivered, flagged `too_large` with only the
    /// fields that fit, so the app answers 431 as it does on HTTP/1.1 and HTTP/2. A HEADERS
    /// frame more than twice as long is refused without decoding (H3_EXCESSIVE_LOAD).
    pub max_header_list_size: u64,
    /// QUIC's per-stream receive window: request body bytes a client may send ahead of what
    /// this crate has read.
    pub stream_receive_window: u32,
    /// QUIC's connection receive window, all streams together.
    pub connection_receive_window: u32,
    /// Response bytes of all streams sent and not yet acknowledged.
    pub send_window: u64,
    /// Request body bytes handed to the app and not yet `consume`d past which a stream is no
    /// longer read: its QUIC window then stays shut, which is how a slow app holds back a fast
    /// uploader.
    pub body_window: u64,
    /// Response bytes buffered on one stream past which `send_data` says to wait; `Drained`
    /// follows once the buffer is under it again.
    pub stream_high_water: usize,
    /// A connection with no packets for this long is closed (QUIC's max_idle_timeout).
    pub idle_timeout: Duration,
    /// Whether a client must prove its address with a Retry token before the server keeps any
    /// state for it or answers with more than the Retry (RFC 9000 §8.1.2). Without it, QUIC's
    /// anti-amplification limit (3x what the client sent) still holds until the handshake
    /// validates the address.
    pub validate_address: bool,
    /// Connections open at once; a new one past it is refused (CONNECTION_REFUSED).
    pub max_connections: usize,
    /// Datagrams one `poll_transmit` may give for one destination, as one buffer of equal
    /// segments (for UDP GSO); 1 when the socket sends one datagram a call.
    pub max_datagrams_per_transmit: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_concurrent_streams: 100,
            max_header_list_size: 16 * 1024,
            stream_receive_window: 256 * 1024,
            connection_receive_window: 1 << 20,
            send_window: 1 << 20,
            body_window: 64 * 1024,
            stream_high_water: 64 * 1024,
            idle_timeout: Duration::from_secs(30),
            validate_address: true,
            max_connections: 10_000,
            max_datagrams_per_transmit: 1,
        }
    }
}
