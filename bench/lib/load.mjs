// Runs one load-generator measurement against a URL and returns its figures in
// one shape, whichever tool made them. The generator runs pinned to its own
// core, and its CPU use is sampled so the report can say when it, rather than
// the server, was the limit.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, pin } from "./proc.mjs";
import { goTool } from "./go-tool.mjs";
import { parseRateLoad, rateLoadArgs, rateLoadBinary } from "./rate-load.mjs";

const require = createRequire(import.meta.url);

/**
 * @param {object} o
 * @param {"autocannon"|"wrk"|"h2load"|"h3-load"|"rate-load"} o.tool h2load (nghttp2-client) speaks HTTP/2: over TLS for an https: URL, with prior knowledge for http:;
 *   h3-load (bench/h3-load, quic-go) HTTP/3; rate-load (bench/rate-load) offers a fixed rate, `o.rate` requests per second (0: none, an idle run)
 * @param {string} o.url
 * @param {string} o.method
 * @param {Record<string,string>} o.headers
 * @param {string} [o.body]
 * @param {number} o.connections
 * @param {number} o.pipelining
 * @param {number} [o.streams] h2load and h3-load: concurrent streams per connection
 * @param {string[]} [o.paths] h2load and h3-load: paths asked for in turn on the URL's origin
 * @param {string} [o.expectBody] h3-load: the body every answer must have (any other fails the run)
 * @param {string} [o.script] wrk only: Lua that defines init/request itself (requests rotated by the scenario)
 * @param {number} o.duration seconds
 * @param {string|null} o.cpu core list for taskset, or null
 */
