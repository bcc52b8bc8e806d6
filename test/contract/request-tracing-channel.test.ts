// Cog's own tracing channel, diagnostics_channel.tracingChannel("cog.request"): start, end,
// error, asyncStart and asyncEnd around each request's chain, with { req, res, route }, the route
// known at start; the same on both engines.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { tracingChannel } from "node:diagnostics_channel";
import { HttpError, type Request, type Response } from "../../src/index.js";
import { engine, serve } from "../helpers.js";

interface Message {
  req: Request;
  res: Response;
  route: string | undefined;
  error?: unknown;
}

const channel = tracingChannel<unknown, Message>("cog.request");

/** Subscribes to all five channels for the test's length, recording each event in order. */
function record(t: { after(fn: () => unknown): void }): Array<[string, Message]> {
  const events: Array<[string, Message]> = [];
  const handlers = {
    start: (m: Message) => void events.push(["start", m]),
    end: (m: Message) => void events.push(["end", m]),
    asyncStart: (m: Message) => void events.push(["asyncStart", m]),
    asyncEnd: (m: Message) => void events.push(["asyncEnd", m]),
    error: (m: Message) => void events.push(["error", m]),
  };
  channel.subscribe(handlers);
  t.after(() => channel.unsubscribe(handlers));
  return events;
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

test(`cog.request: start, end, asyncStart, asyncEnd around a request, with req, res and the route (${engine})`, async (t) => {
  const events = record(t);
  const order: string[] = [];
  const { fetch } = await serve(t, (app) => {
    app.get("/users/:id", (req, res) => {
      order.push(`handler ${events.map(([name]) => name).join(",")}`);
      res.json({ id: req.params.id });
    });
  });
  const answer = await fetch("/users/7");
  assert.deepEqual(await answer.json(), { id: "7" });
  await until(() => events.length >= 4);
  assert.deepEqual(
    events.map(([name]) => name),
    ["start", "end", "asyncStart", "asyncEnd"],
  );
  // The handler ran between start and end.
  assert.deepEqual(order, ["handler start"]);
  const message = events[0]![1];
  assert.ok(
    events.every(([, m]) => m === message),
    "one message object for the request's events",
  );
  assert.equal(message.route, "/users/:id");
  assert.equal(message.req.path, "/users/7");
  assert.equal(message.req.route, "/users/:id");
  assert.equal(message.res.statusCode, 200);
  assert.equal(message.error, undefined);
});

test(`cog.request: the route is known at start, also for a buffered body, and undefined for a 404 (${engine})`, async (t) => {
  const events = record(t);
  const routesAtStart: Array<string | undefined> = [];
  const startOnly = (m: Message) => void routesAtStart.push(m.route);
  channel.start.subscribe(startOnly);
  t.after(() => channel.start.unsubscribe(startOnly));
  const { fetch } = await serve(t, (app) => {
    app.post("/items", (req, res) => res.json({ got: req.body }));
  });
  const posted = await fetch("/items", { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' });
  assert.deepEqual(await posted.json(), { got: { a: 1 } });
  assert.equal((await fetch("/nowhere")).status, 404);
  await until(() => events.filter(([name]) => name === "asyncEnd").length >= 2);
  assert.deepEqual(routesAtStart, ["/items", undefined]);
  const notFound = events.filter(([, m]) => m.route === undefined).map(([name]) => name);
  // A 404 is an error that reaches Cog's error handling: `error` before its answer is done.
  assert.deepEqual(notFound, ["start", "error", "end", "asyncStart", "asyncEnd"]);
  const error = events.find(([name]) => name === "error")![1].error;
  assert.ok(error instanceof HttpError && error.status === 404);
});

test(`cog.request: error carries a thrown or rejected error, before the error handler answers (${engine})`, async (t) => {
  const events = record(t);
  const seenByOnError: string[] = [];
  const { fetch } = await serve(t, (app) => {
    app.get("/throws", () => {
      throw new Error("thrown");
    });
    app.get("/rejects", async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw new Error("rejected");
    });
    app.onError((err, _req, res) => {
      seenByOnError.push(events.at(-1)![0]);
      res.status(500).json({ error: (err as Error).message });
    });
  });
  assert.deepEqual(await (await fetch("/throws")).json(), { error: "thrown" });
  assert.deepEqual(await (await fetch("/rejects")).json(), { error: "rejected" });
  await until(() => events.filter(([name]) => name === "asyncEnd").length >= 2);
  assert.deepEqual(seenByOnError, ["error", "error"]);
  const byRoute = (route: string) => events.filter(([, m]) => m.route === route).map(([name]) => name);
  // Thrown in the synchronous part: error before end. Rejected later: after it.
  assert.deepEqual(byRoute("/throws"), ["start", "error", "end", "asyncStart", "asyncEnd"]);
  assert.deepEqual(byRoute("/rejects"), ["start", "end", "error", "asyncStart", "asyncEnd"]);
  const errors = events.filter(([name]) => name === "error").map(([, m]) => (m.error as Error).message);
  assert.deepEqual(errors, ["thrown", "rejected"]);
  assert.equal(events.find(([, m]) => m.route === "/rejects")![1].res.statusCode, 500);
});

test(`cog.request: a store bound to start holds in the chain and what it awaits (${engine})`, async (t) => {
  const store = new AsyncLocalStorage<string>();
  channel.start.bindStore(store, (m) => `traced ${m.route}`);
  t.after(() => channel.start.unbindStore(store));
  const { fetch } = await serve(t, (app) => {
    app.use((_req, _res, next) => next());
    app.get("/a/:x", async (_req, res) => {
      const before = store.getStore();
      await new Promise((resolve) => setTimeout(resolve, 5));
      res.json({ before, after: store.getStore() });
    });
  });
  assert.deepEqual(await (await fetch("/a/1")).json(), { before: "traced /a/:x", after: "traced /a/:x" });
});

test(`cog.request: asyncEnd also for a response cut short by the client (${engine})`, async (t) => {
  const events = record(t);
  let reached!: () => void;
  const handlerReached = new Promise<void>((resolve) => (reached = resolve));
  const { fetch } = await serve(t, (app) => {
    app.get("/slow", (_req, res) => {
      reached();
      setTimeout(() => res.send("late"), 300);
    });
  });
  const controller = new AbortController();
  const request = fetch("/slow", { signal: controller.signal }).catch(() => undefined);
  await handlerReached;
  controller.abort();
  await request;
  await until(() => events.some(([name]) => name === "asyncEnd"));
  assert.deepEqual(
    events.map(([name]) => name),
    ["start", "end", "asyncStart", "asyncEnd"],
  );
});

test(`cog.request: nothing is published without subscribers, and no message is made (${engine})`, async (t) => {
  let made = 0;
  const { fetch } = await serve(t, (app) => {
    app.get("/", (req, res) => {
      // The message is kept on the request only while someone subscribes.
      made += Object.getOwnPropertySymbols(req).filter((s) => s.description === "cog.traced").length;
      res.send("ok");
    });
  });
  assert.equal(channel.start.hasSubscribers, false);
  assert.equal(await (await fetch("/")).text(), "ok");
  assert.equal(made, 0);
});
