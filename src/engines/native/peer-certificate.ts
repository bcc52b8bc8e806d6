import { X509Certificate } from "node:crypto";
import type { PeerCertificate } from "node:tls";

/**
 * A client certificate (DER) as node:tls's `getPeerCertificate()` describes it, for the native
 * engine's `req.socket`: the same fields, in the same formats (node:crypto's X509Certificate
 * spells them as OpenSSL does), except the public key's details (`bits`, `pubkey`,
 * `modulus`/`exponent`, `asn1Curve`/`nistCurve`), which it leaves out.
 */
export function peerCertificate(der: Buffer): PeerCertificate {
  const x509 = new X509Certificate(der);
  const described: Partial<PeerCertificate> = {
    subject: names(x509.subject),
    issuer: names(x509.issuer),
    ca: x509.ca,
    valid_from: x509.validFrom,
    valid_to: x509.validTo,
    fingerprint: x509.fingerprint,
    fingerprint256: x509.fingerprint256,
    fingerprint512: x509.fingerprint512,
    serialNumber: x509.serialNumber,
    raw: der as PeerCertificate["raw"],
  };
  if (x509.subjectAltName !== undefined) described.subjectaltname = x509.subjectAltName;
  if (x509.infoAccess !== undefined) described.infoAccess = infoAccess(x509.infoAccess);
  return described as PeerCertificate;
}

/** `CN=client\nO=Example` as node:tls gives it: `{ CN: "client", O: "Example" }`, a repeated name's values in an array. */
function names(text: string): PeerCertificate["subject"] {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const line of text.split("\n")) {
    const at = line.indexOf("=");
    if (at <= 0) continue;
    const [name, value] = [line.slice(0, at), line.slice(at + 1)];
    const had = out[name];
    out[name] = had === undefined ? value : [had, value].flat();
  }
  return out as unknown as PeerCertificate["subject"];
}

/** `OCSP - URI:http://…\nCA Issuers - URI:http://…` as node:tls gives it: `{ "OCSP - URI": ["http://…"] }`. */
function infoAccess(text: string): NodeJS.Dict<string[]> {
  const out: NodeJS.Dict<string[]> = Object.create(null);
  for (const line of text.split("\n")) {
    const at = line.indexOf(":");
    if (at <= 0) continue;
    (out[line.slice(0, at)] ??= []).push(line.slice(at + 1));
  }
  return out;
}
