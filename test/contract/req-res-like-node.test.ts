// req and res behave like Node's own request and response streams on every engine: what
// Express-style middleware relies on (events, pipe, for await, the header API, the names it
// sets), Express's mount semantics for app.use("/prefix"), req.app, Cog's signed cookies, and
// header bytes as node:http writes them. Each over real sockets, on the engine COG_ENGINE names.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { connect } from "node:net";
import { pipeline, Readable, Writable } from "node:stream";
import { describe, test } from "node:test";
import { createGzip, gunzipSync } from "node:zlib";
import express from "express";
import type { CogOptions, Handler } from "../../src/index.js";
import { serve } from "../helpers.js";
import { cookiesOf, eventually, exchange, fetchWithin, HANG_MS, header, parseResponses, request, within } from "../wire.js";

const mw = (fn: unknown) => fn as Handler;
const loose = (x: unknown) => x as Record<string, any>;
/** Options of the contract that CogOptions may not declare yet. */
const options = (o: Record<string, unknown>) => o as CogOptions;
type Loose = Record<string, any>;

describe("res is a Writable-like response", () => {
  test("write, end(chunk, cb), headersSent, writableEnded/writableFinished, and finish then close", async (t) => {
    const seen: string[] = [];
    let done!: () => void;
    const closed = new Promise<void>((resolve) => (done = resolve));
    const { port } = await serve(t, (app) => {
      app.get("/w", (_req, res) => {
        const r = res as unknown as Loose;
        seen.push(`start headersSent=${r.headersSent} ended=${r.writableEnded} finished=${r.writableFinished}`);
        r.on("finish", () => seen.push(`finish ended=${r.writableEnded} finished=${r.writableFinished}`));
        r.on("close", () => {
          seen.push("close");
          done();
        });
        r.setHeader("content-type", "text/plain; charset=utf-8");
        r.statusMessage = "Fine";
        const ok = r.write("one,");
        seen.push(`after write headersSent=${r.headersSent} returns=${typeof ok}`);
        r.write(Buffer.from("two,"));
        r.end("three", () => seen.push("end callback"));
        seen.push(`after end ended=${r.writableEnded}`);
      });
    });
    const answer = await request(port, "/w");
    assert.equal(answer.status, 200);
    assert.equal(answer.statusMessage, "Fine");
    assert.equal(answer.text, "one,two,three");
    await within(closed, `the close event (saw ${seen.join(" | ")})`);
    // The end callback and 'finish' come in either order: Node 24 calls the callback first, 20 and 22 after.
    const [finish, callback] = [seen.indexOf("finish ended=true finished=true"), seen.indexOf("end callback")];
    assert.ok(finish !== -1 && callback !== -1, seen.join(" | "));
    assert.deepEqual(
      seen.filter((_, i) => i !== finish && i !== callback),
      ["start headersSent=false ended=false finished=false", "after write headersSent=true returns=boolean", "after end ended=true", "close"],
    );
    assert.ok(Math.min(finish, callback) === 3 && Math.max(finish, callback) === 4, seen.join(" | "));
  });

  test("writeHead fixes the status line: statusCode or statusMessage changed afterwards change nothing, whole or streamed", async (t) => {
    const { port } = await serve(t, (app) => {
      for (const path of ["/whole", "/streamed"]) {
        app.get(path, (_req, res) => {
          const r = res as unknown as Loose;
          r.writeHead(202, "Taken", { "x-a": "1" });
          r.statusCode = 500;
          r.statusMessage = "Bad\r\nX-Injected: 1";
          if (path === "/streamed") r.write("a");
          r.end("b");
        });
      }
    });
    for (const path of ["/whole", "/streamed", "/whole"]) {
      const answer = await request(port, path);
      assert.equal(`${answer.status} ${answer.statusMessage} ${answer.text}`, path === "/streamed" ? "202 Taken ab" : "202 Taken b", path);
      assert.equal(answer.headers["x-injected"], undefined);
    }
  });

  test("the header API: setHeader/getHeader/getHeaders/hasHeader/removeHeader/getHeaderNames, and writeHead(status, reason, headers)", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/h", (_req, res) => {
        const r = res as unknown as Loose;
        r.setHeader("X-One", "1");
        r.setHeader("x-list", ["a", "b"]);
        r.setHeader("X-Num", 5);
        const seen = {
          names: r.getHeaderNames(),
          all: { ...r.getHeaders() },
          has: [r.hasHeader("X-ONE"), r.hasHeader("x-none")],
          one: r.getHeader("x-one"),
          list: r.getHeader("X-List"),
        };
        r.removeHeader("x-list");
        seen.has.push(r.hasHeader("x-list"));
        r.writeHead(203, "Quite Fine", { "X-Two": "2" });
        r.end(JSON.stringify(seen));
      });
    });
    const answer = await request(port, "/h");
    assert.equal(answer.status, 203);
    assert.equal(answer.statusMessage, "Quite Fine");
    assert.equal(answer.headers["x-one"], "1");
    assert.equal(answer.headers["x-two"], "2");
    assert.equal(answer.headers["x-num"], "5");
    assert.equal(answer.headers["x-list"], undefined);
    assert.deepEqual(JSON.parse(answer.text), {
      names: ["x-one", "x-list", "x-num"],
      all: { "x-one": "1", "x-list": ["a", "b"], "x-num": 5 },
      has: [true, false, false],
      one: "1",
      list: ["a", "b"],
    });
  });

  test("headers set with Cog's res.set/append/setCookie go out however the response is written: write/end, writeHead, flushHeaders, pipe", async (t) => {
    const { port } = await serve(t, (app) => {
      const decorate: Handler = (_req, res, next) => {
        res.set("x-cog", "set").append("vary", "origin").setCookie("c", "v");
        next();
      };
      app.get("/write", decorate, (_req, res) => {
        loose(res).write("a");
        loose(res).end("b");
      });
      app.get("/end", decorate, (_req, res) => loose(res).end("ab"));
      app.get("/writehead", decorate, (_req, res) => {
        loose(res).writeHead(200, { "x-head": "h" });
        loose(res).end("ab");
      });
      app.get("/flush", decorate, (_req, res) => {
        loose(res).flushHeaders();
        loose(res).end("ab");
      });
      app.get("/pipe", decorate, (_req, res) => void Readable.from(["a", "b"]).pipe(res as unknown as Writable));
    });
    for (const path of ["/write", "/end", "/writehead", "/flush", "/pipe"]) {
      const answer = await request(port, path);
      assert.equal(answer.text, "ab", path);
      assert.equal(answer.headers["x-cog"], "set", path);
      assert.equal(answer.headers.vary, "origin", path);
      assert.deepEqual(answer.headers["set-cookie"], ["c=v; Path=/"], path);
    }
  });

  test("flushHeaders sends the status and headers before the body", async (t) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { base } = await serve(t, (app) => {
      app.get("/flushed", async (_req, res) => {
        const r = res as unknown as Loose;
        r.statusCode = 202;
        r.setHeader("x-early", "yes");
        r.flushHeaders();
        assert.equal(r.headersSent, true);
        // The client has the head before any body exists: held back, it would never come.
        await released;
        r.end("later");
      });
    });
    const res = await fetchWithin(base + "/flushed");
    assert.equal(res.status, 202);
    assert.equal(res.headers.get("x-early"), "yes");
    release();
    assert.equal(await res.text(), "later");
  });

  test("res is a pipe() and pipeline() destination, through a Transform too", async (t) => {
    let pipedDone!: (err: unknown) => void;
    const piped = new Promise<unknown>((resolve) => (pipedDone = resolve));
    const { port } = await serve(t, (app) => {
      app.get("/pipe", (_req, res) => {
        res.setHeader("content-type", "text/plain");
        Readable.from(["a", "b", "c"]).pipe(res as unknown as Writable);
      });
      app.get("/pipeline", (_req, res) => {
        res.setHeader("content-type", "text/plain");
        pipeline(Readable.from(["x", "y"]), res as unknown as Writable, (err) => pipedDone(err ?? null));
      });
      app.get("/gzip", (_req, res) => {
        res.setHeader("content-encoding", "gzip");
        Readable.from(["zipped ", "body"])
          .pipe(createGzip())
          .pipe(res as unknown as Writable);
      });
    });
    assert.equal((await request(port, "/pipe")).text, "abc");
    assert.equal((await request(port, "/pipeline")).text, "xy");
    assert.equal(await piped, null, "pipeline calls back without an error");
    assert.equal(gunzipSync((await request(port, "/gzip")).body).toString(), "zipped body");
  });

  test("write returns false when the client can't keep up, and drain says when to go on", async (t) => {
    const chunk = Buffer.alloc(64 * 1024, 120);
    const report = { written: 0, refused: false, drained: false };
    const { port } = await serve(t, (app) => {
      app.get("/drain", (_req, res) => {
        const r = res as unknown as Loose;
        r.setHeader("content-type", "application/octet-stream");
        // The client reads nothing until write refuses: the socket's buffers fill and stay full.
        while (report.written < 256 * 1024 * 1024) {
          report.written += chunk.length;
          if (!r.write(chunk)) {
            report.refused = true;
            break;
          }
        }
        if (!report.refused) return r.end();
        r.once("drain", () => {
          report.drained = true;
          r.end();
        });
      });
    });
    const socket = connect(port, "127.0.0.1");
    t.after(() => socket.destroy());
    socket.pause();
    socket.write("GET /drain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    await eventually(() => report.refused, "res.write to return false");
    let received = 0;
    socket.on("data", (data: Buffer) => (received += data.length));
    socket.resume();
    await within(once(socket, "end"), `the end of the body (${JSON.stringify(report)})`, HANG_MS * 3);
    assert.equal(report.drained, true);
    assert.ok(received > report.written, `received ${received} bytes for ${report.written} written`);
  });

  test("events: on/once/off/emit work on res as on any EventEmitter", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/events", (_req, res) => {
        const r = res as unknown as Loose;
        const calls: string[] = [];
        const each = (x: string) => calls.push(`on:${x}`);
        r.on("custom", each);
        r.once("custom", (x: string) => calls.push(`once:${x}`));
        r.emit("custom", "1");
        r.emit("custom", "2");
        r.off("custom", each);
        r.emit("custom", "3");
        r.end(calls.join(","));
      });
    });
    assert.equal((await request(port, "/events")).text, "on:1,once:1,on:2");
  });
});

