// Node's own HTTP server channels (diagnostics_channel: http.server.request.start,
// http.server.response.created, http.server.response.finish) fire for every request on both
// engines, once each, with the objects Node documents: on the node engine node:http publishes
// them, on the native engine Cog does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { request } from "node:http";
import { publishesResponseCreated } from "../../src/engines/native/http-channels.js";
import type { Request, Response } from "../../src/index.js";
import { engine, serve } from "../helpers.js";

interface Message {
  request: Request;
  response: Response;
  socket?: { remoteAddress?: string; remotePort?: number };
  server?: { address(): { port: number } | string | null };
}

const NAMES = ["http.server.request.start", "http.server.response.created", "http.server.response.finish"] as const;

function listen(t: { after(fn: () => unknown): void }): Record<(typeof NAMES)[number], Message[]> & { order: string[] } {
  const seen = { order: [] as string[] } as Record<(typeof NAMES)[number], Message[]> & { order: string[] };
  for (const name of NAMES) {
    seen[name] = [];
    const onMessage = (message: unknown) => {
      seen[name].push(message as Message);
      seen.order.push(`${name} ${(message as Message).request.url}`);
    };
    subscribe(name, onMessage);
    t.after(() => unsubscribe(name, onMessage));
  }
  return seen;
}

test(`http.server.* channels fire once per request with request, response, socket and server (${engine})`, async (t) => {
  const seen = listen(t);
  const handled: Array<{ req: Request; res: Response; startedBefore: boolean }> = [];
  const { port, fetch } = await serve(t, (app) => {
    app.get("/items/:id", (req, res) => {
      handled.push({ req, res, startedBefore: seen["http.server.request.start"].some((m) => m.request === req) });
      res.set("x-item", req.params.id!).json({ id: req.params.id });
    });
  });
  for (const id of ["1", "2", "3"]) assert.equal((await fetch(`/items/${id}`)).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 20));

  assert.equal(handled.length, 3);
  assert.ok(
    handled.every((h) => h.startedBefore),
    "request.start is published before the handler runs",
  );
  const starts = seen["http.server.request.start"];
  const finishes = seen["http.server.response.finish"];
  assert.equal(starts.length, 3, "request.start once per request (node:http's own, not also Cog's)");
  assert.equal(finishes.length, 3, "response.finish once per request");
  for (const [i, { req, res }] of handled.entries()) {
    for (const message of [starts[i]!, finishes[i]!]) {
      assert.equal(message.request, req);
      assert.equal(message.response, res);
      assert.equal(message.socket, req.socket);
      assert.equal(message.socket!.remoteAddress, req.socket.remoteAddress);
      assert.equal(typeof message.socket!.remotePort, "number");
      const address = message.server!.address();
      assert.equal(typeof address === "object" && address !== null ? address.port : null, port);
    }
    // The finished response, as a subscriber sees it: its status and headers.
    assert.equal(finishes[i]!.response.statusCode, 200);
    assert.equal(finishes[i]!.response.writableFinished, true);
  }
  // node:http publishes response.created from Node 22.12 and 23.2; the native engine does where node:http does.
  const created = seen["http.server.response.created"];
  assert.equal(created.length, publishesResponseCreated ? 3 : 0);
  for (const [i, { req, res }] of created.length === 0 ? [] : handled.entries()) assert.deepEqual([created[i]!.request, created[i]!.response], [req, res]);
  const expected = handled.flatMap(({ req }) => [
    ...(publishesResponseCreated ? [`http.server.response.created ${req.url}`] : []),
    `http.server.request.start ${req.url}`,
    `http.server.response.finish ${req.url}`,
  ]);
  assert.deepEqual(seen.order, expected);
});

test(`http.server.response.finish is not published for a response cut before it finished (${engine})`, async (t) => {
  const seen = listen(t);
  const { fetch } = await serve(t, (app) => {
    app.get("/cut", (_req, res) => {
      res.write("part");
      setTimeout(() => res.destroy(), 5);
    });
    app.get("/ok", (_req, res) => void res.send("ok"));
  });
  await assert.rejects(async () => (await fetch("/cut")).text());
  assert.equal(await (await fetch("/ok")).text(), "ok");
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(
    seen["http.server.request.start"].map((m) => m.request.url),
    ["/cut", "/ok"],
  );
  assert.deepEqual(
    seen["http.server.response.finish"].map((m) => m.request.url),
    ["/ok"],
  );
});

test(`each request reaches the app through its server's 'request' event, which a request.start subscriber may wrap, as Sentry does (${engine})`, async (t) => {
  // What Sentry's HTTP integration does: on request.start, wrap the server's emit once, and run
  // each 'request' event inside a scope of the request's own.
  const scope = new AsyncLocalStorage<string>();
  const wrapped = new WeakSet<object>();
  const onStart = (message: unknown) => {
    const server = (message as { server: { emit(event: string, ...args: unknown[]): boolean } }).server;
    if (wrapped.has(server)) return;
    wrapped.add(server);
    const emit = server.emit;
    server.emit = function (this: unknown, event: string, ...args: unknown[]) {
      if (event !== "request") return emit.call(this, event, ...args);
      // Sentry records the request as it starts, its body included (none yet).
      assert.equal((args[0] as Request).body, undefined);
      return scope.run(`scope of ${(args[0] as Request).url}`, () => emit.call(this, event, ...args));
    };
  };
  subscribe("http.server.request.start", onStart);
  t.after(() => unsubscribe("http.server.request.start", onStart));
  const { port } = await serve(t, (app) => {
    app.post("/items/:id", async (req, res) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
      res.json({ id: req.params.id, length: (req.body as { pad: string }).pad.length, scope: scope.getStore() ?? null });
    });
  });
  // Bodies that follow their head, in two pieces: the chain starts when the second arrives.
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => postInPieces(port, `/items/${i}`, JSON.stringify({ pad: "x".repeat(i * 1000) }))));
  assert.deepEqual(
    answers,
    Array.from({ length: 30 }, (_, i) => ({ id: String(i), length: i * 1000, scope: `scope of /items/${i}` })),
  );
});

/** POSTs a JSON body in two pieces, the second a few milliseconds after the first; resolves with the parsed answer. */
function postInPieces(port: number, path: string, body: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const bytes = Buffer.from(body);
    const req = request(
      { port, host: "127.0.0.1", method: "POST", path, headers: { "content-type": "application/json", "content-length": bytes.length } },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve(JSON.parse(text)));
      },
    );
    req.on("error", reject);
    req.write(bytes.subarray(0, 5));
    setTimeout(() => req.end(bytes.subarray(5)), 5);
  });
}
