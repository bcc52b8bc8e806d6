#!/usr/bin/env node
// What OpenTelemetry tracing costs a request, Cog's against Fastify's (dist/ must be built):
//
//   node bench/otel-cost.mjs [--rounds 3] [--seconds 10] [--warmup 5] [--connections 50]
//
// Each framework serves GET /users/:id ({"id"} in JSON; bench/otel/) untraced, and traced: the
// Node SDK with a BatchSpanProcessor over an exporter that drops the spans, instrumentation-http,
// and the framework's own instrumentation (Cog's CogInstrumentation, on both engines; Fastify 5's
// @fastify/otel), as each documents it (bench/otel/tracing.mjs); Cog on the node engine also
// without instrumentation-http. The server runs on CPU 0, wrk on
// CPU 1 (taskset); each measurement is a warm-up, then wrk for --seconds, with the server's CPU
// time (utime + stime of /proc/PID/stat, all its threads) read before and after, so CPU per
// request is the server's alone. Rounds interleave every contender, its order rotated; the
// figures are medians over rounds, and the cost of tracing is the median of each round's
// difference between traced and untraced (the two measured back to back). Every traced run is
// checked: the spans the exporter was handed, per request.
import { spawn, execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { cpuSeconds, pin } from "./lib/proc.mjs";
import { freePort } from "./lib/server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "5" },
    connections: { type: "string", default: "50" },
  },
});

const frameworks = [
  { name: "cog", file: "cog.mjs", env: { COG_ENGINE: "node" }, instrumentation: "cog" },
  { name: "cog-native", file: "cog.mjs", env: { COG_ENGINE: "native" }, instrumentation: "cog" },
  { name: "fastify", file: "fastify.mjs", env: {}, instrumentation: "fastify" },
];
// Each framework untraced, then traced; Cog on the node engine also without instrumentation-http
// (Cog's own span), which the native engine's traced run is anyway (instrumentation-http sees no
// native request).
const variants = frameworks.flatMap((f) => [
  { ...f, traced: false, label: f.name },
  { ...f, traced: true, http: true, label: `${f.name} + otel` },
  ...(f.name === "cog" ? [{ ...f, traced: true, http: false, label: `${f.name} + otel, no i-http` }] : []),
]);

/** Starts a server on CPU 0; resolves once it printed "ready", with a way to read what it prints later. */
function start(variant, port) {
  const args = [...(variant.traced ? ["--import", join(here, "otel", "tracing.mjs")] : []), join(here, "otel", variant.file)];
  const env = {
    ...process.env,
    ...variant.env,
    PORT: String(port),
    NODE_ENV: "production",
    ...(variant.traced ? { OTEL_FRAMEWORK: variant.instrumentation, OTEL_HTTP: variant.http ? "1" : "0" } : {}),
  };
  const child = spawn(...pin("0", process.execPath, args), { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (!/^ready$/m.test(output)) return;
      clearInterval(timer);
      resolve({ child, output: () => output });
    }, 50);
    child.once("exit", (code) => {
      clearInterval(timer);
      reject(new Error(`${variant.label} exited (${code}) before it was ready:\n${output}`));
    });
  });
}

/** wrk on CPU 1 against `url` for `seconds`: its requests, requests per second and failures. */
function wrk(url, seconds) {
  const out = execFileSync(...pin("1", "wrk", ["-t1", `-c${flags.connections}`, `-d${seconds}s`, url]), { encoding: "utf8" });
  const requests = Number(/(\d+) requests in/.exec(out)[1]);
  const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: (.*)/.exec(out)?.[1];
  return { requests, perSecond, failures: non2xx + (socketErrors === undefined ? 0 : socketErrors.match(/\d+/g).reduce((a, b) => a + Number(b), 0)) };
}

/** The spans a traced server's exporter has been handed so far (it flushes first, on SIGUSR2). */
async function spansSoFar(child, output) {
  const seen = output().length;
  child.kill("SIGUSR2");
  for (let i = 0; i < 100 && !/spans \d+/.test(output().slice(seen)); i++) await new Promise((r) => setTimeout(r, 50));
  const line = /spans (\d+)/.exec(output().slice(seen));
  if (line === null) throw new Error(`no span count from the server:\n${output()}`);
  return Number(line[1]);
}

async function measure(variant) {
  const port = await freePort();
  const { child, output } = await start(variant, port);
  try {
    const url = `http://127.0.0.1:${port}/users/42`;
    wrk(url, Number(flags.warmup));
    const spansBefore = variant.traced ? await spansSoFar(child, output) : 0;
    const before = cpuSeconds(child.pid);
    const load = wrk(url, Number(flags.seconds));
    const cpu = cpuSeconds(child.pid) - before;
    // wrk's requests still open at its end may be answered (and traced) uncounted: a hair over whole.
    const spans = variant.traced ? ((await spansSoFar(child, output)) - spansBefore) / load.requests : null;
    if (load.failures > 0) throw new Error(`${variant.label}: ${load.failures} failed requests`);
    return { perSecond: load.perSecond, cpuPerRequestUs: (cpu * 1e6) / load.requests, spans };
  } finally {
    child.kill("SIGKILL");
  }
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const rounds = Number(flags.rounds);
const results = new Map(variants.map((v) => [v.label, []]));
console.log(
  `Node ${process.version}, wrk -t1 -c${flags.connections} -d${flags.seconds}s after ${flags.warmup}s of warm-up, server on CPU 0 and wrk on CPU 1, ${rounds} rounds`,
);
for (let round = 0; round < rounds; round++) {
  // Rotated each round; a framework's untraced and traced runs stay back to back.
  const order = frameworks.map((_, i) => frameworks[(i + round) % frameworks.length]);
  for (const framework of order) {
    for (const variant of variants.filter((v) => v.name === framework.name)) {
      const result = await measure(variant);
      results.get(variant.label).push(result);
      console.log(
        `round ${round + 1}  ${variant.label.padEnd(26)} ${result.perSecond.toFixed(0).padStart(7)} req/s  ${result.cpuPerRequestUs.toFixed(1).padStart(6)} µs CPU/request${result.spans === null ? "" : `  ${result.spans.toFixed(2)} spans/request`}`,
      );
    }
  }
}

console.log(`\nmedians of ${rounds} rounds`);
console.log("| | req/s | CPU µs / request | spans / request |\n| :-- | --: | --: | --: |");
for (const [label, list] of results) {
  const spans = list[0].spans === null ? "" : median(list.map((r) => r.spans)).toFixed(2);
  console.log(`| ${label} | ${median(list.map((r) => r.perSecond)).toFixed(0)} | ${median(list.map((r) => r.cpuPerRequestUs)).toFixed(1)} | ${spans} |`);
}
console.log("\nwhat tracing adds (median of each round's traced minus untraced, and ratio)");
console.log("| | CPU µs / request added | CPU ratio | req/s ratio |\n| :-- | --: | --: | --: |");
for (const variant of variants.filter((v) => v.traced)) {
  const plain = results.get(variant.name);
  const traced = results.get(variant.label);
  const added = median(plain.map((p, i) => traced[i].cpuPerRequestUs - p.cpuPerRequestUs));
  const cpuRatio = median(plain.map((p, i) => traced[i].cpuPerRequestUs / p.cpuPerRequestUs));
  const rateRatio = median(plain.map((p, i) => traced[i].perSecond / p.perSecond));
  console.log(`| ${variant.label} | ${added.toFixed(1)} | ${cpuRatio.toFixed(2)} | ${rateRatio.toFixed(2)} |`);
}
