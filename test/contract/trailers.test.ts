// Response trailers (`res.addTrailers`, node:http's API) on every protocol of both engines: after
// the body on HTTP/2 (h2c and h2 over TLS; a last HEADERS frame with END_STREAM), read by
// node:http2's client and by nghttp; on HTTP/1.1 after the last chunk of a chunked body, as
// node:http sends them (whatever the request's TE said; a body framed by its length has none).
// Request trailers: `req.trailers` and `req.rawTrailers` once the body has ended, on HTTP/2 and on
// a chunked HTTP/1.1 body.
import assert from "node:assert/strict";
import { spawnSync, execFile } from "node:child_process";
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from "node:http2";
import { describe, test } from "node:test";
import type { Cog } from "../../src/index.js";
import { makeCertificates, opensslSkip } from "../certificates.js";
import { raw, serve } from "../helpers.js";

const nghttpSkip = spawnSync("nghttp", ["--version"]).error === undefined ? false : "nghttp is not installed (apt-get install nghttp2-client)";
const certs = opensslSkip === false ? makeCertificates() : null;

function routes(app: Cog): void {
  // Streamed: the body in pieces, then the trailers.
  app.get("/streamed", (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain", trailer: "x-checksum, x-count" });
    res.write("one ");
    res.write("two");
    res.addTrailers({ "X-Checksum": "abc123", "x-count": ["1", "2"] });
    res.end();
  });
  // A whole body with trailers: on HTTP/2 they follow it; on HTTP/1.1 only when a Trailer header declared them.
  app.get("/whole", (_req, res) => {
    res.setHeader("content-type", "text/plain");
    res.addTrailers({ "grpc-status": "0" });
    res.end("whole");
  });
  app.get("/whole-declared", (_req, res) => {
    res.setHeader("content-type", "text/plain");
    res.setHeader("trailer", "grpc-status");
    res.addTrailers({ "grpc-status": "0" });
    res.end("whole");
  });
  // Framed by its length: no room for trailers on HTTP/1.1.
  app.get("/length", (_req, res) => {
    res.writeHead(200, { "content-length": "4" });
    res.addTrailers({ "x-late": "1" });
    res.end("four");
  });
  // The request's trailers, read once its body has ended.
  app.post("/echo-trailers", { body: "stream" } as never, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const { trailers, rawTrailers } = req as unknown as { trailers: Record<string, unknown>; rawTrailers: string[] };
      res.json({ body: Buffer.concat(chunks).toString(), trailers, rawTrailers });
    });
  });
  // Refused names and values: Node's errors (node:http2 checks names only; nghttp2 refuses the value later).
  app.get("/bad/:which", (req, res) => {
    const errors: string[] = [];
    for (const trailers of req.params.which === "name" ? [{ "bad name": "1" }] : [{ "bad name": "1" }, { "x-ok": "line\r\nbreak" }]) {
      try {
        res.addTrailers(trailers);
      } catch (err) {
        errors.push((err as NodeJS.ErrnoException).code!);
      }
    }
    res.json(errors);
  });
}

interface H2Answer {
  headers: IncomingHttpHeaders;
  body: string;
  trailers: IncomingHttpHeaders | null;
}

function h2get(session: ClientHttp2Session, path: string): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path });
    let headers: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | null = null;
    let body = "";
    stream.setEncoding("utf8");
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (h) => (trailers = h));
    stream.on("data", (chunk: string) => (body += chunk));
    stream.on("end", () => resolve({ headers, body, trailers }));
    stream.on("error", reject);
  });
}

