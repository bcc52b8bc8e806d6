// Requests the server refuses before any handler runs: each gets Cog's JSON error body naming
// the rule or the limit, the same on both engines, and none is logged as the server's fault
// (any client can send them as often as it likes).
import assert from "node:assert/strict";
import { test } from "node:test";
import { startChild, waitForOutput } from "../children.js";
import { engine, raw, serve, statuses } from "../helpers.js";

/** The JSON body of a raw answer. */
function bodyOf(answer: string): Record<string, unknown> {
  return JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
}

test("an HTTP/2.0 request line gets 505 with its reason, and the server's stderr gets no stack trace", async (t) => {
  const app = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/refusing-app.ts"], { env: { ...process.env, COG_ENGINE: engine } });
  await waitForOutput(app, (out) => out.includes("\n"), "the app to print its port");
  const port = Number(app.stdout().split("\n")[0]);
  for (let i = 0; i < 20; i++) {
    const answer = await raw(port, "GET / HTTP/2.0\r\nHost: a\r\n\r\n");
    assert.deepEqual(statuses(answer), [505]);
    assert.deepEqual(bodyOf(answer), { statusCode: 505, error: "HTTP Version Not Supported", message: "HTTP version not supported; use HTTP/1.1" });
  }
  // The server is well, and still logs what is its own fault: that line is how we know stderr is written.
  assert.equal((await fetch(`http://127.0.0.1:${port}/fail`)).status, 500);
  for (let i = 0; i < 1000 && !app.stderr().includes("a handler's own failure"); i++) await new Promise((r) => setTimeout(r, 20));
  const logged = app.stderr();
  assert.match(logged, /GET \/fail.*a handler's own failure/);
  assert.doesNotMatch(logged, /HTTP version|505/, "a refused request is not logged");
  assert.doesNotMatch(logged, /inspectHead|checkRequestLine/, "no stack trace of a refusal");
  assert.equal(logged.split("cog:").length - 1, 1, `one error logged, the handler's:\n${logged}`);
});

test("a head that stops arriving gets 408 with a JSON body naming headersTimeout", async (t) => {
  const { port } = await serve(t, (app) => app.get("/", (_req, res) => res.send("up")), {
    headersTimeout: 300,
    requestTimeout: 1_000,
    timeoutCheckInterval: 100,
  });
  const started = Date.now();
  const answer = await raw(port, "GET / HTTP/1.1\r\nHost: a\r\n", 5_000);
  assert.deepEqual(statuses(answer), [408], answer);
  assert.match(answer, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
  assert.match(answer, /\r\nConnection: close\r\n/i);
  assert.deepEqual(bodyOf(answer), {
    statusCode: 408,
    error: "Request Timeout",
    message: "The request head did not arrive within headersTimeout (300 ms); raise the headersTimeout option for slower clients",
  });
  assert.ok(Date.now() - started < 4_500, "closed after the answer, not left open");
});

test("a body that stops arriving gets 408 with a JSON body naming requestTimeout", async (t) => {
  const { port } = await serve(t, (app) => app.post("/", (req, res) => res.send(req.body)), {
    headersTimeout: 300,
    requestTimeout: 600,
    timeoutCheckInterval: 100,
  });
  const answer = await raw(port, "POST / HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nab", 5_000);
  assert.deepEqual(statuses(answer), [408], answer);
  assert.deepEqual(bodyOf(answer), {
    statusCode: 408,
    error: "Request Timeout",
    message: "The request body did not arrive within requestTimeout (600 ms); raise the requestTimeout option for slower clients",
  });
});

test("what the parser refuses gets the same status and JSON body on both engines, naming the rule or limit", async (t) => {
  const { port } = await serve(t, (app) => app.post("/echo", (req, res) => res.send(req.body)), { maxHeaderSize: 4096 });
  const cases: Array<[string, number, string]> = [
    ["GET / HTTP/1.1\r\nHost: a\rX-A: b\r\n\r\n", 400, "Malformed request head"],
    ["GET / HTTP/1.1\nHost: a\n\n", 400, "Bare LF in request head"],
    ["GET / HTTP/1.1\r\n\r\n", 400, "An HTTP/1.1 request needs a Host header"],
    ["POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400, "More than one Content-Length header"],
    ["POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc", 400, "Invalid Content-Length"],
    [
      "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
      400,
      "Both Content-Length and Transfer-Encoding",
    ],
    ["POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nabc\r\n0\r\n\r\n", 400, "Chunk size too large"],
    [`POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;${"x".repeat(20_000)}\r\nabc\r\n0\r\n\r\n`, 413, "Chunk extensions too large"],
    [
      `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${"a".repeat(5_000)}\r\n\r\n`,
      431,
      "Request head is larger than maxHeaderSize; raise the maxHeaderSize option to accept it",
    ],
    ["GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505, "HTTP version not supported; use HTTP/1.1"],
    ["CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 501, "CONNECT is not supported by this server"],
  ];
  for (const [bytes, status, message] of cases) {
    const answer = await raw(port, bytes);
    assert.deepEqual(statuses(answer), [status], answer);
    assert.match(answer, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.equal(bodyOf(answer).message, message, JSON.stringify(bytes.slice(0, 60)));
    assert.equal(bodyOf(answer).statusCode, status);
  }
});