describe("req is a readable stream of the request", () => {
  const body = randomBytes(100 * 1024);
  const sha = createHash("sha256").update(body).digest("hex");
  const digest = (chunks: Buffer[]) => createHash("sha256").update(Buffer.concat(chunks)).digest("hex");

  // Cog reads JSON, form, text and byte bodies before the chain runs (so `req.body` is there
  // synchronously), which consumes them, as Express's body parsers do; a multipart body is left
  // unread, for a parser such as multer, and streams.
  test("a body Cog has read is consumed, as by Express's body parsers: the stream ends at once, req.rawBody holds it", async (t) => {
    const { port } = await serve(t, (app) => {
      app.post("/consumed", async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req as unknown as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
        res.json({ streamed: Buffer.concat(chunks).length, raw: req.rawBody?.length ?? null, body: req.body });
      });
    });
    const answer = await request(port, "/consumed", { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.from('{"a":1}') });
    assert.deepEqual(JSON.parse(answer.text), { streamed: 0, raw: 7, body: { a: 1 } });
  });

  test("for await, on(data/end), pipe and pause/resume each give a multipart body, which Cog leaves unread", async (t) => {
    const { port } = await serve(t, (app) => {
      app.post("/for-await", async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req as unknown as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
        res.json({ sha: digest(chunks), raw: req.rawBody === undefined ? null : createHash("sha256").update(req.rawBody).digest("hex") });
      });
      app.post("/events", (req, res) => {
        const chunks: Buffer[] = [];
        const r = req as unknown as Loose;
        r.on("data", (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
        r.on("end", () => res.json({ sha: digest(chunks) }));
      });
      app.post("/pipe", (req, res) => {
        const chunks: Buffer[] = [];
        const sink = new Writable({
          write(chunk: Buffer, _encoding, callback) {
            chunks.push(chunk);
            callback();
          },
        });
        sink.on("finish", () => res.json({ sha: digest(chunks) }));
        (req as unknown as Readable).pipe(sink);
      });
      app.post("/paused", (req, res) => {
        const r = req as unknown as Loose;
        r.pause();
        const chunks: Buffer[] = [];
        setImmediate(() => {
          r.on("data", (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
          r.on("end", () => res.json({ sha: digest(chunks), paused: r.isPaused() }));
          r.resume();
        });
      });
    });
    const post = (path: string) => request(port, path, { method: "POST", headers: { "content-type": "multipart/form-data; boundary=x" }, body });
    assert.deepEqual(JSON.parse((await post("/for-await")).text), { sha, raw: null });
    assert.deepEqual(JSON.parse((await post("/events")).text), { sha });
    assert.deepEqual(JSON.parse((await post("/pipe")).text), { sha });
    assert.deepEqual(JSON.parse((await post("/paused")).text), { sha, paused: false });
  });

  test("a chunked multipart body streams too; a request without a body ends at once", async (t) => {
    const { port } = await serve(t, (app) => {
      app.all("/read", async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req as unknown as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
        res.send(`${req.method} ${Buffer.concat(chunks).toString("utf8")}|`);
      });
    });
    const ex = await exchange(
      port,
      "POST /read HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n" +
        "GET /read HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    const parsed = parseResponses(ex.bytes);
    assert.equal(parsed.malformed, null);
    assert.deepEqual(
      parsed.responses.map((r) => r.body.toString()),
      ["POST hello world|", "GET |"],
    );
  });

  test("headers, rawHeaders, httpVersion and socket.remoteAddress are Node's", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/who", (req, res) => {
        const r = req as unknown as Loose;
        res.json({
          headers: { custom: r.headers["x-custom"], cookie: r.headers.cookie },
          raw: r.rawHeaders.filter((_: string, i: number) => i % 2 === 0 && /^x-/i.test(r.rawHeaders[i])),
          httpVersion: r.httpVersion,
          major: r.httpVersionMajor,
          minor: r.httpVersionMinor,
          address: r.socket?.remoteAddress,
          complete: typeof r.complete,
        });
      });
    });
    const ex = await exchange(port, "GET /who HTTP/1.1\r\nHost: x\r\nX-Custom: a\r\nX-Custom: b\r\nCookie: a=1\r\nCookie: b=2\r\nConnection: close\r\n\r\n");
    const [answer] = parseResponses(ex.bytes).responses;
    assert.deepEqual(JSON.parse(answer!.body.toString()), {
      headers: { custom: "a, b", cookie: "a=1; b=2" },
      raw: ["X-Custom", "X-Custom"],
      httpVersion: "1.1",
      major: 1,
      minor: 1,
      address: "127.0.0.1",
      complete: "boolean",
    });
  });
});

