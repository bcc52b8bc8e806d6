// What the async-context tests share: an app whose every place (middleware, handlers after
// awaits, the error handler, 'finish'/'close' listeners, body events) records the
// AsyncLocalStorage store it sees against its own request's id, and the concurrent requests that
// hammer it over keep-alive connections. Used by test/contract/async-context.test.ts and by the
// native engine's own test of its fallback (test/engines/native/request-context.test.ts).
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { once } from "node:events";
import { Agent, request } from "node:http";
import { HttpError, type Cog, type CogOptions, type Request, type Response } from "../src/index.js";
import { serve } from "./helpers.js";

export const CONCURRENT = 200;

export const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 8));

/** What each request's code saw, by place, against the request's own id. */
export class Sightings {
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
    app.post("/upload", { body: "stream" }, async (req, res) => {
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
    });
    app.onError((err, req, res) => {
      sightings.saw("error handler", req.query.id as string, als.getStore());
      res.status((err as HttpError).status).json({ failed: (err as HttpError).message });
    });
  };
}

/** GET or POST `path` over a keep-alive agent; resolves with status and body. */
export function send(agent: Agent, port: number, method: string, path: string, body?: Buffer): Promise<{ status: number; body: string }> {
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

export async function hammer(
  t: { after(fn: () => unknown): void },
  enter: (als: AsyncLocalStorage<string>) => (id: string, next: () => void) => void,
  connectionPerRequest = false,
  options: CogOptions = {},
): Promise<Sightings> {
  const als = new AsyncLocalStorage<string>();
  const sightings = new Sightings();
  const { port } = await serve(t, define(als, sightings, enter(als)), options);
  // Fewer connections than requests: each carries several requests, one after the other.
  const agent = connectionPerRequest ? new Agent({ keepAlive: false, maxSockets: Infinity }) : new Agent({ keepAlive: true, maxSockets: 20 });
  t.after(() => agent.destroy());
  const body = Buffer.alloc(64 * 1024, "x");
  const answers = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) => {
      const id = `r${i}`;
      const kind = i % 4;
      return kind === 0
        ? send(agent, port, "GET", `/fail?id=${id}`)
        : kind === 1
          ? send(agent, port, "POST", `/upload?id=${id}`, body)
          : send(agent, port, "GET", `/ok?id=${id}`);
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

export function assertIsolated(sightings: Sightings): void {
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
