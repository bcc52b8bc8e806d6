// A throw-away key and self-signed certificate for 127.0.0.1 and localhost (openssl), valid for a
// day, for the bench's TLS listeners (the serving scenarios, production-stack's edge).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Resolves { dir, key, cert (paths), pem (the certificate) }; the caller removes `dir`. */
export function makeCertificate() {
  const dir = mkdtempSync(join(tmpdir(), "cog-bench-tls-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      "key.pem",
      "-out",
      "cert.pem",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { cwd: dir, stdio: "ignore" },
  );
  return { dir, key: join(dir, "key.pem"), cert: join(dir, "cert.pem"), pem: readFileSync(join(dir, "cert.pem")) };
}
