// What request validation costs Cog: the arena's json and crud scenarios on cog-native with the
// request schemas (examples/arena.ts as it is) and without them (ARENA_VALIDATION=off), beside
// Fastify with its ajv schemas. The target (issue 26, after Encore.ts's published ratio):
// validated ≥ 0.88× unvalidated, and ≥ 2× Fastify validated. Servers on core 0, wrk and Postgres
// on core 1, the three interleaved per round; medians of req/s, of server CPU µs per request
// (the steadier figure on a shared machine) and of the per-round ratios.
//
//   node bench/arena/validation.mjs [--rounds 3] [--duration 4]
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { measure } from "../lib/load.mjs";
import { startServer } from "../lib/server.mjs";
import { ITEM_COUNT, startPostgres } from "./database.mjs";
import { arenaScenario } from "./scenarios.mjs";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "3" }, duration: { type: "string", default: "4" } } });
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const root = fileURLToPath(new URL("../..", import.meta.url));

const VARIANTS = [
  { name: "cog-native validated", file: "examples/arena.ts", env: { COG_ENGINE: "native" } },
  { name: "cog-native unvalidated", file: "examples/arena.ts", env: { COG_ENGINE: "native", ARENA_VALIDATION: "off" } },
  { name: "fastify validated", file: "bench/arena/contenders/fastify.mjs", env: {} },
];

console.log(`Postgres: seeding ${ITEM_COUNT} items…`);
const db = await startPostgres();
if (db.pid !== undefined) execFileSync("taskset", ["-a", "-p", "-c", "1", String(db.pid)], { stdio: "ignore" });
let port = 20000 + Math.floor(Math.random() * 20000);
const servers = [];
try {
  for (const v of VARIANTS)
    servers.push(
      await startServer({
        runtime: process.execPath,
        args: ["--import", "tsx"],
        file: join(root, v.file),
        port: port++,
        cpu: "0",
        env: { DATABASE_URL: db.url, ...v.env },
        cwd: root,
      }),
    );
  const rows = [];
  for (const id of ["json", "crud"]) {
    const scenario = arenaScenario(id);
    const rps = VARIANTS.map(() => []);
    const cpu = VARIANTS.map(() => []);
    for (let round = 0; round <= rounds; round++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const i = (k + round) % VARIANTS.length;
        const sampler = servers[i].sampler();
        const result = await measure({
          tool: "wrk",
          url: `http://127.0.0.1:${servers[i].port}`,
          connections: scenario.connections,
          pipelining: 1,
          script: scenario.lua(),
          duration: round === 0 ? 1 : duration,
          cpu: "1",
        });
        if (result.errors + result.timeouts + result.statuses["non-2xx/3xx"] > 0) throw new Error(`${VARIANTS[i].name} on ${id}: ${JSON.stringify(result)}`);
        const { cpuSeconds } = sampler.stop();
        if (round > 0) {
          rps[i].push(result.rps);
          cpu[i].push((cpuSeconds * 1e6) / result.requests);
        }
      }
    }
    const ratio = (a, b) => median(rps[a].map((x, r) => x / rps[b][r]));
    const cpuRatio = (a, b) => median(cpu[a].map((x, r) => cpu[b][r] / x));
    rows.push({
      id,
      rps: rps.map(median),
      cpu: cpu.map(median),
      validatedOverUnvalidated: ratio(0, 1),
      overFastify: ratio(0, 2),
      cpuValidatedOverUnvalidated: cpuRatio(0, 1),
      cpuOverFastify: cpuRatio(0, 2),
    });
  }
  // Each cell: req/s · server CPU µs per request; the ratios by req/s, then by requests per CPU second.
  console.log(`\n| scenario | ${VARIANTS.map((v) => v.name).join(" | ")} | validated / unvalidated | cog-native / fastify (both validated) |`);
  console.log(`| :-- | ${VARIANTS.map(() => "--:").join(" | ")} | --: | --: |`);
  for (const r of rows) {
    const cells = r.rps.map((x, i) => `${Math.round(x).toLocaleString("en-US")} · ${r.cpu[i].toFixed(1)} µs`);
    console.log(
      `| ${r.id} | ${cells.join(" | ")} | ${r.validatedOverUnvalidated.toFixed(2)}× (CPU: ${r.cpuValidatedOverUnvalidated.toFixed(2)}×) | ${r.overFastify.toFixed(2)}× (CPU: ${r.cpuOverFastify.toFixed(2)}×) |`,
    );
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  await db.stop();
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
