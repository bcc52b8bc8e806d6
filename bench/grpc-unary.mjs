#!/usr/bin/env node
// gRPC unary calls: the server's CPU time per call (from /proc) and calls/s, for Cog's native engine
// and node engine (cog-http/connect's handler, and Connect's Node handler mounted with app.use,
// h2c), Connect's handler on bare
// node:http2, and @grpc/grpc-js's own server. Server pinned to core 0, the grpc-js client to core 1;
// a warm-up run per server, then the contenders interleaved over rounds; medians.
//
//   npm run build && node bench/grpc-unary.mjs [--rounds 5] [--seconds 4] [--concurrency 32]
import { spawn, execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { cpuSeconds, pin } from "./lib/proc.mjs";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    seconds: { type: "string", default: "4" },
    concurrency: { type: "string", default: "32" },
    contenders: { type: "string", default: "cog-native-connect,cog-native,cog-node-connect,cog-node,connect,grpc-js" },
  },
});
const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const contenders = flags.contenders.split(",");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function start(contender) {
  const [command, args] = pin("0", process.execPath, ["--import", "tsx", here("grpc/server.mjs"), contender]);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const m = /^port (\d+)\nready$/m.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`${contender} exited (${code})`)));
  });
  // taskset execs node in place: the pid is the server's.
  return { child, port };
}

function load(port, seconds) {
  const [command, args] = pin("1", process.execPath, [here("grpc/client.mjs"), String(port), String(seconds), flags.concurrency]);
  return JSON.parse(execFileSync(command, args, { encoding: "utf8" }));
}

const results = Object.fromEntries(contenders.map((c) => [c, []]));
const servers = {};
for (const contender of contenders) {
  servers[contender] = await start(contender);
  load(servers[contender].port, 2); // warm-up
}
for (let round = 0; round < Number(flags.rounds); round++) {
  for (const contender of contenders) {
    const { child, port } = servers[contender];
    const before = cpuSeconds(child.pid);
    const started = process.hrtime.bigint();
    const { calls, failed } = load(port, Number(flags.seconds));
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = cpuSeconds(child.pid) - before;
    results[contender].push({ usPerCall: (cpu * 1e6) / calls, callsPerSecond: calls / wall, failed });
  }
}
for (const { child } of Object.values(servers)) child.kill();

console.log(
  `node ${process.version}, ${flags.rounds} rounds of ${flags.seconds} s, ${flags.concurrency} calls in flight on one connection (grpc-js client, core 1; server on core 0)`,
);
console.log("contender            server CPU µs/call (median)   calls/s (median)   failed");
const base = median(results[contenders[0]].map((r) => r.usPerCall));
for (const contender of contenders) {
  const us = median(results[contender].map((r) => r.usPerCall));
  const rate = median(results[contender].map((r) => r.callsPerSecond));
  const failed = results[contender].reduce((n, r) => n + r.failed, 0);
  console.log(`${contender.padEnd(20)} ${us.toFixed(1).padStart(8)} (x${(us / base).toFixed(2)})          ${rate.toFixed(0).padStart(8)}          ${failed}`);
}