describe("names and links middleware relies on", () => {
  test("Cog keeps nothing of its own on the names middleware sets (req.id, res.flush, …): they start undefined and setting them breaks nothing", async (t) => {
    const reqNames = [
      "id",
      "log",
      "user",
      "session",
      "sessionID",
      "file",
      "files",
      "startTime",
      "_startAt",
      "_startTime",
      "_remoteAddress",
      "rateLimit",
      "secret",
    ];
    // (`res.locals` is Express's, and Cog's too: an object per response.)
    const resNames = ["flush", "log", "err", "_startAt", "_startTime", "responseTime"];
    const before: Record<string, string> = {};
    const { port } = await serve(t, (app) => {
      app.use((req, res, next) => {
        for (const name of reqNames) before[`req.${name}`] = typeof (req as unknown as Loose)[name];
        for (const name of resNames) before[`res.${name}`] = typeof (res as unknown as Loose)[name];
        for (const name of reqNames) (req as unknown as Loose)[name] = `set ${name}`;
        for (const name of resNames) (res as unknown as Loose)[name] = name === "flush" ? () => undefined : `set ${name}`;
        next();
      });
      app.post("/named", (req, res) => {
        const kept = [
          ...reqNames.filter((n) => (req as unknown as Loose)[n] !== `set ${n}`),
          ...resNames.filter((n) => n !== "flush" && (res as unknown as Loose)[n] !== `set ${n}`),
        ];
        res.json({ kept: kept.length === 0 ? "all" : kept, id: (req as unknown as Loose).id, body: req.body });
      });
    });
    for (let i = 0; i < 2; i++) {
      const answer = await request(port, "/named", { method: "POST", headers: { "content-type": "application/json" }, body: `{"n":${i}}` });
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.text), { kept: "all", id: "set id", body: { n: i } });
      assert.deepEqual(
        Object.entries(before).filter(([, type]) => type !== "undefined"),
        [],
        "none of these names is Cog's",
      );
    }
  });

  test("req.app is the app", async (t) => {
    let seen: unknown;
    const { app, port } = await serve(t, (app) => {
      app.get("/app", (req, res) => {
        seen = (req as unknown as Loose).app;
        res.send("ok");
      });
    });
    assert.equal((await request(port, "/app")).text, "ok");
    assert.ok(seen === app, "req.app is the app that serves the request");
  });
});

