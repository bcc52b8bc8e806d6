// WebSocket publications across processes through Redis: two app processes (this one and a
// child, each on its own port) share a redis-server the test starts. Publications reach every
// subscriber once, the publishing process's own included, in each publisher's order; while
// Redis is away local delivery goes on and nothing is delivered twice; once it is back (the
// same server restarted), publications cross again. Both children are stopped whatever the
// outcome (test/children.ts), and every wait has a generous bound rather than a fixed sleep.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import WebSocketClient from "ws";
import { redisBroker } from "../../src/index.js";
import { startChild, stop, waitForOutput, type Owner, type Started } from "../children.js";
import { engine, serve } from "../helpers.js";

const REDIS = "/usr/bin/redis-server";
const skip = existsSync(REDIS) || spawnSync("which", ["redis-server"]).status === 0 ? false : "redis-server is not installed (apt-get install redis-server)";
/** How long anything may take on a loaded machine: a bound against hanging, not a measure of speed. */
const PATIENCE = 30_000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts redis-server on `port` for the test, resolving once it accepts connections. */
async function startRedis(t: Owner, port: number): Promise<Started> {
  const binary = existsSync(REDIS) ? REDIS : "redis-server";
  const redis = startChild(t, binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
  await waitForOutput(redis, (out) => out.includes("Ready to accept connections"), "redis-server to start", PATIENCE);
  return redis;
}

/** A `ws` client whose messages are collected from the start. */
async function listener(port: number): Promise<{ ws: WebSocketClient; got: string[] }> {
  const ws = new WebSocketClient(`ws://127.0.0.1:${port}/chat`);
  const got: string[] = [];
  ws.on("message", (data: Buffer) => got.push(data.toString()));
  await once(ws, "open");
  return { ws, got };
}

async function waitFor(condition: () => boolean, what: string, ms = PATIENCE): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Publishes `probe N` from A until `arrived` holds: a subscription Redis has not taken in yet misses publications. */
async function probe(app: { publish(topic: string, data: string): void }, prefix: string, arrived: () => boolean): Promise<void> {
  const deadline = Date.now() + PATIENCE;
  for (let i = 0; !arrived(); i++) {
    if (Date.now() > deadline) throw new Error(`no "${prefix}" publication crossed within ${PATIENCE} ms`);
    app.publish("room", `${prefix} ${i}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Sends `again N` from a socket in B until `arrived` holds: B's publications reach A only once A has subscribed again. */
async function probeFrom(ws: WebSocketClient, prefix: string, arrived: () => boolean): Promise<void> {
  const deadline = Date.now() + PATIENCE;
  for (let i = 0; !arrived(); i++) {
    if (Date.now() > deadline) throw new Error(`no "${prefix}" publication from B crossed within ${PATIENCE} ms`);
    ws.send(`${prefix} ${i}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The messages a client got, without the probes: late ones may still arrive, in any number, on a loaded machine. */
const real = (got: string[]) => got.filter((m) => !m.startsWith("probe ") && !m.startsWith("again "));
/** A pause in which a duplicate, if one were coming, would arrive. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

test(`[${engine}] publications cross processes through Redis: once each, in order, and again after Redis restarts`, { skip, timeout: 120_000 }, async (t) => {
  const redisPort = await freePort();
  const redis = await startRedis(t, redisPort);
  const url = `redis://127.0.0.1:${redisPort}`;

  // Process A: this one.
  const a = await serve(
    t,
    (app) =>
      app.ws("/chat", {
        open: (ws) => ws.subscribe("room"),
        message: (ws, data) => ws.publish("room", data),
      }),
    { broker: redisBroker(url) },
  );
  // Process B: a child on its own port, with its own broker on the same Redis.
  const b = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/websocket-broker-app.ts"], {
    env: { ...process.env, REDIS_URL: url, COG_ENGINE: engine },
  });
  await waitForOutput(b, (out) => out.includes("\n"), "the second app to listen", PATIENCE);
  const bPort = Number(b.stdout().trim());

  const [a1, a2, b1, b2] = await Promise.all([listener(a.port), listener(a.port), listener(bPort), listener(bPort)]);
  const everyone = [a1, a2, b1, b2];
  await waitFor(() => a.app.subscriberCount("room") === 2, "A's sockets to subscribe");

  // Redis delivers a SUBSCRIBE before later PUBLISHes: probe until B's subscription is in place.
  await probe(a.app, "probe", () => b1.got.some((m) => m.startsWith("probe ")));
  await probeFrom(b1.ws, "probe", () => a1.got.some((m) => m.startsWith("probe ")));
  for (const l of everyone) l.got.length = 0;

  // app.publish in A: every subscriber in both processes, once.
  a.app.publish("room", "from A");
  // A socket in B publishes: everyone but itself, once.
  b1.ws.send("from b1");
  await waitFor(
    () => real(a1.got).length >= 2 && real(a2.got).length >= 2 && real(b1.got).length >= 1 && real(b2.got).length >= 2,
    "both publications everywhere",
  );
  await settle();
  assert.deepEqual(
    [a1.got, a2.got, b1.got, b2.got].map((got) => real(got).sort()),
    [["from A", "from b1"], ["from A", "from b1"], ["from A"], ["from A", "from b1"]],
  );

  // Per-publisher order: 300 publications from A arrive in B in order, each once.
  for (const l of everyone) l.got.length = 0;
  const sent = Array.from({ length: 300 }, (_, i) => `m${i}`);
  for (const message of sent) a.app.publish("room", message);
  await waitFor(() => real(b2.got).length >= 300 && real(a1.got).length >= 300, "300 publications in B");
  await settle();
  assert.deepEqual(real(b2.got), sent);
  assert.deepEqual(real(a1.got), sent);

  // Redis goes away: local delivery goes on; nothing arrives twice.
  await stop(redis.child);
  for (const l of everyone) l.got.length = 0;
  a.app.publish("room", "while Redis is down");
  await waitFor(() => real(a1.got).length >= 1, "local delivery while Redis is down");
  await settle();
  assert.deepEqual(real(a1.got), ["while Redis is down"]);

  // Redis comes back (the same port, empty): the brokers reconnect and subscribe again.
  await startRedis(t, redisPort);
  // Each broker reconnects on its own: probe both ways, A to B and B to A.
  await probe(a.app, "again", () => b2.got.some((m) => m.startsWith("again ")));
  await probeFrom(b1.ws, "again", () => a1.got.some((m) => m.startsWith("again ")));
  await settle();
  for (const l of everyone) l.got.length = 0;
  const after = Array.from({ length: 50 }, (_, i) => `after ${i}`);
  for (const message of after) a.app.publish("room", message);
  b1.ws.send("b1 is back");
  await waitFor(
    () => real(b2.got).length >= 51 && real(a1.got).length >= 51 && real(b1.got).length >= 50,
    `publications after Redis came back: b2 ${real(b2.got).length} a1 ${real(a1.got).length} b1 ${real(b1.got).length}; a1 has b1-is-back ${a1.got.includes("b1 is back")} b2 has it ${b2.got.includes("b1 is back")}; states ${everyone.map((l) => l.ws.readyState).join(",")}; subs ${a.app.subscriberCount("room")}`,
  );
  await settle();
  assert.deepEqual(
    real(b2.got).filter((m) => m.startsWith("after")),
    after,
  );
  assert.deepEqual(
    real(a1.got).filter((m) => m.startsWith("after")),
    after,
  );
  assert.equal(real(a1.got).filter((m) => m === "b1 is back").length, 1);
  assert.equal(real(b1.got).length, 50, "b1 does not get its own publication");
  for (const l of everyone) l.ws.close();
});
