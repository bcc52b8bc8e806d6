import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HttpError } from "../../src/index.js";
import { raw, serve, statuses } from "../helpers.js";

describe("errors never kill the server", () => {
  test("a throwing handler, a rejecting one and next(err) all become 500s without the stack", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/throw", () => {
        throw new Error("secret internals at /srv/app.js:12");
      });
      app.get("/reject", async () => {
        await Promise.resolve();
        throw new Error("async secret");
      });
      app.get("/next", (_req, _res, next) => next(new Error("passed on")));
      app.get("/reject-nothing", () => Promise.reject(undefined));
      app.get("/ok", (_req, res) => res.send("still here"));
    });
    for (const path of ["/throw", "/reject", "/next", "/reject-nothing"]) {
      const res = await fetch(path);
      assert.equal(res.status, 500, path);
      const body = await res.text();
      assert.deepEqual(JSON.parse(body), { statusCode: 500, error: "Internal Server Error", message: "Internal Server Error" });
      assert.doesNotMatch(body, /secret|at |\.js/);
    }
    assert.equal(await (await fetch("/ok")).text(), "still here");
  });

  test("HttpError maps to its status and exposes 4xx messages", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/teapot", () => {
        throw new HttpError(418, "I refuse to brew coffee");
      });
      app.get("/gone", (_req, _res, next) => next(new HttpError(410)));
      app.get("/unavailable", () => {
        throw new HttpError(503, "database password is hunter2");
      });
      app.get("/express-style", () => {
        throw Object.assign(new Error("payload too big"), { status: 413 });
      });
    });
    let res = await fetch("/teapot");
    assert.equal(res.status, 418);
    assert.equal((await res.json()).message, "I refuse to brew coffee");
    res = await fetch("/gone");
    assert.deepEqual(await res.json(), { statusCode: 410, error: "Gone", message: "Gone" });
    res = await fetch("/unavailable");
    assert.equal(res.status, 503);
    assert.equal((await res.json()).message, "Service Unavailable", "5xx messages are never sent");
    assert.equal((await fetch("/express-style")).status, 413);
  });

  test("HttpError refuses statuses that are not errors", () => {
    assert.throws(() => new HttpError(200), RangeError);
    assert.throws(() => new HttpError(600), RangeError);
    assert.equal(new HttpError(404).message, "Not Found");
    assert.equal(new HttpError(404).expose, true);
    assert.equal(new HttpError(500).expose, false);
  });

  test("onError and notFound customise those responses", async (t) => {
    const seen: unknown[] = [];
    const { fetch } = await serve(t, (app) => {
      app.onError((err, req, res) => {
        seen.push(err);
        res.status(err instanceof HttpError ? err.status : 500).send(`custom: ${req.path}`);
      });
      app.notFound((req, res) => res.html(`<h1>No ${req.path}</h1>`, 404));
      app.get("/boom", () => {
        throw new Error("boom");
      });
    });
    const boom = await fetch("/boom");
    assert.equal(boom.status, 500);
    assert.equal(await boom.text(), "custom: /boom");
    assert.equal((seen[0] as Error).message, "boom");
    const missing = await fetch("/missing");
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(await missing.text(), "<h1>No /missing</h1>");
  });

  test("an error handler that throws or rejects still yields a 500", async (t) => {
    const { fetch } = await serve(t, (app) => {
      let calls = 0;
      app.onError(() => {
        if (calls++ % 2 === 0) throw new Error("handler bug");
        return Promise.reject(new Error("async handler bug"));
      });
      app.get("/x", () => {
        throw new Error("x");
      });
    });
    assert.equal((await fetch("/x")).status, 500);
    assert.equal((await fetch("/x")).status, 500);
  });

  test("error responses keep headers from middleware but drop the failed body's", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.use((_req, res, next) => {
        res.set("x-powered-by", "Cog");
        res.setHeader("access-control-allow-origin", "*");
        next();
      });
      app.get("/x", (_req, res) => {
        res.set("content-type", "image/png");
        throw new HttpError(400, "bad");
      });
    });
    const res = await fetch("/x");
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("x-powered-by"), "Cog");
    assert.equal(res.headers.get("access-control-allow-origin"), "*");
    assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  });

  test("a header value with CR/LF is a 500 for that request only, never a split response", async (t) => {
    const { fetch, port } = await serve(t, (app) => {
      app.get("/inject", (req, res) => res.set("x-name", String(req.query.name)).send("hi"));
      app.get("/cookie", (req, res) => res.setCookie("c", "v", { domain: String(req.query.d) }).send("hi"));
      app.get("/ok", (_req, res) => res.send("ok"));
    });
    const res = await fetch("/inject?name=a%0d%0aSet-Cookie:%20evil=1");
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("set-cookie"), null);
    assert.equal((await fetch("/cookie?d=x%0d%0ay")).status, 500);
    const text = await raw(port, "GET /inject?name=a%0d%0aX:1 HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.deepEqual(statuses(text), [500, 200]);
  });

  test("a throw after the response was sent is logged, not answered twice", async (t) => {
    const logged: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => logged.push(args);
    t.after(() => (console.error = original));
    const { fetch } = await serve(
      t,
      (app) => {
        app.get("/late", (_req, res) => {
          res.send("first");
          throw new Error("late failure");
        });
      },
      { logErrors: true },
    );
    const res = await fetch("/late");
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "first");
    const [where, err] = logged[0] as [string, Error];
    assert.match(where, /GET \/late \(route GET \/late\)/);
    assert.equal(err.message, "late failure");
  });

  test("a failure mid-stream cuts the connection instead of sending a second response", async (t) => {
    const { Readable } = await import("node:stream");
    const { port } = await serve(t, (app) => {
      app.get("/stream", (_req, res) => {
        let reads = 0;
        res.send(
          new Readable({
            read() {
              if (reads++ === 0) this.push("partial");
              else setTimeout(() => this.destroy(new Error("disk gone")), 20);
            },
          }),
        );
      });
      app.get("/write-then-throw", (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("half");
        throw new Error("oops");
      });
    });
    for (const path of ["/stream", "/write-then-throw"]) {
      const text = await raw(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      // Whatever part of the 200 got out first, no 500 follows it on the same connection.
      assert.ok(!statuses(text).includes(500), path);
      assert.doesNotMatch(text, /0\r\n\r\n$/, "the chunked body is not terminated as if complete");
    }
  });
});
