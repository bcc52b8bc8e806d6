#!/usr/bin/env node
// HttpArena's gRPC profiles (github.com/MDA2AV/HttpArena, site/content/docs/test-profiles/grpc):
//   unary-grpc   POST /benchmark.BenchmarkService/GetSum, HttpArena's 9-byte frame (SumRequest
//                {a: 1, b: 2}), h2load with 100 streams per connection
//   stream-grpc  StreamSum {a: 1, b: 2, count: 5000}: 5,000 SumReply frames per call, 4 streams per
//                connection; the figure is messages/s (calls/s x 5,000), as HttpArena scores it;
//                with ghz, as HttpArena loads it, when ghz is found (GHZ=path, or ghz on the PATH:
//                `go install github.com/bojand/ghz/cmd/ghz@latest`), else with h2load
// over h2c, against Cog (cog-http/connect and Connect's Node handler, each engine), Connect's
// handler on bare node:http2 and @grpc/grpc-js's server (bench/grpc/server.mjs). Connection counts
// are scaled to a 2-core machine: the server pinned to core 0, h2load (one thread) to core 1.
// Before it is timed, each server is checked as HttpArena validates the profiles (GetSum's sum;
// StreamSum's replies for count 10, 5,000 and 0), with @grpc/grpc-js: h2load counts HTTP statuses,
// not grpc-status. Contenders interleaved over rounds; medians.
//
//   npm run build && node bench/grpc-arena.mjs [--rounds 3] [--seconds 5] [--profiles unary-grpc,stream-grpc]
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { frame } from "./grpc/frames.mjs";
import { measure } from "./lib/load.mjs";
import { cpuSeconds, pin } from "./lib/proc.mjs";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "5" },
    profiles: { type: "string", default: "unary-grpc,stream-grpc" },
    contenders: { type: "string", default: "cog-native-connect,cog-native,cog-node-connect,connect,grpc-js" },
  },
});
const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const PROFILES = {
  "unary-grpc": { path: "/benchmark.BenchmarkService/GetSum", body: frame([1, 2]), connections: 4, streams: 100, messagesPerCall: 1 },
  "stream-grpc": { path: "/benchmark.BenchmarkService/StreamSum", body: frame([1, 2, 5000]), connections: 4, streams: 4, messagesPerCall: 5000 },
};
// HttpArena's own request file for unary-grpc (requests/grpc-sum.bin): the frame above must be it.
assert.deepEqual(PROFILES["unary-grpc"].body, Buffer.from("00000000040801100" + "2", "hex"));

async function start(contender) {
  const child = spawn(...pin("0", process.execPath, ["--import", "tsx", here("grpc/server.mjs"), contender]), { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const m = /ready (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`${contender} exited (${code})`)));
  });
  return { child, port };
}

/** HttpArena's checks of the two profiles, with grpc-js. */
async function validate(contender, port) {
  const definition = protoLoader.loadSync(here("grpc/benchmark.proto"));
  const Service = grpc.loadPackageDefinition(definition).benchmark.BenchmarkService;
  const client = new Service(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    const sum = await new Promise((resolve, reject) => client.GetSum({ a: 1, b: 2 }, (err, r) => (err ? reject(err) : resolve(r))));
    assert.equal(sum.result, 3, `${contender}: GetSum`);
    for (const count of [10, 5000, 0]) {
      const results = await new Promise((resolve, reject) => {
        const out = [];
        const call = client.StreamSum({ a: 13, b: 42, count });
        call.on("data", (r) => out.push(r.result));
        call.on("error", reject);
        call.on("end", () => resolve(out));
      });
      assert.deepEqual(
        results,
        Array.from({ length: count }, (_, i) => 55 + i),
        `${contender}: StreamSum count ${count}`,
      );
    }
  } finally {
    client.close();
  }
}

