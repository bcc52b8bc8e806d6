#!/usr/bin/env node
// Where a held connection's memory goes (issue #49): held.mjs says how much a held connection
// with a pending request costs; this says in what. One server (Cog's arena app, native engine by
// default), its garbage collected before each reading, then per connection held:
//
//   - RSS, as held.mjs reads it;
//   - the JavaScript heap in use (process.memoryUsage().heapUsed, after two full collections);
//   - the C heap in use (glibc's malloc_info, read through gdb attached for a moment; "–"
//     without gdb): the Rust engine's connections and requests, libuv's handles, Node's own.
//
// With --snapshot, heap snapshots at every step, and the objects the last step added, by kind
// and constructor, per request (a diff of the last two snapshots).
//
//   node bench/arena/held-breakdown.mjs --connections 8000
//   node bench/arena/held-breakdown.mjs --connections 1000,1000 --snapshot     the diff between 1,000 and 2,000 held
//   node bench/arena/held-breakdown.mjs --contender cog                        the node engine
//
// Server on CPU 0, rate-load on CPU 1 (taskset). Each step opens that many more connections, each
// with a pending GET /delay/10000, and reads within the 10 s the first of them wait.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { hasTaskset, pin, rssBytes } from "../lib/proc.mjs";
import { rateLoadBinary } from "../lib/rate-load.mjs";
import { startServer } from "../lib/server.mjs";
import { ARENA_CONTENDERS } from "./contenders.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Bytes of C heap in use, from glibc's malloc_info XML: the arenas' current size less their free chunks, plus mmapped chunks. */
export function mallocInUse(xml) {
  const totals = xml.slice(xml.lastIndexOf("</heap>"));
  const size = (re) => Number(re.exec(totals)?.[1] ?? 0);
  return (
    size(/<system type="current" size="(\d+)"/) -
    size(/<total type="fast" count="\d+" size="(\d+)"/) -
    size(/<total type="rest" count="\d+" size="(\d+)"/) +
    size(/<total type="mmap" count="\d+" size="(\d+)"/)
  );
}

/** Objects in a heap snapshot, by kind and constructor: count and bytes. */
export function objectsOf(file) {
  const { snapshot, nodes, strings } = JSON.parse(readFileSync(file, "utf8"));
  const fields = snapshot.meta.node_fields;
  const kinds = snapshot.meta.node_types[0];
  const [type, name, size] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const byName = new Map();
  for (let i = 0; i < nodes.length; i += fields.length) {
    const kind = kinds[nodes[i + type]];
    // Strings and numbers are named by their contents: one row each.
    const key = kind.endsWith("string") || kind === "number" || kind === "code" ? kind : `${kind} ${strings[nodes[i + name]].slice(0, 50) || "(anonymous)"}`;
    const row = byName.get(key) ?? { count: 0, bytes: 0 };
    row.count++;
    row.bytes += nodes[i + size];
    byName.set(key, row);
  }
  return byName;
}

