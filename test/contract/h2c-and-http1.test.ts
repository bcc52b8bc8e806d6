// One cleartext port for HTTP/1.1 and HTTP/2 with prior knowledge (`http2: "h2c", allowHTTP1: true`),
// as HttpArena's gRPC profiles share port 8080 with its HTTP/1.1 ones: each connection's first bytes
// (HTTP/2's preface, or anything else) say which protocol it speaks, on both engines.
import assert from "node:assert/strict";
import { connect as http2Connect, type ClientHttp2Session } from "node:http2";
import { once } from "node:events";
import { connect } from "node:net";
import { Duplex } from "node:stream";
import { describe, test } from "node:test";
import { Cog } from "../../src/index.js";
import { serve, statuses } from "../helpers.js";
import { exchange, within } from "../wire.js";

const PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const BOTH = { http2: "h2c", allowHTTP1: true } as const;

function define(app: Cog): void {
  app.get("/hello", (req, res) => res.json({ hello: req.query.name ?? "world", version: req.httpVersion }));
  app.post("/sum", (req, res) => {
    const { a, b } = req.body as { a: number; b: number };
    res.json({ sum: a + b, version: req.httpVersion });
  });
}

/** One request on an HTTP/2 session: status and body. */
function h2request(session: ClientHttp2Session, path: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? { ":path": path } : { ":path": path, ":method": "POST", "content-type": "application/json" };
    const stream = session.request(headers);
    let status = 0;
    let text = "";
    stream.on("response", (h) => (status = Number(h[":status"])));
    stream.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    stream.on("end", () => resolve({ status, body: text }));
    stream.on("error", reject);
    stream.end(body);
  });
}

/** Both protocols answer on `port`: an HTTP/1.1 request and an h2c one. */
async function servesBoth(port: number): Promise<void> {
  const h1 = await fetch(`http://127.0.0.1:${port}/hello?name=one`);
  assert.deepEqual(await h1.json(), { hello: "one", version: "1.1" });
  const session = http2Connect(`http://127.0.0.1:${port}`);
  try {
    const answer = await within(h2request(session, "/hello?name=two"), "an h2c request");
    assert.deepEqual([answer.status, JSON.parse(answer.body)], [200, { hello: "two", version: "2.0" }]);
  } finally {
    session.destroy();
  }
}