const profiles = flags.profiles.split(",");
const contenders = flags.contenders.split(",");
const servers = {};
// A failing run must not leave the servers behind (nor hold the output's pipe open).
process.on("exit", () => {
  for (const { child } of Object.values(servers)) child.kill();
});
for (const contender of contenders) {
  servers[contender] = await start(contender);
  await validate(contender, servers[contender].port);
}
const GHZ = process.env.GHZ ?? "ghz";
const ghzFound = (() => {
  try {
    execFileSync(GHZ, ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** stream-grpc as HttpArena runs it (scripts/lib/tools/ghz.sh): ghz's completed calls, OK or not. */
function ghzLoad(port, seconds) {
  const { connections, streams, messagesPerCall } = PROFILES["stream-grpc"];
  const args = [
    "--insecure",
    "--proto",
    here("grpc/benchmark.proto"),
    "--call",
    "benchmark.BenchmarkService/StreamSum",
    "-d",
    JSON.stringify({ a: 1, b: 2, count: messagesPerCall }),
    "--connections",
    String(connections),
    "-c",
    String(connections * streams),
    "-z",
    `${seconds}s`,
    "-O",
    "json",
    `127.0.0.1:${port}`,
  ];
  const report = JSON.parse(execFileSync(...pin("1", GHZ, args), { encoding: "utf8", maxBuffer: 64 << 20 }));
  const ok = report.statusCodeDistribution?.OK ?? 0;
  return { requests: ok, errors: report.count - ok, timeouts: 0, statuses: { "non-2xx/3xx": 0 } };
}

// A run in which no call finished (a server far slower than the others, on a loaded machine) is
// counted as none, and said so, rather than ending the bench.
const load = (profile, port, seconds) =>
  profile === "stream-grpc" && ghzFound
    ? Promise.resolve(ghzLoad(port, seconds))
    : measure({
        tool: "h2load",
        url: `http://127.0.0.1:${port}${PROFILES[profile].path}`,
        method: "POST",
        headers: { "content-type": "application/grpc", te: "trailers" },
        body: PROFILES[profile].body,
        connections: PROFILES[profile].connections,
        streams: PROFILES[profile].streams,
        duration: seconds,
        cpu: "1",
      }).catch((err) => {
        console.error(`${profile} on port ${port}: ${err.message.split("\n")[0]}`);
        return { requests: 0, errors: 0, timeouts: 0, statuses: { "non-2xx/3xx": 0 }, failedRun: true };
      });
const results = {};
for (const profile of profiles) {
  for (const contender of contenders) await load(profile, servers[contender].port, 4); // warm-up
  results[profile] = Object.fromEntries(contenders.map((c) => [c, []]));
  for (let round = 0; round < Number(flags.rounds); round++) {
    for (const contender of contenders) {
      const { child, port } = servers[contender];
      const before = cpuSeconds(child.pid);
      const r = await load(profile, port, Number(flags.seconds));
      const cpu = cpuSeconds(child.pid) - before;
      const messages = r.requests * PROFILES[profile].messagesPerCall;
      results[profile][contender].push({
        perSecond: messages / Number(flags.seconds),
        usPerMessage: (cpu * 1e6) / messages,
        failed: r.errors + r.timeouts + r.statuses["non-2xx/3xx"],
      });
    }
  }
}
for (const { child } of Object.values(servers)) child.kill();

console.log(
  `node ${process.version}, ${flags.rounds} rounds of ${flags.seconds} s, h2c; server on core 0, the load on core 1 (h2load -t1${ghzFound ? "; stream-grpc: ghz" : ""})`,
);
for (const profile of profiles) {
  const { connections, streams, messagesPerCall } = PROFILES[profile];
  const unit = messagesPerCall === 1 ? "call" : "message";
  console.log(`\n${profile}: ${connections} connections x ${streams} streams${messagesPerCall > 1 ? `, ${messagesPerCall} messages per call` : ""}`);
  console.log(`contender            ${unit}s/s (median)   server CPU µs/${unit} (median)   failed`);
  const base = median(results[profile][contenders[0]].map((r) => r.usPerMessage));
  for (const contender of contenders) {
    const rows = results[profile][contender];
    const us = median(rows.map((r) => r.usPerMessage));
    console.log(
      `${contender.padEnd(20)} ${median(rows.map((r) => r.perSecond))
        .toFixed(0)
        .padStart(10)}          ${us.toFixed(2).padStart(8)} (x${(us / base).toFixed(2)})          ${rows.reduce((n, r) => n + r.failed, 0)}`,
    );
  }
}
