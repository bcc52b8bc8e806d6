//! TLS on a server's connections, with rustls (the `ring` provider): HTTP/1.1 (ALPN
//! "http/1.1"), and HTTP/2 (ALPN "h2", offered first) on a server that serves it; TLS 1.2 and
//! 1.3 only. Only connections of a server made with `tls` carry a
//! `TlsConn`; a cleartext connection has none and pays one `None` check per read and write.
//!
//! The engine still reads and writes the socket itself (`transport.rs`): what it reads goes
//! through `TlsConn::receive` into the connection's input as plaintext, and its output
//! (responses, file bodies, WebSocket frames) goes through `TlsConn::send` as records. A
//! certificate reload swaps the server's `Arc<ServerConfig>`: connections open keep the one
//! they were made with, new ones get the new one.

use super::socket::{send, would_block, Socket as RawSocket};
use crate::events::SocketFailure;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    CertificateError, DigitallySignedStruct, DistinguishedName, Error, InvalidMessage, RootCertStore, ServerConfig, ServerConnection, SignatureScheme,
};
use std::io::{self, Read, Write};
use std::sync::Arc;

/// A TLS server's options (the JavaScript side checks and converts the app's: see
/// `src/engines/native/tls.ts`).
pub struct TlsOptions {
    /// The private key, unencrypted, as PEM (PKCS#8, PKCS#1 or SEC1).
    pub key: String,
    /// The certificate chain as PEM, the server's own first.
    pub cert: String,
    /// Certificates (PEM) that sign acceptable client certificates.
    pub ca: Option<String>,
    /// Ask clients for a certificate.
    pub request_cert: bool,
    /// With `request_cert`: refuse clients without a certificate `ca` signed (else let them
    /// in, as node:tls does, and say whether theirs verified: `TlsConn::peer`).
    pub reject_unauthorized: bool,
    /// Serve TLS 1.2 (else 1.3 only).
    pub tls12: bool,
    /// Serve TLS 1.3 (else 1.2 only).
    pub tls13: bool,
    /// Offer HTTP/2 by ALPN ("h2" before "http/1.1").
    pub http2: bool,
}

/// A TLS server's configuration: what its new connections get (`set_tls` replaces it).
pub struct TlsServer {
    config: Arc<ServerConfig>,
    /// With `request_cert`: whether a client's certificate is one `ca` signed (see `TlsConn::peer`).
    client_verifier: Option<Arc<dyn ClientCertVerifier>>,
}

impl TlsServer {
    /// A copy of the rustls configuration (HTTP/3's endpoint sets its own ALPN on it).
    pub fn rustls_config(&self) -> ServerConfig {
        (*self.config).clone()
    }
}

