#!/usr/bin/env node
// Instructions per request on the arena's scenarios, counted by valgrind's callgrind over every
// thread of the server (the thread pool's compression included): the arena's servers
// (bench/arena/contenders.mjs) sent the arena's requests, where bench/instructions.mjs sends the
// seeds' routes to the seeds' servers. pipelined (16 requests a write) and json-comp (its middle
// size, /json/40, with Accept-Encoding: gzip, br) are sent by autocannon, a fixed number of
// requests; limited-conn (the connection closed every tenth request) by wrk and the scenario's
// own script, for --requests / --rate seconds (wrk's count of answers then leaves out the at most
// 64 in flight when it stops). The scenarios over Postgres (async-db, crud) get a seeded one
// (bench/arena/database.mjs) unless DATABASE_URL names one; a scenario's kinds of request are
// counted apart as `scenario:kind` (crud:read, crud:update, crud:list, crud:create).
//
//   node bench/arena-instructions.mjs --contenders cog,fastify,node-http --scenarios pipelined,limited-conn,json-comp
//   node bench/arena-instructions.mjs --contenders cog,fastify --scenarios crud,crud:read,crud:update,crud:list,crud:create
//
// The count is userland work only (no kernel time, no cache effects), so a change that saves
// system calls shows in `npm run bench` rounds rather than here. Under callgrind the server runs
// some 50x slower, which changes how many pipelined requests one read brings: compare pipelined
// counts between versions of one server, not between servers. With --keep DIR, each
// measurement's callgrind output is kept as DIR/<contender>.<scenario>.callgrind, for
// `callgrind_annotate --inclusive=yes`.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ARENA_CONTENDERS } from "./arena/contenders.mjs";
import { ARENA_SCENARIOS } from "./arena/scenarios.mjs";
import { startPostgres } from "./arena/database.mjs";
import { staticDir } from "./arena/static-files.mjs";
import { freePort, startUnderCallgrind } from "./lib/callgrind.mjs";

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: flags } = parseArgs({
  options: {
    contenders: { type: "string", default: "node-http,fastify,cog" },
    scenarios: { type: "string", default: "pipelined,limited-conn,json-comp" },
    requests: { type: "string", default: "20000" },
    warmup: { type: "string", default: "30000" },
    // limited-conn runs for a time: its requests divided by this rate (answers a second under callgrind).
    rate: { type: "string", default: "1000" },
    keep: { type: "string" },
    "node-flags": { type: "string", default: "" },
  },
});
const contenders = flags.contenders.split(",").map((name) => {
  const found = ARENA_CONTENDERS.find((c) => c.name === name && c.runtime === undefined);
  if (!found) throw new Error(`Unknown or non-Node arena contender "${name}"`);
  return found;
});
const scenarios = flags.scenarios.split(",").map((id) => {
  // "crud:read": one kind of a scenario's requests alone (the scenario's `kinds`).
  const [scenarioId, kind] = id.split(":");
  const found = ARENA_SCENARIOS.find((s) => s.id === scenarioId);
  if (!found || found.tool !== undefined || found.workers !== undefined)
    throw new Error(`Unknown arena scenario, or not one wrk times on one process: "${id}"`);
  if (kind === undefined) return found;
  if (found.kinds?.[kind] === undefined)
    throw new Error(`"${scenarioId}" has no kind of request "${kind}" (${Object.keys(found.kinds ?? {}).join(", ") || "none"})`);
  return { ...found, id, lua: () => found.lua(String(found.kinds[kind])) };
});
// The scenarios over Postgres get one, seeded, unless DATABASE_URL names one.
const database = scenarios.some((s) => s.needsDatabase) && !process.env.DATABASE_URL ? await startPostgres() : undefined;

function run(command, args) {
  return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * How each scenario is driven. A fixed number of requests where autocannon can send the
 * scenario's requests (pipelined: 16 a write; json-comp: its middle size, compressed), so that
 * the count is exact; limited-conn's closes need wrk and its script, for a time (wrk's count of
 * answers then leaves out the at most 64 in flight when it stops).
 */
