import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, test } from "node:test";
import { Cog, type CogOptions } from "../src/index.js";
// @ts-expect-error: a plain .mjs script, without types
import { h2spec } from "../scripts/h2spec.mjs";
import { makeCertificates, opensslSkip } from "./certificates.js";
import { engine } from "./helpers.js";

/**
 * h2spec's verdicts that Cog inherits from Node's HTTP/2 layer (nghttp2): a bare node:http2
 * server fails exactly these too (Node 20, h2spec 2.2.1). Each is the peer misbehaving, and
 * nghttp2 chooses leniency or a different error code:
 * - 5.1/8, 5.1/9, 5.1/11, 5.1/12: frames on a stream already closed are ignored for a while
 *   (they may have been in flight when it closed: RFC 9113 §5.1 allows it) instead of a
 *   STREAM_CLOSED error, so h2spec times out waiting for one.
 * - 5.1.1/2: a HEADERS on a stream id lower than the last is answered on its stream rather than
 *   with a connection-level PROTOCOL_ERROR.
 * - 6.7/2: an unsolicited PING ACK makes Node end the session, where h2spec expects it ignored.
 * - 6.9.1/2: a window grown past 2^31-1 gets GOAWAY, with an error code other than FLOW_CONTROL_ERROR.
 */
const INHERITED = new Set(["5.1/8", "5.1/9", "5.1/11", "5.1/12", "5.1.1/2", "6.7/2", "6.9.1/2"]);

const found = h2spec() as { path?: string; reason?: string };
const skip = engine !== "node" ? "HTTP/2 is served by the node engine" : found.path === undefined ? found.reason! : false;

/** The ids of the tests h2spec reports failed ("5.1/8"), from its text report. */
function failures(report: string): string[] {
  const failed: string[] = [];
  const tail = report.slice(report.indexOf("Failures:"));
  let section = "";
  for (const line of tail.split("\n")) {
    const heading = /^\s+(\d+(?:\.\d+)*)\. /.exec(line);
    if (heading !== null) section = heading[1]!;
    const cross = /^\s+× (\d+):/.exec(line);
    if (cross !== null) failed.push(`${section}/${cross[1]}`);
  }
  return failed;
}

async function conformance(options: CogOptions, tls: boolean): Promise<void> {
  const app = new Cog({ logErrors: false, ...options });
  app.get("/", (_req, res) => res.send("ok"));
  app.post("/", (_req, res) => res.send("ok"));
  const { port } = await app.listen(0, "127.0.0.1");
  try {
    // Asynchronously: the server answers from this process's event loop.
    const run = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      execFile(found.path!, ["-h", "127.0.0.1", "-p", String(port), "-o", "2", ...(tls ? ["-t", "-k"] : [])], { encoding: "utf8", timeout: 240_000 }, (_err, stdout, stderr) => resolve({ stdout, stderr }));
    });
    const report = run.stdout;
    assert.match(report, /\d+ tests, \d+ passed/, `h2spec ran: ${report.slice(-500)}${run.stderr}`);
    const unexpected = failures(report).filter((id) => !INHERITED.has(id));
    assert.deepEqual(unexpected, [], `h2spec failures beyond those of Node's own HTTP/2 layer:\n${report.slice(report.indexOf("Failures:"))}`);
  } finally {
    await app.close(100);
  }
}

describe("HTTP/2 conformance (h2spec)", { skip }, () => {
  test('http2: "h2c"', { timeout: 300_000 }, () => conformance({ http2: "h2c" }, false));
  test("http2: true, over TLS", { timeout: 300_000, skip: opensslSkip }, () => conformance({ http2: true, tls: makeCertificates().issue("localhost") }, true));
});
