import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { queryRefused, raw, serve, statuses } from "../helpers.js";

describe("routing over HTTP", () => {
  test("every method helper registers its method", async (t) => {
    const { fetch } = await serve(t, (app) => {
      for (const method of ["get", "post", "put", "patch", "delete", "options"] as const) {
        app[method]("/m", (req, res) => res.send(`${req.method}`));
      }
      app.head("/h", (_req, res) => res.set("x-head", "yes").send("ignored"));
      app.all("/any", (req, res) => res.send(`any ${req.method}`));
    });
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      const res = await fetch("/m", { method });
      assert.equal(await res.text(), method);
    }
    const head = await fetch("/h", { method: "HEAD" });
    assert.equal(head.headers.get("x-head"), "yes");
    assert.equal(await head.text(), "");
    assert.equal(await (await fetch("/any", { method: "PUT" })).text(), "any PUT");
    // A method without a helper of its own. uWebSockets.js closes the connection on methods it
    // doesn't know (PURGE, lower-case ones) before Cog sees the request.
    assert.equal(await (await fetch("/any", { method: "PURGE" })).text(), "any PURGE");
  });

  test("named params are decoded, a trailing * captures the rest", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/users/:id", (req, res) => res.json(req.params));
      app.get("/users/:id/posts/:postId", (req, res) => res.json(req.params));
      app.get("/static/*", (req, res) => res.send(req.params["*"]));
    });
    assert.deepEqual(await (await fetch("/users/42")).json(), { id: "42" });
    assert.deepEqual(await (await fetch("/users/J%C3%B6rg")).json(), { id: "Jörg" });
    assert.deepEqual(await (await fetch("/users/1/posts/2")).json(), { id: "1", postId: "2" });
    assert.equal(await (await fetch("/static/css/site.css")).text(), "css/site.css");
  });

  test("unknown path: 404 JSON; known path with another method: 405 with Allow", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/thing", (_req, res) => res.send("ok"));
      app.post("/thing", (_req, res) => res.send("ok"));
    });
    const missing = await fetch("/nothing");
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { statusCode: 404, error: "Not Found", message: "Route GET /nothing not found" });
    const wrong = await fetch("/thing", { method: "DELETE" });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "GET, HEAD, OPTIONS, POST");
    assert.equal((await wrong.json()).statusCode, 405);
  });

  test("HEAD answers for every GET route with headers and no body", async (t) => {
    const { port } = await serve(t, (app) => app.get("/page", (_req, res) => res.send("twelve bytes")));
    const text = await raw(port, "HEAD /page HTTP/1.1\r\nHost: x\r\n\r\nGET /page HTTP/1.1\r\nHost: x\r\n\r\n");
    const [head, get] = text.split(/(?=HTTP\/1\.1 )/);
    assert.match(head!, /^HTTP\/1\.1 200/);
    assert.match(head!, /content-length: 12\r\n/i);
    assert.ok(head!.endsWith("\r\n\r\n"), "HEAD has no body");
    assert.ok(get!.endsWith("twelve bytes"));
  });

  test("OPTIONS without a route answers 204 with Allow", async (t) => {
    const { fetch } = await serve(t, (app) => app.get("/x", (_req, res) => res.send("x")));
    const res = await fetch("/x", { method: "OPTIONS" });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get("allow"), "GET, HEAD, OPTIONS");
  });

  test("app.query routes QUERY, whose body is read as POST's, in groups too; 405 and OPTIONS list it; HEAD stays GET's", { skip: queryRefused }, async (t) => {
    const { fetch, port } = await serve(t, (app) => {
      app.get("/search", (_req, res) => res.send("get"));
      app.query("/search", (req, res) => res.json({ method: req.method, body: req.body, q: req.query }));
      app.group("/users/:id", (users) => users.query("/posts", (req, res) => res.json({ id: req.params.id, body: req.body })));
      app.all("/any", (req, res) => res.send(`any ${req.method}`));
    });
    const json = await fetch("/search?page=2", { method: "QUERY", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "ada" }) });
    assert.equal(json.status, 200);
    assert.deepEqual(await json.json(), { method: "QUERY", body: { name: "ada" }, q: { page: "2" } });
    const form = await fetch("/search", { method: "QUERY", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "name=ada&age=36" });
    assert.deepEqual((await form.json()).body, { name: "ada", age: "36" });
    const text = await fetch("/search", { method: "QUERY", headers: { "content-type": "text/plain" }, body: "select *" });
    assert.equal((await text.json()).body, "select *");
    const bad = await fetch("/search", { method: "QUERY", headers: { "content-type": "application/json" }, body: "{" });
    assert.equal(bad.status, 400);
    assert.equal(await (await fetch("/search")).text(), "get");
    const head = await fetch("/search", { method: "HEAD" });
    assert.equal(head.headers.get("content-length"), "3", "HEAD is answered by GET's route, not QUERY's");
    const wrong = await fetch("/search", { method: "DELETE" });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "GET, HEAD, OPTIONS, QUERY");
    assert.equal((await fetch("/search", { method: "OPTIONS" })).headers.get("allow"), "GET, HEAD, OPTIONS, QUERY");
    const nested = await fetch("/users/7/posts", { method: "QUERY", headers: { "content-type": "application/json" }, body: '{"since":1}' });
    assert.deepEqual(await nested.json(), { id: "7", body: { since: 1 } });
    assert.equal(await (await fetch("/any", { method: "QUERY" })).text(), "any QUERY");
    const notFound = await fetch("/nothing", { method: "QUERY" });
    assert.equal(notFound.status, 404);
    assert.equal((await notFound.json()).message, "Route QUERY /nothing not found");
    // On one keep-alive connection: a chunked QUERY body, then a GET, each answered in order.
    const bytes = await raw(
      port,
      "QUERY /search HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /search HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert.deepEqual(statuses(bytes), [200, 200]);
    assert.match(bytes, /"body":"abc"/);
    assert.ok(bytes.endsWith("get"));
  });

  test("use(mw) and use('*', mw) run for every request, in order, before handlers", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.use((_req, res, next) => {
        res.set("x-one", "1");
        next();
      });
      app.use("*", (_req, res, next) => {
        res.set("x-two", String(Number(res.get("x-one")) + 1));
        next();
      });
      app.get("/", (_req, res) => res.send("hi"));
    });
    const res = await fetch("/");
    assert.equal(res.headers.get("x-two"), "2");
    const missing = await fetch("/nope");
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get("x-two"), "2", "global middleware also runs before the 404");
  });

  test("use('/prefix', mw) covers whole segments under the prefix only", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.use("/admin", (_req, res, next) => {
        res.set("x-admin", "yes");
        next();
      });
      app.get("/admin", (_req, res) => res.send("a"));
      app.get("/admin/users", (_req, res) => res.send("b"));
      app.get("/adminx", (_req, res) => res.send("c"));
      app.get("/:section", (_req, res) => res.send("d"));
    });
    assert.equal((await fetch("/admin")).headers.get("x-admin"), "yes");
    assert.equal((await fetch("/admin/users")).headers.get("x-admin"), "yes");
    assert.equal((await fetch("/adminx")).headers.get("x-admin"), null);
    assert.equal((await fetch("/other")).headers.get("x-admin"), null);
    assert.equal((await fetch("/admin/nope")).headers.get("x-admin"), "yes", "runs before a 404 under the prefix");
  });

  test("middleware applies to routes registered after it, as in Express", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/before", (_req, res) => res.send(String(res.get("x-late") ?? "none")));
      app.use((_req, res, next) => {
        res.set("x-late", "set");
        next();
      });
      app.get("/after", (_req, res) => res.send(String(res.get("x-late"))));
    });
    assert.equal(await (await fetch("/before")).text(), "none");
    assert.equal(await (await fetch("/after")).text(), "set");
  });

  test("groups nest, and their middleware stays inside them", async (t) => {
    const seen: string[] = [];
    const { fetch } = await serve(t, (app) => {
      app.group("/api", (api) => {
        api.use((req, _res, next) => {
          seen.push(`api ${req.path}`);
          next();
        });
        api.get("/", (_req, res) => res.send("api root"));
        api.group("/v1", (v1) => {
          v1.use((req, _res, next) => {
            seen.push(`v1 ${req.path}`);
            next();
          });
          v1.get("/items/:id", (req, res) => res.json({ id: req.params.id }));
        });
      });
      app.get("/public", (_req, res) => res.send("public"));
    });
    assert.equal(await (await fetch("/api")).text(), "api root");
    assert.deepEqual(await (await fetch("/api/v1/items/9")).json(), { id: "9" });
    assert.equal(await (await fetch("/public")).text(), "public");
    assert.deepEqual(seen, ["api /api", "api /api/v1/items/9", "v1 /api/v1/items/9"]);
  });

  test("a route may have several handlers chained with next()", async (t) => {
    const { fetch } = await serve(t, (app) => {
      const auth = (req: { headers: Record<string, unknown> }, res: { send(b: string, s: number): unknown }, next: () => void) =>
        req.headers.authorization === "secret" ? next() : res.send("no", 401);
      app.get("/private", auth, (_req, res) => res.send("yes"));
    });
    assert.equal((await fetch("/private")).status, 401);
    assert.equal(await (await fetch("/private", { headers: { authorization: "secret" } })).text(), "yes");
  });

  test("next() past the last handler falls through to 404", async (t) => {
    const { fetch } = await serve(t, (app) => app.get("/x", (_req, _res, next) => next()));
    assert.equal((await fetch("/x")).status, 404);
  });

  // uWS closes a connection when a pipelined request arrives before an async response has ended.
  test("keep-alive and pipelining answer in order", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/slow", async (_req, res) => {
        await new Promise((r) => setTimeout(r, 30));
        res.send("slow");
      });
      app.get("/fast", (_req, res) => res.send("fast"));
    });
    const req = (p: string) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`;
    const text = await raw(port, req("/slow") + req("/fast") + req("/nope") + req("/fast"));
    assert.deepEqual(statuses(text), [200, 200, 404, 200]);
    assert.ok(text.indexOf("slow") < text.indexOf("fast"));
  });

  // Hundreds of connections ready at once: engines that read them in slices (native) must still
  // give each connection its own answers, in order, and none to another.
  test("300 connections pipelining at once each get their own answers in order", async (t) => {
    const { port } = await serve(t, (app) => app.get("/c/:conn/:n", (req, res) => res.send(`<${req.params.conn}:${req.params.n}>`)));
    const ids = Array.from({ length: 300 }, (_, i) => i);
    // Each connection waits for its four answers (up to 10 s of silence: 300 connections at once
    // on a loaded machine can keep the first waiting past any short quiet period).
    const fourAnswers = (text: string) => (text.match(/<\d+:\d+>/g)?.length ?? 0) >= 4;
    const answers = await Promise.all(
      ids.map((i) => raw(port, [0, 1, 2, 3].map((n) => `GET /c/${i}/${n} HTTP/1.1\r\nHost: x\r\n\r\n`).join(""), 10_000, fourAnswers)),
    );
    for (const [i, text] of answers.entries()) {
      assert.deepEqual(statuses(text), [200, 200, 200, 200], `connection ${i}`);
      assert.deepEqual(
        text.match(/<\d+:\d+>/g),
        [0, 1, 2, 3].map((n) => `<${i}:${n}>`),
        `connection ${i}`,
      );
    }
  });
});
