import assert from "node:assert/strict";
import diagnostics from "node:diagnostics_channel";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { Cog } from "../../src/index.js";
import { engine, nativeSkip, raw, serve, statuses } from "../helpers.js";

describe("listen and close", () => {
  test("listen resolves with the address and calls the callback", async () => {
    const app = new Cog({ engine });
    app.get("/", (_req, res) => res.send("up"));
    let called = false;
    const address = await app.listen(0, "127.0.0.1", () => (called = true));
    assert.equal(called, true);
    assert.equal(address.host, "127.0.0.1");
    assert.ok(address.port > 0);
    if (engine === "node") assert.ok(app.server?.listening);
    assert.equal(await (await fetch(`http://127.0.0.1:${address.port}/`)).text(), "up");
    await app.close();
    await assert.rejects(fetch(`http://127.0.0.1:${address.port}/`));
    await app.close(); // closing twice is harmless
  });

  test("listen(port, callback) and a busy port rejects", async () => {
    const first = new Cog({ engine });
    const { port } = await first.listen(0, () => {});
    const second = new Cog({ engine });
    await assert.rejects(second.listen(port), /EADDRINUSE|in use/);
    await assert.rejects(first.listen(0), /already listening/);
    await first.close();
    const retried = await second.listen(port, "127.0.0.1");
    assert.equal(retried.port, port, "a failed listen leaves the app free to listen again");
    await second.close();
  });

  test("close lets in-flight requests finish, and refuses new requests on open connections with 503", async () => {
    const app = new Cog({ logErrors: false, engine });
    const { release, arrived } = holdRoute(app, "/slow", "finished");
    app.get("/fast", (_req, res) => res.send("fast"));
    const { port } = await app.listen(0, "127.0.0.1");
    const inFlight = fetch(`http://127.0.0.1:${port}/slow`).then((r) => r.text());
    while (arrived() < 1) await new Promise((r) => setTimeout(r, 5));
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(closed, false, "close waits for the in-flight request");
    release();
    assert.equal(await inFlight, "finished");
    await closing;
    assert.equal(closed, true);
  });

  test("a request arriving on an open connection during close gets 503 and Connection: close", async (t) => {
    const app = new Cog({ logErrors: false, engine });
    const { release, arrived } = holdRoute(app, "/slow", "done");
    const { port } = await app.listen(0, "127.0.0.1");
    // Both engines publish each request they take on this channel (node:http itself, and the
    // native engine as it does): how the test knows the second request reached the server.
    let started = 0;
    const onStart = () => started++;
    diagnostics.subscribe("http.server.request.start", onStart);
    t.after(() => diagnostics.unsubscribe("http.server.request.start", onStart));
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk) => (received += chunk));
    const ended = new Promise((r) => socket.on("close", r));
    socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    await until(() => arrived() === 1);
    const closing = app.close();
    // Sent after close began, on the connection still busy with /slow.
    socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    await until(() => started === 2);
    release();
    await closing;
    await ended;
    assert.deepEqual(statuses(received), [200, 503]);
    assert.match(received.slice(received.indexOf("HTTP/1.1 503")), /Connection: close/i);
  });

  // libuv accepts one connection per wakeup of the listening socket; on Linux the node engine
  // drains the rest of the kernel's queue at once (src/engines/node/accept.ts), so a burst of
  // clients isn't left waiting one loop iteration each. Drained connections are counted and
  // served as Node's own are.
  test(
    "on Linux the node engine accepts a queue of 40 connections in one go, counts them and answers each",
    { skip: engine !== "node" || process.platform !== "linux" || nativeSkip !== false },
    async () => {
      const app = new Cog({ engine });
      const { release, arrived } = holdRoute(app, "/", "up");
      const { port } = await app.listen(0, "127.0.0.1");
      // Connections that arrive within one synchronous run of the server's "connection" event.
      const batches = acceptBatches(app);
      // All 40 connect before the server's loop next polls, so all 40 wait in the queue then.
      const replies = Array.from({ length: 40 }, () => raw(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5_000));
      try {
        while (arrived() < 40) await new Promise((r) => setTimeout(r, 10));
        const sizes = batches.filter((n) => n > 0);
        assert.equal(
          sizes.reduce((a, b) => a + b, 0),
          40,
        );
        assert.ok(sizes.length <= 2, `accepted in ${sizes.length} goes (${sizes.join(", ")}), not at once`);
        const counted = await connections(app);
        assert.equal(counted, 40);
        let closed = false;
        const closing = app.close().then(() => (closed = true));
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(closed, false, "close waits for the drained connections too");
        release();
        for (const reply of await Promise.all(replies)) assert.deepEqual(statuses(reply), [200]);
        await closing;
      } finally {
        release();
        await app.close();
      }
    },
  );

  // The option that turns the mechanism off, for when a Node release breaks the internals it
  // relies on (test/engines/node/node-internals.test.ts): each connection is then Node's own accept.
  test(
    "with drainAcceptQueue: false the node engine accepts as Node does, one connection per 'connection' event, and answers each",
    { skip: engine !== "node" },
    async () => {
      const app = new Cog({ engine, drainAcceptQueue: false });
      const { release, arrived } = holdRoute(app, "/", "up");
      const { port } = await app.listen(0, "127.0.0.1");
      const batches = acceptBatches(app);
      const replies = Array.from({ length: 40 }, () => raw(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5_000));
      try {
        while (arrived() < 40) await new Promise((r) => setTimeout(r, 10));
        const sizes = batches.filter((n) => n > 0);
        assert.deepEqual(sizes, Array(40).fill(1), "every connection accepted by Node, none drained");
        const counted = await connections(app);
        assert.equal(counted, 40);
        release();
        for (const reply of await Promise.all(replies)) assert.deepEqual(statuses(reply), [200]);
      } finally {
        release();
        await app.close();
      }
    },
  );

  test("close waits for every busy connection, on a burst of 64, and each one is answered", async () => {
    const app = new Cog({ engine });
    const { release, arrived } = holdRoute(app, "/slow", "finished");
    const { port } = await app.listen(0, "127.0.0.1");
    const replies = Array.from({ length: 64 }, () => raw(port, "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5_000));
    while (arrived() < 64) await new Promise((r) => setTimeout(r, 10));
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(closed, false, "close waits while any connection is busy");
    release();
    for (const reply of await Promise.all(replies)) assert.deepEqual(statuses(reply), [200]);
    await closing;
    await assert.rejects(fetch(`http://127.0.0.1:${port}/slow`), "no listening socket is left open");
  });

  test("close cuts connections still busy after the drain deadline", async () => {
    const app = new Cog({ engine });
    let reached = (): void => {};
    const handling = new Promise<void>((resolve) => (reached = resolve));
    app.get("/forever", () => {
      reached();
      return new Promise(() => {});
    });
    const { port } = await app.listen(0, "127.0.0.1");
    const hung = fetch(`http://127.0.0.1:${port}/forever`).then(
      () => "answered",
      () => "cut",
    );
    await handling;
    const started = Date.now();
    await app.close(100);
    assert.ok(Date.now() - started < 2000);
    assert.equal(await hung, "cut");
  });
});

