#!/usr/bin/env node
// baseline-h3 beside the engine's own h2: one native-engine server (http2: true, tls,
// listen({ http3: true })) answering GET /baseline2?a=1&b=2 with "3", pinned to one core; the
// load on the other: h2load over TLS (h2) and bench/h3-load (quic-go, HTTP/3), in interleaved
// rounds. Per round: requests a second and the server's CPU per request (its user + system time
// over the round, from /proc). Prints one JSON line per round and the medians.
//
//   node bench/h3-vs-h2.mjs [--rounds 5] [--seconds 10] [--c 4] [--m 32] [--h2-rps N]
// --h2-rps holds h2load to N requests a second in all (h3-load's rate, say), so that both
// protocols are measured at the same rate: CPU per request depends on how many requests a turn
// of the loop carries.
// Needs: npm run build, the native engine built, h2load, go (h3-load is built into .cache/).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { makeCertificate } from "./lib/certificate.mjs";
import { cpuSeconds, pin } from "./lib/proc.mjs";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    seconds: { type: "string", default: "10" },
    c: { type: "string", default: "4" },
    m: { type: "string", default: "32" },
    "server-cpu": { type: "string", default: "0" },
    "load-cpu": { type: "string", default: "1" },
    "h2-rps": { type: "string" },
  },
});
const root = new URL("..", import.meta.url).pathname;
const cache = join(root, ".cache");
mkdirSync(cache, { recursive: true });
const h3load = join(cache, "h3-load");
if (!existsSync(h3load)) execFileSync("go", ["build", "-o", h3load, "."], { cwd: join(root, "bench", "h3-load"), stdio: "inherit" });

const tls = makeCertificate();
const serverCode = `
import { readFileSync } from "node:fs";
import { Cog } from ${JSON.stringify(join(root, "dist", "index.js"))};
const app = new Cog({ engine: "native", http2: true, tls: { key: readFileSync(${JSON.stringify(tls.key)}), cert: readFileSync(${JSON.stringify(tls.cert)}) } });
app.get("/baseline2", (req, res) => res.send(String(Number(req.query.a) + Number(req.query.b))));
const { port } = await app.listen({ port: 0, host: "127.0.0.1", http3: true });
console.log("listening " + port);
`;
const [command, args] = pin(values["server-cpu"], process.execPath, ["--input-type=module", "-e", serverCode]);
const server = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
const port = await new Promise((resolve) =>
  server.stdout.on("data", (d) => /listening (\d+)/.test(String(d)) && resolve(Number(/listening (\d+)/.exec(String(d))[1]))),
);
const url = `https://127.0.0.1:${port}/baseline2?a=1&b=2`;
const seconds = Number(values.seconds);
const [c, m] = [Number(values.c), Number(values.m)];

function run(cmd, argv) {
  const [pc, pa] = pin(values["load-cpu"], cmd, argv);
  return execFileSync(pc, pa, { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
}
const contenders = {
  h2: () => {
    const rate = values["h2-rps"] === undefined ? [] : [`--rps=${Math.ceil(Number(values["h2-rps"]) / c)}`];
    const out = run("h2load", ["-c", String(c), "-m", String(m), "-D", String(seconds), "--warm-up-time=2", ...rate, url]);
    const done = Number(/(\d+) succeeded/.exec(out)?.[1] ?? 0);
    return { requests: done, seconds };
  },
  h3: () => {
    const out = JSON.parse(run(h3load, ["-url", url, "-c", String(c), "-m", String(m), "-d", `${seconds}s`, "-w", "2s"]));
    if (out.errors > 0 || Object.keys(out.statuses).some((s) => s !== "200")) console.error("h3-load:", JSON.stringify(out));
    return { requests: out.requests, seconds: out.seconds };
  },
};
const results = { h2: [], h3: [] };
for (let round = 0; round < Number(values.rounds); round++) {
  for (const name of round % 2 === 0 ? ["h2", "h3"] : ["h3", "h2"]) {
    const before = cpuSeconds(server.pid);
    const load = contenders[name]();
    // The warm-up's CPU is in the span too: it is charged over the measured requests' time only.
    const cpu = (cpuSeconds(server.pid) - before) * (load.seconds / (load.seconds + 2));
    const row = { round, protocol: name, rps: Math.round(load.requests / load.seconds), cpuUsPerRequest: Math.round((cpu / load.requests) * 1e7) / 10 };
    console.log(JSON.stringify(row));
    results[name].push(row);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = Object.fromEntries(
  Object.entries(results).map(([k, rows]) => [k, { rps: median(rows.map((r) => r.rps)), cpuUsPerRequest: median(rows.map((r) => r.cpuUsPerRequest)) }]),
);
summary.ratio = { cpuPerRequestH3OverH2: Math.round((summary.h3.cpuUsPerRequest / summary.h2.cpuUsPerRequest) * 100) / 100 };
console.log(JSON.stringify({ medians: summary, c, m, seconds, rounds: Number(values.rounds), h2Rps: values["h2-rps"] ?? "unbounded" }));
server.kill();
rmSync(tls.dir, { recursive: true, force: true });