async function main() {
  const { values: flags } = parseArgs({
    options: {
      connections: { type: "string", default: "8000" },
      contender: { type: "string", default: "cog-native" },
      snapshot: { type: "boolean", default: false },
    },
  });
  const steps = flags.connections.split(",").map(Number);
  const contender = ARENA_CONTENDERS.find((c) => c.name === flags.contender && c.file.startsWith("examples/"));
  if (contender === undefined) throw new Error(`--contender: cog or cog-native (Cog's arena app, whose heap this reads), not ${flags.contender}`);
  const pinning = hasTaskset();
  const dir = mkdtempSync(join(tmpdir(), "cog-held-"));
  const probe = join(dir, "memory.json");
  const server = await startServer({
    runtime: process.execPath,
    args: ["--expose-gc", "--import", "tsx", "--import", join(root, "bench/lib/memory-probe.mjs")],
    file: join(root, contender.file),
    env: { ...contender.env, COG_MEMORY_PROBE: probe, ...(flags.snapshot ? { COG_MEMORY_SNAPSHOT: join(dir, "heap") } : {}) },
    cpu: pinning ? "0" : null,
    cwd: root,
  });
  const loads = [];
  try {
    const want = steps.reduce((a, b) => a + b, 0) + 512;
    execFileSync("prlimit", [`--nofile=${want}:${want}`, "--pid", String(server.pid)], { stdio: "ignore" });
    await fetch(`http://127.0.0.1:${server.port}/delay/0`).then((r) => r.text());
    await sleep(500);
    const readings = [await read(server.pid, probe, dir)];
    for (const n of steps) {
      const load = spawn(
        ...pin(pinning ? "1" : null, rateLoadBinary(), [
          "-hold",
          "-url",
          `http://127.0.0.1:${server.port}/delay/10000`,
          "-c",
          String(n),
          "-d",
          "2000ms",
          "-wait",
          "20000ms",
        ]),
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      loads.push(load);
      let out = "";
      await new Promise((resolve, reject) => {
        load.stdout.on("data", (d) => {
          out += d;
          if (/^held \d+/m.test(out)) resolve();
        });
        load.once("exit", (code) => reject(new Error(`rate-load -hold exited (${code}) before it held ${n} connections`)));
      });
      await sleep(1000);
      readings.push({ ...(await read(server.pid, probe, dir)), held: n });
    }
    const skewed = flags.snapshot ? "; RSS and the C heap include what writing the snapshots took: read them from a run without --snapshot" : "";
    console.log(`${contender.name}: bytes per connection held, each with a pending GET /delay/10000 (garbage collected before each reading${skewed})\n`);
    console.log("| held | RSS | JavaScript heap in use | C heap in use (malloc) | rest of RSS |\n| --: | --: | --: | --: | --: |");
    for (let i = 1; i < readings.length; i++) {
      const [a, b] = [readings[i - 1], readings[i]];
      const per = (key) => (a[key] === null || b[key] === null ? null : (b[key] - a[key]) / b.held);
      const [rss, js, c] = [per("rss"), per("heapUsed"), per("malloc")];
      const rest = c === null ? null : rss - js - c;
      console.log(`| +${b.held} | ${bytes(rss)} | ${bytes(js)} | ${bytes(c)} | ${bytes(rest)} |`);
    }
    if (flags.snapshot && readings.length >= 3) {
      const [a, b] = readings.slice(-2);
      const before = objectsOf(a.snapshot);
      const rows = [...objectsOf(b.snapshot)].map(([key, { count, bytes }]) => ({
        key,
        count: (count - (before.get(key)?.count ?? 0)) / b.held,
        bytes: (bytes - (before.get(key)?.bytes ?? 0)) / b.held,
      }));
      rows.sort((x, y) => y.bytes - x.bytes);
      const total = rows.reduce((sum, r) => sum + r.bytes, 0);
      console.log(`\nHeap objects the last ${b.held} added, per request (${total.toFixed(0)} bytes in all):\n`);
      console.log("| bytes | objects | kind and constructor |\n| --: | --: | :-- |");
      for (const r of rows.filter((r) => r.bytes >= 8)) console.log(`| ${r.bytes.toFixed(0)} | ${r.count.toFixed(2)} | ${r.key} |`);
    }
  } finally {
    for (const load of loads) load.kill();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The server's figures after a collection, its RSS, and its C heap in use (null without gdb). */
async function read(pid, probe, dir) {
  rmSync(probe, { force: true });
  process.kill(pid, "SIGUSR2");
  while (!existsSync(probe)) await sleep(50);
  await sleep(100);
  const figures = JSON.parse(readFileSync(probe, "utf8"));
  return { ...figures, rss: rssBytes(pid), malloc: mallocOf(pid, join(dir, "malloc.xml")) };
}

function mallocOf(pid, xml) {
  try {
    execFileSync(
      "gdb",
      ["-batch", "-p", String(pid), "-ex", `call (void*)fopen("${xml}", "w")`, "-ex", "call (int)malloc_info(0, $1)", "-ex", "call (int)fclose($1)"],
      { stdio: "ignore", timeout: 60_000 },
    );
    return mallocInUse(readFileSync(xml, "utf8"));
  } catch {
    return null;
  }
}

const bytes = (b) => (b === null ? "–" : b.toFixed(0));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
