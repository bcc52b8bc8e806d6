// The report's part for the arena's fixed-rate scenarios (latency-10k, latency-1m,
// latency-500k-8cpu) and idle: HttpArena's figures for them (CPU per request, mean, p99, p99.9,
// the rate held) and its score, from the medians over the rounds.
import { scoreFixedRate } from "./score.mjs";

function median(values) {
  const v = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

const byContender = (measurements, scenario) => {
  const groups = new Map();
  for (const m of measurements) {
    if (m.scenario !== scenario || m.failed) continue;
    if (!groups.has(m.contender)) groups.set(m.contender, []);
    groups.get(m.contender).push(m);
  }
  return groups;
};

/** Per contender, the medians HttpArena scores (cpu: server CPU µs per answered request; latencies in ms), then the score. */
export function fixedRateRows(measurements, scenario) {
  const rows = [...byContender(measurements, scenario)].map(([contender, list]) => ({
    contender,
    rounds: list.length,
    offered: median(list.map((m) => m.offered)),
    rps: median(list.map((m) => m.rps)),
    cpu: median(list.map((m) => (m.serverCpuSeconds != null && m.requests > 0 ? (m.serverCpuSeconds / m.requests) * 1e6 : null))),
    mean: median(list.map((m) => m.latencyAvg)),
    p99: median(list.map((m) => m.latencyP99)),
    p999: median(list.map((m) => m.latencyP999)),
    errors: list.reduce((n, m) => n + (m.errors ?? 0) + (m.timeouts ?? 0), 0),
    generatorCpu: median(list.map((m) => m.generatorCpu)),
  }));
  return scoreFixedRate(rows).sort((a, b) => b.score - a.score);
}

/** Per contender, the idle server's CPU (ms of CPU per second) and memory. */
export function idleRows(measurements, scenario = "idle") {
  return [...byContender(measurements, scenario)]
    .map(([contender, list]) => ({
      contender,
      rounds: list.length,
      cpuMsPerSecond: median(list.map((m) => (m.serverCpu == null ? null : m.serverCpu * 1000))),
      peakRss: Math.max(0, ...list.map((m) => m.serverPeakRss ?? 0)),
    }))
    .sort((a, b) => (a.cpuMsPerSecond ?? Infinity) - (b.cpuMsPerSecond ?? Infinity));
}

const f = (n, d = 1) => (n === null || n === undefined ? "–" : n.toFixed(d));
const name = (n) => (n.startsWith("cog") ? `**${n}**` : n);

/** Markdown lines for a fixed-rate scenario's section. */
export function fixedRateSection(measurements, scenario) {
  const rows = fixedRateRows(measurements, scenario.id);
  if (rows.length === 0) return [];
  return [
    "HttpArena's score for this profile (`bench/arena/score.mjs`, as its `scripts/latency_score.py`): 100 × min(1, req/s ÷ 95% of the rate) × (0.50 CPU + 0.25 p99 + 0.25 mean), each term against the best here (CPU linear, p99 a third per decade, mean one decade). Medians over the rounds (HttpArena keeps the best of 3 runs). Server CPU from /proc/PID/stat over the run (HttpArena reads the container's cgroup), which includes opening the 1,024 connections; latencies from each request's due time.",
    "",
    "| contender | score | req/s | held | CPU µs/req | mean (ms) | p99 (ms) | p99.9 (ms) | errors | generator CPU |",
    "| :-- | --: | --: | --: | --: | --: | --: | --: | --: | --: |",
    ...rows.map(
      (r) =>
        `| ${name(r.contender)} | ${f(r.score)} | ${r.rps === null ? "–" : Math.round(r.rps).toLocaleString("en-US")} | ${r.offered ? `${Math.round((100 * r.rps) / r.offered)}%` : "–"} | ${f(r.cpu)} | ${f(r.mean, 3)} | ${f(r.p99, 3)} | ${f(r.p999, 3)} | ${r.errors} | ${r.generatorCpu === null ? "–" : `${Math.round(r.generatorCpu * 100)}%`} |`,
    ),
    "",
  ];
}

/** Markdown lines for idle's section. */
export function idleSection(measurements, scenario) {
  const rows = idleRows(measurements, scenario.id);
  if (rows.length === 0) return [];
  return [
    "The server's CPU while nothing happens (no connection open), in ms of CPU per second (1,000 = a whole core), from /proc/PID/stat: the kernel counts it in 10 ms ticks, so over 10 s the resolution is 1 ms/s (0 means less than that).",
    "",
    "| contender | CPU ms/s | peak RSS (MiB) |",
    "| :-- | --: | --: |",
    ...rows.map((r) => `| ${name(r.contender)} | ${f(r.cpuMsPerSecond, 2)} | ${r.peakRss ? (r.peakRss / 2 ** 20).toFixed(0) : "–"} |`),
    "",
  ];
}
