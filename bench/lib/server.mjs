// Starts a contender's server in its own process, pinned to the server core,
// and samples its memory and CPU while it serves.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { cpuSeconds, pin, processTree, rssBytes } from "./proc.mjs";

const READY_TIMEOUT_MS = 20_000;

/** Servers not yet stopped: killed if this process exits first (a failed test, a bench cut short by a signal). */
const running = new Set();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * @returns {Promise<{pid:number, port:number, stop():Promise<void>, sampler():Sampler}>}
 * Rejects with the server's own output when it fails to start, so the runner can print why.
 * Without `port`, a free one is chosen, and chosen again if another process took it before the
 * server listened (a port the kernel just said was free is also what it gives the next client's
 * connect(): with tests running beside each other, that happens).
 */
export async function startServer(options) {
  if (options.port !== undefined) return startOn(options);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn({ ...options, port: await freePort() });
    } catch (err) {
      if (attempt === 3 || !/EADDRINUSE/.test(err.message)) throw err;
    }
  }
}

function startOn({ runtime, args = [], file, port, cpu, env = {}, cwd }) {
  const child = spawn(...pin(cpu, runtime, [...args, file]), {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`no "ready" within ${READY_TIMEOUT_MS / 1000}s`)), READY_TIMEOUT_MS);
    const fail = (err) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${err.message}${output.trim() ? `\n${lastWords(output)}` : ""}`));
    };
    const onData = (chunk) => {
      output += chunk;
      if (/^ready$/m.test(output)) {
        clearTimeout(timer);
        child.stdout.off("data", onData);
        child.stderr.off("data", onData);
        // Keep draining output so a chatty server never blocks on a full pipe.
        child.stdout.resume();
        child.stderr.resume();
        resolve({
          pid: child.pid,
          port,
          stop: () => stop(child),
          sampler: () => new Sampler(child.pid),
        });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code, signal) => fail(new Error(`exited (${signal ?? code}) before it was ready`)));
    child.on("error", fail);
  });
}

/** What a server printed before it failed: its last lines, after the thrown error's (Node prints it above the stack). */
function lastWords(output) {
  const lines = output.trim().split("\n");
  const last = lines.slice(-6);
  const thrown = lines.find((line) => /^[A-Z]\w*Error\b.*: /.test(line));
  return [...(thrown === undefined || last.includes(thrown) ? [] : [thrown]), ...last].join("\n");
}

/** A port nothing listens on, from the kernel. */
export function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The first port from `port` up that nothing listens on: another bench run on the same machine
 * holds the ones it started its servers on.
 */
export async function freePortFrom(port) {
  for (let candidate = port; ; candidate++) {
    const free = await new Promise((resolve) => {
      const probe = createServer()
        .once("error", () => resolve(false))
        .listen(candidate, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (free) return candidate;
  }
}

function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * Samples a server's RSS and CPU every `everyMs` until stopped: its process and the processes it
 * had started when sampling began (a server run as worker processes counts as all of them).
 */
export class Sampler {
  constructor(pid, everyMs = 250) {
    this.pids = processTree(pid);
    this.series = [];
    this.startEach = this.pids.map(cpuSeconds);
    this.startCpu = total(this.startEach);
    this.started = process.hrtime.bigint();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.sample();
  }

  sample() {
    const rss = total(this.pids.map(rssBytes));
    if (rss !== null) this.series.push({ t: Number(process.hrtime.bigint() - this.started) / 1e9, rss });
  }

  /** Stops sampling: peak RSS, mean CPU use (1.0 = one core), CPU seconds per process (the server's first), and the RSS series. */
  stop() {
    clearInterval(this.timer);
    this.sample();
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    const endEach = this.pids.map(cpuSeconds);
    const endCpu = total(endEach);
    return {
      peakRss: Math.max(0, ...this.series.map((s) => s.rss)),
      cpu: endCpu === null || this.startCpu === null ? null : (endCpu - this.startCpu) / seconds,
      cpuSeconds: endCpu === null || this.startCpu === null ? null : endCpu - this.startCpu,
      processCpuSeconds: this.pids.map((_, i) => (endEach[i] === null || this.startEach[i] === null ? null : endEach[i] - this.startEach[i])),
      series: this.series,
    };
  }
}

/** The sum of per-process figures, or null once the first process (the server) is gone. */
function total(each) {
  return each[0] === null ? null : each.reduce((sum, x) => sum + (x ?? 0), 0);
}