/// The rustls configuration for a server's new connections.
pub fn server_config(options: &TlsOptions) -> Result<Arc<TlsServer>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = CertificateDer::pem_slice_iter(options.cert.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("tls.cert is not a PEM certificate: {e}"))?;
    if certs.is_empty() {
        return Err("tls.cert holds no certificate: give the server's certificate as PEM (-----BEGIN CERTIFICATE-----)".into());
    }
    let key = PrivateKeyDer::from_pem_slice(options.key.as_bytes()).map_err(|e| format!("tls.key is not a PEM private key: {e}"))?;
    let versions: Vec<&'static rustls::SupportedProtocolVersion> =
        [(options.tls13, &rustls::version::TLS13), (options.tls12, &rustls::version::TLS12)].into_iter().filter_map(|(on, v)| on.then_some(v)).collect();
    let builder = ServerConfig::builder_with_provider(provider.clone()).with_protocol_versions(&versions).map_err(|e| format!("tls: {e}"))?;
    let (builder, client_verifier) = if options.request_cert {
        let mut roots = RootCertStore::empty();
        for ca in CertificateDer::pem_slice_iter(options.ca.as_deref().unwrap_or("").as_bytes()) {
            roots.add(ca.map_err(|e| format!("tls.ca is not a PEM certificate: {e}"))?).map_err(|e| format!("tls.ca: {e}"))?;
        }
        if roots.is_empty() {
            return Err("tls.requestCert needs tls.ca: the certificates that sign acceptable client certificates (PEM)".into());
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider).build().map_err(|e| format!("tls.ca: {e}"))?;
        // Refusing: the handshake fails without a certificate `ca` signed. Not refusing, as
        // node:tls: any certificate (or none) is let in, and `peer` says whether it verified.
        let used: Arc<dyn ClientCertVerifier> = if options.reject_unauthorized { verifier.clone() } else { Arc::new(AnyClientCert(verifier.clone())) };
        (builder.with_client_cert_verifier(used), Some(verifier))
    } else {
        (builder.with_no_client_auth(), None)
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| format!("tls.key and tls.cert: {e}"))?;
    // The server's order wins: a client that offers both gets HTTP/2.
    config.alpn_protocols = if options.http2 { vec![b"h2".to_vec(), b"http/1.1".to_vec()] } else { vec![b"http/1.1".to_vec()] };
    Ok(Arc::new(TlsServer { config: Arc::new(config), client_verifier }))
}

/// `requestCert` without `rejectUnauthorized`: asks for a certificate and takes any, or none.
/// The client must still prove it holds the certificate's key (the handshake's signature is
/// checked as usual); whether `ca` signed it is the connection's `peer` to tell.
#[derive(Debug)]
struct AnyClientCert(Arc<dyn ClientCertVerifier>);

impl ClientCertVerifier for AnyClientCert {
    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.0.root_hint_subjects()
    }

    fn verify_client_cert(&self, _end_entity: &CertificateDer<'_>, _intermediates: &[CertificateDer<'_>], _now: UnixTime) -> Result<ClientCertVerified, Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// What a connection's client proved, as node:tls reports it on its sockets.
pub struct Peer {
    /// Its certificate verified against `ca` (node's `authorized`).
    pub authorized: bool,
    /// Why not, in OpenSSL's words (node's `authorizationError`); none when no certificate was asked for, or it verified.
    pub error: Option<&'static str>,
    /// Its certificate (DER), when it gave one.
    pub certificate: Option<Vec<u8>>,
}

/// One connection's TLS state.
pub(crate) struct TlsConn {
    session: ServerConnection,
    /// The server's, when it asks clients for a certificate.
    client_verifier: Option<Arc<dyn ClientCertVerifier>>,
}

/// What `receive` found.
pub(crate) enum Received {
    /// Plaintext (maybe none yet: a handshake under way) went to the input.
    Data,
    /// The client closed its side (close_notify).
    Ended,
    /// The client broke the protocol, or failed the handshake: close the connection, for this
    /// reason (`SocketFailure::Tls`).
    Broken(SocketFailure),
    /// The bytes could not be taken: close the connection.
    Failed,
}

/// What `send` managed.
pub(crate) enum Sent {
    /// Everything given and every record made of it is on the socket.
    All,
    /// The socket is full: the rest goes on a writable event.
    Blocked,
    /// The socket failed (with this errno; 0 when no write of it did): the connection must close.
    Failed(i32),
}

impl TlsConn {
    pub(crate) fn new(server: &TlsServer) -> Option<Box<TlsConn>> {
        let session = ServerConnection::new(server.config.clone()).ok()?;
        Some(Box::new(TlsConn { session, client_verifier: server.client_verifier.clone() }))
    }

