// One test per bug found running Express middleware and Express-style calls on Cog, each named
// after what went wrong, each the smallest app that showed it. They run on both engines.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { EventEmitter } from "node:events";
import { IncomingMessage, OutgoingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Stream, Writable } from "node:stream";
import { describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import compression from "compression";
import cookieParser from "cookie-parser";
import express from "express";
import session from "express-session";
import morgan from "morgan";
import multer from "multer";
import pino from "pino";
import { pinoHttp } from "pino-http";
import serveStatic from "serve-static";
import { Cog, HttpError, type CogOptions, type Handler } from "../../src/index.js";
import { engine, nativeSkip, serve } from "../helpers.js";
import { captureErrors, cookiesOf, exchange, fetchWithin, header, parseResponses, request } from "../wire.js";

const mw = (fn: unknown) => fn as Handler;
type Loose = Record<string, any>;
const loose = (x: unknown) => x as Loose;
const options = (o: Record<string, unknown>) => o as CogOptions;

function staticDir(t: { after(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "cog-regression-"));
  writeFileSync(join(dir, "hello.txt"), "hello file\n");
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** One request and, pipelined behind it, GET /ok: the parsed answers (and whether the server went quiet instead). */
async function withNext(port: number, path: string, boundMs?: number) {
  const ex = await exchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, boundMs);
  const parsed = parseResponses(ex.bytes);
  assert.equal(ex.timedOut, false, `${path}: no answer, and the connection held open: ${JSON.stringify(ex.bytes.toString("latin1"))}`);
  assert.equal(parsed.malformed, null, `${path}: ${parsed.malformed}`);
  assert.ok(parsed.responses.length > 0, `${path}: the connection closed with no answer`);
  return parsed.responses;
}

const BUILT_IN = new Set<object>([
  Object.prototype,
  EventEmitter.prototype,
  Stream.prototype,
  Readable.prototype,
  Writable.prototype,
  IncomingMessage.prototype,
  ServerResponse.prototype,
  OutgoingMessage.prototype,
]);

/** Whether two objects share a prototype that is Cog's own (not Node's stream or HTTP classes). */
function sharesCogClass(a: object, b: object): boolean {
  const chain = new Set<object>();
  for (let p = Object.getPrototypeOf(b); p !== null; p = Object.getPrototypeOf(p)) chain.add(p);
  for (let p = Object.getPrototypeOf(a); p !== null; p = Object.getPrototypeOf(p)) if (chain.has(p)) return !BUILT_IN.has(p);
  return false;
}

describe("regressions", () => {
  test("serve-static crashed the process on native (dest.on is not a function)", async (t) => {
    const dir = staticDir(t);
    const { port } = await serve(t, (app) => {
      app.use(mw(serveStatic(dir)));
      app.get("/ok", (_req, res) => res.send("ok"));
    });
    const file = await request(port, "/hello.txt");
    assert.equal(file.status, 200);
    assert.equal(file.text, "hello file\n");
    assert.equal((await request(port, "/ok")).text, "ok", "the server is still up");
  });

  test("compression hung the request (it sets res.flush)", async (t) => {
    const big = "compress me ".repeat(1000);
    const { port } = await serve(t, (app) => {
      app.use(mw(compression()));
      app.get("/big", (_req, res) => res.send(big));
    });
    const answer = await request(port, "/big", { headers: { "accept-encoding": "gzip" } });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers["content-encoding"], "gzip");
    assert.equal(gunzipSync(answer.body).toString(), big);
  });

  test("morgan closed the connection with no answer", async (t) => {
    const lines: string[] = [];
    const { port } = await serve(t, (app) => {
      app.use(mw(morgan("tiny", { stream: { write: (line: string) => void lines.push(line) } })));
      app.get("/logged", (_req, res) => res.send("logged"));
    });
    const answer = await request(port, "/logged");
    assert.equal(answer.status, 200);
    assert.equal(answer.text, "logged");
  });

  test("express-session cut the socket (res._implicitHeader missing)", async (t) => {
    const { port } = await serve(t, (app) => {
      app.use(mw(session({ secret: "s", resave: false, saveUninitialized: true })));
      app.get("/s", (_req, res) => res.send("with session"));
    });
    const answer = await request(port, "/s");
    assert.equal(answer.status, 200);
    assert.equal(answer.text, "with session");
    assert.match(cookiesOf(answer.headers), /^connect\.sid=/);
  });

  test("express.json() answered 500", async (t) => {
    const { port } = await serve(t, (app) => {
      app.use(mw(express.json()));
      app.post("/json", (req, res) => res.json({ got: req.body }));
    });
    const answer = await request(port, "/json", { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' });
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.text), { got: { a: 1 } });
  });

  test("pino-http answered 500", async (t) => {
    const sink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    const { port } = await serve(t, (app) => {
      app.use(mw(pinoHttp({ logger: pino(sink) })));
      app.get("/p", (_req, res) => res.send("logged"));
    });
    const answer = await request(port, "/p");
    assert.equal(answer.status, 200);
    assert.equal(answer.text, "logged");
  });

  test("multer answered 500 on both engines (the body was consumed before the chain)", async (t) => {
    const upload = multer({ storage: multer.memoryStorage() });
    const { base } = await serve(t, (app) => {
      app.post("/upload", mw(upload.single("file")), (req, res) => {
        const file = loose(req).file as { originalname: string; buffer: Buffer } | undefined;
        res.json({ field: loose(req).body?.field ?? null, name: file?.originalname ?? null, content: file?.buffer.toString() ?? null });
      });
    });
    const form = new FormData();
    form.append("field", "value");
    form.append("file", new Blob(["uploaded bytes"]), "a.txt");
    const res = await fetchWithin(base + "/upload", { method: "POST", body: form });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { field: "value", name: "a.txt", content: "uploaded bytes" });
  });

  test("res.write did not exist: an SSE route delivers each event as it is written", async (t) => {
    // The route writes event n+1 only once the client has read event n: events held until
    // the end would never arrive, and the test would time out.
    const seen: Array<() => void> = [];
    const read = [0, 1, 2].map(() => new Promise<void>((resolve) => seen.push(resolve)));
    const { base } = await serve(t, (app) => {
      app.get("/events", async (_req, res) => {
        loose(res).writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        for (let n = 0; n < 3; n++) {
          loose(res).write(`data: event ${n}\n\n`);
          await read[n];
        }
        loose(res).end();
      });
    });
    const res = await fetchWithin(base + "/events");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (let n = 0; n < 3; n++) {
      while (!text.includes(`data: event ${n}\n\n`)) {
        const { value, done } = await reader.read();
        assert.equal(done, false, `the stream ended before event ${n}: ${JSON.stringify(text)}`);
        text += decoder.decode(value, { stream: true });
      }
      seen[n]!();
    }
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    assert.equal(text, "data: event 0\n\ndata: event 1\n\ndata: event 2\n\n");
  });

  test("setting req.id in a middleware left the request unanswered", async (t) => {
    const { port } = await serve(t, (app) => {
      app.use((req, _res, next) => {
        loose(req).id = "request-1";
        next();
      });
      app.get("/id", (req, res) => res.send(String(loose(req).id)));
    });
    const answer = await request(port, "/id");
    assert.equal(answer.status, 200);
    assert.equal(answer.text, "request-1");
  });

  test('res.status("201") left the request unanswered: it is a 500 Internal Server Error', async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/ok", (_req, res) => res.send("ok"));
      app.get("/string-status", (_req, res) => res.status("201" as unknown as number).send("created?"));
    });
    const [answer, next] = await withNext(port, "/string-status");
    assert.equal(`${answer!.status} ${answer!.reason}`, "500 Internal Server Error");
    assert.equal(next?.body.toString(), "ok");
  });

  test("res.redirect(301, url), Express's argument order, left the request unanswered; both orders work", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/express-order", (_req, res) => (res.redirect as unknown as (s: number, u: string) => unknown)(301, "/new-home"));
      app.get("/cog-order", (_req, res) => res.redirect("/new-home", 308));
      app.get("/default", (_req, res) => res.redirect("/new-home"));
    });
    for (const [path, status] of [
      ["/express-order", 301],
      ["/cog-order", 308],
      ["/default", 302],
    ] as const) {
      const answer = await request(port, path);
      assert.equal(answer.status, status, path);
      assert.equal(answer.headers.location, "/new-home", path);
    }
  });

  test("res.status(0 | 1000 | NaN) sent HTTP/1.1 0 Unknown", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/ok", (_req, res) => res.send("ok"));
      app.get("/zero", (_req, res) => res.status(0).send("x"));
      app.get("/thousand", (_req, res) => res.status(1000).send("x"));
      app.get("/nan", (_req, res) => res.status(NaN).send("x"));
    });
    for (const path of ["/zero", "/thousand", "/nan"]) {
      const [answer, next] = await withNext(port, path);
      assert.equal(`${answer!.status} ${answer!.reason}`, "500 Internal Server Error", path);
      assert.equal(next?.body.toString(), "ok", path);
    }
  });

  test('on node, res.statusMessage = "OK\\r\\nX: y" then send exited the process', async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/ok", (_req, res) => res.send("ok"));
      app.get("/split", (_req, res) => {
        loose(res).statusMessage = "OK\r\nX: y";
        res.send("x");
      });
    });
    const [answer, next] = await withNext(port, "/split");
    assert.equal(`${answer!.status} ${answer!.reason}`, "500 Internal Server Error");
    assert.equal(header(answer!, "x"), undefined);
    assert.equal(next?.body.toString(), "ok", "the process is alive and serving");
  });

  test("after a bad header the status line read HTTP/1.1 500 OK", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/ok", (_req, res) => res.send("ok"));
      app.get("/bad-header", (_req, res) => res.set("x-bad", "a\r\nb").send("x"));
    });
    const [answer] = await withNext(port, "/bad-header");
    assert.equal(`${answer!.status} ${answer!.reason}`, "500 Internal Server Error");
  });

  test("on node, a bad header followed by a throw exited the process (the error response met the bad header inside the error path)", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/ok", (_req, res) => res.send("ok"));
      app.get("/bad-then-throw", (_req, res) => {
        res.set("x-bad", "a\r\nb");
        throw new Error("something else failed");
      });
    });
    const [answer, next] = await withNext(port, "/bad-then-throw");
    assert.equal(`${answer!.status} ${answer!.reason}`, "500 Internal Server Error");
    assert.equal(next?.body.toString(), "ok", "the process is alive and serving");
  });

  test("a handler that never answered held the connection forever: handlerTimeout answers 503", async (t) => {
    const logged = captureErrors(t);
    const { port } = await serve(
      t,
      (app) => {
        app.get("/ok", (_req, res) => res.send("ok"));
        app.get("/forgotten", () => undefined);
      },
      options({ handlerTimeout: 100, logErrors: true }),
    );
    const [answer] = await withNext(port, "/forgotten", 1500);
    assert.equal(`${answer!.status} ${answer!.reason}`, "503 Service Unavailable");
    assert.ok(
      logged.lines.some((line) => line.includes("/forgotten")),
      "the log names the route",
    );
  });

  test("cookie-parser silently did nothing (req.cookies was already set)", async (t) => {
    const secret = "parser secret";
    const signed = `s:bob.${createHmac("sha256", secret).update("bob").digest("base64").replace(/=+$/, "")}`;
    const { port } = await serve(t, (app) => {
      app.use(mw(cookieParser(secret)));
      app.get("/c", (req, res) => res.json({ signed: loose(req).signedCookies ?? "missing" }));
    });
    const answer = await request(port, "/c", { headers: { cookie: `name=${encodeURIComponent(signed)}` } });
    assert.deepEqual(JSON.parse(answer.text), { signed: { name: "bob" } });
  });

  test('app.use("/static", serveStatic(dir)) answered 404', async (t) => {
    const dir = staticDir(t);
    const { port } = await serve(t, (app) => app.use("/static", mw(serveStatic(dir))));
    const answer = await request(port, "/static/hello.txt");
    assert.equal(answer.status, 200);
    assert.equal(answer.text, "hello file\n");
  });

  test("a custom onError lost the Allow header of a 405", async (t) => {
    const { port } = await serve(t, (app) => {
      app.onError((err, _req, res) => res.status(err instanceof HttpError ? err.status : 500).send("custom"));
      app.get("/only-get", (_req, res) => res.send("got"));
      app.put("/only-get", (_req, res) => res.send("put"));
    });
    const answer = await request(port, "/only-get", { method: "DELETE" });
    assert.equal(answer.status, 405);
    assert.equal(answer.text, "custom");
    assert.match(String(answer.headers.allow), /GET/);
    assert.match(String(answer.headers.allow), /PUT/);
  });

  test(
    "app.inject always used Node's objects: it runs the app's engine's request and response",
    { skip: engine === "native" ? nativeSkip : false },
    async (t) => {
      // What the engine's classes are on real sockets, to compare with what inject hands the handler.
      const onSocket: Loose = {};
      const { port } = await serve(t, (app) =>
        app.get("/who", (req, res) => {
          onSocket.req = req;
          onSocket.res = res;
          res.send("socket");
        }),
      );
      assert.equal((await request(port, "/who")).text, "socket");

      const app = new Cog({ engine, logErrors: false });
      const injected: Loose = {};
      app.get("/who", (req, res) => {
        injected.req = req;
        injected.res = res;
        res.set("x-engine", engine).setCookie("c", "v").send("part two");
      });
      app.get("/written", (_req, res) => {
        res.setHeader("x-written", "yes");
        loose(res).write("part ");
        loose(res).end("two");
      });
      app.get("/stream", (_req, res) => res.send(Readable.from(["s", "t"])));
      app.post("/echo", (req, res) => res.json({ body: req.body }));
      const who = await app.inject({ method: "GET", url: "/who" });
      assert.equal(who.statusCode, 200);
      assert.equal(who.headers["x-engine"], engine);
      assert.match(String(who.headers["set-cookie"]), /^c=v; Path=\//);
      assert.equal(who.body, "part two");
      const written = await app.inject("/written");
      assert.equal(written.headers["x-written"], "yes");
      assert.equal(written.body, "part two");
      assert.equal((await app.inject("/stream")).body, "st");
      assert.deepEqual((await app.inject({ method: "POST", url: "/echo", payload: { a: 1 } })).json(), { body: { a: 1 } });
      assert.equal((await app.inject("/missing")).statusCode, 404);

      // On node, light-my-request's response is a ServerResponse (its request, a plain Readable); on
      // native, the engine's classes, which are Node's kind too.
      assert.equal(injected.res instanceof ServerResponse, true, "inject's res is a ServerResponse");
      if (engine === "native") {
        assert.equal(injected.req instanceof IncomingMessage, true, "inject's req is the native engine's, an IncomingMessage as on sockets");
        assert.ok(
          sharesCogClass(injected.req, onSocket.req),
          `inject's req (${injected.req.constructor.name}) is of the native engine's request class (${onSocket.req.constructor.name})`,
        );
        assert.ok(
          sharesCogClass(injected.res, onSocket.res),
          `inject's res (${injected.res.constructor.name}) is of the native engine's response class (${onSocket.res.constructor.name})`,
        );
      }
    },
  );
});