const DRIVE = {
  pipelined: { path: "/pipeline", connections: 16, pipelining: 16, headers: {} },
  "json-comp": { path: "/json/40?m=8", connections: 64, pipelining: 1, headers: { "accept-encoding": "gzip, br" } },
};

/** Sends the scenario's load, `amount` requests' worth; returns how many were answered. */
function load(port, scenario, amount, dir) {
  const drive = DRIVE[scenario.id];
  if (drive !== undefined) {
    const args = [
      require.resolve("autocannon/autocannon.js"),
      "-c",
      String(drive.connections),
      "-p",
      String(drive.pipelining),
      "-a",
      String(amount),
      "-t",
      "120",
      "--json",
    ];
    for (const [k, v] of Object.entries(drive.headers)) args.push("-H", `${k}=${v}`);
    const result = JSON.parse(run(process.execPath, [...args, `http://127.0.0.1:${port}${drive.path}`]));
    // autocannon stops once it has sent `amount`: up to a pipeline per connection may still be on its way back.
    if (result.errors > 0 || result.non2xx > 0 || result.requests.total < amount - drive.connections * drive.pipelining)
      throw new Error(`load failed: ${result.errors} errors, ${result.non2xx} not 2xx, ${result.requests.total}/${amount} answered`);
    return amount;
  }
  const script = join(dir, `${scenario.id}.lua`);
  writeFileSync(
    script,
    `${scenario.lua()}\ndone = function(summary)\n  io.write(string.format("\\nRESULT %d %d\\n", summary.requests, summary.errors.status))\nend\n`,
  );
  const seconds = Math.max(1, Math.round(amount / Number(flags.rate)));
  const output = run("wrk", ["-t1", `-c${scenario.connections}`, `-d${seconds}s`, "--timeout", "30s", "-s", script, `http://127.0.0.1:${port}/`]);
  const [requests, statuses] = /^RESULT (\d+) (\d+)$/m.exec(output).slice(1).map(Number);
  if (requests === 0 || statuses > 0) throw new Error(`load failed: ${requests} answered, ${statuses} not 2xx/3xx:\n${output}`);
  return requests;
}

async function countFor(contender, port) {
  const server = await startUnderCallgrind({
    node: process.execPath,
    nodeArgs: ["--import", "tsx", ...flags["node-flags"].split(" ").filter(Boolean)],
    file: join(root, contender.file),
    cwd: root,
    env: {
      ...process.env,
      ...contender.env,
      PORT: String(port),
      NODE_ENV: "production",
      STATIC_DIR: staticDir(),
      ...(database && { DATABASE_URL: database.url }),
    },
    keep: flags.keep,
  });
  const dir = mkdtempSync(join(tmpdir(), "cog-arena-lua-"));
  const counts = {};
  try {
    // Every scenario is warmed up before any is counted (V8's background compilations are counted too).
    for (const scenario of scenarios) load(port, scenario, Number(flags.warmup), dir);
    for (const scenario of scenarios) {
      load(port, scenario, Math.ceil(Number(flags.warmup) / 6), dir);
      const { instructions, sent: requests } = await server.count(`${contender.name}.${scenario.id}`, () => load(port, scenario, Number(flags.requests), dir));
      counts[scenario.id] = instructions / requests;
      console.log(
        `${contender.name.padEnd(10)} ${scenario.id.padEnd(13)} ${Math.round(counts[scenario.id]).toLocaleString("en-US").padStart(9)} instructions/request (${requests} requests)`,
      );
    }
  } finally {
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return counts;
}

const all = {};
try {
  for (const contender of contenders) all[contender.name] = await countFor(contender, await freePort());
} finally {
  await database?.stop();
}
const [base, ...others] = Object.keys(all);
console.log(`\nratio to ${base} (lower is cheaper):`);
for (const name of others) console.log(`${name.padEnd(10)} ${scenarios.map((s) => `${s.id} ${(all[name][s.id] / all[base][s.id]).toFixed(3)}`).join("  ")}`);
