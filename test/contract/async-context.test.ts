// Each request runs in an async context of its own, on both engines: what one request keeps in
// an AsyncLocalStorage (with `run` or `enterWith`) is seen by its handlers, its error handler,
// its 'finish'/'close' listeners and its body events, and never by another request's, under
// 200 concurrent requests with random awaits over keep-alive connections. WebSocket handlers
// run in the upgrade request's context, each socket's messages in that socket's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { once } from "node:events";
import { Agent } from "node:http";
import WebSocketClient from "ws";
import { storesInFrames } from "../../src/engines/native/request-context.js";
import { CONCURRENT, Sightings, assertIsolated, hammer, pause, send } from "../async-context.js";
import { engine, serve } from "../helpers.js";

/**
 * node:http runs a request in its connection's async context: where AsyncLocalStorage keeps its
 * stores on async resources (Node 20 and 22), a store one request `enterWith`s is the next one's
 * on the same keep-alive connection (docs/engines.md#async-context). The native engine gives each
 * request its own.
 */
const enterWithSharedByConnection = engine === "node" && !storesInFrames;

test(`als.enterWith in one request is never seen by another, ${CONCURRENT} at once (${engine}${enterWithSharedByConnection ? ", a connection each" : ", over keep-alive connections"})`, async (t) => {
  const sightings = await hammer(
    t,
    (als) => (id, next) => {
      als.enterWith(id);
      next();
    },
    enterWithSharedByConnection,
  );
  assertIsolated(sightings);
});

test(`als.run around a request's chain is seen by all of its code and nothing else, ${CONCURRENT} at once (${engine})`, async (t) => {
  const sightings = await hammer(t, (als) => (id, next) => als.run(id, next));
  assertIsolated(sightings);
});

test(`a request after one that entered a store starts ${enterWithSharedByConnection ? "with it, as node:http runs a connection's requests in one context" : "without it"}, on the same connection (${engine})`, async (t) => {
  const als = new AsyncLocalStorage<string>();
  const { port } = await serve(t, (app) => {
    app.get("/", async (req, res) => {
      const before = als.getStore() ?? null;
      als.enterWith(req.query.id as string);
      await pause();
      res.json({ before, after: als.getStore() });
    });
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  let previous: string | null = null;
  for (const id of ["a", "b", "c"]) {
    const answer = await send(agent, port, "GET", `/?id=${id}`);
    assert.deepEqual(JSON.parse(answer.body), { before: enterWithSharedByConnection ? previous : null, after: id });
    previous = id;
  }
});

test(`WebSocket handlers run in the upgrade request's context, each socket's messages in its own (${engine})`, async (t) => {
  const als = new AsyncLocalStorage<string>();
  const sightings = new Sightings();
  const { port } = await serve(t, (app) => {
    app.use((req, _res, next) => als.run(req.query.user as string, next));
    app.ws("/chat", {
      upgrade: async (req) => {
        await pause();
        return req.query.user as string;
      },
      open: (ws) => sightings.saw("open handler", ws.data as string, als.getStore()),
      message: async (ws, data) => {
        const user = ws.data as string;
        sightings.saw("message handler", user, als.getStore());
        // What a message handler enters stays with its socket.
        als.enterWith(user);
        await pause();
        sightings.saw("message handler after an await", user, als.getStore());
        ws.send(`${user}:${String(data)}:${als.getStore()}`);
      },
      close: (ws) => sightings.saw("close handler", ws.data as string, als.getStore()),
    });
  });
  const users = Array.from({ length: 20 }, (_, i) => `u${i}`);
  const clients = await Promise.all(
    users.map(async (user) => {
      const ws = new WebSocketClient(`ws://127.0.0.1:${port}/chat?user=${user}`);
      await once(ws, "open");
      return ws;
    }),
  );
  const replies = await Promise.all(
    clients.map(async (ws, i) => {
      const got: string[] = [];
      const all = new Promise<void>((resolve) =>
        ws.on("message", (data: Buffer) => {
          got.push(data.toString());
          if (got.length === 5) resolve();
        }),
      );
      for (let m = 0; m < 5; m++) ws.send(`m${m}`);
      await all;
      return { user: users[i]!, got };
    }),
  );
  for (const { user, got } of replies)
    assert.deepEqual(
      got.sort(),
      [0, 1, 2, 3, 4].map((m) => `${user}:m${m}:${user}`),
    );
  await Promise.all(clients.map((ws) => (ws.close(), once(ws, "close"))));
  for (let i = 0; i < 100 && (sightings.counts.get("close handler") ?? 0) < users.length; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(sightings.wrong, []);
  assert.deepEqual(
    ["open handler", "message handler", "message handler after an await", "close handler"].map((place) => sightings.counts.get(place)),
    [users.length, users.length * 5, users.length * 5, users.length],
  );
});
