// HttpArena's score for its fixed-rate profiles (latency-10k, latency-1m, latency-500k-8cpu, 8gbit),
// as its scripts/latency_score.py computes it: the rate is pinned, so every entry that holds it
// serves the same load, and what is scored is what that cost and how the tail behaved, against
// the best value among the entries scored together:
//
//   rateFactor = min(1, achieved rps / 95% of the offered rate)
//   cpuScore   = bestCpu / cpu                         (CPU µs per request; linear)
//   p99Score   = 1 - log10(p99 / bestP99) / 3          (clamped to 0..1: a third per decade)
//   meanScore  = 1 - log10(mean / bestMean)            (clamped to 0..1: one decade)
//   score      = 100 × rateFactor × (0.50 cpuScore + 0.25 p99Score + 0.25 meanScore)

export const WEIGHTS = { cpu: 0.5, p99: 0.25, mean: 0.25 };
const P99_DECADES = 3;
const MEAN_DECADES = 1;

/** Full credit for the rate at 95% of what was offered (HttpArena: "the generator never quite reaches its own target"). */
export const fullRate = (offered) => offered * 0.95;

const clamp = (v) => (v < 0 ? 0 : v > 1 ? 1 : v);
const usable = (v) => typeof v === "number" && Number.isFinite(v) && v > 0;

/** 1 at the best value, falling to 0 over `decades` decades above it (0 for a missing value). */
export function decadeScore(value, best, decades) {
  if (!usable(value) || !usable(best)) return 0;
  return clamp(1 - Math.log10(Math.max(value, best) / best) / decades);
}

/** best / value, clamped (0 for a missing value: a failed CPU read is not free). */
export function linearScore(value, best) {
  if (!usable(value) || !usable(best)) return 0;
  return clamp(best / value);
}

/**
 * Scores rows `{ rps, offered, cpu, p99, mean }` (cpu in µs per request; p99 and mean in any one
 * unit) against each other, as latency_score.py's score_rows: the bests are the field's.
 * Returns new rows with rateFactor, cpuScore, p99Score, meanScore and score (0-100).
 */
export function scoreFixedRate(rows) {
  const best = (key) => {
    const values = rows.map((r) => r[key]).filter(usable);
    return values.length === 0 ? null : Math.min(...values);
  };
  const [cpu, p99, mean] = [best("cpu"), best("p99"), best("mean")];
  return rows.map((r) => {
    const rateFactor = usable(r.offered) ? clamp((r.rps ?? 0) / fullRate(r.offered)) : 0;
    const cpuScore = linearScore(r.cpu, cpu);
    const p99Score = decadeScore(r.p99, p99, P99_DECADES);
    const meanScore = decadeScore(r.mean, mean, MEAN_DECADES);
    return {
      ...r,
      rateFactor,
      cpuScore,
      p99Score,
      meanScore,
      score: 100 * rateFactor * (WEIGHTS.cpu * cpuScore + WEIGHTS.p99 * p99Score + WEIGHTS.mean * meanScore),
    };
  });
}
