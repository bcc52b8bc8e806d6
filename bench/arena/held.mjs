#!/usr/bin/env node
// Memory per held connection: HttpArena's async profile holds tens of thousands of connections,
// each with a request the server answers only later (/delay/{ms}). This opens N connections to
// each server, each with a pending GET /delay/10000 (bench/rate-load -hold: from several source
// addresses 127.0.0.x past one address's ephemeral ports, RLIMIT_NOFILE raised), and reads the
// server's resident memory before and while they are held: (held − before) / N is what a held
// connection with a pending request costs.
//
//   node bench/arena/held.mjs                                  10,000 connections, cog, cog-native, node-http, uws
//   node bench/arena/held.mjs --connections 64000 --rounds 3 --contenders cog-native,uws
//
// Server on CPU 0, rate-load on CPU 1 (taskset). The server's file limit is raised with prlimit
// (as root, or within the hard limit). Prints a markdown table of medians over the rounds.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bunBinary } from "../lib/bun.mjs";
import { hasTaskset, pin, rssBytes } from "../lib/proc.mjs";
import { rateLoadBinary } from "../lib/rate-load.mjs";
import { rotate } from "../lib/rounds.mjs";
import { startServer } from "../lib/server.mjs";
import { ARENA_CONTENDERS } from "./contenders.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The arena contenders whose app serves GET /delay/:ms (the async scenario's). */
const HELD_CONTENDERS = ARENA_CONTENDERS.filter((c) => c.delay).map((c) => c.name);
/**
 * How long each request waits for its answer, the most the arena apps allow (10 s: Schemathesis,
 * test/contract/arena.test.ts, waits 10 s for an answer). Where opening every connection takes
 * longer (19,000 took 10-38 s on a loaded machine), the first are answered before the last are
 * sent and the figure understates (marked †); docs/performance.md has a run with the apps'
 * limit raised to 60 s for it (DELAY_MS = 60_000 with it).
 */
const DELAY_MS = 10_000;

/** Source addresses for n connections: one per 25,000 (each address has ~28,000 ephemeral ports, 32768-60999). */
export const sourcesFor = (n) => Math.max(1, Math.ceil(n / 25_000));

/** Bytes per held connection, from the server's RSS before and while holding (null without both). */
export function perConnection(before, held, connections) {
  if (!(before > 0) || !(held > 0) || !(connections > 0)) return null;
  return (held - before) / connections;
}

