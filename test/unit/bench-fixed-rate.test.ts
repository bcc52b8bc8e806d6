// The arena's fixed-rate scenarios: HttpArena's score, the rates, rate-load's figures and the report's rows.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
// @ts-expect-error -- plain ESM modules without type declarations
import { decadeScore, linearScore, scoreFixedRate } from "../../bench/arena/score.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { ARENA_SCENARIOS, rateOf } from "../../bench/arena/scenarios.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { fixedRateRows, fixedRateSection, idleRows } from "../../bench/arena/fixed-rate-report.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { parseRateLoad, rateLoadArgs } from "../../bench/lib/rate-load.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { ARENA_CONTENDERS, unableReason } from "../../bench/arena/contenders.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { routeById } from "../../bench/lib/contract.mjs";

const close = (actual: number, expected: number) => assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} ≠ ${expected}`);

describe("HttpArena's fixed-rate score", () => {
  test("the terms: CPU linear, p99 a third per decade, mean one decade, clamped", () => {
    close(linearScore(20, 10), 0.5);
    close(linearScore(null, 10), 0);
    close(decadeScore(10, 1, 3), 2 / 3);
    close(decadeScore(1000, 1, 3), 0);
    close(decadeScore(1e6, 1, 3), 0);
    close(decadeScore(10, 1, 1), 0);
    close(decadeScore(Math.sqrt(10), 1, 1), 0.5);
    close(decadeScore(0.5, 1, 3), 1);
  });

  test("a worked field, as latency_score.py scores it", () => {
    const [a, b, c] = scoreFixedRate([
      { name: "a", offered: 10_000, rps: 9_990, cpu: 10, p99: 0.2, mean: 0.1 },
      { name: "b", offered: 10_000, rps: 9_500, cpu: 20, p99: 2, mean: 0.1 * Math.sqrt(10) },
      { name: "c", offered: 10_000, rps: 4_750, cpu: 5, p99: 200, mean: 10 },
    ]);
    // a: best p99 and mean, half c's CPU.
    close(a.score, 100 * (0.5 * 0.5 + 0.25 + 0.25));
    // b: a quarter of the best CPU, p99 one decade up, mean half a decade up; 95% is full rate.
    close(b.rateFactor, 1);
    close(b.score, 100 * (0.5 * 0.25 + 0.25 * (2 / 3) + 0.25 * 0.5));
    // c: the best CPU, but half the rate and the tails three decades or more up.
    close(c.rateFactor, 0.5);
    close(c.score, 100 * 0.5 * 0.5);
  });
});

describe("fixed-rate scenarios", () => {
  test("HttpArena's three profiles and idle, each with a rate; ARENA_RATES overrides one", () => {
    const byId = Object.fromEntries(ARENA_SCENARIOS.map((s: { id: string }) => [s.id, s]));
    assert.equal(byId["latency-10k"].rate, 10_000);
    assert.equal(byId["latency-10k"].connections, 1024);
    assert.equal(byId["latency-1m"].tool, "rate-load");
    assert.ok(byId["latency-500k-8cpu"].fixedRate);
    assert.equal(byId.idle.rate, 0);
    assert.equal(byId.idle.duration, 10);
    assert.equal(rateOf("latency-10k", 10_000, "latency-1m=20000, latency-10k = 5000"), 5000);
    assert.equal(rateOf("latency-10k", 10_000, "latency-10k=nonsense"), 10_000);
    assert.equal(rateOf("latency-10k", 10_000, ""), 10_000);
  });

  test("rate-load's arguments and its figures in the bench's shape", () => {
    assert.deepEqual(rateLoadArgs({ url: "http://127.0.0.1:1/x", rate: 10_000, connections: 1024, duration: 5 }), [
      "-url",
      "http://127.0.0.1:1/x",
      "-rate",
      "10000",
      "-c",
      "1024",
      "-d",
      "5s",
    ]);
    assert.deepEqual(rateLoadArgs({ url: "https://h/echo", rate: 100, connections: 8, duration: 2, method: "POST", bodySize: 10, checkEcho: true }).slice(8), [
      "-method",
      "POST",
      "-body-size",
      "10",
      "-check-echo",
    ]);
    const parsed = parseRateLoad(
      `noise\n${JSON.stringify({ offered: 10000, scheduled: 50000, requests: 49990, seconds: 5.01, rps: 9978, rateRatio: 0.9978, meanUs: 250, p99Us: 1500, p999Us: 4000, errors: 2, unsent: 10, statuses: { 200: 49990 } })}\n`,
    );
    assert.deepEqual(
      [parsed.requests, parsed.rps, parsed.latencyAvg, parsed.latencyP99, parsed.latencyP999, parsed.errors, parsed.timeouts, parsed.statuses["200"]],
      [49990, 9978, 0.25, 1.5, 4, 2, 10, 49990],
    );
    const idle = parseRateLoad(JSON.stringify({ offered: 0, requests: 0, rps: null, meanUs: 0, p99Us: 0, statuses: {} }));
    assert.deepEqual([idle.requests, idle.rps, idle.latencyAvg, idle.rateRatio], [0, 0, null, null]);
    assert.throws(() => parseRateLoad("nothing"), /printed no result/);
  });

  test("the report's rows: medians per contender, CPU per answered request, the score; idle in ms of CPU per second", () => {
    const m = (contender: string, round: number, extra: object) => ({
      scenario: "latency-10k",
      contender,
      round,
      offered: 10_000,
      requests: 50_000,
      rps: 10_000,
      serverCpuSeconds: 1,
      latencyAvg: 0.2,
      latencyP99: 1,
      latencyP999: 3,
      errors: 0,
      timeouts: 0,
      ...extra,
    });
    const rows = fixedRateRows(
      [
        m("lean", 1, {}),
        m("lean", 2, { serverCpuSeconds: 0.5 }),
        m("lean", 3, { serverCpuSeconds: 0.6 }),
        m("heavy", 1, { serverCpuSeconds: 2 }),
        m("heavy", 2, { failed: "boom" }),
        { scenario: "other", contender: "lean" },
      ],
      "latency-10k",
    );
    assert.deepEqual(
      rows.map((r: { contender: string }) => r.contender),
      ["lean", "heavy"],
    );
    close(rows[0].cpu, 12);
    close(rows[1].cpu, 40);
    assert.equal(rows[1].rounds, 1);
    close(rows[0].score, 100);
    close(rows[1].score, 100 * (0.5 * 0.3 + 0.5));
    const text = fixedRateSection([m("cog", 1, {})], { id: "latency-10k" }).join("\n");
    assert.match(text, /\| \*\*cog\*\* \| 100\.0 \| 10,000 \| 100% \| 20\.0 \|/);
    const idle = idleRows([
      { scenario: "idle", contender: "a", serverCpu: 0.004, serverPeakRss: 2 ** 20 },
      { scenario: "idle", contender: "b", serverCpu: 0.001 },
    ]);
    assert.deepEqual(
      idle.map((r: { contender: string; cpuMsPerSecond: number }) => [r.contender, r.cpuMsPerSecond]),
      [
        ["b", 1],
        ["a", 4],
      ],
    );
  });
});

describe("held connections and the TLS echo", () => {
  test("source addresses past one address's ports, bytes per connection", async () => {
    // @ts-expect-error -- plain ESM modules without type declarations
    const { perConnection, sourcesFor } = await import("../../bench/arena/held.mjs");
    assert.deepEqual([sourcesFor(10_000), sourcesFor(25_000), sourcesFor(64_000)], [1, 1, 3]);
    assert.equal(perConnection(100 * 2 ** 20, 110 * 2 ** 20, 10_240), 1024);
    assert.equal(perConnection(null, 110, 10), null);
  });

  test("perf samples sorted into rustls, the ciphers, copies, the kernel and the rest", async () => {
    // @ts-expect-error -- plain ESM modules without type declarations
    const { perfShares } = await import("../../bench/arena/echo-tls.mjs");
    const report = [
      "# Overhead  Shared Object  Symbol",
      "    12.00%  libc.so.6             [.] __memmove_avx_unaligned_erms",
      "     4.00%  cog-native.node       [.] ring_core_0_17_14__aes_gcm_dec_update_vaes_avx2",
      "     2.00%  cog-native.node       [.] rustls::conn::ConnectionCommon<T>::read_tls",
      "    30.00%  [kernel.kallsyms]     [k] _copy_to_iter",
      "     3.00%  libcrypto.so.3        [.] whatever",
      "    49.00%  node                  [.] Builtins_LoadIC",
    ].join("\n");
    const shares = perfShares(report);
    for (const [key, value] of Object.entries({ rustls: 0.02, crypto: 0.07, copies: 0.12, kernel: 0.3, other: 0.49 })) close(shares[key], value);
  });
});

describe("the TLS echo and async scenarios", () => {
  const byId = Object.fromEntries(ARENA_SCENARIOS.map((s: { id: string }) => [s.id, s]));
  const contender = (name: string) => ARENA_CONTENDERS.find((c: { name: string }) => c.name === name);

  test("8gbit, echo-10k and echo-100k POST their bodies over TLS at a fixed rate, every answer compared with the body", () => {
    const shape = (id: string) => [byId[id].method, byId[id].bodySize, byId[id].protocol, byId[id].checkEcho, byId[id].fixedRate, byId[id].tool];
    assert.deepEqual(shape("8gbit"), ["POST", 10_240, "tls", true, true, "rate-load"]);
    assert.deepEqual(shape("echo-10k"), ["POST", 10_240, "tls", true, true, "rate-load"]);
    assert.deepEqual(shape("echo-100k"), ["POST", 102_400, "tls", true, true, "rate-load"]);
    // HttpArena's 50,000 req/s on 64 logical CPUs, as the same load on the one server core.
    assert.equal(byId["8gbit"].rate, Math.round(50_000 / 64));
    assert.equal(byId["8gbit"].connections, 512);
    assert.deepEqual([routeById("arena-8gbit").method, routeById("arena-8gbit").path], ["POST", "/echo"]);
    assert.equal(byId["static-tls"].protocol, "tls");
    assert.match(byId.async.lua(), /\/delay\/15/);
  });

  test("a contender runs them where its app serves the route and TLS, and is skipped with the reason otherwise", () => {
    for (const id of ["async", "static-tls", "8gbit", "echo-10k", "echo-100k"]) {
      assert.equal(unableReason(contender("cog"), byId[id]), undefined, `cog on ${id}`);
      assert.equal(unableReason(contender("cog-native"), byId[id]), undefined, `cog-native on ${id}`);
    }
    assert.equal(unableReason(contender("node-http"), byId["8gbit"]), undefined);
    assert.equal(unableReason(contender("uws"), byId["echo-100k"]), undefined);
    assert.equal(unableReason(contender("bun"), byId.async), undefined);
    assert.equal(unableReason(contender("fastify"), byId.async), undefined);
    assert.match(unableReason(contender("hono"), byId.async), /no GET \/delay\/:ms route/);
    assert.match(unableReason(contender("fastify"), byId["8gbit"]), /no HTTP\/1\.1 over TLS/);
    assert.match(unableReason(contender("bun"), byId["8gbit"]), /ceiling for/);
  });
});

describe("HttpArena's composite", () => {
  test("throughput profiles against the best, fixed-rate ones by their score, reference-only ones left out", async () => {
    // @ts-expect-error -- plain ESM modules without type declarations
    const { composite, mergeRuns } = await import("../../bench/arena/composite.mjs");
    const fixed = (contender: string, cpu: number) => ({
      scenario: "latency-10k",
      contender,
      offered: 10_000,
      rps: 10_000,
      requests: 1e5,
      serverCpuSeconds: cpu,
      latencyAvg: 0.2,
      latencyP99: 1,
    });
    const old = { measurements: [{ scenario: "baseline", contender: "a", rps: 1 }] };
    const run = {
      measurements: [
        { scenario: "baseline", contender: "a", rps: 50_000 },
        { scenario: "baseline", contender: "b", rps: 100_000 },
        { scenario: "pipelined", contender: "a", rps: 9 },
        fixed("a", 1),
        fixed("b", 2),
      ],
    };
    const result = composite(mergeRuns([old, run]));
    close(result.scores.baseline.a, 50);
    close(result.scores["latency-10k"].b, 75);
    close(result.scores.pipelined.a, 100);
    close(result.totals.a, 150);
    close(result.totals.b, 175);
    // json-comp: b answers twice the bytes, so its rps counts a quarter.
    const comp = composite([
      { scenario: "json-comp", contender: "a", rps: 100, bytesPerSec: 100 * 500 },
      { scenario: "json-comp", contender: "b", rps: 200, bytesPerSec: 200 * 1000 },
    ]);
    close(comp.scores["json-comp"].a, 100);
    close(comp.scores["json-comp"].b, 50);
  });
});
