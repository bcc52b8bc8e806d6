import type { SecureContextOptions } from "node:tls";

/**
 * What `new Cog({ tls })` takes: Node's secure-context options (`key`, `cert`, `ca`,
 * `passphrase`, `pfx`, `ciphers`, …), PEM strings or Buffers. TLS 1.2 is the oldest version
 * served: TLS 1.0 and 1.1 are refused (RFC 8996), and `minVersion` can only raise it.
 */
export interface TlsOptions extends SecureContextOptions {
  /** Ask clients for a certificate (mutual TLS); with `rejectUnauthorized`, refuse those without one `ca` signed. */
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
}

const REFUSED_VERSIONS = new Set(["TLSv1", "TLSv1.1"]);

/** The options as the TLS server takes them: checked, with TLS 1.2 as the floor. */
export function serverTlsOptions(tls: TlsOptions): TlsOptions {
  if (tls.minVersion !== undefined && REFUSED_VERSIONS.has(tls.minVersion)) {
    throw new RangeError(`tls.minVersion ${tls.minVersion} is refused: TLS 1.0 and 1.1 are deprecated (RFC 8996); use "TLSv1.2" (the default) or "TLSv1.3"`);
  }
  if (tls.pfx === undefined && (tls.key === undefined || tls.cert === undefined)) {
    throw new TypeError("tls needs a certificate and its private key: { key, cert } (PEM), or { pfx, passphrase }");
  }
  return { ...tls, minVersion: tls.minVersion ?? "TLSv1.2" };
}
