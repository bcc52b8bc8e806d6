#!/usr/bin/env node
// Serving scenarios (HttpArena's): json-tls (HTTP/1.1 over TLS, wrk), baseline-h2 (HTTP/2 over
// TLS, h2load), json-h2c (cleartext HTTP/2, h2load), and workers (Cog with 1 and 2 worker
// processes, wrk). Apart from bench/run.mjs, whose contract, checks and load generators are
// cleartext HTTP/1.1 ones.
//
//   node bench/serving.mjs [--scenarios json-tls,baseline-h2,json-h2c,workers] [--rounds 3] [--duration 5]
//
// Method: each server pinned to core 0 and the load generator to core 1 (taskset), a warm-up
// run, contenders interleaved over the rounds, the median req/s. The workers scenario can't
// pin: two workers take both cores, so the load generator shares them (the point is whether a
// second worker scales, not the absolute figure). Certificates are made with openssl per run.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const { values: flags } = parseArgs({
  options: {
    scenarios: { type: "string", default: "json-tls,baseline-h2,json-h2c,workers" },
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "5" },
  },
});
const ROUNDS = Number(flags.rounds);
const DURATION = Number(flags.duration);

const wrk = (url, cpu) => ({ command: "wrk", args: ["-t1", "-c50", `-d${DURATION}s`, url], cpu, parse: (out) => Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]) });
const h2load = (url, cpu) => ({ command: "h2load", args: ["-c50", "-m10", "-t1", `-D${DURATION}`, url], cpu, parse: (out) => Number(/finished in [^,]+, ([\d.]+) req\/s/.exec(out)?.[1]) });

const SCENARIOS = {
  "json-tls": {
    about: "GET /json over HTTPS/1.1 (wrk -t1 -c50)",
    contenders: [
      { name: "node:https (bare)", file: "node-bare.mjs", env: { PROTO: "tls" } },
      { name: "cog", file: "cog.mjs", env: { PROTO: "tls" } },
      { name: "cog-native", file: "cog.mjs", env: { PROTO: "tls", ENGINE: "native" } },
      { name: "fastify", file: "fastify.mjs", env: { PROTO: "tls" } },
    ],
    load: (port) => wrk(`https://127.0.0.1:${port}/json`, "1"),
  },
  "baseline-h2": {
    about: "GET / over HTTP/2 with TLS (h2load -c50 -m10)",
    contenders: [
      { name: "node:http2 (bare)", file: "node-bare.mjs", env: { PROTO: "h2" } },
      { name: "cog", file: "cog.mjs", env: { PROTO: "h2" } },
      { name: "fastify", file: "fastify.mjs", env: { PROTO: "h2" } },
    ],
    load: (port) => h2load(`https://127.0.0.1:${port}/`, "1"),
  },
  "json-h2c": {
    about: "GET /json over cleartext HTTP/2, prior knowledge (h2load -c50 -m10)",
    contenders: [
      { name: "node:http2 (bare)", file: "node-bare.mjs", env: { PROTO: "h2c" } },
      { name: "cog", file: "cog.mjs", env: { PROTO: "h2c" } },
      { name: "fastify", file: "fastify.mjs", env: { PROTO: "h2c" } },
    ],
    load: (port) => h2load(`http://127.0.0.1:${port}/json`, "1"),
  },
  workers: {
    about: "GET /json over HTTP/1.1 (wrk -t1 -c50), 1 vs 2 worker processes; load generator and servers share the two cores",
    unpinned: true,
    contenders: [
      { name: "cog, 1 worker", file: "cog.mjs", env: { WORKERS: "1" } },
      { name: "cog, 2 workers", file: "cog.mjs", env: { WORKERS: "2" } },
      { name: "cog-native, 1 worker", file: "cog.mjs", env: { WORKERS: "1", ENGINE: "native" } },
      { name: "cog-native, 2 workers", file: "cog.mjs", env: { WORKERS: "2", ENGINE: "native" } },
    ],
    load: (port) => wrk(`http://127.0.0.1:${port}/json`, null),
  },
};

const certs = mkdtempSync(join(tmpdir(), "cog-bench-tls-"));
process.on("exit", () => rmSync(certs, { recursive: true, force: true }));
execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "key.pem", "-out", "cert.pem", "-days", "1", "-subj", "/CN=localhost"], { cwd: certs, stdio: "ignore" });
const TLS = { TLS_KEY: join(certs, "key.pem"), TLS_CERT: join(certs, "cert.pem") };

const pinned = (cpu, command, args) => (cpu === null ? [command, args] : ["taskset", ["-c", cpu, command, ...args]]);

function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function start(contender, unpinned) {
  const port = await freePort();
  const [command, args] = pinned(unpinned ? null : "0", process.execPath, [join(here, "serving", contender.file)]);
  const child = spawn(command, args, { env: { ...process.env, ...TLS, ...contender.env, PORT: String(port), NODE_ENV: "production" }, stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      if (out.includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`${contender.name} exited (${code}) before it was ready`)));
  });
  child.stdout.resume();
  return { port, stop: () => new Promise((r) => (child.exitCode !== null ? r() : (child.once("exit", r), child.kill("SIGTERM")))) };
}

function run(load) {
  const [command, args] = pinned(load.cpu, load.command, load.args);
  const out = execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const value = load.parse(out);
  if (!(value > 0)) throw new Error(`no figure in the output of ${load.command}:\n${out}`);
  return value;
}

function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

for (const id of flags.scenarios.split(",")) {
  const scenario = SCENARIOS[id];
  if (scenario === undefined) throw new Error(`unknown scenario ${id}; known: ${Object.keys(SCENARIOS).join(", ")}`);
  console.log(`\n## ${id}: ${scenario.about}`);
  const results = new Map(scenario.contenders.map((c) => [c.name, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    // Interleaved, and rotated each round; round 0 warms up.
    const order = scenario.contenders.map((_, i) => scenario.contenders[(i + round) % scenario.contenders.length]);
    for (const contender of order) {
      const server = await start(contender, scenario.unpinned);
      try {
        const rps = run(scenario.load(server.port));
        if (round > 0) results.get(contender.name).push(rps);
      } finally {
        await server.stop();
      }
    }
  }
  const first = median(results.get(scenario.contenders[0].name));
  for (const [name, values] of results) {
    const m = median(values);
    console.log(`${name.padEnd(24)} ${Math.round(m).toString().padStart(8)} req/s   ×${(m / first).toFixed(2)}   (rounds: ${values.map(Math.round).join(", ")})`);
  }
}
