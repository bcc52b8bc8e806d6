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
//
// With --arena static, the contenders are the arena's (cog, cog-native: examples/arena.ts) and the
// one route is the arena's static profile: its 20 files under /static/ in rotation, with
// HttpArena's Accept-Encoding, read from disk on every request (--requests 5000 --warmup 20000
// is what docs/decisions/static-files-on-the-loop.md counts).
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { nodeBinary } from "../scripts/node-binary.mjs";
import { freePort, startUnderCallgrind } from "./lib/callgrind.mjs";
import { uwsForNode } from "../scripts/uws-binary.mjs";
import { ARENA_CONTENDERS } from "./arena/contenders.mjs";
import { STATIC_ACCEPT } from "./arena/contract.mjs";
import { STATIC_FILES, staticDir } from "./arena/static-files.mjs";
import { baselineOf, contenderByName } from "./lib/contenders.mjs";
import { routeById } from "./lib/contract.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const autocannon = require("autocannon");
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
    arena: { type: "string" },
  },
});
if (flags.arena !== undefined && flags.arena !== "static") throw new Error(`--arena takes "static" (the arena's profile counted here), not "${flags.arena}"`);
const nodePath = flags.node ? nodeBinary(flags.node) : process.execPath;
const N = Number(flags.requests);
const arenaContender = (name) => {
  const contender = ARENA_CONTENDERS.find((c) => c.name === name && c.file.startsWith("examples/"));
  if (contender === undefined) throw new Error(`--arena counts Cog's arena app (cog, cog-native), not "${name}"`);
  return contender;
};
const contenders = flags.contenders.split(",").map(flags.arena === undefined ? contenderByName : arenaContender);
if (flags.keep) mkdirSync(flags.keep, { recursive: true });
// uWebSockets.js on another Node than this one needs that Node's binary (scripts/uws-binary.mjs).
if (flags.node && contenders.some((c) => baselineOf(c) === "uws")) uwsForNode(flags.node);

function run(command, args) {
  return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The arena's static profile: its files in rotation on every connection (autocannon's `requests`), as the bench's Lua script sends them. */
const ARENA_STATIC = {
  id: "arena-static",
  files: STATIC_FILES.map((f) => ({ method: "GET", path: `/static/${f.name}`, headers: { "accept-encoding": STATIC_ACCEPT } })),
};

async function load(port, route, amount) {
  if (route === ARENA_STATIC) {
    const result = await autocannon({ url: `http://127.0.0.1:${port}`, connections: Number(flags.connections), amount, requests: route.files });
    if (result.errors > 0 || result.non2xx > 0 || result.requests.total < amount)
      throw new Error(`load failed: ${result.errors} errors, ${result.non2xx} not 2xx, ${result.requests.total}/${amount} answered`);
    return;
  }
  const args = [require.resolve("autocannon/autocannon.js"), "-c", flags.connections, "-a", String(amount), "-m", route.method, "--json"];
  for (const [k, v] of Object.entries(route.headers)) args.push("-H", `${k}=${v}`);
  if (route.payload) args.push("-b", route.payload);
  args.push(`http://127.0.0.1:${port}${route.path}`);
  const result = JSON.parse(run(process.execPath, args));
  if (result.errors > 0 || result.requests.total < amount)
    throw new Error(
      `load failed: ${result.errors} errors (${result.timeouts} timeouts, ${result.resets ?? 0} resets), ${result.requests.total}/${amount} answered`,
    );
}

async function countFor(contender, routes, port) {
  const server = flags.arena === undefined ? [join(here, "contenders", contender.file)] : ["--import", "tsx", join(here, "..", contender.file)];
  const arenaEnv = flags.arena === undefined ? {} : { ...contender.env, STATIC_DIR: staticDir() };
  const nodeArgs = [...flags["node-flags"].split(" ").filter(Boolean), ...server.slice(0, -1)];
  const counter = await startUnderCallgrind({
    node: nodePath,
    nodeArgs,
    file: server.at(-1),
    env: { ...process.env, PORT: String(port), NODE_ENV: "production", ...arenaEnv },
    keep: flags.keep,
  });
  const counts = {};
  try {
    // Every route is warmed up before any is counted: V8 optimizes on background threads, which
    // callgrind counts too, and after one route's warm-up alone its compilations were still
    // running while it was counted (10,000-25,000 instructions a request more on the first route).
    for (const id of routes) await load(port, routeOf(id), Number(flags.warmup));
    for (const id of routes) {
      const route = routeOf(id);
      await load(port, route, Math.ceil(Number(flags.warmup) / 6));
      const { instructions } = await counter.count(`${contender.name}.${id}`, () => load(port, route, N));
      counts[id] = instructions / N;
      console.log(`${contender.name.padEnd(12)} ${id.padEnd(11)} ${Math.round(counts[id]).toLocaleString("en-US").padStart(9)} instructions/request`);
    }
  } finally {
    counter.stop();
  }
  return counts;
}

const routeOf = (id) => (id === ARENA_STATIC.id ? ARENA_STATIC : routeById(id));
const routes = flags.arena === undefined ? flags.routes.split(",") : [ARENA_STATIC.id];
const all = {};
for (const contender of contenders) all[contender.name] = await countFor(contender, routes, await freePort());
const [base, ...others] = Object.keys(all);
console.log(`\nratio to ${base} (lower is cheaper):`);
for (const name of others) {
  console.log(`${name.padEnd(12)} ${routes.map((r) => `${r} ${(all[name][r] / all[base][r]).toFixed(3)}`).join("  ")}`);
}