    /// The client's certificate and whether it verified: checked when asked (few apps ask), so
    /// that no handshake pays for it; a server that refuses unverified clients checked it already.
    pub(crate) fn peer(&self) -> Peer {
        let Some(verifier) = &self.client_verifier else { return Peer { authorized: false, error: None, certificate: None } };
        let Some((end_entity, intermediates)) = self.session.peer_certificates().and_then(|chain| chain.split_first()) else {
            return Peer { authorized: false, error: Some("UNABLE_TO_GET_ISSUER_CERT"), certificate: None };
        };
        let error = verifier.verify_client_cert(end_entity, intermediates, UnixTime::now()).err().map(|e| openssl_reason(&e));
        Peer { authorized: error.is_none(), error, certificate: Some(end_entity.to_vec()) }
    }

    /// The protocol the handshake agreed on by ALPN (none before the handshake, or when the client offered none).
    pub(crate) fn alpn(&self) -> Option<&[u8]> {
        self.session.alpn_protocol()
    }

    /// Takes bytes read from the socket and appends the plaintext they carry to `input`.
    pub(crate) fn receive(&mut self, mut ciphertext: &[u8], fd: RawSocket, input: &mut Vec<u8>) -> Received {
        loop {
            if self.session.read_tls(&mut ciphertext).is_err() {
                return Received::Failed;
            }
            if let Err(error) = self.session.process_new_packets() {
                // rustls queued an alert saying why: send it, as a courtesy, before closing.
                let _ = self.push(fd);
                return Received::Broken(SocketFailure::Tls { code: openssl_code(&error), message: error.to_string() });
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
    pub(crate) fn send(&mut self, fd: RawSocket, plain: &[u8], pos: &mut usize) -> Sent {
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
                _ => return Sent::Failed(0),
            }
        }
    }

    /// Tells the client the connection ends here (close_notify), as far as the socket takes it
    /// now: the end of a body framed by the connection's close is then told from a cut.
    pub(crate) fn close(&mut self, fd: RawSocket) {
        self.session.send_close_notify();
        let _ = self.push(fd);
    }

    /// Whether records (a handshake message, an alert, a response) wait to be written.
    pub(crate) fn has_output(&self) -> bool {
        self.session.wants_write()
    }

    /// Writes the records waiting, as far as the socket takes them.
    fn push(&mut self, fd: RawSocket) -> Sent {
        while self.session.wants_write() {
            match self.session.write_tls(&mut Socket(fd)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Sent::Blocked,
                Err(e) => return Sent::Failed(super::sys::errno_of(&e)),
            }
        }
        Sent::All
    }
}

/// The connection's socket as rustls writes records to it.
struct Socket(RawSocket);

impl Write for Socket {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        // SAFETY: `send` reads within `bytes`; the descriptor is the connection's socket.
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

/// A verification failure in the words node:tls uses (OpenSSL's `X509_V_ERR_*` names), for the
/// failures a client certificate meets; anything else is a rejected certificate.
fn openssl_reason(error: &Error) -> &'static str {
    match error {
        Error::InvalidCertificate(e) => match e {
            // No issuer `ca` holds signed it: unknown, or one of the same name whose key did not sign it.
            CertificateError::UnknownIssuer | CertificateError::BadSignature => "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => "CERT_HAS_EXPIRED",
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => "CERT_NOT_YET_VALID",
            CertificateError::Revoked => "CERT_REVOKED",
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => "INVALID_PURPOSE",
            _ => "CERT_REJECTED",
        },
        _ => "CERT_REJECTED",
    }
}

/// The code node:tls's error has (OpenSSL's reason, as `ERR_SSL_…`) for what a client's broken
/// TLS makes rustls say, where the two name the same failure; else `ERR_SSL_` and the name of
/// rustls's error (`ERR_SSL_PEER_MISBEHAVED`), so that the code stays one per kind of failure.
fn openssl_code(error: &Error) -> String {
    let openssl = match error {
        Error::DecryptError => "DECRYPTION_FAILED_OR_BAD_RECORD_MAC",
        // As OpenSSL 3.5 (Node 22 and later) names bytes that are no TLS at all: it checks a
        // record's type first, as rustls does (OpenSSL 3.0, Node 20's, checks its version first,
        // and says WRONG_VERSION_NUMBER: docs/engines.md).
        Error::InvalidMessage(InvalidMessage::InvalidContentType) => "BAD_RECORD_TYPE",
        Error::InvalidMessage(InvalidMessage::UnknownProtocolVersion) => "WRONG_VERSION_NUMBER",
        Error::InvalidMessage(InvalidMessage::MessageTooLarge) => "PACKET_LENGTH_TOO_LONG",
        _ => "",
    };
    if !openssl.is_empty() {
        return format!("ERR_SSL_{openssl}");
    }
    // The variant's name, as its Debug output starts: `PeerMisbehaved(…)` becomes PEER_MISBEHAVED.
    let debug = format!("{error:?}");
    let mut code = String::from("ERR_SSL");
    for c in debug.chars().take_while(char::is_ascii_alphanumeric) {
        if c.is_ascii_uppercase() {
            code.push('_');
        }
        code.push(c.to_ascii_uppercase());
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(key: &str, cert: &str) -> TlsOptions {
        TlsOptions { key: key.into(), cert: cert.into(), ca: None, request_cert: false, reject_unauthorized: false, tls12: true, tls13: true, http2: false }
    }

    fn error_of(options: &TlsOptions) -> String {
        server_config(options).err().expect("refused")
    }

    #[test]
    fn what_is_not_pem_is_refused_naming_the_option() {
        assert!(error_of(&options("", "")).starts_with("tls.cert holds no certificate"));
        assert!(
            error_of(&options("", "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n")).starts_with("tls.cert is not a PEM certificate")
        );
    }

    #[test]
    fn client_certificates_need_the_authorities_that_sign_them() {
        // The ca is checked before the key and the certificate are paired, so any PEM certificate does.
        let cert = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        let key = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        let mut o = options(key, cert);
        o.request_cert = true;
        assert!(error_of(&o).starts_with("tls.requestCert needs tls.ca"), "{}", error_of(&o));
    }

    #[test]
    fn verification_failures_read_as_openssl_names_them() {
        assert_eq!(openssl_reason(&Error::InvalidCertificate(CertificateError::UnknownIssuer)), "UNABLE_TO_VERIFY_LEAF_SIGNATURE");
        assert_eq!(openssl_reason(&Error::InvalidCertificate(CertificateError::Expired)), "CERT_HAS_EXPIRED");
        assert_eq!(openssl_reason(&Error::InvalidCertificate(CertificateError::Revoked)), "CERT_REVOKED");
        assert_eq!(openssl_reason(&Error::General("x".into())), "CERT_REJECTED");
    }

    #[test]
    fn a_broken_record_is_coded_as_node_tls_codes_it_or_by_rustls_name() {
        // The first two as node:tls reports a record that does not decrypt, and bytes that are no record (Node 22+).
        assert_eq!(openssl_code(&Error::DecryptError), "ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC");
        assert_eq!(openssl_code(&Error::InvalidMessage(InvalidMessage::InvalidContentType)), "ERR_SSL_BAD_RECORD_TYPE");
        assert_eq!(openssl_code(&Error::InvalidMessage(InvalidMessage::UnknownProtocolVersion)), "ERR_SSL_WRONG_VERSION_NUMBER");
        assert_eq!(openssl_code(&Error::InvalidMessage(InvalidMessage::MessageTooLarge)), "ERR_SSL_PACKET_LENGTH_TOO_LONG");
        assert_eq!(openssl_code(&Error::InvalidMessage(InvalidMessage::InvalidCcs)), "ERR_SSL_INVALID_MESSAGE");
        assert_eq!(openssl_code(&Error::PeerMisbehaved(rustls::PeerMisbehaved::TooManyEmptyFragments)), "ERR_SSL_PEER_MISBEHAVED");
        assert_eq!(openssl_code(&Error::General("x".into())), "ERR_SSL_GENERAL");
    }
}