describe('app.use("/prefix", mw) mounts as Express does', () => {
  test("the middleware sees req.url without the prefix, req.baseUrl and req.originalUrl; the route sees the full URL again", async (t) => {
    const inside: Loose[] = [];
    const { port } = await serve(t, (app) => {
      app.use("/api", (req, _res, next) => {
        const r = req as unknown as Loose;
        inside.push({ url: r.url, baseUrl: r.baseUrl, originalUrl: r.originalUrl });
        next();
      });
      app.group("/v1", (v1) => {
        v1.use("/admin", (req, _res, next) => {
          const r = req as unknown as Loose;
          inside.push({ url: r.url, baseUrl: r.baseUrl, originalUrl: r.originalUrl });
          next();
        });
        v1.get("/admin/panel", (req, res) => res.json({ url: req.url, path: req.path, originalUrl: (req as unknown as Loose).originalUrl }));
      });
      app.get("/api/users", (req, res) =>
        res.json({
          url: req.url,
          path: req.path,
          query: req.query,
          originalUrl: (req as unknown as Loose).originalUrl,
          baseUrl: (req as unknown as Loose).baseUrl ?? "",
        }),
      );
      app.get("/api", (req, res) => res.json({ url: req.url, path: req.path }));
    });
    assert.deepEqual(JSON.parse((await request(port, "/api/users?x=1")).text), {
      url: "/api/users?x=1",
      path: "/api/users",
      query: { x: "1" },
      originalUrl: "/api/users?x=1",
      baseUrl: "",
    });
    assert.deepEqual(JSON.parse((await request(port, "/api?y=2")).text), { url: "/api?y=2", path: "/api" });
    assert.deepEqual(JSON.parse((await request(port, "/v1/admin/panel")).text), {
      url: "/v1/admin/panel",
      path: "/v1/admin/panel",
      originalUrl: "/v1/admin/panel",
    });
    assert.deepEqual(inside, [
      { url: "/users?x=1", baseUrl: "/api", originalUrl: "/api/users?x=1" },
      { url: "/?y=2", baseUrl: "/api", originalUrl: "/api?y=2" },
      { url: "/panel", baseUrl: "/v1/admin", originalUrl: "/v1/admin/panel" },
    ]);
  });

  test("an express.Router() mounted under a prefix routes by the rest of the path, and falls through to Cog's 404", async (t) => {
    const { port } = await serve(t, (app) => {
      const router = express.Router();
      router.use((req, res, next) => {
        (res as unknown as Loose).setHeader("x-router", "yes");
        next();
      });
      router.get("/hello/:name", (req, res) => {
        const r = req as unknown as Loose;
        (res as unknown as Loose).json({ name: r.params.name, url: r.url, baseUrl: r.baseUrl, originalUrl: r.originalUrl });
      });
      app.use("/api", mw(router));
      app.get("/after", (req, res) => res.json({ url: req.url }));
    });
    const hello = await request(port, "/api/hello/bob?x=1");
    assert.equal(hello.status, 200);
    assert.equal(hello.headers["x-router"], "yes");
    assert.deepEqual(JSON.parse(hello.text), { name: "bob", url: "/hello/bob?x=1", baseUrl: "/api", originalUrl: "/api/hello/bob?x=1" });
    assert.equal((await request(port, "/api/nothing")).status, 404);
    assert.deepEqual(JSON.parse((await request(port, "/after")).text), { url: "/after" });
  });
});

