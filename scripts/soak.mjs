#!/usr/bin/env node
// Soak: many keep-alive requests plus connection churn against a Cog server
// started with --expose-gc, sampling its heap (after a full GC) and its open
// file descriptors as it goes. Leak-free means: the heap of the last third of
// the run within 5% of the middle third's, the resident set (which also holds
// what a native engine allocates outside the JS heap) within 10% on runs of
// 300k requests or more (before that it is still growing to its working size:
// V8's young generation, the allocator's arenas), and descriptors back to
// baseline once every client connection is closed.
//
//   npm run soak                        1M requests (about a minute or two)
//   npm run soak -- --requests 200000   a shorter run
//   npm run soak -- --engine native     on another engine (node, native)
//
// test/system/leaks.test.ts runs it in short form on every `npm test`.
import { fork } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";

const self = fileURLToPath(import.meta.url);

async function main() {
  const { values } = parseArgs({
    options: { requests: { type: "string", default: "1000000" }, samples: { type: "string", default: "30" }, engine: { type: "string", default: "node" } },
  });
  const report = await soak({
    requests: Number(values.requests),
    samples: Number(values.samples),
    engine: values.engine,
    progress: (line) => console.log(line),
  });
  console.log(JSON.stringify(report, null, 1));
  process.exit(report.ok ? 0 : 1);
}

/**
 * Runs the soak and returns its figures and verdict.
 * @param {{ requests: number, samples?: number, engine?: string, progress?: (line: string) => void }} o
 */
export async function soak({ requests, samples = 30, engine = "node", progress = () => {} }) {
  const server = fork(self, ["--serve", engine], { execArgv: ["--expose-gc"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  try {
    const { port } = await next(server);
    const ask = async () => {
      server.send("sample");
      return next(server);
    };
    const baseline = await ask();
    const perSample = Math.max(1000, Math.round(requests / samples));
    const heap = [];
    const rss = [];
    let sent = 0;
    let errors = 0;
    let non2xx = 0;
    for (let i = 0; i < samples; i++) {
      const result = await autocannon({
        url: `http://127.0.0.1:${port}`,
        connections: 50,
        amount: perSample,
        // Every 200 requests a connection is closed and a new one opened: churn.
        maxConnectionRequests: 200,
        requests: REQUESTS,
      });
      sent += result.requests.total;
      errors += result.errors + result.timeouts;
      non2xx += result.non2xx;
      const sample = await ask();
      heap.push(sample.heapUsed);
      rss.push(sample.rss);
      progress(
        `[${String(i + 1).padStart(2)}/${samples}] ${sent.toLocaleString("en-US")} requests, heap ${mb(sample.heapUsed)} MB, rss ${mb(sample.rss)} MB, ${sample.fds} fds`,
      );
    }
    // Let the server notice every client is gone before counting descriptors.
    await new Promise((r) => setTimeout(r, 500));
    const end = await ask();
    const [middle, last, drift] = thirds(heap);
    const [rssMiddle, rssLast, rssDrift] = thirds(rss);
    return {
      requests: sent,
      errors,
      non2xx,
      heapMiddleMB: mb(middle),
      heapLastMB: mb(last),
      heapDrift: Number(drift.toFixed(4)),
      rssMiddleMB: mb(rssMiddle),
      rssLastMB: mb(rssLast),
      rssDrift: Number(rssDrift.toFixed(4)),
      fdsBaseline: baseline.fds,
      fdsAfter: end.fds,
      ok: errors === 0 && non2xx === 0 && drift <= 0.05 && (sent < RSS_SETTLED || rssDrift <= 0.1) && end.fds <= baseline.fds,
    };
  } finally {
    server.kill();
  }
}

/** Requests after which the resident set has settled, so its drift means something. */
export const RSS_SETTLED = 300_000;

const REQUESTS = [
  { method: "GET", path: "/" },
  { method: "GET", path: "/hello?name=John&x=1&x=2" },
  { method: "GET", path: "/users/42", headers: { cookie: "session=abc; theme=dark" } },
  { method: "POST", path: "/echo", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "Hello!", list: [1, 2, 3] }) },
  { method: "GET", path: "/set-cookie" },
];

async function serve(engine) {
  const { Cog } = await import("../dist/index.js");
  const app = new Cog({ engine });
  app.use((_req, res, next) => {
    res.set("X-Powered-By", "Cog");
    next();
  });
  app.get("/", (_req, res) => res.send("Hello"));
  app.get("/hello", (req, res) => res.send(`Hello, ${req.query.name}!`));
  app.get("/users/:id", (req, res) => res.json({ id: req.params.id, session: req.cookies.session }));
  app.post("/echo", (req, res) => res.json(req.body));
  app.get("/set-cookie", (_req, res) => res.setCookie("token", "t", { httpOnly: true }).send("set"));
  const { port } = await app.listen(0, "127.0.0.1");
  process.on("message", () => {
    globalThis.gc();
    globalThis.gc();
    const { heapUsed, rss } = process.memoryUsage();
    process.send({ heapUsed, rss, fds: readdirSync("/proc/self/fd").length });
  });
  process.send({ port });
}

function next(child) {
  return new Promise((resolve, reject) => {
    const onExit = (code) => reject(new Error(`the soak server exited (code ${code})`));
    child.once("exit", onExit);
    child.once("message", (m) => {
      child.removeListener("exit", onExit);
      resolve(m);
    });
  });
}

/** The medians of the middle and last thirds of `samples`, and how much the last grew over the middle. */
function thirds(samples) {
  const third = Math.floor(samples.length / 3);
  const middle = median(samples.slice(third, 2 * third));
  const last = median(samples.slice(2 * third));
  return [middle, last, (last - middle) / middle];
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function mb(bytes) {
  return Number((bytes / 2 ** 20).toFixed(2));
}

// Last, so every constant above is initialised when this file runs as a script.
if (process.argv[1] === self) {
  if (process.argv[2] === "--serve") await serve(process.argv[3]);
  else await main();
}
