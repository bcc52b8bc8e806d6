//! Real HTTP/2 clients against the sans-IO connection served over TCP (tests/common/server.rs):
//! curl, nghttp multiplexing 100 streams on one connection, h2load. A client not installed is
//! reported and skipped (Debian: `apt-get install curl nghttp2-client`).
#[path = "common/server.rs"]
mod server;
use std::net::{SocketAddr, TcpListener};
use std::process::Command;
use std::sync::OnceLock;

fn server() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || server::listen(listener));
        addr
    })
}

/// Runs a client; None (and a note) when it is not installed.
fn run(program: &str, args: &[&str]) -> Option<std::process::Output> {
    match Command::new(program).args(args).output() {
        Ok(out) => {
            assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            Some(out)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipped: {program} is not installed");
            None
        }
        Err(e) => panic!("{program}: {e}"),
    }
}

#[test]
fn curl_gets_and_posts_over_h2c() {
    let base = format!("http://{}", server());
    let Some(out) = run("curl", &["-s", "--http2-prior-knowledge", "-w", " %{http_version} %{http_code}", &format!("{base}/")]) else { return };
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello, World! 2 200");
    // A body larger than the windows both ways: echoed whole.
    let body: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let file = std::env::temp_dir().join(format!("cog-http2-body-{}", std::process::id()));
    std::fs::write(&file, &body).unwrap();
    let out = run("curl", &["-s", "--http2-prior-knowledge", "--data-binary", &format!("@{}", file.display()), &format!("{base}/echo")]).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert!(out.stdout == body, "echoed {} bytes of {}", out.stdout.len(), body.len());
    let out = run("curl", &["-s", "--http2-prior-knowledge", &format!("{base}/big")]).unwrap();
    assert_eq!(out.stdout.len(), server::BIG);
}

#[test]
fn nghttp_multiplexes_100_streams_on_one_connection() {
    let base = format!("http://{}", server());
    let Some(out) = run("nghttp", &["-m", "100", &format!("{base}/hello")]) else { return };
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello, World!".repeat(100));
    // 100 bodies of 1 MiB at once: flow control and the streams' buffers under load.
    let out = run("nghttp", &["-m", "100", &format!("{base}/big")]).unwrap();
    assert_eq!(out.stdout.len(), 100 * server::BIG);
    assert!(out.stdout.iter().all(|&b| b == b'x'));
    // Statistics: 100 streams, all 200.
    let out = run("nghttp", &["-ns", "-m", "100", &format!("{base}/")]).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().filter(|l| l.contains(" 200 ")).count(), 100, "{text}");
}

#[test]
fn h2load_completes_every_request() {
    let base = format!("http://{}", server());
    let Some(out) = run("h2load", &["-n", "20000", "-c", "4", "-m", "100", &format!("{base}/")]) else { return };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("20000 total, 20000 started, 20000 done, 20000 succeeded, 0 failed, 0 errored, 0 timeout"), "{text}");
    assert!(text.contains("status codes: 20000 2xx"), "{text}");
}
