#!/usr/bin/env node
// Instructions per request, counted by valgrind's callgrind: a repeatable A/B
// signal (to well under 1%) for the userland cost of one request, where
// wall-clock rounds on this machine vary by 10-30%. It ignores kernel time and
// cache effects, so confirm a win in `npm run bench` rounds too.
//
//   node bench/instructions.mjs --contenders node-http,cog --routes root,json [--requests 20000] [--node 24]
//
// With --keep DIR, each measurement's callgrind output is kept as DIR/<contender>.<route>.callgrind,
// for `callgrind_annotate --inclusive=yes DIR/cog.admin.callgrind` (where the instructions go).
//
// The count moves by 1-3% between runs of the same code on a busy machine: how many requests a
// call into JavaScript carries depends on how fast the load generator sends them, and V8's
// background compilation is counted too. For A/B comparisons of small changes,
//   --connections 1 --node-flags="--single-threaded --hash-seed=1 --random-seed=1"
// gives counts that repeat to within ~1% (one request a turn of the loop; compilation on the main
// thread, done before counting; hash tables laid out the same in every run); the absolute counts
// are then higher (each request pays a turn of the loop alone).
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { nodeBinary } from "../scripts/node-binary.mjs";
import { uwsForNode } from "../scripts/uws-binary.mjs";
import { freePort, startUnderCallgrind } from "./lib/callgrind.mjs";
import { baselineOf, contenderByName } from "./lib/contenders.mjs";
import { routeById } from "./lib/contract.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const { values: flags } = parseArgs({
  options: {
    contenders: { type: "string", default: "node-http,cog" },
    routes: { type: "string", default: "root,deep,query,admin,admin-auth,set-token,parse-body,json,api,html" },
    requests: { type: "string", default: "20000" },
    warmup: { type: "string", default: "30000" },
    node: { type: "string" },
    keep: { type: "string" },
    connections: { type: "string", default: "10" },
    "node-flags": { type: "string", default: "" },
  },
});
const nodePath = flags.node ? nodeBinary(flags.node) : process.execPath;
const N = Number(flags.requests);
const contenders = flags.contenders.split(",").map(contenderByName);
// uWebSockets.js on another Node than this one needs that Node's binary (scripts/uws-binary.mjs).
if (flags.node && contenders.some((c) => baselineOf(c) === "uws")) uwsForNode(flags.node);

function run(command, args) {
  return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function load(port, route, amount) {
  const args = [require.resolve("autocannon/autocannon.js"), "-c", flags.connections, "-a", String(amount), "-m", route.method, "--json"];
  for (const [k, v] of Object.entries(route.headers)) args.push("-H", `${k}=${v}`);
  if (route.payload) args.push("-b", route.payload);
  args.push(`http://127.0.0.1:${port}${route.path}`);
  const result = JSON.parse(run(process.execPath, args));
  if (result.errors > 0 || result.requests.total < amount) throw new Error(`load failed: ${result.errors} errors (${result.timeouts} timeouts, ${result.resets ?? 0} resets), ${result.requests.total}/${amount} answered`);
}

async function countFor(contender, routes, port) {
  const server = await startUnderCallgrind({
    node: nodePath,
    nodeArgs: flags["node-flags"].split(" ").filter(Boolean),
    file: join(here, "contenders", contender.file),
    env: { ...process.env, PORT: String(port), NODE_ENV: "production" },
    keep: flags.keep,
  });
  const counts = {};
  try {
    // Every route is warmed up before any is counted: V8 optimizes on background threads, which
    // callgrind counts too, and after one route's warm-up alone its compilations were still
    // running while it was counted (10,000-25,000 instructions a request more on the first route).
    for (const id of routes) load(port, routeById(id), Number(flags.warmup));
    for (const id of routes) {
      const route = routeById(id);
      load(port, route, Math.ceil(Number(flags.warmup) / 6));
      const { instructions } = await server.count(`${contender.name}.${id}`, () => load(port, route, N));
      counts[id] = instructions / N;
      console.log(`${contender.name.padEnd(12)} ${id.padEnd(11)} ${Math.round(counts[id]).toLocaleString("en-US").padStart(9)} instructions/request`);
    }
  } finally {
    server.stop();
  }
  return counts;
}

const routes = flags.routes.split(",");
const all = {};
for (const contender of contenders) all[contender.name] = await countFor(contender, routes, await freePort());
const [base, ...others] = Object.keys(all);
console.log(`\nratio to ${base} (lower is cheaper):`);
for (const name of others) {
  console.log(`${name.padEnd(12)} ${routes.map((r) => `${r} ${(all[name][r] / all[base][r]).toFixed(3)}`).join("  ")}`);
}
