// Limits and timeouts: each default, each option, each refusal with its 4xx.
import assert from "node:assert/strict";
import { once } from "node:events";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { Cog } from "../../src/index.js";
import { DEFAULT_LIMITS } from "../../src/base/limits.js";
import { engine, nodeOnly, raw, serve, statuses } from "../helpers.js";

// uWebSockets.js has its own fixed timeouts (10 s idle) that Cog can't set.

describe("limits", () => {
  test("the defaults reach Node's server, and options override them", { skip: nodeOnly }, async (t) => {
    const { app } = await serve(t, () => {});
    const server = app.server!;
    assert.equal(server.headersTimeout, 15_000);
    assert.equal(server.requestTimeout, 30_000);
    assert.equal(server.keepAliveTimeout, 5_000);
    assert.equal(server.maxHeadersCount, DEFAULT_LIMITS.maxHeaders + 1);
    const tuned = await serve(t, () => {}, { keepAliveTimeout: 65_000, headersTimeout: 20_000, requestTimeout: 60_000 });
    assert.equal(tuned.app.server!.keepAliveTimeout, 65_000);
    assert.equal(tuned.app.server!.headersTimeout, 20_000);
    assert.equal(tuned.app.server!.requestTimeout, 60_000);
  });

  test("a mistyped limit fails at construction, naming the option", () => {
    assert.throws(() => new Cog({ bodyLimit: -1 }), /bodyLimit must be a whole number/);
    assert.throws(() => new Cog({ maxHeaders: 1.5 }), /maxHeaders must be a whole number/);
    assert.throws(() => new Cog({ maxJsonDepth: "10" as unknown as number }), /maxJsonDepth must be a whole number/);
    assert.throws(() => new Cog({ headersTimeout: 60_000, requestTimeout: 30_000 }), /headersTimeout \(60000\) must not exceed requestTimeout/);
  });

  test("a route param longer than maxParamLength gets 414", async (t) => {
    const { fetch } = await serve(t, (app) => app.get("/users/:id", (req, res) => res.send(req.params.id)), { maxParamLength: 10 });
    assert.equal(await (await fetch("/users/0123456789")).text(), "0123456789");
    const res = await fetch("/users/0123456789a");
    assert.equal(res.status, 414);
    assert.match((await res.json()).message, /Route param "id" is longer than 10 characters; raise the maxParamLength option/);
  });

  test("a query string with more than maxFields fields gets 414; a form gets 413", async (t) => {
    const { fetch } = await serve(
      t,
      (app) => {
        app.get("/q", (req, res) => res.send(Object.keys(req.query).length));
        app.post("/form", (req, res) => res.send(Object.keys(req.body).length));
      },
      { maxFields: 5 },
    );
    assert.equal(await (await fetch("/q?a=1&b=2&c=3&d=4&e=5")).text(), "5");
    assert.equal((await fetch("/q?a=1&b=2&c=3&d=4&e=5&f=6")).status, 414);
    const form = (n: number) => ({
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: Array.from({ length: n }, (_, i) => `k${i}=v`).join("&"),
    });
    assert.equal(await (await fetch("/form", form(5))).text(), "5");
    const res = await fetch("/form", form(6));
    assert.equal(res.status, 413);
    assert.match((await res.json()).message, /more than 5 fields/);
  });

  test("JSON nested deeper than maxJsonDepth gets 400, brackets inside strings don't count", async (t) => {
    const { fetch } = await serve(t, (app) => app.post("/j", (req, res) => res.json(req.body)), { maxJsonDepth: 8 });
    const post = (body: string) => fetch("/j", { method: "POST", headers: { "content-type": "application/json" }, body });
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    assert.equal((await post(nested(8))).status, 200);
    const res = await post(nested(9));
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /nested deeper than 8 levels/);
    const tricky = JSON.stringify({ s: '[[[[[[[[[[[[{{{{{{{{{{"\\"[[[[' });
    assert.equal(await (await post(tricky)).text(), tricky);
  });

  test("the default depth refuses what would overflow the stack of JSON.stringify, with a 400 not a 500", async (t) => {
    const { fetch } = await serve(t, (app) => app.post("/j", (req, res) => res.json(req.body)));
    const depth = 200_000;
    const res = await fetch("/j", { method: "POST", headers: { "content-type": "application/json" }, body: "[".repeat(depth) + "]".repeat(depth) });
    assert.equal(res.status, 400);
  });
});

