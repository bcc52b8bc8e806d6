import assert from "node:assert/strict";
import { IncomingMessage } from "node:http";
import { describe, test } from "node:test";
import { headersFromRaw } from "../../src/engines/native/headers.js";
import { raw, serve, statuses } from "../helpers.js";

describe("request helpers", () => {
  test("req.query: repeated keys give arrays, malformed escapes stay raw", async (t) => {
    const { fetch } = await serve(t, (app) => app.get("/q", (req, res) => res.json(req.query)));
    assert.deepEqual(await (await fetch("/q?a=1&a=2&b=x%20y&c")).json(), { a: ["1", "2"], b: "x y", c: "" });
    assert.deepEqual(await (await fetch("/q?bad=%E0%A4%A")).json(), { bad: "%E0%A4%A" });
    assert.deepEqual(await (await fetch("/q")).json(), {});
  });

  test("req.query is parsed once and can be replaced", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.use((req, _res, next) => {
        req.query = { replaced: "yes" };
        next();
      });
      app.get("/q", (req, res) => res.send(String(req.query === req.query) + req.query.replaced));
    });
    assert.equal(await (await fetch("/q?x=1")).text(), "trueyes");
  });

  test("req.cookies never throws: malformed escapes stay raw, values with = stay whole", async (t) => {
    const { fetch } = await serve(t, (app) => app.get("/c", (req, res) => res.json(req.cookies)));
    const res = await fetch("/c", { headers: { cookie: 'a=%E0%A4%A; b=x=y=z; c=hello%20world; junk; d="quoted"' } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { a: "%E0%A4%A", b: "x=y=z", c: "hello world", d: '"quoted"' });
    assert.deepEqual(await (await fetch("/c")).json(), {});
  });

  test("req.path, req.get and req.params", async (t) => {
    const { fetch } = await serve(t, (app) =>
      app.get("/p/:id", (req, res) => res.json({ path: req.path, ua: req.get("User-Agent"), ref: req.get("referrer"), id: req.params.id })),
    );
    const res = await fetch("/p/7?x=1", { headers: { "user-agent": "tester", referer: "http://r/" } });
    assert.deepEqual(await res.json(), { path: "/p/7", ua: "tester", ref: "http://r/", id: "7" });
  });

  test("each request sees its own headers, whatever the requests before it sent", async (t) => {
    // The native engine reuses the buffers of finished requests: a short head after a long one
    // must not see any of the long one's lines.
    const { fetch } = await serve(t, (app) =>
      app.get("/h", (req, res) => res.json(req.rawHeaders.filter((_, i, all) => all[i - (i % 2)]!.toLowerCase().startsWith("x-")))),
    );
    const sets = [40, 1, 12, 0, 3, 25, 2].map((n, k) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, `${k}-${"v".repeat(i * 7)}`])));
    for (const headers of sets) {
      const res = await fetch("/h", { headers });
      assert.deepEqual(await res.json(), Object.entries(headers).flat());
    }
  });

  test("rawHeaders and headers keep empty values, repeats, case and latin1 bytes as node:http does", async (t) => {
    const { port } = await serve(t, (app) => app.get("/h", (req, res) => res.json({ raw: req.rawHeaders, headers: req.headers })));
    const head = "GET /h HTTP/1.1\r\nHost: x\r\nX-Empty:\r\nAccept: a\r\nX-Latin: caf\xe9\r\naccept: b\r\nX-Last:  \r\nConnection: close\r\n\r\n";
    const answer = await raw(port, Buffer.from(head, "latin1"));
    const body = JSON.parse(Buffer.from(answer.slice(answer.indexOf("\r\n\r\n") + 4), "latin1").toString("utf8")) as {
      raw: string[];
      headers: Record<string, string>;
    };
    assert.deepEqual(body.raw, ["Host", "x", "X-Empty", "", "Accept", "a", "X-Latin", "caf\xe9", "accept", "b", "X-Last", "", "Connection", "close"]);
    assert.deepEqual(body.headers, { host: "x", "x-empty": "", accept: "a, b", "x-latin": "caf\xe9", "x-last": "", connection: "close" });
  });

  test("headers read before rawHeaders: names in any case lowered, repeats joined by Node's rules", async (t) => {
    const { port } = await serve(t, (app) => app.get("/h", (req, res) => res.json({ headers: req.headers, raw: req.rawHeaders })));
    const lines = [
      "HOST: x",
      "Cookie: a=1",
      "COOKIE: b=2",
      "Accept: a",
      "accept: b",
      "Content-type: text/plain",
      "content-type: text/html",
      "Set-Cookie: s=1",
      "X-Odd-Name: v",
      "__proto__: p",
      "Connection: close",
    ];
    const answer = await raw(port, `GET /h HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`);
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as { raw: string[]; headers: Record<string, unknown> };
    assert.deepEqual(body.headers, {
      host: "x",
      cookie: "a=1; b=2",
      accept: "a, b",
      "content-type": "text/plain",
      "set-cookie": ["s=1"],
      "x-odd-name": "v",
      connection: "close",
    });
    assert.deepEqual(
      body.raw,
      lines.flatMap((line) => line.split(": ")),
    );
  });

  test("req.ip ignores X-Forwarded-For unless trustProxy says otherwise", async (t) => {
    const route = (app: import("../../src/index.js").Cog) => app.get("/ip", (req, res) => res.send(String(req.ip)));
    const xff = { "x-forwarded-for": "203.0.113.9, 198.51.100.2, 10.0.0.1" };
    const plain = await serve(t, route);
    assert.equal(await (await plain.fetch("/ip", { headers: xff })).text(), "127.0.0.1");
    const trustAll = await serve(t, route, { trustProxy: true });
    assert.equal(await (await trustAll.fetch("/ip", { headers: xff })).text(), "203.0.113.9");
    assert.equal(await (await trustAll.fetch("/ip")).text(), "127.0.0.1");
    const trustOne = await serve(t, route, { trustProxy: 1 });
    assert.equal(await (await trustOne.fetch("/ip", { headers: xff })).text(), "10.0.0.1");
    const trustTwo = await serve(t, route, { trustProxy: 2 });
    assert.equal(await (await trustTwo.fetch("/ip", { headers: xff })).text(), "198.51.100.2");
  });
});

