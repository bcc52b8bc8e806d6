// Clients that misbehave at scale: vanishing mid-body, dripping headers or
// bodies. The service must keep answering others, close them by its timeouts,
// and afterwards hold nothing of theirs (no connection, no handler run).
import { request as httpRequest } from "node:http";
import assert from "node:assert/strict";
import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { describe, test } from "node:test";
import { serve } from "../helpers.js";

// uWebSockets.js has its own fixed timeouts (10 s idle) that Cog can't set.

// Short timeouts so the test takes seconds; the keep-alive one lets fetch's pooled connection go too.
const quick = { headersTimeout: 500, requestTimeout: 1_000, timeoutCheckInterval: 100, keepAliveTimeout: 200 };

/** Resolves when the socket is closed, whether it ended cleanly or with an error (EPIPE, ECONNRESET). */
function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => (socket.destroyed ? resolve() : socket.once("close", () => resolve())));
}

function open(port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  return once(socket, "connect").then(() => socket);
}

/** Open connections, as the node engine's server counts them (uWS exposes no count: nothing to wait for). */
async function connectionsOf(server: import("node:http").Server | undefined): Promise<number> {
  if (server === undefined) return 0;
  return new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not settled after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("faults", () => {
  test("1000 clients that send headers and part of a declared 1 MB body, then vanish, leave nothing behind", async (t) => {
    let handled = 0;
    const { app, port, fetch } = await serve(
      t,
      (app) => {
        app.post("/upload", (req, res) => {
          handled++;
          res.send(req.body.length);
        });
        app.get("/", (_req, res) => res.send("up"));
      },
      { keepAliveTimeout: 200 },
    );
    const part = Buffer.alloc(16 * 1024, 97);
    const sockets = await Promise.all(
      Array.from({ length: 1000 }, async () => {
        const socket = await open(port);
        socket.write("POST /upload HTTP/1.1\r\nHost: a\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n");
        socket.write(part);
        return socket;
      }),
    );
    assert.equal(await (await fetch("/")).text(), "up", "others are served while 1000 uploads hang");
    for (const socket of sockets) socket.destroy();
    await until(async () => (await connectionsOf(app.server)) === 0, 5_000);
    assert.equal(handled, 0, "no handler ran for a body that never arrived");
    // A whole upload still works afterwards, on a connection of its own: fetch would reuse the
    // keep-alive connection of the GET above, which the 200 ms keepAliveTimeout may be closing.
    const answer = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        { host: "127.0.0.1", port, path: "/upload", method: "POST", agent: false, headers: { "content-type": "application/octet-stream" } },
        (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve(text));
        },
      );
      req.on("error", reject);
      req.end(Buffer.alloc(1_000_000));
    });
    assert.equal(answer, "1000000");
  });

  test("200 slowloris clients (headers dripped forever) are closed by headersTimeout while others are served", async (t) => {
    const { app, port, fetch } = await serve(t, (app) => app.get("/", (_req, res) => res.send("up")), quick);
    const sockets = await Promise.all(Array.from({ length: 200 }, () => open(port)));
    for (const socket of sockets) socket.write("GET / HTTP/1.1\r\nHost: a\r\n");
    const drip = setInterval(() => sockets.forEach((s) => s.writable && s.write("X-Drip: 1\r\n")), 100);
    t.after(() => clearInterval(drip));
    const started = Date.now();
    const allClosed = Promise.all(sockets.map(closed));
    for (let i = 0; i < 5; i++) assert.equal(await (await fetch("/")).text(), "up");
    await allClosed;
    const waited = Date.now() - started;
    assert.ok(waited < 3_000, `all closed after ${waited} ms`);
    await until(async () => (await connectionsOf(app.server)) === 0, 2_000);
  });

  test("200 slow-body clients are closed by requestTimeout, their handlers never run", async (t) => {
    let handled = 0;
    const { port, fetch } = await serve(
      t,
      (app) => {
        app.post("/", (req, res) => {
          handled++;
          res.send(req.body);
        });
        app.get("/", (_req, res) => res.send("up"));
      },
      quick,
    );
    const sockets = await Promise.all(Array.from({ length: 200 }, () => open(port)));
    for (const socket of sockets) socket.write("POST / HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n");
    const drip = setInterval(() => sockets.forEach((s) => s.writable && s.write("x")), 100);
    t.after(() => clearInterval(drip));
    const allClosed = Promise.all(sockets.map(closed));
    assert.equal(await (await fetch("/")).text(), "up");
    await allClosed;
    assert.equal(handled, 0);
  });
});
