//! TLS on a server's connections, with rustls (the `ring` provider): HTTP/1.1 (ALPN
//! "http/1.1"), TLS 1.2 and 1.3 only. Only connections of a server made with `tls` carry a
//! `TlsConn`; a cleartext connection has none and pays one `None` check per read and write.
//!
//! The engine still reads and writes the socket itself (`serve.rs`, `write.rs`): what it reads
//! goes through `TlsConn::receive` into the connection's input as plaintext, and its output
//! (responses, file bodies, WebSocket frames) goes through `TlsConn::send` as records. A
//! certificate reload swaps the server's `Arc<ServerConfig>`: connections open keep the one
//! they were made with, new ones get the new one.

use crate::socket::{send, would_block};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};
use std::io::{self, Read, Write};
use std::os::raw::c_int;
use std::sync::Arc;

/// What `listen` and `set_tls` take (the JavaScript side checks and converts the app's options:
/// see `src/engines/native/tls.ts`).
#[napi_derive::napi(object)]
pub struct TlsOptions {
    /// The private key, unencrypted, as PEM (PKCS#8, PKCS#1 or SEC1).
    pub key: String,
    /// The certificate chain as PEM, the server's own first.
    pub cert: String,
    /// Certificates (PEM) that sign acceptable client certificates.
    pub ca: Option<String>,
    /// Ask clients for a certificate.
    pub request_cert: bool,
    /// With `request_cert`: refuse clients without a certificate `ca` signed.
    pub reject_unauthorized: bool,
    /// Serve TLS 1.2 (else 1.3 only).
    pub tls12: bool,
    /// Serve TLS 1.3 (else 1.2 only).
    pub tls13: bool,
}

/// The rustls configuration for a server's new connections.
pub fn server_config(options: &TlsOptions) -> Result<Arc<ServerConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = CertificateDer::pem_slice_iter(options.cert.as_bytes()).collect::<Result<Vec<_>, _>>().map_err(|e| format!("tls.cert is not a PEM certificate: {e}"))?;
    if certs.is_empty() {
        return Err("tls.cert holds no certificate: give the server's certificate as PEM (-----BEGIN CERTIFICATE-----)".into());
    }
    let key = PrivateKeyDer::from_pem_slice(options.key.as_bytes()).map_err(|e| format!("tls.key is not a PEM private key: {e}"))?;
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = [(options.tls13, &rustls::version::TLS13), (options.tls12, &rustls::version::TLS12)].into_iter().filter_map(|(on, v)| on.then_some(v)).collect();
    let builder = ServerConfig::builder_with_provider(provider.clone()).with_protocol_versions(&versions).map_err(|e| format!("tls: {e}"))?;
    let builder = if options.request_cert {
        let mut roots = RootCertStore::empty();
        for ca in CertificateDer::pem_slice_iter(options.ca.as_deref().unwrap_or("").as_bytes()) {
            roots.add(ca.map_err(|e| format!("tls.ca is not a PEM certificate: {e}"))?).map_err(|e| format!("tls.ca: {e}"))?;
        }
        if roots.is_empty() {
            return Err("tls.requestCert needs tls.ca: the certificates that sign acceptable client certificates (PEM)".into());
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
        let verifier = if options.reject_unauthorized { verifier } else { verifier.allow_unauthenticated() };
        builder.with_client_cert_verifier(verifier.build().map_err(|e| format!("tls.ca: {e}"))?)
    } else {
        builder.with_no_client_auth()
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| format!("tls.key and tls.cert: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// One connection's TLS state.
pub(crate) struct TlsConn {
    session: ServerConnection,
}

/// What `receive` found.
pub(crate) enum Received {
    /// Plaintext (maybe none yet: a handshake under way) went to the input.
    Data,
    /// The client closed its side (close_notify).
    Ended,
    /// The client broke the protocol, or failed the handshake: close the connection.
    Failed,
}

/// What `send` managed.
pub(crate) enum Sent {
    /// Everything given and every record made of it is on the socket.
    All,
    /// The socket is full: the rest goes on a writable event.
    Blocked,
    /// The socket failed: the connection must close.
    Failed,
}

impl TlsConn {
    pub(crate) fn new(config: &Arc<ServerConfig>) -> Option<Box<TlsConn>> {
        ServerConnection::new(config.clone()).ok().map(|session| Box::new(TlsConn { session }))
    }

    /// Takes bytes read from the socket and appends the plaintext they carry to `input`.
    pub(crate) fn receive(&mut self, mut ciphertext: &[u8], fd: c_int, input: &mut Vec<u8>) -> Received {
        loop {
            if self.session.read_tls(&mut ciphertext).is_err() {
                return Received::Failed;
            }
            if self.session.process_new_packets().is_err() {
                // rustls queued an alert saying why: send it, as a courtesy, before closing.
                let _ = self.push(fd);
                return Received::Failed;
            }
            match self.session.reader().read_to_end(input) {
                Ok(_) => return Received::Ended, // close_notify
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return Received::Failed,
            }
            if ciphertext.is_empty() {
                return Received::Data;
            }
        }
    }

    /// Encrypts `plain[*pos..]` and writes the records, as far as the socket takes them;
    /// `*pos` moves past what was taken.
    pub(crate) fn send(&mut self, fd: c_int, plain: &[u8], pos: &mut usize) -> Sent {
        loop {
            match self.push(fd) {
                Sent::All => {}
                other => return other,
            }
            if *pos == plain.len() {
                return Sent::All;
            }
            // rustls takes what fits its buffer (64 KiB of records by default); the rest waits here.
            match self.session.writer().write(&plain[*pos..]) {
                Ok(n) if n > 0 => *pos += n,
                _ => return Sent::Failed,
            }
        }
    }

    /// Tells the client the connection ends here (close_notify), as far as the socket takes it
    /// now: the end of a body framed by the connection's close is then told from a cut.
    pub(crate) fn close(&mut self, fd: c_int) {
        self.session.send_close_notify();
        let _ = self.push(fd);
    }

    /// Whether records (a handshake message, an alert, a response) wait to be written.
    pub(crate) fn has_output(&self) -> bool {
        self.session.wants_write()
    }

    /// Writes the records waiting, as far as the socket takes them.
    fn push(&mut self, fd: c_int) -> Sent {
        while self.session.wants_write() {
            match self.session.write_tls(&mut Socket(fd)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Sent::Blocked,
                Err(_) => return Sent::Failed,
            }
        }
        Sent::All
    }
}

/// The connection's socket as rustls writes records to it.
struct Socket(c_int);

impl Write for Socket {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = unsafe { send(self.0, bytes) };
        if n >= 0 {
            Ok(n as usize)
        } else if would_block() {
            Err(io::ErrorKind::WouldBlock.into())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