describe("Cog's own signed cookies", () => {
  test("res.setCookie(name, value, { signed: true }) comes back verified in req.signedCookies; tampered or foreign ones don't", async (t) => {
    const define = (app: import("../../src/index.js").Cog) => {
      app.get("/set", (_req, res) =>
        (res.setCookie as (n: string, v: string, o: object) => typeof res)("user", "alice", { signed: true, httpOnly: true }).send("set"),
      );
      app.get("/get", (req, res) => res.json({ user: (req as unknown as Loose).signedCookies?.user ?? null }));
    };
    const { port } = await serve(t, define, options({ secret: "first secret" }));
    const { port: otherPort } = await serve(t, define, options({ secret: "another secret" }));
    const set = await request(port, "/set");
    assert.equal(set.status, 200);
    const cookie = cookiesOf(set.headers);
    assert.match(cookie, /^user=/);
    assert.notEqual(cookie, "user=alice", "the value carries a signature");
    assert.deepEqual(JSON.parse((await request(port, "/get", { headers: { cookie } })).text), { user: "alice" });

    const absent = (answer: { text: string }) => [false, null].includes(JSON.parse(answer.text).user);
    // One character changed in the middle of the value (never the last: base64 may ignore its low bits).
    const value = cookie.slice("user=".length);
    const middle = Math.floor(value.length / 2);
    const tampered = `user=${value.slice(0, middle)}${value[middle] === "A" ? "B" : "A"}${value.slice(middle + 1)}`;
    assert.ok(absent(await request(port, "/get", { headers: { cookie: tampered } })), "a tampered cookie is not in signedCookies");
    const foreign = cookiesOf((await request(otherPort, "/set")).headers);
    assert.ok(absent(await request(port, "/get", { headers: { cookie: foreign } })), "a cookie signed with another secret is not in signedCookies");
    assert.ok(absent(await request(port, "/get", { headers: { cookie: "user=alice" } })), "an unsigned cookie is not in signedCookies");
    assert.ok(absent(await request(port, "/get")));
  });
});

