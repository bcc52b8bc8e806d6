import { createPrivateKey } from "node:crypto";
import { serverTlsOptions, type TlsOptions } from "../../base/tls.js";
import type { NativeTlsOptions } from "../kit/addon.js";

type Pem = string | Buffer | { pem: string | Buffer; passphrase?: string } | KeyObjectLike;
interface KeyObjectLike {
  export(options: { type: "pkcs8"; format: "pem" }): string | Buffer;
  readonly type: string;
}

const NOT_ON_NATIVE = ["pfx", "ciphers", "ecdhCurve", "sigalgs", "dhparam", "secureOptions", "secureProtocol", "privateKeyEngine", "privateKeyIdentifier", "crl", "sessionIdContext", "ticketKeys", "clientCertEngine"] as const;

/**
 * The app's `tls` options as the native engine (rustls) takes them: checked as on the node
 * engine, the key decrypted here with its passphrase (node:crypto) and handed over as
 * unencrypted PKCS#8 PEM, so the addon never sees a password; certificates as PEM text.
 * Options that only OpenSSL understands are refused with a way out, not ignored.
 */
export function nativeTlsOptions(options: TlsOptions): NativeTlsOptions {
  const tls = serverTlsOptions(options);
  const unsupported = NOT_ON_NATIVE.filter((name) => tls[name] !== undefined);
  if (unsupported.length > 0) {
    throw new RangeError(`tls.${unsupported.join(", tls.")} ${unsupported.length > 1 ? "are" : "is"} not supported by the native engine (rustls picks its own safe cipher suites and curves): give { key, cert } as PEM, or use engine: "node"`);
  }
  const keys = [tls.key].flat() as Pem[];
  if (keys.length !== 1) throw new RangeError(`the native engine serves one certificate: tls.key must be one private key (got ${keys.length})`);
  const [key] = keys as [Pem];
  const pem = typeof key === "string" || Buffer.isBuffer(key) ? key : "pem" in key ? key.pem : null;
  const passphrase = typeof key === "object" && !Buffer.isBuffer(key) && "passphrase" in key ? key.passphrase ?? tls.passphrase : tls.passphrase;
  const keyObject = pem === null ? (key as KeyObjectLike) : readKey(pem, passphrase);
  return {
    key: keyObject.export({ type: "pkcs8", format: "pem" }).toString(),
    cert: pemText(tls.cert, "cert"),
    ca: tls.ca === undefined ? undefined : pemText(tls.ca, "ca"),
    requestCert: tls.requestCert ?? false,
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
    tls12: tls.minVersion !== "TLSv1.3",
    tls13: tls.maxVersion !== "TLSv1.2",
  };
}

function pemText(value: TlsOptions["cert"], name: string): string {
  return ([value].flat() as unknown[])
    .map((part) => {
      if (typeof part === "string") return part;
      if (Buffer.isBuffer(part)) return part.toString("latin1");
      throw new TypeError(`tls.${name} must be PEM text (a string or a Buffer), or an array of them`);
    })
    .join("\n");
}

function readKey(pem: string | Buffer, passphrase: string | undefined): KeyObjectLike {
  try {
    return createPrivateKey({ key: pem, passphrase });
  } catch (err) {
    const hint = passphrase === undefined ? "; an encrypted key needs its tls.passphrase" : "; is tls.passphrase the key's?";
    throw new TypeError(`tls.key could not be read (${(err as Error).message})${hint}`);
  }
}
