import assert from "node:assert/strict";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { readFileSync } from "node:fs";
import { Cog } from "../src/index.js";
import { engine, nativeSkip, raw, serve, statuses } from "./helpers.js";

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
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    app.get("/slow", async (_req, res) => {
      await gate;
      res.send("finished");
    });
    app.get("/fast", (_req, res) => res.send("fast"));
    const { port } = await app.listen(0, "127.0.0.1");
    const inFlight = fetch(`http://127.0.0.1:${port}/slow`).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 30));
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(closed, false, "close waits for the in-flight request");
    release();
    assert.equal(await inFlight, "finished");
    await closing;
    assert.equal(closed, true);
  });

  test("a request arriving on an open connection during close gets 503 and Connection: close", { skip: engine === "uws" && "uWebSockets.js closes a connection on a request pipelined behind an unfinished async response" }, async () => {
    const app = new Cog({ logErrors: false, engine });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    app.get("/slow", async (_req, res) => {
      await gate;
      res.send("done");
    });
    const { port } = await app.listen(0, "127.0.0.1");
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk) => (received += chunk));
    const ended = new Promise((r) => socket.on("close", r));
    socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    await new Promise((r) => setTimeout(r, 30));
    const closing = app.close();
    // Sent after close began, on the connection still busy with /slow.
    socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    await new Promise((r) => setTimeout(r, 30));
    release();
    await closing;
    await ended;
    assert.deepEqual(statuses(received), [200, 503]);
    assert.match(received.slice(received.indexOf("HTTP/1.1 503")), /Connection: close/i);
  });

  // On Linux the node engine listens with several reuse-port sockets (Node 22.12+ opens them, Cog's
  // addon on older Nodes: see src/engines/node-acceptors.ts); the kernel spreads connections over
  // them. Whichever accepted a connection, close() must wait for it, and answer on it.
  test("on Linux the node engine listens with 32 reuse-port sockets on its port, and closes them all", { skip: engine !== "node" || process.platform !== "linux" || nativeSkip !== false }, async () => {
    const app = new Cog({ engine });
    app.get("/", (_req, res) => res.send("up"));
    const { port } = await app.listen(0, "127.0.0.1");
    assert.equal(listeningSockets(port), 32);
    const answers = await Promise.all(Array.from({ length: 32 }, () => raw(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")));
    for (const answer of answers) assert.deepEqual(statuses(answer), [200]);
    await app.close();
    assert.equal(listeningSockets(port), 0);
  });

  test("close waits for every busy connection, on a burst of 64, and each one is answered", async () => {
    const app = new Cog({ engine });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let arrived = 0;
    app.get("/slow", async (_req, res) => {
      arrived++;
      await gate;
      res.send("finished");
    });
    const { port } = await app.listen(0, "127.0.0.1");
    const replies = Array.from({ length: 64 }, () => raw(port, "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5_000));
    while (arrived < 64) await new Promise((r) => setTimeout(r, 10));
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
    app.get("/forever", () => new Promise(() => {}));
    const { port } = await app.listen(0, "127.0.0.1");
    const hung = fetch(`http://127.0.0.1:${port}/forever`).then(
      () => "answered",
      () => "cut",
    );
    await new Promise((r) => setTimeout(r, 30));
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
});

describe("serve helper sanity", () => {
  test("each app gets its own port", async (t) => {
    const a = await serve(t, (app) => app.get("/", (_req, res) => res.send("a")));
    const b = await serve(t, (app) => app.get("/", (_req, res) => res.send("b")));
    assert.notEqual(a.port, b.port);
    assert.equal(await (await b.fetch("/")).text(), "b");
  });
});

/** IPv4 sockets listening on `port`, from the kernel's own table (state 0A is LISTEN). */
function listeningSockets(port: number): number {
  const local = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1]?.endsWith(local) && fields[3] === "0A").length;
}
