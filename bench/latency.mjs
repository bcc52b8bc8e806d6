#!/usr/bin/env node
// Latency of what must stay prompt while the server is busy, on both engines (dist/ must be built):
//
//   node bench/latency.mjs compress [--engine node|native] [--seconds 8]
//     p50/p99 of small GETs (a probe, one request at a time) while 64 KiB JSON responses are
//     compressed alongside (autocannon, 32 connections, Accept-Encoding: gzip), beside the same
//     probe with the 64 KiB responses sent uncompressed, and idle.
//   node bench/latency.mjs sse [--engine node|native] [--seconds 8]
//     p50/p99 delivery latency of server-sent events (one every 10 ms, stamped when sent), idle
//     and while autocannon loads the server with small GETs (32 connections).
//
//   node bench/latency.mjs zlib
//     what the JavaScript thread pays per 64 KiB JSON body: zlib's sync call against the
//     synchronous part of its async one (gzip 6, br 4, br 11), median of 200, in this process.
//
// The server runs pinned to CPU 0 (taskset -c 0), the load and the probe on CPU 1. On a shared
// machine figures drift between runs: compare conditions measured in the same run.
import { spawn } from "node:child_process";
import { request } from "node:http";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { engine: { type: "string", default: "node" }, seconds: { type: "string", default: "8" }, child: { type: "boolean", default: false } },
});
const scenario = positionals[0];
const seconds = Number(flags.seconds);
if (scenario !== "compress" && scenario !== "sse" && scenario !== "zlib") {
  console.error("usage: node bench/latency.mjs compress|sse|zlib [--engine node|native] [--seconds 8]");
  process.exit(2);
}

/** The 64 KiB JSON body the compress scenario serves. */
function bigJson() {
  const items = Array.from({ length: 700 }, (_, i) => ({ id: i, name: `item number ${i}`, price: i * 1.25, tags: ["alpha", "beta"] }));
  return JSON.stringify(items).slice(0, 64 * 1024);
}

if (scenario === "zlib") {
  const zlib = await import("node:zlib");
  const body = Buffer.from(bigJson());
  const brotli = (quality) => ({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality } });
  const median = (list) => list.sort((a, b) => a - b)[list.length >> 1];
  const codecs = [
    ["gzip, level 6", (b) => zlib.gzipSync(b), (b, cb) => zlib.gzip(b, cb)],
    ["br, quality 4", (b) => zlib.brotliCompressSync(b, brotli(4)), (b, cb) => zlib.brotliCompress(b, brotli(4), cb)],
    ["br, quality 11", (b) => zlib.brotliCompressSync(b, brotli(11)), null],
  ];
  for (const [name, sync, callAsync] of codecs) {
    const blocking = [];
    const handoff = [];
    for (let i = 0; i < 200; i++) {
      const start = performance.now();
      sync(body);
      blocking.push(performance.now() - start);
    }
    for (let i = 0; callAsync !== null && i < 200; i++) {
      await new Promise((resolve) => {
        const start = performance.now();
        callAsync(body, resolve);
        handoff.push(performance.now() - start);
      });
    }
    const ratio = sync(body).length / body.length;
    console.log(
      `${name.padEnd(16)} output/input ${ratio.toFixed(3)}  sync ${median(blocking).toFixed(3)} ms  async call ${handoff.length > 0 ? `${median(handoff).toFixed(3)} ms` : "-"}`,
    );
  }
  process.exit(0);
}

