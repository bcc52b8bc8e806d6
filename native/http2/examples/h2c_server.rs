//! An h2c (prior knowledge) server on the sans-IO connection, for real clients to try:
//!
//!   cargo run --release --manifest-path native/Cargo.toml -p cog-http2 --example h2c_server -- 8080
//!   curl --http2-prior-knowledge http://127.0.0.1:8080/
//!   h2load -n 10000 -c 4 -m 100 http://127.0.0.1:8080/
//!   h2spec -h 127.0.0.1 -p 8080

#[path = "../tests/common/server.rs"]
mod server;

fn main() {
    let port: u16 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind");
    println!("listening on {}", listener.local_addr().unwrap());
    server::listen(listener);
}