export async function measure(o) {
  const { command, args, parse } =
    o.tool === "wrk"
      ? wrkCommand(o)
      : o.tool === "h2load"
        ? h2loadCommand(o)
        : o.tool === "h3-load"
          ? h3LoadCommand(o)
          : o.tool === "rate-load"
            ? rateLoadCommand(o)
            : autocannonCommand(o);
  const child = spawn(...pin(o.cpu, command, args), { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const startCpu = cpuSeconds(child.pid);
  let lastCpu = startCpu;
  // Sample the generator's CPU while it runs (its /proc entry is gone once it exits).
  const timer = setInterval(() => {
    const now = cpuSeconds(child.pid);
    if (now !== null) lastCpu = now;
  }, 200);
  const started = process.hrtime.bigint();
  const code = await new Promise((resolve) => child.on("close", resolve));
  clearInterval(timer);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (code !== 0) throw new Error(`${o.tool} exited with ${code}: ${stderr.trim() || stdout.trim()}`);
  const result = parse(stdout);
  result.generatorCpu = startCpu === null || lastCpu === null ? null : (lastCpu - startCpu) / seconds;
  return result;
}

function rateLoadCommand(o) {
  return { command: rateLoadBinary(), args: rateLoadArgs({ ...o, rate: o.rate ?? 0 }), parse: parseRateLoad };
}

function autocannonCommand(o) {
  const bin = require.resolve("autocannon/autocannon.js");
  const args = [bin, "--json", "-c", String(o.connections), "-p", String(o.pipelining), "-d", String(o.duration), "-m", o.method];
  for (const [k, v] of Object.entries(o.headers)) args.push("-H", `${k}=${v}`);
  if (o.body !== undefined) args.push("-b", o.body);
  args.push(o.url);
  return {
    command: process.execPath,
    args,
    parse(stdout) {
      const r = JSON.parse(stdout);
      const statuses = {};
      for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) statuses[code] = stat.count;
      return {
        requests: r.requests.total,
        rps: r.requests.total / r.duration,
        bytesPerSec: r.throughput.total / r.duration,
        latencyAvg: r.latency.average,
        latencyP99: r.latency.p99,
        errors: r.errors,
        timeouts: r.timeouts,
        resets: r.resets ?? 0,
        statuses,
      };
    },
  };
}

function wrkCommand(o) {
  const dir = mkdtempSync(join(tmpdir(), "cog-bench-"));
  const script = join(dir, "request.lua");
  // A scenario's own script (the arena's rotations) defines init and request; else one request, repeated.
  const requests =
    o.script ??
    [
      `wrk.method = ${luaString(o.method)}`,
      o.body === undefined ? "" : `wrk.body = ${luaString(o.body)}`,
      ...Object.entries(o.headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
      "local batch",
      "init = function(args)",
      `  local list = {}`,
      `  for i = 1, ${o.pipelining} do list[i] = wrk.format() end`,
      "  batch = table.concat(list)",
      "end",
      "request = function() return batch end",
    ].join("\n");
  const lua = [
    requests,
    "done = function(summary, latency, requests)",
    "  local e = summary.errors",
    '  io.write(string.format("\\nRESULT %d %d %d %d %d %d %d %d %.3f %.3f\\n", summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, latency.mean / 1000, latency:percentile(99) / 1000))',
    "end",
  ].join("\n");
  writeFileSync(script, lua);
  return {
    command: "wrk",
    args: ["-t1", `-c${o.connections}`, `-d${o.duration}s`, "--timeout", "10s", "-s", script, o.url],
    parse(stdout) {
      const line = stdout.split("\n").find((l) => l.startsWith("RESULT "));
      if (!line) throw new Error(`wrk printed no result:\n${stdout}`);
      const [requests, bytes, micros, connect, read, write, status, timeout, latencyAvg, latencyP99] = line.slice(7).split(" ").map(Number);
      const seconds = micros / 1e6;
      return {
        requests,
        rps: requests / seconds,
        bytesPerSec: bytes / seconds,
        latencyAvg,
        // wrk's histogram can come back empty under pipelining: unknown, not zero.
        latencyP99: latencyP99 > 0 ? latencyP99 : null,
        errors: connect + read + write,
        timeouts: timeout,
        resets: 0,
        // wrk only counts answers outside 2xx/3xx.
        statuses: { "non-2xx/3xx": status },
      };
    },
  };
}

/**
 * h2load over HTTP/2 (TLS with ALPN for https:, prior knowledge for http:); p99 from its per-request
 * log. With `paths`, each connection sends those paths in rotation (h2load -i) on the URL's origin;
 * with `body`, every request is a POST of it (h2load -d).
 */
function h2loadCommand(o) {
  const dir = mkdtempSync(join(tmpdir(), "cog-bench-"));
  const log = join(dir, "requests.log");
  const args = ["-t1", `-c${o.connections}`, `-m${o.streams ?? 1}`, `-D${o.duration}`, `--log-file=${log}`];
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push("-H", `${k}: ${v}`);
  if (o.body !== undefined) {
    writeFileSync(join(dir, "body"), o.body);
    args.push("-d", join(dir, "body"));
  }
  if (o.paths !== undefined) {
    const origin = new URL(o.url).origin;
    writeFileSync(join(dir, "uris"), o.paths.map((p) => `${origin}${p}\n`).join(""));
    args.push("-i", join(dir, "uris"));
  } else args.push(o.url);
  return {
    command: "h2load",
    args,
    parse(stdout) {
      // Each line of the log: start (µs since the epoch), status, time to the answer (µs).
      const micros = readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => Number(line.split("\t")[2]))
        .sort((a, b) => a - b);
      rmSync(dir, { recursive: true, force: true });
      const field = (re) => {
        const m = re.exec(stdout);
        if (!m) throw new Error(`h2load printed no ${re}:\n${stdout}`);
        return m.slice(1).map(Number);
      };
      const [done, , errored, timeout] = field(/requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/);
      if (!(done > 0)) throw new Error(`h2load completed no request:\n${stdout.trim().split("\n").slice(-8).join("\n")}`);
      const [clientErrors, serverErrors] = field(/status codes: \d+ 2xx, \d+ 3xx, (\d+) 4xx, (\d+) 5xx/);
      const [bytes] = field(/traffic: .*?\((\d+)\) total/);
      return {
        requests: done,
        rps: done / o.duration,
        bytesPerSec: bytes / o.duration,
        latencyAvg: micros.length > 0 ? micros.reduce((a, b) => a + b, 0) / micros.length / 1000 : null,
        latencyP99: micros.length > 0 ? micros[Math.min(micros.length - 1, Math.floor(micros.length * 0.99))] / 1000 : null,
        // h2load's "failed" also counts answers outside 2xx/3xx, which `statuses` reports.
        errors: errored,
        timeouts: timeout,
        resets: 0,
        // As wrk's: answers outside 2xx/3xx.
        statuses: { "non-2xx/3xx": clientErrors + serverErrors },
      };
    },
  };
}

/**
 * h3-load over HTTP/3 (bench/h3-load, quic-go): closed loop, `streams` requests in flight on each
 * connection, no warm-up of its own (the bench's warm-up round is one). Every answer must be a 200
 * as long as its Content-Length (and `expectBody` when given), else h3-load exits with 1 and the
 * measurement fails, naming the first wrong answer.
 */
function h3LoadCommand(o) {
  const args = ["-c", String(o.connections), "-m", String(o.streams ?? 1), "-d", `${o.duration}s`, "-w", "0s"];
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push("-H", `${k}: ${v}`);
  if (o.expectBody !== undefined) args.push("-expect-body", o.expectBody);
  let dir = null;
  if (o.paths !== undefined) {
    dir = mkdtempSync(join(tmpdir(), "cog-bench-"));
    const origin = new URL(o.url).origin;
    writeFileSync(join(dir, "uris"), o.paths.map((p) => `${origin}${p}\n`).join(""));
    args.push("-i", join(dir, "uris"));
  } else args.push("-url", o.url);
  return {
    command: goTool("h3-load"),
    args,
    parse(stdout) {
      if (dir !== null) rmSync(dir, { recursive: true, force: true });
      const line = stdout
        .trim()
        .split("\n")
        .findLast((l) => l.startsWith("{"));
      if (line === undefined) throw new Error(`h3-load printed no result:\n${stdout}`);
      const r = JSON.parse(line);
      if (!(r.requests > 0)) throw new Error(`h3-load completed no request: ${line}`);
      const outside = Object.entries(r.statuses).reduce((n, [code, count]) => n + (Number(code) >= 400 ? count : 0), 0);
      return {
        requests: r.requests,
        rps: r.rps,
        bytesPerSec: r.bytes / r.seconds,
        latencyAvg: r.meanUs / 1000,
        latencyP99: r.p99Us / 1000,
        errors: r.errors,
        timeouts: 0,
        resets: 0,
        // As wrk's and h2load's: answers outside 2xx/3xx.
        statuses: { "non-2xx/3xx": outside },
      };
    },
  };
}

function luaString(s) {
  return JSON.stringify(String(s));
}
