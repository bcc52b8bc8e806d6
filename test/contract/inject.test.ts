// app.inject reads the same on every engine: for the same request, the app sees the same request
// and the test the same response, cookies and access-log line, in memory on the node engine and
// over a loopback connection on the native engine. Each expectation below is exact, and the same
// for both engines (this file runs once per engine).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Cog, type RequestLogLine } from "../../src/index.js";
import { engine } from "../helpers.js";

const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/;

function app(): { app: Cog; lines: RequestLogLine[] } {
  const lines: RequestLogLine[] = [];
  const app = new Cog({ engine, logErrors: false, logger: (line) => void lines.push(line as RequestLogLine) });
  app.all("/echo", (req, res) => {
    res.json({ method: req.method, url: req.url, headers: req.headers, rawHeaders: req.rawHeaders, ip: req.ip, cookies: req.cookies, body: req.body ?? null });
  });
  app.get("/cookies", (_req, res) => {
    res.setCookie("session", "a b", { sameSite: "lax", httpOnly: true, secure: true, maxAge: 60, path: "/" });
    res.setCookie("gone", "", { sameSite: "strict", expires: new Date(0), domain: "example.com" });
    res.setCookie("cross", "1", { sameSite: "none", secure: true, partitioned: true });
    res.send("ok");
  });
  app.get("/headers", (_req, res) => {
    res.set("x-list", ["one", "two"]).set("x-joined", "one, two").set("x-number", "5").send("ok");
  });
  app.get("/stream", (_req, res) => {
    res.write("a");
    res.end("b");
  });
  app.get("/close", (_req, res) => res.set("connection", "close").send("bye"));
  app.get("/text", (_req, res) => res.send("hello"));
  return { app, lines };
}

describe(`app.inject reads the same on every engine (${engine})`, () => {
  test("the request the app sees: light-my-request's default headers, in its order, the remote address asked for", async () => {
    const { app: cog } = app();
    const res = await cog.inject({
      method: "POST",
      url: "/echo?x=1",
      headers: { "X-Custom": "A", accept: "text/plain" },
      cookies: { theme: "dark mode" },
      payload: { a: 1 },
      remoteAddress: "203.0.113.7",
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      method: "POST",
      url: "/echo?x=1",
      headers: {
        "x-custom": "A",
        accept: "text/plain",
        "user-agent": "lightMyRequest",
        host: "localhost:80",
        cookie: "theme=dark%20mode",
        "content-type": "application/json",
        "content-length": "7",
      },
      rawHeaders: [
        "x-custom",
        "A",
        "accept",
        "text/plain",
        "user-agent",
        "lightMyRequest",
        "host",
        "localhost:80",
        "cookie",
        "theme=dark%20mode",
        "content-type",
        "application/json",
        "content-length",
        "7",
      ],
      ip: "203.0.113.7",
      cookies: { theme: "dark mode" },
      body: { a: 1 },
    });
    const plain = await cog.inject({ url: "http://example.com:8080/echo", headers: { "user-agent": undefined } });
    assert.deepEqual([plain.json().headers, plain.json().ip], [{ host: "example.com:8080" }, "127.0.0.1"]);
  });

  test("the response: status, headers as the app set them, one parse of the cookies", async () => {
    const { app: cog } = app();
    const res = await cog.inject("/cookies");
    const { date, "x-request-id": id, ...headers } = res.headers;
    assert.match(String(date), HTTP_DATE);
    assert.match(String(id), /^[\w-]+-\d+$/);
    assert.deepEqual(
      { status: res.statusCode, message: res.statusMessage, body: res.body, headers },
      {
        status: 200,
        message: "OK",
        body: "ok",
        headers: {
          "set-cookie": [
            "session=a%20b; Max-Age=60; Path=/; HttpOnly; Secure; SameSite=Lax",
            "gone=; Domain=example.com; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; SameSite=Strict",
            "cross=1; Path=/; Secure; Partitioned; SameSite=None",
          ],
          "content-type": "text/plain; charset=utf-8",
          "content-length": "2",
        },
      },
    );
    assert.deepEqual(res.cookies, [
      { name: "session", value: "a b", maxAge: 60, path: "/", httpOnly: true, secure: true, sameSite: "lax" },
      { name: "gone", value: "", domain: "example.com", path: "/", expires: new Date(0), sameSite: "strict" },
      { name: "cross", value: "1", path: "/", secure: true, partitioned: true, sameSite: "none" },
    ]);
  });

  test("an array header is an array, a header the app joined is a string; a streamed body is chunked; HEAD has no body", async () => {
    const { app: cog } = app();
    const strip = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([name]) => name !== "date" && name !== "x-request-id"));
    const headers = await cog.inject("/headers");
    assert.deepEqual(strip(headers.headers), {
      "x-list": ["one", "two"],
      "x-joined": "one, two",
      "x-number": "5",
      "content-type": "text/plain; charset=utf-8",
      "content-length": "2",
    });
    const streamed = await cog.inject("/stream");
    assert.deepEqual([strip(streamed.headers), streamed.body], [{ "transfer-encoding": "chunked" }, "ab"]);
    const head = await cog.inject({ method: "HEAD", url: "/text" });
    assert.deepEqual(
      [head.statusCode, strip(head.headers), head.body, head.rawPayload.length],
      [200, { "content-type": "text/plain; charset=utf-8", "content-length": "5" }, "", 0],
    );
    const closing = await cog.inject("/close");
    assert.deepEqual(
      [strip(closing.headers), closing.body],
      [{ connection: "close", "content-type": "text/plain; charset=utf-8", "content-length": "3" }, "bye"],
    );
  });

  test("the access log: one line per injected request, answered (not aborted)", async () => {
    const { app: cog, lines } = app();
    await cog.inject("/text");
    await cog.inject({ method: "POST", url: "/echo", payload: "hi" });
    await cog.inject("/missing");
    assert.deepEqual(
      lines.map(({ time: _t, ms: _ms, id: _id, ...line }) => line),
      [
        { level: "info", msg: "request", method: "GET", path: "/text", route: "/text", status: 200, bytes: 5, aborted: false },
        { level: "info", msg: "request", method: "POST", path: "/echo", route: "/echo", status: 200, bytes: 276, aborted: false },
        { level: "info", msg: "request", method: "GET", path: "/missing", route: null, status: 404, bytes: 79, aborted: false },
      ],
    );
  });
});