describe("inject", () => {
  test("answers without a socket, through the same routes, middleware and errors", async () => {
    const app = new Cog({ logErrors: false, engine });
    app.use((_req, res, next) => {
      res.set("x-powered-by", "Cog");
      next();
    });
    app.get("/users/:id", (req, res) => res.json({ id: req.params.id, q: req.query.q, c: req.cookies.c }));
    app.post("/echo", (req, res) => res.send(req.body));
    app.get("/boom", () => {
      throw new Error("boom");
    });
    let res = await app.inject({ method: "GET", url: "/users/5?q=x", headers: { cookie: "c=1" } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["x-powered-by"], "Cog");
    assert.deepEqual(res.json(), { id: "5", q: "x", c: "1" });
    res = await app.inject({ method: "POST", url: "/echo", headers: { "content-type": "application/json" }, payload: '{"a":1}' });
    assert.deepEqual(res.json(), { a: 1 });
    res = await app.inject({ method: "POST", url: "/echo", headers: { "content-type": "application/json" }, payload: "{bad" });
    assert.equal(res.statusCode, 400);
    assert.equal((await app.inject("/boom")).statusCode, 500);
    assert.equal((await app.inject("/missing")).statusCode, 404);
    assert.equal(app.server, undefined, "no server was started");
  });

  test("applies each app's own options (trustProxy, maxFields)", async () => {
    const define = (app: Cog) => app.get("/", (req, res) => res.json({ ip: req.ip, query: req.query }));
    const strictApp = new Cog({ logErrors: false, engine, trustProxy: true, maxFields: 2 });
    const plainApp = new Cog({ logErrors: false, engine });
    define(strictApp);
    define(plainApp);
    const headers = { "x-forwarded-for": "203.0.113.9" };
    assert.equal((await strictApp.inject({ url: "/", headers })).json().ip, "203.0.113.9");
    assert.equal((await plainApp.inject({ url: "/", headers })).json().ip, "127.0.0.1");
    assert.equal((await strictApp.inject("/?a=1&b=2&c=3")).statusCode, 414);
    assert.deepEqual((await plainApp.inject("/?a=1&b=2&c=3")).json().query, { a: "1", b: "2", c: "3" });
  });
});

describe("serve helper sanity", () => {
  test("each app gets its own port", async (t) => {
    const a = await serve(t, (app) => app.get("/", (_req, res) => res.send("a")));
    const b = await serve(t, (app) => app.get("/", (_req, res) => res.send("b")));
    assert.notEqual(a.port, b.port);
    assert.equal(await (await b.fetch("/")).text(), "b");
  });
});

/** A GET route whose handler answers `body` only once `release()` is called; `arrived()` counts the requests that reached it. */
function holdRoute(app: Cog, path: string, body: string): { release: () => void; arrived: () => number } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let arrived = 0;
  app.get(path, async (_req, res) => {
    arrived++;
    await gate;
    res.send(body);
  });
  return { release, arrived: () => arrived };
}

/** Sizes of the runs of connections the server's "connection" event saw within one synchronous run each (read with `.filter((n) => n > 0)`). */
function acceptBatches(app: Cog): number[] {
  const batches: number[] = [];
  app.server!.on("connection", () => {
    if (batches.length === 0 || batches.at(-1) === -1) batches.push(0);
    batches[batches.length - 1]!++;
    if (batches.at(-1) === 1) process.nextTick(() => batches.push(-1));
  });
  return batches;
}

/** The connections the node engine's server counts. */
function connections(app: Cog): Promise<number> {
  return new Promise((resolve, reject) => app.server!.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

/** Resolves once `done()` holds, checking every 5 ms; rejects after 10 s. */
async function until(done: () => boolean): Promise<void> {
  for (const end = Date.now() + 10_000; !done(); await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > end) throw new Error("the server did not get there in 10 s");
  }
}
