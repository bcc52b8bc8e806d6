// WebSocket publications across processes through Redis: two app processes (this one and a
// child, each on its own port) share a redis-server the test starts. Publications reach every
// subscriber once, the publishing process's own included, in each publisher's order; while
// Redis is away local delivery goes on and nothing is delivered twice; once it is back (the
// same server restarted), publications cross again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import WebSocketClient from "ws";
import { redisBroker } from "../../src/index.js";
import { engine, serve } from "../helpers.js";

const REDIS = "/usr/bin/redis-server";
const skip = existsSync(REDIS) || spawnSync("which", ["redis-server"]).status === 0 ? false : "redis-server is not installed (apt-get install redis-server)";

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts redis-server on `port`, resolving once it accepts connections. */
async function startRedis(port: number): Promise<ChildProcess> {
  const binary = existsSync(REDIS) ? REDIS : "redis-server";
  const redis = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    redis.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) resolve();
    });
    redis.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
  return redis;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}

/** A `ws` client whose messages are collected from the start. */
async function listener(port: number): Promise<{ ws: WebSocketClient; got: string[] }> {
  const ws = new WebSocketClient(`ws://127.0.0.1:${port}/chat`);
  const got: string[] = [];
  ws.on("message", (data: Buffer) => got.push(data.toString()));
  await once(ws, "open");
  return { ws, got };
}

async function until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test(`[${engine}] publications cross processes through Redis: once each, in order, and again after Redis restarts`, { skip, timeout: 60_000 }, async (t) => {
  const redisPort = await freePort();
  let redis = await startRedis(redisPort);
  t.after(() => stop(redis));
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
  const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/websocket-broker-app.ts"], { env: { ...process.env, REDIS_URL: url, COG_ENGINE: engine }, stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => stop(child));
  const [line] = (await once(child.stdout!, "data")) as [Buffer];
  const bPort = Number(line.toString().trim());

  const [a1, a2, b1, b2] = await Promise.all([listener(a.port), listener(a.port), listener(bPort), listener(bPort)]);
  const everyone = [a1, a2, b1, b2];
  await until(() => a.app.subscriberCount("room") === 2, "A's sockets to subscribe");

  // Redis delivers a SUBSCRIBE before later PUBLISHes: probe until B's subscription is in place.
  for (let i = 0; !b1.got.some((m) => m.startsWith("probe")); i++) {
    a.app.publish("room", `probe ${i}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  for (const l of everyone) l.got.length = 0;

  // app.publish in A: every subscriber in both processes, once.
  a.app.publish("room", "from A");
  // A socket in B publishes: everyone but itself, once.
  b1.ws.send("from b1");
  await until(() => a1.got.length === 2 && a2.got.length === 2 && b1.got.length === 1 && b2.got.length === 2, "both publications everywhere");
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual([a1.got, a2.got, b1.got, b2.got].map((got) => [...got].sort()), [
    ["from A", "from b1"],
    ["from A", "from b1"],
    ["from A"],
    ["from A", "from b1"],
  ]);

  // Per-publisher order: 300 publications from A arrive in B in order, each once.
  for (const l of everyone) l.got.length = 0;
  const sent = Array.from({ length: 300 }, (_, i) => `m${i}`);
  for (const message of sent) a.app.publish("room", message);
  await until(() => b2.got.length === 300, "300 publications in B");
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(b2.got, sent);
  assert.deepEqual(a1.got, sent);

  // Redis goes away: local delivery goes on; nothing arrives twice.
  await stop(redis);
  for (const l of everyone) l.got.length = 0;
  a.app.publish("room", "while Redis is down");
  await until(() => a1.got.length === 1, "local delivery while Redis is down");
  assert.deepEqual(a1.got, ["while Redis is down"]);

  // Redis comes back (the same port, empty): the brokers reconnect and subscribe again.
  redis = await startRedis(redisPort);
  for (let i = 0; !b2.got.some((m) => m.startsWith("again")); i++) {
    a.app.publish("room", `again ${i}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const l of everyone) l.got.length = 0;
  const after = Array.from({ length: 50 }, (_, i) => `after ${i}`);
  for (const message of after) a.app.publish("room", message);
  b1.ws.send("b1 is back");
  await until(() => b2.got.length === 51 && a1.got.length === 51, "publications after Redis came back");
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(b2.got.filter((m) => m.startsWith("after")), after);
  assert.deepEqual(a1.got.filter((m) => m.startsWith("after")), after);
  assert.equal(a1.got.filter((m) => m === "b1 is back").length, 1);
  assert.equal(b1.got.length, 50, "b1 does not get its own publication");
  for (const l of everyone) l.ws.close();
});