describe("timeouts", () => {
  const quick = { headersTimeout: 500, requestTimeout: 1_000, timeoutCheckInterval: 100, keepAliveTimeout: 300 };

  test("an idle keep-alive connection is closed after keepAliveTimeout", async (t) => {
    const { port } = await serve(t, (app) => app.get("/", (_req, res) => res.send("up")), quick);
    const socket = connect(port, "127.0.0.1");
    t.after(() => socket.destroy());
    await once(socket, "connect");
    socket.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    await once(socket, "data");
    const started = Date.now();
    await once(socket, "close");
    assert.ok(Date.now() - started < 1_500);
  });

  test("a connection in steady use outlives keepAliveTimeout: it counts from the last request", { timeout: 10_000 }, async (t) => {
    const { port } = await serve(t, (app) => app.get("/", (_req, res) => res.send("up")), quick);
    const socket = connect(port, "127.0.0.1");
    t.after(() => socket.destroy());
    await once(socket, "connect");
    let closed = false;
    socket.on("close", () => (closed = true));
    // 12 requests 100 ms apart: 1.2 s on one connection, four times the keep-alive timeout.
    for (let i = 0; i < 12; i++) {
      socket.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
      await once(socket, "data");
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(closed, false);
  });

  /** Sends `bytes` and keeps the connection open: what the server wrote, once it closed the connection (within `ms`). */
  async function answerThenClose(port: number, bytes: string, ms: number): Promise<{ text: string; waited: number }> {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", () => {});
    await once(socket, "connect");
    const started = Date.now();
    socket.write(bytes);
    const bound = setTimeout(() => socket.destroy(new Error(`still open after ${ms} ms`)), ms);
    await once(socket, "close");
    clearTimeout(bound);
    return { text: Buffer.concat(chunks).toString("latin1"), waited: Date.now() - started };
  }

  test(`[${engine}] a body that stops arriving gets 408 at requestTimeout, then the connection closes`, async (t) => {
    let handled = 0;
    const { port } = await serve(
      t,
      (app) =>
        app.post("/upload", (req, res) => {
          handled++;
          res.json({ length: String(req.body).length });
        }),
      quick,
    );
    const { text, waited } = await answerThenClose(
      port,
      "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n0123456789",
      5_000,
    );
    assert.deepEqual(statuses(text), [408], text);
    assert.match(text, /\r\nConnection: close\r\n/i);
    assert.deepEqual(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)), {
      statusCode: 408,
      error: "Request Timeout",
      message: `The request body did not arrive within requestTimeout (${quick.requestTimeout} ms); raise the requestTimeout option for slower clients`,
    });
    assert.ok(waited >= quick.requestTimeout - 50, `answered after ${waited} ms`);
    assert.equal(handled, 0);
  });

  test(`[${engine}] a body that stops arriving once its response has begun: the connection closes, no 408 inside that response`, async (t) => {
    const { port } = await serve(
      t,
      (app) =>
        app.post("/echo", { body: "stream" }, (req, res) => {
          res.writeHead(200, { "Content-Type": "text/plain" });
          res.write("begun");
          req.on("data", () => {});
        }),
      quick,
    );
    const { text } = await answerThenClose(port, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n0123456789", 5_000);
    assert.deepEqual(statuses(text), [200], text);
    assert.match(text, /begun/);
  });

  test("oversized head, URL, body and nesting each get their 4xx, never a 5xx", async (t) => {
    const { port } = await serve(t, (app) => app.post("/", (req, res) => res.json(req.body)), { bodyLimit: 1000 });
    const answers = await Promise.all([
      raw(port, `GET / HTTP/1.1\r\nHost: a\r\nX: ${"a".repeat(20_000)}\r\n\r\n`),
      raw(port, `GET /${"a".repeat(9_000)} HTTP/1.1\r\nHost: a\r\n\r\n`),
      raw(port, `POST / HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n${"1".repeat(2000)}`),
      raw(port, `POST / HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n${"[".repeat(200)}${"]".repeat(200)}`),
    ]);
    const expected = [431, 414, 413, 400];
    assert.deepEqual(
      answers.map((a, i) => (i === 0 ? statuses(a)[0] : statuses(a)[0])),
      expected,
    );
  });
});
