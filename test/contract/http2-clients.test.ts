// Real HTTP/2 clients against Cog: nghttp (nghttp2's client) and curl, each multiplexing 100
// streams on one connection, over cleartext (prior knowledge) and over TLS (ALPN h2), every body
// checked. The server counts the connections it served them on.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Cog } from "../../src/index.js";
import { makeCertificates, opensslSkip } from "../certificates.js";
import { serve } from "../helpers.js";

const missing = (tool: string, install: string) => (spawnSync(tool, ["--version"]).error === undefined ? false : `${tool} is not installed (${install})`);
const nghttpSkip = missing("nghttp", "apt-get install nghttp2-client");
const curlVersion = spawnSync("curl", ["--version"], { encoding: "utf8" }).stdout ?? "";
const curlSkip = missing("curl", "apt-get install curl") || (/\bHTTP2\b/.test(curlVersion) ? false : "this curl has no HTTP/2");
// curl before 8.0 fails the second stream of a prior-knowledge connection ("Error in the HTTP2
// framing layer", curl/curl#10634), whatever the server.
const curlH2cSkip =
  curlSkip ||
  (Number(/^curl (\d+)\./.exec(curlVersion)?.[1] ?? 0) >= 8 ? false : "curl before 8.0 fails a second stream on an h2c connection (curl/curl#10634)");

const STREAMS = 100;
/** Stream i's body: its number, then bytes enough to take several DATA frames for some. */
const body = (i: number) => `stream ${i}:` + String(i % 10).repeat(i * 397);

function routes(app: Cog, remotePorts: Set<number>): void {
  app.get("/n/:i", (req, res) => {
    remotePorts.add(req.socket.remotePort!);
    res.type("text/plain").send(body(Number(req.params.i)));
  });
  // Answered later, out of order, streamed: multiplexing's point.
  app.get("/later/:i", (req, res) => {
    remotePorts.add(req.socket.remotePort!);
    const i = Number(req.params.i);
    res.type("text/plain");
    res.write(body(i).slice(0, 5));
    setTimeout(() => res.end(body(i).slice(5)), (STREAMS - i) % 17);
  });
}

const run = (command: string, args: string[]) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : -1, stdout, stderr }),
    );
  });

const certs = opensslSkip === false ? makeCertificates() : null;

for (const mode of ["h2c", "h2"] as const) {
  const modeSkip = mode === "h2" ? opensslSkip : false;
  const served = async (t: { after(fn: () => unknown): void }, remotePorts: Set<number>) => {
    const tls = mode === "h2" ? certs!.issue("localhost") : undefined;
    const { port } = await serve(t, (app) => routes(app, remotePorts), { http2: mode === "h2" ? true : "h2c", tls });
    return `${mode === "h2" ? "https" : "http"}://127.0.0.1:${port}`;
  };
  const urls = (base: string, route: string) => Array.from({ length: STREAMS }, (_, i) => `${base}/${route}/${i}`);

  describe(`${STREAMS} streams on one ${mode} connection`, { skip: modeSkip }, () => {
    test("nghttp", { skip: nghttpSkip }, async (t) => {
      const remotePorts = new Set<number>();
      const base = await served(t, remotePorts);
      for (const route of ["n", "later"]) {
        // -n: bodies are not written out; -v: every frame is, DATA payload lengths included.
        const result = await run("nghttp", ["-v", "-n", "--max-concurrent-streams=100", ...urls(base, route)]);
        assert.equal(result.code, 0, result.stderr + result.stdout.slice(-2000));
        // Every stream answered 200, and its DATA frames add up to its body's length.
        const statuses = [...result.stdout.matchAll(/recv \(stream_id=(\d+)\) :status: (\d+)/g)].map((m) => [Number(m[1]), m[2]]);
        assert.equal(statuses.length, STREAMS, "one answer per stream");
        assert.ok(
          statuses.every(([, status]) => status === "200"),
          JSON.stringify(statuses.filter(([, s]) => s !== "200")),
        );
        const received = new Map<number, number>();
        for (const m of result.stdout.matchAll(/recv DATA frame <length=(\d+), flags=0x0[01], stream_id=(\d+)>/g))
          received.set(Number(m[2]), (received.get(Number(m[2])) ?? 0) + Number(m[1]));
        const lengths = [...received.entries()].sort((a, b) => a[0] - b[0]).map(([, n]) => n);
        // nghttp opens streams 13, 15, … in the order of its URLs.
        assert.deepEqual(
          lengths,
          Array.from({ length: STREAMS }, (_, i) => Buffer.byteLength(body(i))),
          route,
        );
      }
      assert.equal(remotePorts.size, 2, "one connection for each run of 100 streams");
    });

    test("curl --parallel", { skip: mode === "h2c" ? curlH2cSkip : curlSkip }, async (t) => {
      const remotePorts = new Set<number>();
      const base = await served(t, remotePorts);
      const dir = mkdtempSync(join(tmpdir(), "cog-curl-h2-"));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const config = join(dir, "urls");
      writeFileSync(
        config,
        urls(base, "later")
          .map((url, i) => `url = "${url}"\noutput = "${join(dir, `body-${i}`)}"\n`)
          .join(""),
      );
      const http = mode === "h2" ? ["--http2", "--cacert", join(dir, "ca.pem")] : ["--http2-prior-knowledge"];
      if (mode === "h2") writeFileSync(join(dir, "ca.pem"), certs!.ca);
      // --parallel-max 100: all at once, multiplexed on the one connection (curl waits to learn
      // that it can, rather than opening others: the default without --parallel-immediate).
      const result = await run("curl", ["-sS", "--fail", ...http, "--parallel", "--parallel-max", String(STREAMS), "--config", config]);
      assert.equal(result.code, 0, result.stderr);
      for (let i = 0; i < STREAMS; i++) assert.equal(readFileSync(join(dir, `body-${i}`), "utf8"), body(i), `stream ${i}`);
      assert.equal(remotePorts.size, 1, `curl used ${remotePorts.size} connections`);
    });
  });
}