/** The server process (in the parent). */
let server;
if (flags.child) {
  // The server.
  const { Cog } = await import("../dist/index.js");
  const app = new Cog({ engine: flags.engine, logErrors: false });
  const big = bigJson();
  app.get("/small", (_req, res) => res.json({ ok: true }));
  app.get("/big", (_req, res) => res.type("json").send(big));
  app.get("/big-gzip", { compress: { encodings: ["gzip"] } }, (_req, res) => res.type("json").send(big));
  app.get("/events", (req, res) => {
    const stream = res.sse({ heartbeat: 0 });
    const timer = setInterval(() => stream.send({ data: String(performance.timeOrigin + performance.now()) }), 10);
    req.signal.addEventListener("abort", () => clearInterval(timer));
  });
  const { port } = await app.listen(0, "127.0.0.1");
  // The server's own view: how long its event loop was blocked, per condition (reset on each ask).
  const { monitorEventLoopDelay } = await import("node:perf_hooks");
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  process.on("message", () => {
    process.send({ loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 });
    loop.reset();
  });
  process.send({ port });
} else {
  server = spawn("taskset", ["-c", "0", process.execPath, fileURLToPath(import.meta.url), scenario, "--child", "--engine", flags.engine], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const { port } = await new Promise((resolve) => server.once("message", resolve));
  try {
    const results = scenario === "compress" ? await compressScenario(port) : await sseScenario(port);
    console.log(`engine ${flags.engine}, ${seconds} s each, Node ${process.version}`);
    for (const [condition, samples, loop] of results) {
      console.log(
        `${condition.padEnd(44)} n=${String(samples.length).padStart(6)}  p50 ${pct(samples, 50).toFixed(3)} ms  p99 ${pct(samples, 99).toFixed(3)} ms  | server loop delay p99 ${loop.loopP99.toFixed(2)} ms, max ${loop.loopMax.toFixed(2)} ms`,
      );
    }
  } finally {
    server.kill();
  }
}

/** The server's event-loop delay since the last ask. */
function loopStats() {
  return new Promise((resolve) => {
    server.once("message", resolve);
    server.send("stats");
  });
}

async function compressScenario(port) {
  const results = [];
  await loopStats();
  results.push(["small GETs, idle", await probe(port, seconds), await loopStats()]);
  for (const [label, path] of [
    ["small GETs beside 64 KiB JSON, uncompressed", "/big"],
    ["small GETs beside 64 KiB JSON, gzip", "/big-gzip"],
  ]) {
    const load = autocannon(port, path, { "accept-encoding": "gzip" });
    await sleep(1000); // warm-up
    await loopStats();
    results.push([label, await probe(port, seconds), await loopStats()]);
    load.kill();
    await sleep(500);
  }
  return results;
}

async function sseScenario(port) {
  const results = [];
  await loopStats();
  results.push(["SSE delivery, idle", await listen(port, seconds), await loopStats()]);
  const load = autocannon(port, "/small", {});
  await sleep(1000);
  await loopStats();
  results.push(["SSE delivery, beside 32 connections of GETs", await listen(port, seconds), await loopStats()]);
  load.kill();
  return results;
}

function autocannon(port, path, headers) {
  const args = ["-c", "1", fileURLToPath(new URL("../node_modules/.bin/autocannon", import.meta.url)), "-c", "32", "-d", String(seconds + 5), "-j"];
  for (const [name, value] of Object.entries(headers)) args.push("-H", `${name}=${value}`);
  args.push(`http://127.0.0.1:${port}${path}`);
  return spawn("taskset", args, { stdio: "ignore" });
}

/** One small GET at a time for `s` seconds: each one's latency in ms. */
async function probe(port, s) {
  const samples = [];
  const end = performance.now() + s * 1000;
  while (performance.now() < end) {
    const start = performance.now();
    await new Promise((resolve, reject) => {
      const req = request({ port, host: "127.0.0.1", path: "/small", agent: false }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end();
    });
    samples.push(performance.now() - start);
  }
  return samples;
}

/** Reads /events for `s` seconds: each event's delay from its stamp, in ms. */
function listen(port, s) {
  return new Promise((resolve, reject) => {
    const samples = [];
    const req = request({ port, host: "127.0.0.1", path: "/events" }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        const now = performance.timeOrigin + performance.now();
        text += chunk;
        let end;
        while ((end = text.indexOf("\n\n")) !== -1) {
          const event = text.slice(0, end);
          text = text.slice(end + 2);
          const stamp = Number(event.replace(/^data: /, ""));
          if (Number.isFinite(stamp)) samples.push(now - stamp);
        }
      });
    });
    req.on("error", reject);
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve(samples.slice(10)); // the first events warm up
    }, s * 1000);
  });
}

function pct(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