describe('http2: "h2c" with allowHTTP1: HTTP/1.1 and h2c on one port', () => {
  test("the same app answers HTTP/1.1 requests and h2c prior-knowledge requests on the same port, bodies included", async (t) => {
    const { port } = await serve(t, define, BOTH);
    const session = http2Connect(`http://127.0.0.1:${port}`);
    t.after(() => session.destroy());
    // Interleaved, each protocol several requests on its connection (keep-alive, and streams of one session).
    for (let i = 0; i < 3; i++) {
      const h1 = await fetch(`http://127.0.0.1:${port}/sum`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ a: i, b: 2 }),
      });
      assert.deepEqual(await h1.json(), { sum: i + 2, version: "1.1" });
      const h2 = await h2request(session, "/sum", JSON.stringify({ a: i, b: 3 }));
      assert.deepEqual([h2.status, JSON.parse(h2.body)], [200, { sum: i + 3, version: "2.0" }]);
    }
    const pipelined = await exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello?name=b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert.deepEqual(statuses(pipelined.bytes.toString("latin1")), [200, 200], "two pipelined HTTP/1.1 requests, both answered");
  });

  test("a preface that arrives in pieces is still HTTP/2's", async (t) => {
    const { port } = await serve(t, define, BOTH);
    const tcp = connect(port, "127.0.0.1");
    await once(tcp, "connect");
    // The client's bytes go through this stream: its first write (the preface and SETTINGS) is sent
    // in two pieces, the second once the first has left, so the server reads a part of the preface first.
    let first = true;
    const pieces = new Duplex({
      write(chunk: Buffer, _encoding, done) {
        if (!first) return void tcp.write(chunk, done);
        first = false;
        tcp.write(chunk.subarray(0, 7), () => setTimeout(() => tcp.write(chunk.subarray(7), done), 20));
      },
      read() {},
    });
    tcp.on("data", (chunk) => pieces.push(chunk));
    tcp.on("close", () => pieces.destroy());
    // The server may close first when the test ends.
    tcp.on("error", () => {});
    const session = http2Connect(`http://127.0.0.1:${port}`, { createConnection: () => pieces });
    t.after(() => {
      session.destroy();
      tcp.destroy();
    });
    const answer = await within(h2request(session, "/hello?name=pieces"), "an h2c request whose preface came in pieces");
    assert.deepEqual(JSON.parse(answer.body), { hello: "pieces", version: "2.0" });
  });

  test("a client that sends part of the preface, then nothing, is closed at headersTimeout; the server goes on serving", async (t) => {
    const { port } = await serve(t, define, { ...BOTH, headersTimeout: 400, requestTimeout: 1000, timeoutCheckInterval: 100 });
    const started = Date.now();
    const stalled = await exchange(port, PREFACE.slice(0, 16), 5000);
    assert.equal(stalled.timedOut, false, "closed by the server, not left open");
    assert.equal(stalled.bytes.length, 0, "nothing is answered: the client has said neither protocol");
    assert.ok(Date.now() - started >= 300, `closed after the headers timeout, not at once (${Date.now() - started} ms)`);
    await servesBoth(port);
  });

  test("a client that ends its side after part of the preface is closed, unanswered", async (t) => {
    const { port } = await serve(t, define, BOTH);
    const socket = connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("error", () => {});
    await once(socket, "connect");
    socket.end(PREFACE.slice(0, 10));
    await within(once(socket, "close"), "the server closing the connection");
    assert.equal(Buffer.concat(received).length, 0);
    await servesBoth(port);
  });

  test("a bad preface is HTTP/1.1's to refuse: a 505 (its version is 2.0) or a 400, the connection closed, and the server goes on serving", async (t) => {
    const { port } = await serve(t, define, BOTH);
    const bad: [string, number][] = [
      ["PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n", 505],
      // A TLS ClientHello's first bytes, sent to the cleartext port.
      ["\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400],
    ];
    for (const [bytes, status] of bad) {
      const answer = await exchange(port, Buffer.from(bytes, "latin1"));
      assert.equal(answer.timedOut, false, `${JSON.stringify(bytes)}: the connection closed`);
      assert.deepEqual(statuses(answer.bytes.toString("latin1")), [status], `${JSON.stringify(bytes)}: one ${status}`);
    }
    await servesBoth(port);
  });

  test("close() ends both: GOAWAY to h2c sessions, idle HTTP/1.1 connections and connections yet to speak closed, and it resolves", async () => {
    const app = new Cog({ ...BOTH, logErrors: false });
    define(app);
    const { port } = await app.listen(0, "127.0.0.1");
    const session = http2Connect(`http://127.0.0.1:${port}`);
    assert.equal((await within(h2request(session, "/hello"), "an h2c request")).status, 200);
    const goaway = once(session, "goaway");
    // An HTTP/1.1 connection kept alive after its answer, and one that has sent nothing yet.
    const kept = connect(port, "127.0.0.1");
    kept.on("error", () => {});
    kept.write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    await within(once(kept, "data"), "the HTTP/1.1 answer");
    const silent = connect(port, "127.0.0.1");
    silent.on("error", () => {});
    await once(silent, "connect");
    const keptClosed = once(kept, "close");
    const silentClosed = once(silent, "close");
    await within(app.close(5000), "close() resolving", 4000);
    await within(goaway, "GOAWAY on the h2c session");
    await within(Promise.all([keptClosed, silentClosed]), "the HTTP/1.1 connections closed");
    session.destroy();
  });

  test('without allowHTTP1, http2: "h2c" serves HTTP/2 only: an HTTP/1.1 request is closed unanswered', async (t) => {
    const { port } = await serve(t, define, { http2: "h2c" });
    const answer = await exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.equal(answer.timedOut, false, "closed");
    assert.deepEqual(statuses(answer.bytes.toString("latin1")), [], "no HTTP/1.1 answer");
  });

  test("combinations that can't be served are refused when the app is made, saying what to write", () => {
    assert.doesNotThrow(() => new Cog(BOTH));
    assert.throws(() => new Cog({ allowHTTP1: true }), /allowHTTP1: true serves HTTP\/1\.1 beside cleartext HTTP\/2 and needs http2: "h2c"/);
    const tls = { key: "key", cert: "cert" };
    assert.throws(() => new Cog({ http2: true, tls, allowHTTP1: false }), /allowHTTP1: false can't be served with http2: true/);
    assert.doesNotThrow(() => new Cog({ http2: true, tls, allowHTTP1: true }), "what http2: true does already");
    assert.throws(() => new Cog({ http2: "h2c", tls }), /http2: "h2c" is cleartext HTTP\/2 and takes no tls option; for HTTP\/2 over TLS use http2: true/);
    assert.throws(() => new Cog({ ...BOTH, allowHTTP1: "yes" as never }), /allowHTTP1 is true or false/);
    assert.throws(() => new Cog({ http2: "h2" as never }), /http2 is true \(h2 over TLS\), "h2c" \(cleartext HTTP\/2\) or false/);
  });
});
