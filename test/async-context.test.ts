// Each request runs in an async context of its own, on both engines: what one request keeps in
// an AsyncLocalStorage (with `run` or `enterWith`) is seen by its handlers, its error handler,
// its 'finish'/'close' listeners and its body events, and never by another request's, under
// 200 concurrent requests with random awaits over keep-alive connections. WebSocket handlers
// run in the upgrade request's context, each socket's messages in that socket's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { once } from "node:events";
import { Agent, request } from "node:http";
import WebSocketClient from "ws";
import { HttpError, type Cog, type Request, type Response } from "../src/index.js";
import { storesInFrames } from "../src/engines/native/request-context.js";
import { engine, serve } from "./helpers.js";

const CONCURRENT = 200;

/**
 * node:http runs a request in its connection's async context: where AsyncLocalStorage keeps its
 * stores on async resources (Node 20 and 22), a store one request `enterWith`s is the next one's
 * on the same keep-alive connection (docs/engines.md#async-context). The native engine gives each
 * request its own.
 */
const enterWithSharedByConnection = engine === "node" && !storesInFrames;

const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 8));

/** What each request's code saw, by place, against the request's own id. */
class Sightings {
  readonly wrong: string[] = [];
  readonly counts = new Map<string, number>();
  /** `exact`: the place must see the request's own store; otherwise its own or none (never another's). */
  saw(place: string, own: string, seen: unknown, exact = true): void {
    this.counts.set(place, (this.counts.get(place) ?? 0) + 1);
    if (seen === own || (!exact && seen === undefined)) return;
    this.wrong.push(`${place}: request ${own} saw ${String(seen)}`);
  }
}

/**
 * An app whose middleware puts the request's id (from its URL) in `als` with `enter`, and whose
 * routes check the store after random awaits: /ok answers, /fail throws to app.onError, /upload
 * reads its body as a stream. Every place records what it saw in `sightings`.
 */
function define(als: AsyncLocalStorage<string>, sightings: Sightings, enter: (id: string, next: () => void) => void) {
  return (app: Cog) => {
    app.use((req: Request, res: Response, next: () => void) => {
      const id = req.query.id as string;
      sightings.saw("start of the request (nothing kept from another)", id, als.getStore(), false);
      enter(id, () => {
        res.on("finish", () => sightings.saw("'finish' listener", id, als.getStore()));
        res.on("close", () => sightings.saw("'close' listener", id, als.getStore()));
        next();
      });
    });
    app.get("/ok", async (req, res) => {
      const id = req.query.id as string;
      await pause();
      sightings.saw("handler after an await", id, als.getStore());
      await pause();
      res.json({ id, store: als.getStore() });
    });
    app.get("/fail", async (req) => {
      await pause();
      throw new HttpError(418, String(req.query.id));
    });
    app.post(
      "/upload",
      { body: "stream" },
      async (req, res) => {
        const id = req.query.id as string;
        let bytes = 0;
        // A body event runs in the request's context: its own store, or (the listener not being
        // called from inside `run`) none, never another request's.
        req.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
          sightings.saw("body 'data' listener", id, als.getStore(), false);
        });
        await once(req, "end");
        await pause();
        sightings.saw("handler after its body", id, als.getStore());
        res.json({ id, bytes });
      },
    );
    app.onError((err, req, res) => {
      sightings.saw("error handler", req.query.id as string, als.getStore());
      res.status((err as HttpError).status).json({ failed: (err as HttpError).message });
    });
  };
}

/** GET or POST `path` over a keep-alive agent; resolves with status and body. */
function send(agent: Agent, port: number, method: string, path: string, body?: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, port, host: "127.0.0.1", method, path, headers: body === undefined ? {} : { "content-length": body.length } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    if (body === undefined) return void req.end();
    // In pieces, so that the body follows its head (and arrives as events after the handler started).
    req.write(body.subarray(0, 10));
    setTimeout(() => req.end(body.subarray(10)), Math.random() * 8);
  });
}

async function hammer(t: { after(fn: () => unknown): void }, enter: (als: AsyncLocalStorage<string>) => (id: string, next: () => void) => void, connectionPerRequest = false): Promise<Sightings> {
  const als = new AsyncLocalStorage<string>();
  const sightings = new Sightings();
  const { port } = await serve(t, define(als, sightings, enter(als)));
  // Fewer connections than requests: each carries several requests, one after the other.
  const agent = connectionPerRequest ? new Agent({ keepAlive: false, maxSockets: Infinity }) : new Agent({ keepAlive: true, maxSockets: 20 });
  t.after(() => agent.destroy());
  const body = Buffer.alloc(64 * 1024, "x");
  const answers = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) => {
      const id = `r${i}`;
      const kind = i % 4;
      return kind === 0 ? send(agent, port, "GET", `/fail?id=${id}`) : kind === 1 ? send(agent, port, "POST", `/upload?id=${id}`, body) : send(agent, port, "GET", `/ok?id=${id}`);
    }),
  );
  for (const [i, answer] of answers.entries()) {
    const id = `r${i}`;
    if (i % 4 === 0) assert.deepEqual([answer.status, JSON.parse(answer.body)], [418, { failed: id }]);
    else if (i % 4 === 1) assert.deepEqual([answer.status, JSON.parse(answer.body)], [200, { id, bytes: body.length }]);
    else assert.deepEqual([answer.status, JSON.parse(answer.body)], [200, { id, store: id }]);
  }
  // 'finish' and 'close' follow the answer: wait until every response's have run.
  for (let i = 0; i < 100 && (sightings.counts.get("'close' listener") ?? 0) < CONCURRENT; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return sightings;
}

function assertIsolated(sightings: Sightings): void {
  assert.deepEqual(sightings.wrong, [], `${sightings.wrong.length} sightings of another request's store`);
  // Every place was reached, as often as it should be: the checks above did run.
  assert.equal(sightings.counts.get("start of the request (nothing kept from another)"), CONCURRENT);
  assert.equal(sightings.counts.get("'finish' listener"), CONCURRENT);
  assert.equal(sightings.counts.get("'close' listener"), CONCURRENT);
  assert.equal(sightings.counts.get("handler after an await"), CONCURRENT / 2);
  assert.equal(sightings.counts.get("error handler"), CONCURRENT / 4);
  assert.equal(sightings.counts.get("handler after its body"), CONCURRENT / 4);
  assert.ok((sightings.counts.get("body 'data' listener") ?? 0) >= CONCURRENT / 4);
}

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
  for (const { user, got } of replies) assert.deepEqual(got.sort(), [0, 1, 2, 3, 4].map((m) => `${user}:m${m}:${user}`));
  await Promise.all(clients.map((ws) => (ws.close(), once(ws, "close"))));
  for (let i = 0; i < 100 && (sightings.counts.get("close handler") ?? 0) < users.length; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(sightings.wrong, []);
  assert.deepEqual(
    ["open handler", "message handler", "message handler after an await", "close handler"].map((place) => sightings.counts.get(place)),
    [users.length, users.length * 5, users.length * 5, users.length],
  );
});