for (const mode of ["h2c", "h2"] as const) {
  describe(`response trailers on ${mode}`, { skip: mode === "h2" ? opensslSkip : false }, () => {
    const served = async (t: { after(fn: () => unknown): void }) => {
      const tls = mode === "h2" ? certs!.issue("localhost") : undefined;
      const { port } = await serve(t, routes, { http2: mode === "h2" ? true : "h2c", tls });
      return `${mode === "h2" ? "https" : "http"}://localhost:${port}`;
    };

    test("node:http2's client reads them after the body", async (t) => {
      const base = await served(t);
      const session = connect(base, mode === "h2" ? { ca: certs!.ca } : {});
      t.after(() => session.close());
      const streamed = await h2get(session, "/streamed");
      assert.equal(streamed.headers[":status"], 200);
      assert.equal(streamed.body, "one two");
      assert.equal(streamed.trailers?.["x-checksum"], "abc123");
      assert.equal(streamed.trailers?.["x-count"], "1, 2");
      const whole = await h2get(session, "/whole");
      assert.equal(whole.body, "whole");
      assert.equal(whole.trailers?.["grpc-status"], "0");
      const bad = await h2get(session, "/bad/name");
      assert.deepEqual(JSON.parse(bad.body), ["ERR_INVALID_HTTP_TOKEN"]);
      assert.equal(bad.trailers, null);
    });

    test("a request's trailers reach req.trailers by the end of its body", async (t) => {
      const base = await served(t);
      const session = connect(base, mode === "h2" ? { ca: certs!.ca } : {});
      t.after(() => session.close());
      const answer = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ":method": "POST", ":path": "/echo-trailers", "content-type": "text/plain" }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "x-sum": "abc", "x-more": "1" }));
        let body = "";
        stream.setEncoding("utf8");
        stream.on("data", (chunk: string) => (body += chunk));
        stream.on("end", () => resolve(body));
        stream.on("error", reject);
        stream.end("payload");
      });
      const { body, trailers, rawTrailers } = JSON.parse(answer);
      assert.equal(body, "payload");
      assert.deepEqual(trailers, { "x-sum": "abc", "x-more": "1" });
      assert.deepEqual(rawTrailers, ["x-sum", "abc", "x-more", "1"]);
    });

    test("nghttp sees a HEADERS frame with END_STREAM after the DATA", { skip: nghttpSkip }, async (t) => {
      const base = await served(t);
      const out = await new Promise<string>((resolve, reject) =>
        execFile("nghttp", ["-v", "-n", `${base}/streamed`], { encoding: "utf8", timeout: 20_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
      );
      const frames = [...out.matchAll(/recv (DATA|HEADERS) frame <[^>]*flags=(0x[0-9a-f]+)/g)].map((m) => `${m[1]}:${m[2]}`);
      assert.equal(frames.at(-1), "HEADERS:0x05", out);
      assert.ok(frames.includes("DATA:0x00"), out);
      assert.match(out, /recv \(stream_id=\d+\) x-checksum: abc123/);
    });
  });
}

describe("response trailers on HTTP/1.1", () => {
  const get = (port: number, path: string, te = "") => raw(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n${te}Connection: close\r\n\r\n`);

  test("a chunked body carries them after its last chunk", async (t) => {
    const { port } = await serve(t, routes);
    const text = await get(port, "/streamed", "TE: trailers\r\n");
    assert.match(text, /transfer-encoding: chunked/i);
    assert.ok(text.endsWith("0\r\nX-Checksum: abc123\r\nx-count: 1\r\nx-count: 2\r\n\r\n"), JSON.stringify(text));
    // As on node:http: whatever the request's TE said.
    const without = await get(port, "/streamed");
    assert.ok(without.endsWith("0\r\nX-Checksum: abc123\r\nx-count: 1\r\nx-count: 2\r\n\r\n"), JSON.stringify(without));
  });

  test("a whole body goes chunked with them when a Trailer header declares them, and without them otherwise", async (t) => {
    const { port } = await serve(t, routes);
    const declared = await get(port, "/whole-declared");
    assert.match(declared, /transfer-encoding: chunked/i);
    assert.ok(declared.endsWith("5\r\nwhole\r\n0\r\ngrpc-status: 0\r\n\r\n"), JSON.stringify(declared));
    const undeclared = await get(port, "/whole");
    assert.match(undeclared, /content-length: 5/i);
    assert.ok(undeclared.endsWith("\r\n\r\nwhole"), JSON.stringify(undeclared));
  });

  test("bad names and values are refused with Node's errors", async (t) => {
    const { port } = await serve(t, routes);
    const text = await get(port, "/bad/both");
    assert.ok(text.endsWith('["ERR_INVALID_HTTP_TOKEN","ERR_INVALID_CHAR"]'), JSON.stringify(text));
  });

  test("a chunked request's trailers reach req.trailers by the end of its body", async (t) => {
    const { port } = await serve(t, routes);
    const text = await raw(
      port,
      "POST /echo-trailers HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n7\r\npayload\r\n0\r\nX-Sum: abc\r\nx-more:1\r\nx-more: 2\r\n\r\n",
    );
    const { body, trailers, rawTrailers } = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
    assert.equal(body, "payload");
    assert.deepEqual(trailers, { "x-sum": "abc", "x-more": "1, 2" });
    assert.deepEqual(rawTrailers, ["X-Sum", "abc", "x-more", "1", "x-more", "2"]);
  });

  test("a body framed by its length has none", async (t) => {
    const { port } = await serve(t, routes);
    const text = await get(port, "/length");
    assert.ok(text.endsWith("\r\n\r\nfour"), JSON.stringify(text));
    assert.doesNotMatch(text, /x-late/);
  });
});
