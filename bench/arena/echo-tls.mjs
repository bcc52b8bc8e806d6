#!/usr/bin/env node
// Where a TLS echo's CPU goes: HttpArena's echo profiles (a body POSTed to /echo and sent back, on
// HTTP/1.1 over TLS, at a fixed rate: bench/rate-load, every answer compared with the body sent),
// against the arena's TLS servers (bench/arena/contenders.mjs `tls`: Cog's app's TLS listener on
// the native engine, rustls, and on the node engine, node:tls and OpenSSL; bare uWebSockets.js's
// SSLApp; bare node:https), with any size and rate. With --perf, the server is sampled by
// `perf record -e cpu-clock` meanwhile, and the report gives the share of its samples in rustls, in
// the ciphers (ring's on the native engine, OpenSSL's on Node), in memory copies, in the kernel and
// elsewhere. The profiles themselves (8gbit, echo-10k, echo-100k) are `npm run bench` scenarios.
//
//   node bench/arena/echo-tls.mjs                                 100 KB bodies at 500 req/s, 64 connections, 5 s, 3 rounds
//   node bench/arena/echo-tls.mjs --size 10240 --rate 2000 --perf
//
// Servers on CPU 0, rate-load on CPU 1.
import { execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { makeCertificate } from "../lib/certificate.mjs";
import { cpuSeconds, hasTaskset, pin } from "../lib/proc.mjs";
import { parseRateLoad, rateLoadArgs, rateLoadBinary } from "../lib/rate-load.mjs";
import { freePort } from "../lib/server.mjs";
import { ARENA_CONTENDERS } from "./contenders.mjs";
import { startTlsServer } from "./servers.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The arena contenders that serve POST /echo over TLS. */
export const ECHO_SERVERS = ARENA_CONTENDERS.filter((c) => c.tls !== undefined);

/**
 * Shares of perf samples by where they fell: `perf report --sort dso,sym` lines in, fractions out.
 * rustls: the rustls crate's own code; crypto: the ciphers and hashes (ring's, OpenSSL's or
 * BoringSSL's: AES-GCM, ChaCha20-Poly1305, SHA, the libcrypto library); copies: memmove/memcpy;
 * kernel: [kernel.kallsyms]; other: the rest (the engine, V8, Node, malloc).
 */
export function perfShares(report) {
  const shares = { rustls: 0, crypto: 0, copies: 0, kernel: 0, other: 0 };
  for (const line of report.split("\n")) {
    const m = /^\s*([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const [pct, dso, sym] = [Number(m[1]) / 100, m[2], m[3]];
    if (dso.includes("kernel")) shares.kernel += pct;
    else if (/rustls/.test(sym)) shares.rustls += pct;
    else if (/libcrypto/.test(dso) || /ring_core|aes|gcm|gfmul|ghash|chacha|poly1305|sha\d|EVP_/i.test(sym)) shares.crypto += pct;
    else if (/^__?(memmove|memcpy)/.test(sym)) shares.copies += pct;
    else shares.other += pct;
  }
  return shares;
}

function median(values) {
  const v = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

async function main() {
  const { values: flags } = parseArgs({
    options: {
      size: { type: "string", default: String(100 * 1024) },
      rate: { type: "string", default: "500" },
      connections: { type: "string", default: "64" },
      duration: { type: "string", default: "5" },
      rounds: { type: "string", default: "3" },
      servers: { type: "string", default: ECHO_SERVERS.map((s) => s.name).join(",") },
      perf: { type: "boolean", default: false },
    },
  });
  const pinning = hasTaskset() && cpus().length >= 2;
  const cert = makeCertificate();
  const servers = flags.servers
    .split(",")
    .map((name) => ECHO_SERVERS.find((s) => s.name === name) ?? fail(`--servers: one of ${ECHO_SERVERS.map((s) => s.name).join(", ")}`));
  console.log(
    `TLS echo: ${Number(flags.size).toLocaleString("en-US")}-byte bodies POSTed to /echo and compared on return, ${flags.rate} req/s over ${flags.connections} connections, ${flags.duration} s × ${flags.rounds} rounds; ${pinning ? "servers on CPU 0, rate-load on CPU 1" : "no pinning"}`,
  );
  const running = [];
  try {
    for (const s of servers) {
      const app = { runtime: process.execPath, args: ["--import", "tsx"], file: join(root, s.file), env: s.env ?? {} };
      const server = await startTlsServer(app, s, cert, freePort, pinning ? "0" : null, root);
      running.push({ ...s, server, url: `https://127.0.0.1:${server.port}/echo`, runs: [] });
      console.log(`  ok   ${s.name} (pid ${server.pid})`);
    }
    for (let round = 0; round <= Number(flags.rounds); round++) {
      for (const s of [...running.slice(round % running.length), ...running.slice(0, round % running.length)]) {
        const duration = round === 0 ? 2 : Number(flags.duration);
        const perfData = flags.perf && round > 0 ? join(tmpdir(), `cog-echo-${s.name}-${round}.perf`) : null;
        const perf = perfData
          ? spawn("perf", ["record", "-e", "cpu-clock", "-F", "1999", "-g", "-o", perfData, "-p", String(s.server.pid)], { stdio: "ignore" })
          : null;
        const before = cpuSeconds(s.server.pid);
        const out = execFileSync(
          ...pin(
            pinning ? "1" : null,
            rateLoadBinary(),
            rateLoadArgs({
              url: s.url,
              rate: Number(flags.rate),
              connections: Number(flags.connections),
              duration,
              method: "POST",
              bodySize: Number(flags.size),
              checkEcho: true,
            }),
          ),
          { encoding: "utf8", maxBuffer: 1 << 20 },
        );
        const cpu = cpuSeconds(s.server.pid) - before;
        if (perf) {
          perf.kill("SIGINT");
          await new Promise((r) => perf.on("close", r));
        }
        const r = parseRateLoad(out);
        const run = { ...r, cpuMicros: r.requests > 0 ? (cpu / r.requests) * 1e6 : null };
        if (perfData) {
          const report = execFileSync(
            "perf",
            ["report", "-i", perfData, "--no-children", "--sort", "dso,sym", "--stdio", "-g", "none", "--percent-limit", "0.01"],
            { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "ignore"] },
          );
          run.shares = perfShares(report);
          rmSync(perfData, { force: true });
        }
        if (round > 0) s.runs.push(run);
        console.log(
          `  ${round === 0 ? "warm-up" : `round ${round}`} ${s.name}: ${Math.round(r.rps)} req/s, ${r.errors} errors${r.firstError ? ` (${r.firstError})` : ""}, ${run.cpuMicros?.toFixed(0)} µs CPU/req, p99 ${r.latencyP99?.toFixed(1)} ms${
            run.shares
              ? `; ${Object.entries(run.shares)
                  .map(([k, v]) => `${k} ${(v * 100).toFixed(1)}%`)
                  .join(", ")}`
              : ""
          }`,
        );
      }
    }
  } finally {
    await Promise.all(running.map((s) => s.server.stop()));
    rmSync(cert.dir, { recursive: true, force: true });
  }
  console.log(
    `\n| server | req/s | CPU µs/req | mean (ms) | p99 (ms) | errors |${flags.perf ? " rustls | crypto | copies | kernel | other |" : ""}\n| :-- | --: | --: | --: | --: | --: |${flags.perf ? " --: | --: | --: | --: | --: |" : ""}`,
  );
  for (const s of running) {
    const m = (f) => median(s.runs.map(f));
    const pct = (f) => `${((m(f) ?? 0) * 100).toFixed(1)}%`;
    console.log(
      `| ${s.name.startsWith("cog") ? `**${s.name}**` : s.name} | ${Math.round(m((r) => r.rps))} | ${m((r) => r.cpuMicros)?.toFixed(0)} | ${m((r) => r.latencyAvg)?.toFixed(2)} | ${m((r) => r.latencyP99)?.toFixed(2)} | ${s.runs.reduce((n, r) => n + r.errors, 0)} |${flags.perf ? ` ${["rustls", "crypto", "copies", "kernel", "other"].map((k) => pct((r) => r.shares?.[k])).join(" | ")} |` : ""}`,
    );
  }
}

function fail(message) {
  throw new Error(message);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
