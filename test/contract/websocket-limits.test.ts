// WebSockets under pressure: a client that never reads (the server's memory stays bounded by
// maxBackpressure: messages are dropped, or the socket cut), drain once it reads again, and
// 10,000 connections opened and closed in a loop with descriptors and memory flat afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { readdirSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import WebSocketClient from "ws";
import type { SendResult, WebSocket } from "../../src/index.js";
import { engine, serve } from "../helpers.js";
import { openRaw } from "../websocket-wire.js";

const CHUNK = Buffer.alloc(64 * 1024, 0x61);
const LIMIT = 256 * 1024;

/** Sends CHUNK until `count` sends were made (a turn of the loop between each), noting every result and the largest bufferedAmount. */
async function flood(ws: WebSocket<unknown>, count: number): Promise<{ results: Map<SendResult, number>; maxBuffered: number }> {
  const results = new Map<SendResult, number>();
  let maxBuffered = 0;
  for (let i = 0; i < count && ws.readyState === 1; i++) {
    const result = ws.send(CHUNK);
    results.set(result, (results.get(result) ?? 0) + 1);
    maxBuffered = Math.max(maxBuffered, ws.bufferedAmount);
    if (i % 8 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return { results, maxBuffered };
}

test(`[${engine}] a client that never reads: sends are queued, then dropped; memory stays bounded by maxBackpressure; drain follows reading`, async (t) => {
  let flooded!: (outcome: Awaited<ReturnType<typeof flood>>) => void;
  const outcome = new Promise<Awaited<ReturnType<typeof flood>>>((resolve) => (flooded = resolve));
  let drained = 0;
  const { port } = await serve(t, (app) =>
    app.ws("/flood", { open: (ws) => void flood(ws, 2000).then(flooded), drain: () => void drained++ }, { maxBackpressure: LIMIT }),
  );
  const before = process.memoryUsage().rss;
  const raw = await openRaw(port, "/flood");
  raw.socket.pause(); // never reads: the kernel's buffers fill, then the server's
  const { results, maxBuffered } = await outcome;
  const grown = process.memoryUsage().rss - before;
  // 2,000 x 64 KiB is 125 MiB: had it been kept, memory would show it.
  assert.ok((results.get("dropped") ?? 0) > 1500, `dropped ${results.get("dropped")} of 2000`);
  assert.ok((results.get("queued") ?? 0) > 0, "some sends were queued");
  assert.ok(maxBuffered <= LIMIT + CHUNK.length, `bufferedAmount reached ${maxBuffered}`);
  assert.ok(grown < 48 * 1024 * 1024, `the server's memory grew ${(grown / 1048576).toFixed(1)} MiB`);
  raw.socket.resume();
  for (let i = 0; i < 300 && drained === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(drained >= 1, "drain ran once the client read");
  raw.socket.destroy();
});

test(`[${engine}] onBackpressure "close": a client that never reads is cut (1006)`, async (t) => {
  let closed!: (code: number) => void;
  const code = new Promise<number>((resolve) => (closed = resolve));
  const results: SendResult[] = [];
  const { port } = await serve(t, (app) =>
    app.ws(
      "/flood",
      {
        open: (ws) => void flood(ws, 2000).then((r) => results.push(...r.results.keys())),
        close: (_ws, c) => closed(c),
      },
      { maxBackpressure: LIMIT, onBackpressure: "close" },
    ),
  );
  const raw = await openRaw(port, "/flood");
  raw.socket.pause();
  assert.equal(await code, 1006);
  raw.socket.destroy();
});

// A full collection before each heap reading, so garbage (of the clients, in this process too) is not counted.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function openDescriptors(): number {
  return readdirSync("/proc/self/fd").length;
}

test(`[${engine}] 10,000 connections opened and closed in a loop: descriptors and memory flat`, async (t) => {
  const { port } = await serve(t, (app) => app.ws("/churn", { open: (ws) => ws.subscribe("all"), message: (ws, data) => void ws.send(data) }));
  const round = async (count: number, parallel: number): Promise<void> => {
    for (let done = 0; done < count; done += parallel) {
      await Promise.all(
        Array.from({ length: parallel }, async () => {
          const ws = new WebSocketClient(`ws://127.0.0.1:${port}/churn`);
          await once(ws, "open");
          ws.send("x");
          await once(ws, "message");
          ws.close();
          await once(ws, "close");
        }),
      );
    }
  };
  await round(1000, 100); // warm-up
  gc();
  const fds = openDescriptors();
  const heap = process.memoryUsage().heapUsed;
  await round(10_000, 100);
  await new Promise((resolve) => setTimeout(resolve, 200));
  gc();
  assert.ok(openDescriptors() <= fds + 5, `descriptors: ${fds} before, ${openDescriptors()} after`);
  const grown = process.memoryUsage().heapUsed - heap;
  assert.ok(grown < 8 * 1024 * 1024, `heap grew ${(grown / 1048576).toFixed(1)} MiB`);
});