function median(values) {
  const v = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One round on one server: RSS before, RSS once every request is pending (after `settle` ms), the tool's figures. */
async function holdOnce({ port, pid, connections, cpu, settle = 1500 }) {
  const before = rssBytes(pid);
  const child = spawn(
    ...pin(cpu, rateLoadBinary(), [
      "-hold",
      "-url",
      `http://127.0.0.1:${port}/delay/${DELAY_MS}`,
      "-c",
      String(connections),
      "-sources",
      String(sourcesFor(connections)),
      "-d",
      `${settle + 500}ms`,
      "-wait",
      `${DELAY_MS + 10_000}ms`,
    ]),
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  let heldAt = null;
  let held = null;
  let peak = before;
  const sampler = setInterval(() => {
    const rss = rssBytes(pid);
    if (rss !== null && rss > peak) peak = rss;
  }, 100);
  child.stderr.on("data", (d) => (stderr += d));
  child.stdout.on("data", (d) => {
    stdout += d;
    if (heldAt === null && /^held \d+/m.test(stdout)) {
      heldAt = Date.now();
      setTimeout(() => (held = rssBytes(pid)), settle);
    }
  });
  const code = await new Promise((r) => child.on("close", r));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`rate-load -hold exited with ${code}: ${stderr.trim()}`);
  const result = JSON.parse(
    stdout
      .trim()
      .split("\n")
      .findLast((l) => l.startsWith("{")),
  );
  await sleep(500);
  return { ...result, rssBefore: before, rssHeld: held, rssPeak: peak, rssAfter: rssBytes(pid), perConnection: perConnection(before, held, result.held) };
}

async function main() {
  const { values: flags } = parseArgs({
    options: {
      connections: { type: "string", default: "10000" },
      contenders: { type: "string", default: HELD_CONTENDERS.slice(0, 4).join(",") },
      rounds: { type: "string", default: "1" },
    },
  });
  const connections = Number(flags.connections);
  const rounds = Number(flags.rounds);
  const pinning = hasTaskset() && cpus().length >= 2;
  const wanted = flags.contenders.split(",").map((name) => {
    const c = ARENA_CONTENDERS.find((x) => x.name === name);
    if (!c || !HELD_CONTENDERS.includes(name)) throw new Error(`--contenders: one of ${HELD_CONTENDERS.join(", ")}, not ${name}`);
    return c;
  });
  console.log(
    `Held connections: ${connections.toLocaleString("en-US")} per server, each with a pending GET /delay/${DELAY_MS}, from ${sourcesFor(connections)} source address(es); ${rounds} round(s); ${pinning ? "server on CPU 0, rate-load on CPU 1" : "no pinning"}`,
  );
  const results = new Map(wanted.map((c) => [c.name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const contender of rotate(wanted, round - 1)) {
      const runtime = contender.runtime === "bun" ? bunBinary() : { path: process.execPath, node: true };
      if (runtime.path === null) {
        console.log(`  skip ${contender.name}: ${runtime.reason}`);
        continue;
      }
      const server = await startServer({
        runtime: runtime.path,
        args: runtime.node ? ["--import", "tsx"] : [],
        file: join(root, contender.file),
        env: contender.env ?? {},
        cpu: pinning ? "0" : null,
        cwd: root,
      });
      try {
        raiseFileLimit(server.pid, connections + 512);
        // One answered request first: the route and its timers warmed, as a running server's are.
        await fetch(`http://127.0.0.1:${server.port}/delay/0`).then((r) => r.text());
        await sleep(1000);
        const r = await holdOnce({ port: server.port, pid: server.pid, connections, cpu: pinning ? "1" : null });
        results.get(contender.name).push(r);
        console.log(
          `  round ${round} ${contender.name}: held ${r.held} (failed ${r.failed}${r.firstError ? `: ${r.firstError}` : ""}) in ${r.openSeconds.toFixed(1)} s, answered ${r.answered}; RSS ${mib(r.rssBefore)} → ${mib(r.rssHeld)} MiB (peak ${mib(r.rssPeak)}, after ${mib(r.rssAfter)}): ${r.perConnection === null ? "–" : (r.perConnection / 1024).toFixed(2)} KiB per connection`,
        );
      } catch (err) {
        console.log(`  round ${round} ${contender.name}: FAILED ${err.message.split("\n")[0]}`);
      } finally {
        await server.stop();
      }
    }
  }
  console.log(
    `\n| server | held | answered | opened in (s) | RSS before (MiB) | RSS held (MiB) | KiB per held connection |\n| :-- | --: | --: | --: | --: | --: | --: |`,
  );
  for (const [name, list] of results) {
    if (list.length === 0) continue;
    const m = (key) => median(list.map((r) => r[key]));
    // Opened over more than the delay (less the settling), the first were answered before the last were sent: not all pending at once.
    const late = m("openSeconds") > DELAY_MS / 1000 - 2 ? "†" : "";
    console.log(
      `| ${name.startsWith("cog") ? `**${name}**` : name} | ${m("held")} | ${m("answered")} | ${m("openSeconds").toFixed(1)}${late} | ${mib(m("rssBefore"))} | ${mib(m("rssHeld"))} | ${m("perConnection") === null ? "–" : (m("perConnection") / 1024).toFixed(2)} |`,
    );
  }
}

// † in the table: the connections took longer to open than the requests wait (less the settling),
// so the first had their answer before the last were sent, and the figure understates.
/**
 * Room for every connection in the server's file table: the soft limit raised to `want`, and the
 * hard one too where allowed (CAP_SYS_RESOURCE); throws when the hard limit is below `want`.
 */
function raiseFileLimit(pid, want) {
  try {
    execFileSync("prlimit", [`--nofile=${want}:${want}`, "--pid", String(pid)], { stdio: "ignore" });
    return;
  } catch {
    const hard = Number(/^Max open files\s+\S+\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))?.[1]);
    if (!(hard >= want))
      throw new Error(
        `the server may open at most ${hard} files here (hard RLIMIT_NOFILE, and no CAP_SYS_RESOURCE to raise it): hold fewer than ${hard - 512} connections`,
      );
    execFileSync("prlimit", [`--nofile=${want}:${hard}`, "--pid", String(pid)]);
  }
}

const mib = (b) => (b == null ? "–" : (b / 2 ** 20).toFixed(0));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
