// Request framing and the rules of HTTP/1.1, byte for byte over raw sockets:
// what a correct origin server must refuse, what it must accept, and that
// after every refusal the server goes on answering.
import assert from "node:assert/strict";
import { once } from "node:events";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { nodeOnly, raw, serve, statuses } from "../helpers.js";

const ok = "GET /ok HTTP/1.1\r\nHost: a\r\n\r\n";

interface Case {
  name: string;
  bytes: string | string[];
  status: number;
  /** The connection must be closed after the answer (the default for refusals). */
  closes?: boolean;
}

const refused: Case[] = [
  { name: "an HTTP/2.0 request line", bytes: "GET / HTTP/2.0\r\nHost: a\r\n\r\n", status: 505 },
  { name: "an unknown minor version", bytes: "GET / HTTP/1.2\r\nHost: a\r\n\r\n", status: 400 },
  { name: "a request line without a version", bytes: "GET /\r\n\r\n", status: 400 },
  { name: "a missing Host in HTTP/1.1", bytes: "GET / HTTP/1.1\r\n\r\n", status: 400 },
  { name: "a duplicate Host", bytes: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400 },
  { name: "a Host with a space", bytes: "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", status: 400 },
  { name: "a Host with a path", bytes: "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", status: 400 },
  { name: "a Host with userinfo", bytes: "GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", status: 400 },
  { name: "Transfer-Encoding on HTTP/1.0", bytes: "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 400 },
  { name: "conflicting Content-Lengths", bytes: "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", status: 400 },
  { name: "equal duplicate Content-Lengths", bytes: "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", status: 400 },
  { name: "a Content-Length list", bytes: "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc", status: 400 },
  { name: "a signed Content-Length", bytes: "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc", status: 400 },
  {
    name: "Content-Length with Transfer-Encoding",
    bytes: "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    status: 400,
  },
  {
    name: "a coding other than chunked last",
    bytes: "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    status: 400,
  },
  { name: "an obs-fold header line", bytes: "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", status: 400 },
  { name: "a bare CR", bytes: "GET / HTTP/1.1\r\nHost: a\rX-A: b\r\n\r\n", status: 400 },
  { name: "bare LF line ends", bytes: "GET / HTTP/1.1\nHost: a\n\n", status: 400 },
  { name: "a NUL in a header value", bytes: "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\0c\r\n\r\n", status: 400 },
  { name: "a space before the colon", bytes: "GET / HTTP/1.1\r\nHost : a\r\n\r\n", status: 400 },
  {
    name: "a chunk size that overflows",
    bytes: "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nabc\r\n0\r\n\r\n",
    status: 400,
  },
  {
    name: "a huge chunk extension",
    bytes: `POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;${"x".repeat(20_000)}\r\nabc\r\n0\r\n\r\n`,
    status: 413,
  },
  { name: "a relative request target", bytes: "GET ok HTTP/1.1\r\nHost: a\r\n\r\n", status: 400 },
  { name: "a dot-dot segment", bytes: "GET /a/../ok HTTP/1.1\r\nHost: a\r\n\r\n", status: 400 },
  { name: "an encoded dot-dot segment", bytes: "GET /a/%2e%2E/ok HTTP/1.1\r\nHost: a\r\n\r\n", status: 400 },
  { name: "a head over 16 KiB", bytes: `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${"a".repeat(17_000)}\r\n\r\n`, status: 431 },
  {
    name: "more than 100 headers",
    bytes: `GET /ok HTTP/1.1\r\nHost: a\r\n${Array.from({ length: 101 }, (_, i) => `X-${i}: v\r\n`).join("")}\r\n`,
    status: 431,
  },
  { name: "a URL over 8 KiB", bytes: `GET /ok?q=${"a".repeat(8200)} HTTP/1.1\r\nHost: a\r\n\r\n`, status: 414 },
  { name: "CONNECT, as a server that is not a proxy", bytes: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", status: 501 },
];

describe("strict HTTP: requests a correct origin must refuse", () => {
  for (const c of refused) {
    test(`${c.name} gets ${c.status}, and the server goes on`, async (t) => {
      const { port } = await serve(t, define);
      const answer = await raw(port, c.bytes);
      const status = statuses(answer)[0];
      assert.equal(status, c.status, answer.slice(0, 300));
      // Every refusal says why, as JSON, on both engines (Node's own are a bare status line).
      const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
      assert.equal(body.statusCode, c.status);
      assert.match(String(body.message), /^[A-Za-z].{8,}/, "a message naming the rule");
      assert.match(answer, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
      assert.doesNotMatch(answer, /HTTP\/1\.1 200/, "nothing of the refused request reached a handler");
      assert.deepEqual(statuses(await raw(port, ok)), [200]);
    });
  }
});

describe("strict HTTP: what must still be accepted", () => {
  // What uWebSockets.js's own parser drops before Cog sees it (closing the connection, unanswered).
  const accepted: Array<{ name: string; bytes: string | string[]; body: RegExp }> = [
    { name: "HTTP/1.0 without Host", bytes: "GET /ok HTTP/1.0\r\n\r\n", body: /ok$/ },
    {
      name: "a Host with a port, an IPv4 and an IPv6 literal",
      bytes: [
        "GET /ok HTTP/1.1\r\nHost: a.example:8080\r\n\r\n",
        "GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /ok HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
      ].join(""),
      body: /ok$/,
    },
    { name: "an empty Host", bytes: "GET /ok HTTP/1.1\r\nHost:\r\n\r\n", body: /ok$/ },
    { name: "absolute-form, routed by its path", bytes: "GET http://a.example/ok?x=1 HTTP/1.1\r\nHost: a.example\r\n\r\n", body: /ok$/ },
    {
      name: "a chunked body with extensions and trailers",
      bytes:
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n",
      body: /abcde$/,
    },
    // One list over several lines: the node engine's own check once refused this (llhttp accepts it).
    {
      name: "two Transfer-Encoding lines with chunked last",
      bytes: "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
      body: /abc$/,
    },
    { name: "dots inside a segment", bytes: "GET /files/a..b.txt HTTP/1.1\r\nHost: a\r\n\r\n", body: /a\.\.b\.txt$/ },
    {
      name: "an Upgrade nobody handles, as a plain request",
      bytes: "GET /ok HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
      body: /ok$/,
    },
  ];
  for (const c of accepted) {
    test(c.name, async (t) => {
      const { port } = await serve(t, define);
      const answer = await raw(port, c.bytes);
      const codes = statuses(answer);
      assert.ok(codes.length > 0 && codes.every((s) => s === 200), answer.slice(0, 400));
      assert.match(answer, c.body);
    });
  }

  test("a request sent in fragments is answered once it is whole, not before", async (t) => {
    const { port } = await serve(t, define);
    const parts = ["PO", "ST /echo HT", "TP/1.1\r\nHo", "st: a\r\nContent-Type: text/plain\r\nContent-Le", "ngth: 5\r\n\r\nab", "c", "de"];
    const socket = connect(port, "127.0.0.1");
    t.after(() => socket.destroy());
    let text = "";
    socket.on("data", (d) => (text += d));
    await once(socket, "connect");
    const early: string[] = [];
    for (const part of parts) {
      if (text !== "") early.push(text);
      socket.write(part);
      // A pause, so the server sees each fragment on its own.
      await new Promise((r) => setTimeout(r, 20));
    }
    while (!text.includes("abcde")) await once(socket, "data");
    assert.deepEqual(early, []);
    assert.deepEqual(statuses(text), [200]);
  });

  test("pipelined keep-alive requests are answered in order on one connection", async (t) => {
    const { port } = await serve(t, define);
    const answer = await raw(
      port,
      [
        "GET /ok HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\none",
        "GET /missing HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\ntwo",
      ].join(""),
    );
    assert.deepEqual(statuses(answer), [200, 200, 404, 200]);
    assert.ok(answer.indexOf("one") < answer.indexOf("two"));
  });

  test("strict: false lets Node's own rules decide", { skip: nodeOnly }, async (t) => {
    const { port } = await serve(t, define, { strict: false });
    assert.deepEqual(statuses(await raw(port, "GET /ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")), [200]);
    assert.deepEqual(statuses(await raw(port, "GET /ok HTTP/2.0\r\nHost: a\r\n\r\n")), [200]);
    // Framing stays Node's, and Node's is strict.
    assert.deepEqual(
      statuses(await raw(port, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")),
      [400],
    );
  });
});

function define(app: import("../../src/index.js").Cog): void {
  app.get("/ok", (_req, res) => res.send("ok"));
  app.get("/files/:name", (req, res) => res.send(req.params.name));
  app.post("/echo", (req, res) => res.send(req.body));
}
