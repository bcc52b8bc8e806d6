#!/usr/bin/env node
// A rolling deploy as keep-alive clients see it: the app of test/fixtures/serving-app.ts (GET
// /slow answers after 30 ms) is loaded by 50 keep-alive connections (Node's http.Agent, as
// undici, proxies and most clients keep them), gets SIGTERM after 200 answers, and each request's
// outcome is counted: answered (200, or 503 while draining), refused before it was sent
// (ECONNREFUSED: the server no longer listens; the client knows the request never ran), or reset
// (ECONNRESET / socket hang up: the client cannot tell whether it ran). The drain's promise is
// zero resets.
//
//   node bench/drain-resets.mjs [--runs 6] [--engines node,native] [--workers 0,2] [--clients 50]
//
// Prints one line per run and a total per engine and worker count.
import { spawn } from "node:child_process";
import { Agent, request } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "6" },
    engines: { type: "string", default: "node,native" },
    workers: { type: "string", default: "0,2" },
    clients: { type: "string", default: "50" },
  },
});
const runs = Number(values.runs);
const clients = Number(values.clients);

function start(engine, workers) {
  const env = { ...process.env, COG_ENGINE: engine };
  if (workers > 0) env.WORKERS = String(workers);
  const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/serving-app.ts"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => (out += chunk));
  child.stderr.resume();
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  const port = new Promise((resolve, reject) => {
    const check = () => {
      const line = out.indexOf("\n");
      if (line !== -1) return resolve(Number(out.slice(0, line)));
      setTimeout(check, 20);
    };
    check();
    child.once("exit", () => reject(new Error(`the app exited before it listened:\n${out}`)));
  });
  return { child, port, exited };
}

function get(port, agent) {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/slow", agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(String(res.statusCode)));
      res.on("error", (err) => resolve(err.code ?? err.message));
    });
    req.on("error", (err) => resolve(err.code ?? err.message));
    req.end();
  });
}

async function run(engine, workers) {
  const app = start(engine, workers);
  const port = await app.port;
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const counts = {};
  let answered = 0;
  let signalled = false;
  let stopped = false;
  void app.exited.then(() => (stopped = true));
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!stopped) {
        const outcome = await get(port, agent);
        counts[outcome] = (counts[outcome] ?? 0) + 1;
        if (outcome === "200" && ++answered === 200 && !signalled) {
          signalled = true;
          app.child.kill("SIGTERM");
        }
        // Once the server has stopped listening, a client has nothing more to learn.
        if (outcome === "ECONNREFUSED") break;
      }
    }),
  );
  agent.destroy();
  const code = await app.exited;
  const resets = Object.entries(counts)
    .filter(([outcome]) => !["200", "503", "ECONNREFUSED"].includes(outcome))
    .reduce((sum, [, n]) => sum + n, 0);
  return { code, counts, resets };
}

for (const engine of values.engines.split(",")) {
  for (const workers of values.workers.split(",").map(Number)) {
    let resets = 0;
    for (let i = 1; i <= runs; i++) {
      const result = await run(engine, workers);
      resets += result.resets;
      console.log(`${engine} workers=${workers} run ${i}: exit ${result.code}, ${JSON.stringify(result.counts)}, resets ${result.resets}`);
    }
    console.log(`${engine} workers=${workers}: ${resets} resets in ${runs} runs\n`);
  }
}
