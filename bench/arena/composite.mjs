#!/usr/bin/env node
// The composite score HttpArena would give the arena's contenders on this machine's runs, by its
// formulas (its docs/scoring/composite-score.md and scripts/gen_leaderboard_data.py): each scored
// profile gives 0-100 — a throughput profile its rps over the best rps × 100 (json-comp's rps first
// scaled by (the smallest bytes per response / its own)²), a fixed-rate one (latency-10k,
// latency-1m) its own score (bench/arena/score.mjs) — and the composite is their sum; a profile a
// contender did not run gives it 0. HttpArena averages rps over its connection counts; the arena
// has one count per scenario. The memory bonus (an option on its board) is left out. Reference-only profiles (pipelined,
// async-db, latency-500k-8cpu) are shown but not added.
//
//   node bench/arena/composite.mjs bench/results/<run>/results.json [more results.json …]
//
// Runs are merged (a scenario measured in two runs: the later run's). HttpArena scores frameworks,
// engines and bare servers in separate pools, each normalized within itself; here every
// contender is in one pool, so the bare servers set the bests the frameworks are measured against.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { fixedRateRows } from "./fixed-rate-report.mjs";

/** The arena's scenarios HttpArena scores for frameworks (the `s` flag of its CATALOG), with how. */
export const HTTPARENA_PROFILES = {
  baseline: { scored: true },
  "limited-conn": { scored: true },
  json: { scored: true },
  "json-comp": { scored: true, compression: true },
  upload: { scored: true },
  static: { scored: true },
  crud: { scored: true },
  "api-4": { scored: true },
  "api-16": { scored: true },
  "production-stack": { scored: true },
  "latency-10k": { scored: true, fixedRate: true },
  "latency-1m": { scored: true, fixedRate: true },
  "8gbit": { scored: true, fixedRate: true },
  async: { scored: true },
  pipelined: { scored: false },
  "static-tls": { scored: false },
  "async-db": { scored: false },
  "latency-500k-8cpu": { scored: false, fixedRate: true },
};

function median(values) {
  const v = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Per profile and contender, the 0-100 score; and per contender the composite (scored profiles summed). */
export function composite(measurements) {
  const profiles = [...new Set(measurements.map((m) => m.scenario))].filter((id) => id in HTTPARENA_PROFILES);
  const contenders = [...new Set(measurements.filter((m) => profiles.includes(m.scenario)).map((m) => m.contender))];
  const scores = {};
  for (const id of profiles) {
    scores[id] = {};
    if (HTTPARENA_PROFILES[id].fixedRate) {
      for (const row of fixedRateRows(measurements, id)) scores[id][row.contender] = row.score;
      continue;
    }
    const mine = (c) => measurements.filter((m) => m.scenario === id && m.contender === c && !m.failed);
    let rps = Object.fromEntries(contenders.map((c) => [c, median(mine(c).map((m) => m.rps))]));
    // json-comp: rps scaled by (smallest bytes per response / its own)², so a bigger answer costs the square of its size.
    if (HTTPARENA_PROFILES[id].compression) {
      const bpr = Object.fromEntries(contenders.map((c) => [c, median(mine(c).map((m) => (m.rps > 0 && m.bytesPerSec > 0 ? m.bytesPerSec / m.rps : null)))]));
      const least = Math.min(...Object.values(bpr).filter((v) => v !== null));
      rps = Object.fromEntries(Object.entries(rps).map(([c, v]) => [c, v === null || bpr[c] === null ? v : v * (least / bpr[c]) ** 2]));
    }
    const best = Math.max(0, ...Object.values(rps).filter((v) => v !== null));
    for (const [c, v] of Object.entries(rps)) if (v !== null && best > 0) scores[id][c] = (100 * v) / best;
  }
  const totals = Object.fromEntries(
    contenders.map((c) => [c, profiles.filter((id) => HTTPARENA_PROFILES[id].scored).reduce((sum, id) => sum + (scores[id][c] ?? 0), 0)]),
  );
  return { profiles, contenders, scores, totals };
}

/** Merges runs: a scenario's measurements come from the last run that measured it. */
export function mergeRuns(runs) {
  const byScenario = new Map();
  for (const run of runs) {
    const scenarios = new Set(run.measurements.map((m) => m.scenario));
    for (const id of scenarios)
      byScenario.set(
        id,
        run.measurements.filter((m) => m.scenario === id),
      );
  }
  return [...byScenario.values()].flat();
}

export function compositeTable({ profiles, contenders, scores, totals }) {
  const order = [...contenders].sort((a, b) => totals[b] - totals[a]);
  const head = profiles.map((id) => (HTTPARENA_PROFILES[id].scored ? id : `${id}*`));
  return [
    `| contender | composite | ${head.join(" | ")} |`,
    `| :-- | --: |${" --: |".repeat(profiles.length)}`,
    ...order.map(
      (c) =>
        `| ${c.startsWith("cog") ? `**${c}**` : c} | ${totals[c].toFixed(1)} | ${profiles.map((id) => (scores[id][c] === undefined ? "–" : scores[id][c].toFixed(1))).join(" | ")} |`,
    ),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: node bench/arena/composite.mjs results.json [results.json …]");
    process.exit(2);
  }
  const result = composite(mergeRuns(files.map((f) => JSON.parse(readFileSync(f, "utf8")))));
  console.log(compositeTable(result).join("\n"));
  console.log(`\n*: reference-only in HttpArena, not added. Profiles scored but not measured here count 0 for everyone and are not listed.`);
}