describe("header bytes as node:http writes them", () => {
  test("non-ASCII (latin1) header values go out as latin1 bytes before a Buffer body, an empty body or written chunks; beyond latin1 is a 500", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/buffer", (_req, res) => res.set("x-name", "caf\u00e9").send(Buffer.from("ok")));
      app.get("/empty", (_req, res) => res.set("x-name", "caf\u00e9").send(undefined, 204));
      app.get("/written", (_req, res) => {
        res.setHeader("x-name", "caf\u00e9");
        (res as unknown as Loose).write(Buffer.from("o"));
        (res as unknown as Loose).end(Buffer.from("k"));
      });
      app.get("/wide", (_req, res) => res.set("x-name", "\u65e5\u672c").send(Buffer.from("no")));
    });
    for (const path of ["/buffer", "/empty", "/written"]) {
      const ex = await exchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      const parsed = parseResponses(ex.bytes);
      assert.equal(parsed.malformed, null, path);
      assert.equal(parsed.responses.length, 1, path);
      assert.equal(header(parsed.responses[0]!, "x-name"), "caf\u00e9", `${path}: one latin1 byte 0xE9`);
      assert.ok(ex.bytes.includes(Buffer.from("x-name: caf\xe9\r\n", "latin1")), path);
    }
    assert.equal((await request(port, "/wide")).status, 500);
  });
});
