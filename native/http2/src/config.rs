//! A connection's limits, each one of HTTP/2's known ways to make a server work or hold memory
//! for nothing. The defaults are node:http2's where it has one (the node engine serves HTTP/2
//! through it), so that both engines refuse the same things.

use crate::rate::Rate;

/// The limits and settings of one connection. `Config::default()` is what a server should use
/// unless an application option says otherwise.
#[derive(Clone, Debug)]
pub struct Config {
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams a client may have open at once. A HEADERS past it
    /// is refused with RST_STREAM (REFUSED_STREAM) and costs the app nothing.
    pub max_concurrent_streams: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE, counted as RFC 9113 §6.5.2 does (name, value and 32 bytes a
    /// field). Before the client has acknowledged it (it may not know it yet), a request past it
    /// is still delivered, flagged `too_large` and holding only the fields that fit, so the app
    /// answers 431 as it does on HTTP/1.1, while its list stays within twice the size; past that,
    /// or past the size once acknowledged, the stream is reset (ENHANCE_YOUR_CALM) at the field
    /// that crosses it, as node:http2 does, and nghttp2 decodes the rest of the block without
    /// checking or calling back per field. So a block of one-byte HPACK references to a large
    /// table entry costs the checks of at most twice this size, not of every reference.
    pub max_header_list_size: u32,
    /// Fields decoded in one header block before the stream is reset (ENHANCE_YOUR_CALM), as
    /// node:http2's `maxHeaderListPairs`: an HPACK block of one-byte references to a small table
    /// entry would otherwise cost a callback per reference.
    pub max_header_pairs: u32,
    /// Requests refused for their header list (reset past `max_header_pairs` or the size above,
    /// or delivered `too_large`) a client may send: past the rate, GOAWAY (ENHANCE_YOUR_CALM). A
    /// client that keeps sending lists the server refuses is flooding it, as node:http2 reads
    /// a run of streams it rejects (`maxSessionRejectedStreams`, 100).
    pub refused_header_lists: Rate,
    /// SETTINGS_HEADER_TABLE_SIZE: the HPACK dynamic table the client may fill in our decoder.
    pub header_table_size: u32,
    /// The most our HPACK encoder keeps, whatever larger table the client offers.
    pub encoder_table_size: u32,
    /// SETTINGS_INITIAL_WINDOW_SIZE: request body bytes a client may send on a stream before the
    /// app consumes them (see `Connection::consume`).
    pub initial_window_size: u32,
    /// The connection's receive window: request body bytes of all streams before the app
    /// consumes them.
    pub connection_window_size: u32,
    /// SETTINGS_MAX_FRAME_SIZE.
    pub max_frame_size: u32,
    /// CONTINUATION frames after one HEADERS before the connection is closed (the CONTINUATION
    /// flood, CVE-2024-27316 and relatives: empty CONTINUATIONs cost a parse each and, without
    /// this, never end).
    pub max_continuations: usize,
    /// Entries one SETTINGS frame may carry.
    pub max_settings_entries: usize,
    /// PING and SETTINGS acknowledgements queued for a client that does not read them before
    /// the connection is closed (a flood that grows the server's output).
    pub max_queued_acks: usize,
    /// RST_STREAM frames a client may send (rapid reset, CVE-2023-44487): past the rate, GOAWAY
    /// (ENHANCE_YOUR_CALM). node:http2's `streamResetBurst`/`streamResetRate` defaults.
    pub resets: Rate,
    /// PING frames a client may send: past the rate, GOAWAY (ENHANCE_YOUR_CALM).
    pub pings: Rate,
    /// SETTINGS frames a client may send: past the rate, GOAWAY (ENHANCE_YOUR_CALM).
    pub settings: Rate,
    /// Response body bytes buffered on one stream past which `send_data` says to wait; a
    /// `Drained` event follows once the buffer is under it again.
    pub stream_high_water: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_concurrent_streams: 100,
            max_header_list_size: 16 * 1024,
            // node:http2's default maxHeaderListPairs.
            max_header_pairs: 128,
            refused_header_lists: Rate { burst: 100, per_second: 10 },
            header_table_size: 4096,
            encoder_table_size: 4096,
            initial_window_size: 65_535,
            connection_window_size: 1 << 20,
            max_frame_size: 16_384,
            max_continuations: 8,
            max_settings_entries: 32,
            max_queued_acks: 1000,
            resets: Rate { burst: 1000, per_second: 33 },
            pings: Rate { burst: 1000, per_second: 100 },
            settings: Rate { burst: 100, per_second: 10 },
            stream_high_water: 64 * 1024,
        }
    }
}
