// Turns raw measurements into medians, ratios and a markdown report.
import { CONTENDERS, baselineOf } from "./contenders.mjs";
import { routeById } from "./contract.mjs";
import { fixedRateSection, idleSection } from "../arena/fixed-rate-report.mjs";

const GENERATOR_BOUND = 0.95;

export function median(values) {
  const v = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Answers that were not what the route should give (the seed's /admin answers 403 on purpose). */
export function unexpectedAnswers(measurement) {
  const expected = routeById(measurement.route).status;
  const statuses = measurement.statuses ?? {};
  if ("non-2xx/3xx" in statuses) {
    const odd = statuses["non-2xx/3xx"];
    return expected < 400 ? odd : measurement.requests - odd;
  }
  let matching = 0;
  let all = 0;
  for (const [code, count] of Object.entries(statuses)) {
    all += count;
    if (Number(code) === expected) matching += count;
  }
  return all - matching;
}

/**
 * One row per scenario × route × contender: medians over the measured rounds,
 * totals of errors, and the ratio to the bare server of the same engine.
 */
export function summarize(results) {
  const rows = [];
  const groups = new Map();
  for (const m of results.measurements) {
    const key = `${m.scenario}\u0000${m.route}\u0000${m.contender}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(m);
  }
  for (const list of groups.values()) {
    const ok = list.filter((m) => !m.failed);
    const { scenario, route, contender } = list[0];
    rows.push({
      measured: ok,
      scenario,
      route,
      contender,
      rounds: ok.length,
      failedRounds: list.length - ok.length,
      rps: median(ok.map((m) => m.rps)),
      latencyAvg: median(ok.map((m) => m.latencyAvg)),
      latencyP99: median(ok.map((m) => m.latencyP99)),
      bytesPerSec: median(ok.map((m) => m.bytesPerSec)),
      errors: ok.reduce((n, m) => n + m.errors + m.timeouts + (m.resets ?? 0), 0),
      unexpected: ok.reduce((n, m) => n + unexpectedAnswers(m), 0),
      peakRss: Math.max(0, ...ok.map((m) => m.serverPeakRss ?? 0)),
      serverCpu: median(ok.map((m) => m.serverCpu)),
      cpuMicrosPerRequest: median(ok.map(cpuMicros)),
      // Each process's share of the server's CPU (a server with workers: the primary, then each worker).
      cpuShares: (ok[0]?.processCpuSeconds ?? []).map((_, i) =>
        median(ok.map((m) => (m.serverCpuSeconds > 0 ? (m.processCpuSeconds?.[i] ?? 0) / m.serverCpuSeconds : null))),
      ),
      generatorCpu: median(ok.map((m) => m.generatorCpu)),
    });
  }
  // The seeds' contenders, else as the run describes them (an arena or serving contender: its engine, or its `baseline`).
  const contenderOf = (name) => CONTENDERS.find((c) => c.name === name) ?? results.contenders.find((c) => c.name === name) ?? {};
  // A scenario may name its own bare server (HTTP/3's: bun, the only bare server here that speaks it).
  const bareOfScenario = (id) => results.scenarios.find((s) => s.id === id)?.bare;
  for (const row of rows) {
    const bareName = bareOfScenario(row.scenario) ?? baselineOf(contenderOf(row.contender));
    const bare = rows.find((r) => r.scenario === row.scenario && r.route === row.route && r.contender === bareName);
    row.baseline = bare ? bareName : null;
    row.ratio = pairedRatio(row, bare);
    row.cpuRatio = pairedRatio(row, bare, cpuMicros);
    const nodeBare = rows.find((r) => r.scenario === row.scenario && r.route === row.route && r.contender === "node-http");
    row.ratioToNode = pairedRatio(row, nodeBare);
    row.generatorBound = row.generatorCpu !== null && row.generatorCpu >= GENERATOR_BOUND;
  }
  for (const row of rows) delete row.measured;
  return rows;
}

/** Server CPU time per request, in µs (null when the server's CPU was not sampled). */
function cpuMicros(m) {
  return m.serverCpuSeconds != null && m.requests > 0 ? (m.serverCpuSeconds / m.requests) * 1e6 : null;
}

/**
 * A contender's requests/s (or another measure) over the baseline's: the median of the ratios
 * within each pair (--paired: both timed at the same moment) or else each
 * round (every contender timed back to back), so a slow stretch of the
 * machine (this one's speed drifts 10-30% over minutes) weighs on both sides
 * of a ratio instead of on whichever contender it fell on. Without pairs or
 * rounds in common, the ratio of the medians.
 */
export function pairedRatio(row, base, value = (m) => m.rps) {
  if (!base) return null;
  const keyOf = (m) => m.pair ?? m.round;
  const baseByKey = new Map(base.measured.map((m) => [keyOf(m), value(m)]));
  const ratios = row.measured
    .filter((m) => keyOf(m) !== undefined && value(m) !== null && baseByKey.get(keyOf(m)) > 0)
    .map((m) => value(m) / baseByKey.get(keyOf(m)));
  if (ratios.length > 0) return median(ratios);
  const [mine, theirs] = [median(row.measured.map(value)), median(base.measured.map(value))];
  return mine === null || !theirs ? null : mine / theirs;
}

const fmt = {
  int: (n) => (n === null ? "–" : Math.round(n).toLocaleString("en-US")),
  fixed: (n, d = 2) => (n === null ? "–" : n.toFixed(d)),
  ratio: (n) => (n === null ? "–" : `${n.toFixed(2)}×`),
  mb: (n) => (n === null || n === 0 ? "–" : (n / 2 ** 20).toFixed(0)),
  mbps: (n) => (n === null ? "–" : (n / 2 ** 20).toFixed(1)),
  pct: (n) => (n === null ? "–" : `${Math.round(n * 100)}%`),
};

function routeLabel(id) {
  const r = routeById(id);
  const path = r.path.length > 28 ? `${r.path.slice(0, 25)}…` : r.path;
  return `${r.method === "GET" ? "" : `${r.method} `}\`${path}\`${r.note === undefined ? "" : ` ${r.note}`}`;
}

export function buildReport(results, chartFiles = []) {
  const rows = summarize(results);
  const { meta } = results;
  const order = results.contenders.map((c) => c.name);
  const out = [];
  out.push("# Cog benchmark report", "");
  out.push(`- **Machine:** ${meta.machine}`);
  out.push(`- **Node (servers):** ${meta.node}`);
  out.push(`- **Load generator:** ${meta.tool}${meta.connectionsOverride ? `, ${meta.connectionsOverride} connections everywhere` : ""}`);
  const rounds = `${meta.warmup > 0 ? `one warm-up round of ${meta.warmup} s` : "no warm-up round"}, then ${meta.rounds} measured round(s) of ${meta.duration === "seed durations" ? "each seed's duration" : `${meta.duration} s`} per route`;
  out.push(
    meta.paired
      ? `- **Method (paired):** ${meta.pinning}; ${rounds}. Each contender is timed at the same moment as a bare server of its own (a process for that contender's pairs alone, so both idle while other pairs are timed), each with its own load generator: the kernel shares the server core evenly between the two, so req/s are about half what a server gets alone, and \`× bare\` is the median of the ratios within each pair (the machine's drift, which moves rounds timed one after another by 10-30%, falls on both at once). Order rotated each round; figures are medians.`
      : `- **Method:** ${meta.pinning}; ${rounds}, contenders interleaved (order rotated each round); figures are medians over rounds, and \`× bare\` is the median of the per-round ratios (each round times every contender back to back, so the machine's drift weighs on both sides).`,
  );
  out.push(`- **Command:** \`${meta.command}\``);
  out.push(`- **Run:** ${meta.date}`);
  out.push("");
  const seedScenarios = results.scenarios.filter((s) => !s.arena && !s.serving);
  const arenaScenarios = results.scenarios.filter((s) => s.arena);
  const servingScenarios = results.scenarios.filter((s) => s.serving);
  if (arenaScenarios.length > 0) out.push(...arenaReport(results, rows, arenaScenarios));
  if (servingScenarios.length > 0) out.push(...servingReport(results, rows, servingScenarios));
  if (seedScenarios.length > 0) out.push(...seedReport(results, rows, seedScenarios, order));

  if (results.skipped.length > 0) {
    out.push("## Not measured", "");
    for (const s of results.skipped) out.push(`- **${s.name}**: ${s.reason}`);
    out.push("");
  }

  if (chartFiles.length > 0) {
    out.push("## Charts", "");
    for (const file of chartFiles) out.push(`![${file}](${file})`, "");
  }

  out.push("## Contenders", "");
  // A contender run with 1 and 2 workers (`family`: its name) is described once, under its name.
  for (const c of results.contenders.filter((c) => c.family === undefined)) out.push(`- **${c.name}** ${c.version} — ${c.about}`);
  out.push("");
  return out.join("\n");
}

/** The arena: per scenario, every contender as a multiple of the best one, and who could not run it and why. */
function arenaReport(results, rows, scenarios) {
  const out = [];
  const cell = (row) => (row ? `${fmt.int(row.rps)} (${fmt.ratio(row.ratioToBest)})` : "–");
  const names = [...new Set(rows.filter((r) => r.route.startsWith("arena-")).map((r) => r.contender))];
  for (const scenario of scenarios) {
    const list = rows.filter((r) => r.scenario === scenario.id);
    const best = Math.max(0, ...list.map((r) => r.rps ?? 0));
    const leanest = Math.min(...list.map((r) => r.cpuMicrosPerRequest ?? Infinity));
    for (const row of list) {
      row.ratioToBest = best > 0 && row.rps !== null ? row.rps / best : null;
      row.cpuToLeanest = Number.isFinite(leanest) && row.cpuMicrosPerRequest !== null ? row.cpuMicrosPerRequest / leanest : null;
    }
  }
  out.push("## The arena: requests/s, as a multiple of the scenario's best", "");
  out.push(
    "Each contender ran every scenario it passed the arena's checks on (`bench/arena/contract.mjs`: randomized inputs, requests split across TCP writes, compressed and plain negotiation, 404s, the cache header, upload counts, answers compared with Postgres). Timed with wrk and a Lua script per scenario that rotates its requests (`bench/arena/scenarios.mjs`). Where the server did not use its whole core (the server CPU column: the load generator, Postgres or a busy machine was the limit), compare CPU µs per request rather than req/s. \"can't\": see the scenario's section for why.",
    "",
  );
  out.push(`| contender | ${scenarios.map((s) => s.id).join(" | ")} |`);
  out.push(`| :-- | ${scenarios.map(() => "--:").join(" | ")} |`);
  for (const name of names) {
    const cells = scenarios.map((s) => {
      const row = rows.find((r) => r.scenario === s.id && r.contender === name);
      if (row) return cell(row);
      return results.scenarioSkipped?.some((k) => k.name === name && k.scenario === s.id) ? "can't" : "–";
    });
    out.push(`| ${name.startsWith("cog") ? `**${name}**` : name} | ${cells.join(" | ")} |`);
  }
  out.push("");
  out.push("### The arena: server CPU µs per request, as a multiple of the scenario's leanest", "");
  out.push(`| contender | ${scenarios.map((s) => s.id).join(" | ")} |`);
  out.push(`| :-- | ${scenarios.map(() => "--:").join(" | ")} |`);
  for (const name of names) {
    const cells = scenarios.map((s) => {
      const row = rows.find((r) => r.scenario === s.id && r.contender === name);
      return row ? `${fmt.fixed(row.cpuMicrosPerRequest, 1)} (${fmt.ratio(row.cpuToLeanest)})` : "–";
    });
    out.push(`| ${name.startsWith("cog") ? `**${name}**` : name} | ${cells.join(" | ")} |`);
  }
  out.push("");
  for (const scenario of scenarios) {
    const workers = scenario.workers !== undefined;
    out.push(`### Arena: ${scenario.title}`, "");
    const notes = [
      workers &&
        `Each server runs ${scenario.workers} worker processes on one port, not pinned: they and wrk share both cores (and Postgres), so req/s say what the machine did, and CPU µs per request (all of a server's processes) compares the servers. CPU by process: each process's share of the server's CPU (the primary first, then its workers).`,
      scenario.stack &&
        "The server is the app behind the stack (bench/arena/stack/): the app on the server core; nginx, the JWT sidecar, Redis, Postgres and both h2load on the other. Requests/s count every answer of the stack (static files from nginx included); server CPU is the app's processes alone, and CPU µs per request their CPU over all those answers.",
    ].filter(Boolean);
    out.push(
      `Sends: ${scenario.sends}. ${results.meta.connectionsOverride ?? scenario.connections} connections${scenario.pipelining > 1 ? `, ${scenario.pipelining} pipelined` : ""}${scenario.streams ? `, ${scenario.streams} concurrent streams each` : ""}.${notes.map((n) => ` ${n}`).join("")}`,
      "",
    );
    if (scenario.fixedRate) out.push(...fixedRateSection(results.measurements, scenario));
    if (scenario.tool === "rate-load" && scenario.rate === 0) out.push(...idleSection(results.measurements, scenario));
    // idle has no requests: its own table says all there is.
    const list = scenario.rate === 0 ? [] : rows.filter((r) => r.scenario === scenario.id).sort((a, b) => (b.rps ?? 0) - (a.rps ?? 0));
    if (list.length > 0) {
      const header = [
        "contender",
        "version",
        "req/s",
        "× best",
        "p99 (ms)",
        "CPU µs/req",
        "CPU/req × leanest",
        "server CPU",
        ...(workers ? ["CPU by process"] : []),
        "errors",
        "unexpected status",
        "peak RSS (MiB)",
        "throughput (MiB/s)",
      ];
      out.push(`| ${header.join(" | ")} |`, `| :-- |${" --: |".repeat(header.length - 1)}`);
      for (const row of list) {
        const version = results.contenders.find((c) => c.name === row.contender)?.version ?? "";
        out.push(
          `| ${row.contender.startsWith("cog") ? `**${row.contender}**` : row.contender} | ${version} | ${fmt.int(row.rps)}${row.generatorBound ? "†" : ""} | ${fmt.ratio(row.ratioToBest)} | ${fmt.fixed(row.latencyP99)} | ${fmt.fixed(row.cpuMicrosPerRequest, 1)} | ${fmt.ratio(row.cpuToLeanest)} | ${fmt.pct(row.serverCpu)} |${workers ? ` ${row.cpuShares.map(fmt.pct).join(" · ")} |` : ""} ${row.errors} | ${row.unexpected} | ${fmt.mb(row.peakRss)} | ${fmt.mbps(row.bytesPerSec)} |`,
        );
      }
      out.push("");
    }
    out.push(...notRunHere(results, scenario));
  }
  return out;
}

/** The contenders a scenario could not run, each with its reason. */
function notRunHere(results, scenario) {
  const unable = (results.scenarioSkipped ?? []).filter((k) => k.scenario === scenario.id);
  return unable.length === 0 ? [] : ["Not run here:", "", ...unable.map((k) => `- **${k.name}**: ${k.reason}`), ""];
}

/** The serving scenarios: a table each, as multiples of the bare servers (workers: of the same server with one worker). */
function servingReport(results, rows, scenarios) {
  const out = ["## Serving: TLS, HTTP/2, HTTP/3, worker processes", ""];
  out.push(
    "Each contender answered its scenario's request right, over the scenario's protocol, before it was timed (`bench/serving/check.mjs`: status, Content-Type, body; ALPN h2 over TLS; HTTP/3 asked by quic-go, and every answer of an HTTP/3 run checked by bench/h3-load, which fails the run on a wrong one). `× bare` divides requests/s by the hand-written server of its engine (node-http: node:https/node:http2 for Node frameworks, uws for uWS.js ones and for Cog's native engine, bun for Bun; over HTTP/3, bun for all, the only bare HTTP/3 server here), `× node-http` by the bare Node server, each as the median of the per-round ratios. CPU, RSS: the server's processes together.",
    "",
  );
  const version = (name) => results.contenders.find((c) => c.name === name)?.version ?? "";
  const bold = (name) => (name.startsWith("cog") ? `**${name}**` : name);
  for (const scenario of scenarios) {
    const workers = scenario.workers !== undefined;
    out.push(`### ${scenario.id}: ${scenario.title}`, "");
    out.push(
      `Sends: ${scenario.sends}. ${results.meta.connectionsOverride ?? scenario.connections} connections${scenario.streams ? `, ${scenario.streams} concurrent streams each` : ""}.${workers ? " Not pinned: the worker processes and the load generator share both cores, so this shows whether a second worker scales, not what a server can do. CPU by process: each process's share of the server's CPU (the primary first, then its workers)." : ""}`,
      "",
    );
    const list = rows.filter((r) => r.scenario === scenario.id).sort((a, b) => (b.rps ?? 0) - (a.rps ?? 0));
    if (list.length > 0) {
      const header = [
        "contender",
        "version",
        "req/s",
        ...(workers ? ["× 1 worker"] : ["× bare", "× node-http"]),
        "p99 (ms)",
        "CPU µs/req",
        `CPU/req × ${workers ? "1 worker" : "bare"}`,
        "server CPU",
        ...(workers ? ["CPU by process"] : []),
        "errors",
        "unexpected status",
        "peak RSS (MiB)",
      ];
      out.push(`| ${header.join(" | ")} |`, `| :-- |${" --: |".repeat(header.length - 1)}`);
      for (const row of list) {
        const ratios = workers ? fmt.ratio(row.ratio) : `${fmt.ratio(row.ratio)} | ${fmt.ratio(row.ratioToNode)}`;
        out.push(
          `| ${bold(row.contender)} | ${version(row.contender)} | ${fmt.int(row.rps)}${row.generatorBound ? "†" : ""} | ${ratios} | ${fmt.fixed(row.latencyP99)} | ${fmt.fixed(row.cpuMicrosPerRequest, 1)} | ${fmt.fixed(row.cpuRatio)} | ${fmt.pct(row.serverCpu)} |${workers ? ` ${row.cpuShares.map(fmt.pct).join(" · ")} |` : ""} ${row.errors} | ${row.unexpected} | ${fmt.mb(row.peakRss)} |`,
        );
      }
      out.push("");
    }
    out.push(...notRunHere(results, scenario));
  }
  if (rows.some((r) => r.generatorBound && scenarios.some((s) => s.id === r.scenario))) {
    out.push("† the load generator used a whole core during this measurement: the figure is the generator's ceiling as much as the server's.", "");
  }
  return out;
}

/** The seeds' scenarios: the headline (every route as a multiple of the bare server), then a table per scenario. */
function seedReport(results, rows, scenarios, order) {
  const out = [];
  const { meta } = results;
  // Headline: every contender × route as a multiple of the bare engine.
  const routeKeys = scenarios.flatMap((s) => s.routes.map((r) => ({ scenario: s.id, route: r })));
  out.push(
    "Every contender passed the same conformance check (status, body, content type, cookies, pipelining) before it was timed; see `bench/lib/contract.mjs`. " +
      "`× bare` divides requests/s by the hand-written server on the same engine (node-http for node:http frameworks, uws for uWebSockets.js ones and for Cog's native engine, bun for Bun).",
    "",
  );
  out.push("## Headline: requests/s, as a multiple of the bare server", "");
  out.push(`| contender | ${routeKeys.map((k) => `${routeLabel(k.route)}`).join(" | ")} |`);
  out.push(`| :-- | ${routeKeys.map(() => "--:").join(" | ")} |`);
  for (const name of order) {
    const cells = routeKeys.map((k) => {
      const row = rows.find((r) => r.scenario === k.scenario && r.route === k.route && r.contender === name);
      if (!row) return "–";
      return `${fmt.int(row.rps)} (${fmt.ratio(row.ratio)})${row.generatorBound ? "†" : ""}`;
    });
    out.push(`| ${name === "cog" ? "**cog**" : name} | ${cells.join(" | ")} |`);
  }
  out.push("");
  if (rows.some((r) => r.generatorBound)) {
    out.push(
      "† the load generator used a whole core during this measurement: the figure is the generator's ceiling as much as the server's. Compare such servers with `--tool wrk` or by CPU per request.",
      "",
    );
  }

  for (const scenario of scenarios) {
    out.push(`## ${scenario.title}`, "");
    out.push(`Seed: ${scenario.source}. Here: ${meta.connectionsOverride ?? scenario.connections} connections, ${scenario.pipelining} pipelined.`, "");
    out.push(
      "| route | contender | version | req/s | × bare | latency avg (ms) | p99 (ms) | throughput (MiB/s) | errors | unexpected status | peak RSS (MiB) | server CPU | CPU µs/req | CPU/req × bare |",
    );
    out.push("| :-- | :-- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |");
    for (const route of scenario.routes) {
      const list = rows.filter((r) => r.scenario === scenario.id && r.route === route).sort((a, b) => (b.rps ?? 0) - (a.rps ?? 0));
      list.forEach((row, i) => {
        const version = results.contenders.find((c) => c.name === row.contender)?.version ?? "";
        out.push(
          `| ${i === 0 ? routeLabel(route) : ""} | ${row.contender === "cog" ? "**cog**" : row.contender} | ${version} | ${fmt.int(row.rps)}${row.generatorBound ? "†" : ""} | ${fmt.ratio(row.ratio)} | ${fmt.fixed(row.latencyAvg)} | ${fmt.fixed(row.latencyP99)} | ${fmt.mbps(row.bytesPerSec)} | ${row.errors} | ${row.unexpected} | ${fmt.mb(row.peakRss)} | ${fmt.pct(row.serverCpu)} | ${fmt.fixed(row.cpuMicrosPerRequest, 1)} | ${fmt.fixed(row.cpuRatio)} |`,
        );
      });
    }
    out.push("");
  }
  return out;
}
