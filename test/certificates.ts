// Throwaway certificates for the TLS tests, made with openssl at test time: a CA, and server
// certificates it signs for localhost and 127.0.0.1. Nothing is committed; the files live in a
// temporary directory removed when the process exits.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Why TLS tests can't run here (no openssl), or false. */
export const opensslSkip: string | false =
  spawnSync("openssl", ["version"]).status === 0 ? false : "openssl is not installed: the TLS tests make their certificates with it";

export interface Certificates {
  ca: string;
  /** A server certificate and key signed by `ca`. */
  issue(commonName: string): { key: string; cert: string };
}

export function makeCertificates(): Certificates {
  const dir = mkdtempSync(join(tmpdir(), "cog-tls-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  openssl(
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=Cog test CA",
  );
  writeFileSync(join(dir, "san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n");
  let serial = 1;
  return {
    ca: readFileSync(join(dir, "ca.crt"), "utf8"),
    issue(commonName) {
      const name = `server${serial}`;
      openssl(
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.csr`,
        "-subj",
        `/CN=${commonName}`,
      );
      openssl(
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-set_serial",
        String(serial++),
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        `${name}.crt`,
      );
      return { key: readFileSync(join(dir, `${name}.key`), "utf8"), cert: readFileSync(join(dir, `${name}.crt`), "utf8") };
    },
  };
}