describe("request bodies", () => {
  const echo = (app: import("../../src/index.js").Cog) =>
    app.post("/echo", (req, res) =>
      res.json({ type: Buffer.isBuffer(req.body) ? "buffer" : typeof req.body, body: Buffer.isBuffer(req.body) ? req.body.toString("hex") : req.body }),
    );

  test("parsed by Content-Type: JSON, urlencoded, text, anything else a Buffer", async (t) => {
    const { fetch } = await serve(t, echo);
    const post = (body: string | Uint8Array, type?: string) =>
      fetch("/echo", { method: "POST", body, headers: type ? { "content-type": type } : {} }).then((r) => r.json());
    assert.deepEqual(await post('{"a":[1,{"b":null}]}', "application/json"), { type: "object", body: { a: [1, { b: null }] } });
    assert.deepEqual(await post('{"a":1}', "Application/JSON; charset=UTF-8"), { type: "object", body: { a: 1 } });
    assert.deepEqual(await post('{"a":1}', "application/problem+json"), { type: "object", body: { a: 1 } });
    assert.deepEqual(await post("x=1&x=2&y=%C3%A9", "application/x-www-form-urlencoded"), { type: "object", body: { x: ["1", "2"], y: "é" } });
    assert.deepEqual(await post("héllo", "text/plain"), { type: "string", body: "héllo" });
    assert.deepEqual(await post(new Uint8Array([0, 255]), "application/octet-stream"), { type: "buffer", body: "00ff" });
  });

  test("req.headers on every engine follows Node's rules for repeats: first kept, joined, or a list", () => {
    const names = [
      "Age",
      "Authorization",
      "Content-Length",
      "Content-Type",
      "ETag",
      "Expires",
      "From",
      "Host",
      "If-Modified-Since",
      "If-Unmodified-Since",
      "Last-Modified",
      "Location",
      "Max-Forwards",
      "Proxy-Authorization",
      "Referer",
      "Retry-After",
      "Server",
      "User-Agent",
      "Cookie",
      "Set-Cookie",
      "Accept",
      "X-Custom",
      "Vary",
    ];
    const raw = names.flatMap((name, i) => [name, `${i}-a`, name.toLowerCase(), `${i}-b`, name.toUpperCase(), `${i}-c`]);
    const node = new IncomingMessage(null as never) as IncomingMessage & { _addHeaderLines(raw: string[], n: number): void };
    node._addHeaderLines(raw, raw.length);
    assert.deepEqual({ ...headersFromRaw(raw) }, { ...node.headers });
  });

  test("a repeated Content-Type: the first one decides, as in Node's req.headers", async (t) => {
    const { port } = await serve(t, (app) => {
      echo(app);
      app.post("/header", (req, res) => res.json({ body: req.body, type: req.get("content-type") }));
    });
    const body = '{"a":1}';
    const answer = await raw(
      port,
      `POST /header HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    assert.deepEqual(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)), { body: { a: 1 }, type: "application/json" });
  });

  test("no body: req.body is undefined", async (t) => {
    const { fetch } = await serve(t, (app) => app.post("/none", (req, res) => res.send(String(req.body))));
    assert.equal(await (await fetch("/none", { method: "POST" })).text(), "undefined");
  });

  test("chunked bodies are read too", async (t) => {
    const { port } = await serve(t, echo);
    const text = await raw(
      port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n3\r\n:1}\r\n0\r\n\r\n',
    );
    assert.match(text, /\{"type":"object","body":\{"a":1\}\}$/);
  });

  test("the body is parsed lazily: a handler that never reads it never fails on it", async (t) => {
    const { fetch } = await serve(t, (app) => app.post("/ignore", (_req, res) => res.send("fine")));
    const res = await fetch("/ignore", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } });
    assert.equal(res.status, 200);
  });

  test("malformed JSON, empty JSON and prototype poisoning get 400 and the server goes on", async (t) => {
    const { fetch, port } = await serve(t, echo);
    const post = (body: string) => fetch("/echo", { method: "POST", body, headers: { "content-type": "application/json" } });
    for (const body of ['{"a":', "{'a':1}", '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}']) {
      const res = await post(body);
      assert.equal(res.status, 400, body);
      assert.equal((await res.json()).error, "Bad Request");
    }
    const empty = await raw(port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    assert.deepEqual(statuses(empty), [400]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal((await post('{"ok":true}')).status, 200);
  });

  test("an empty body is read by its Content-Type whether it is framed by Content-Length: 0 or chunked", async (t) => {
    const { port } = await serve(t, echo);
    for (const framing of ["Content-Length: 0\r\n", "Transfer-Encoding: chunked\r\n"]) {
      const send = (type: string) =>
        raw(
          port,
          `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\n${framing}Connection: close\r\n\r\n${framing.startsWith("Transfer") ? "0\r\n\r\n" : ""}`,
        );
      const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as unknown;
      const json = await send("application/json");
      assert.deepEqual(statuses(json), [400], framing);
      assert.match(json, /content-type: application\/json/i);
      assert.deepEqual(bodyOf(json), {
        error: "Bad Request",
        message: "Body is empty but Content-Type is application/json; send a JSON value",
        statusCode: 400,
      });
      assert.deepEqual(bodyOf(await send("text/plain")), { type: "string", body: "" }, framing);
      assert.deepEqual(bodyOf(await send("application/x-www-form-urlencoded")), { type: "object", body: {} }, framing);
    }
    // Without a Content-Type there is nothing to parse it as: no body.
    assert.match(await raw(port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"), /\{"type":"undefined"\}$/);
  });

  test("a charset other than utf-8 gets 415", async (t) => {
    const { fetch } = await serve(t, echo);
    const res = await fetch("/echo", { method: "POST", body: "x", headers: { "content-type": "text/plain; charset=latin1" } });
    assert.equal(res.status, 415);
  });

  test("bodies over the limit get 413: declared ones before reading, chunked ones as they grow", async (t) => {
    const { fetch, port } = await serve(t, echo, { bodyLimit: 1024 });
    assert.equal((await fetch("/echo", { method: "POST", body: "x".repeat(1024), headers: { "content-type": "text/plain" } })).status, 200);
    const declared = await raw(port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5000000\r\n\r\nxxxx");
    assert.deepEqual(statuses(declared), [413]);
    assert.match(declared, /Connection: close/i);
    const chunk = "x".repeat(600);
    const chunked = await raw(port, [
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n",
      `258\r\n${chunk}\r\n`,
      `258\r\n${chunk}\r\n`,
      `258\r\n${chunk}\r\n`,
    ]);
    assert.deepEqual(statuses(chunked), [413]);
    assert.equal((await fetch("/echo", { method: "POST", body: "small", headers: { "content-type": "text/plain" } })).status, 200);
  });

  test("the default limit is 1 MiB", async (t) => {
    const { port } = await serve(t, echo);
    const over = await raw(port, `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: ${1024 * 1024 + 1}\r\n\r\n`);
    assert.deepEqual(statuses(over), [413]);
  });

  test("a client that vanishes mid-body never reaches the handler", async (t) => {
    let called = 0;
    const { port, fetch } = await serve(t, (app) => {
      app.post("/up", (_req, res) => {
        called++;
        res.send("got it");
      });
      app.get("/ok", (_req, res) => res.send("ok"));
    });
    await raw(port, "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\npartial", 50);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(called, 0);
    assert.equal(await (await fetch("/ok")).text(), "ok");
  });

  test("Express body parsers see the body as already read", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.use((req, _res, next) => {
        // What body-parser checks before reading the stream itself.
        if (req._body !== true) throw new Error("body not marked as read");
        next();
      });
      app.post("/x", (req, res) => res.json(req.body));
    });
    const res = await fetch("/x", { method: "POST", body: "[1]", headers: { "content-type": "application/json" } });
    assert.deepEqual(await res.json(), [1]);
  });
});
