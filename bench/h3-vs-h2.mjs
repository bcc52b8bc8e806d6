#!/usr/bin/env node
// baseline-h3 beside the engine's own h2 and Bun's HTTP/3: one native-engine server (http2: true,
// tls, listen({ http3: true })) and one Bun.serve({ http3: true }) (contenders/bun-h3.mjs), each
// answering GET /baseline2?a=1&b=2 with "3", both pinned to one core; the load on the other:
// h2load over TLS (h2) and bench/h3-load (quic-go, HTTP/3), in interleaved rounds, one contender
// at a time. Per round: requests a second and the server's CPU per request (its user + system
// time over the round, from /proc). Prints one JSON line per round and the medians.
//
//   node bench/h3-vs-h2.mjs [--rounds 5] [--seconds 10] [--c 4] [--m 32] [--h2-rps N]
// --h2-rps holds h2load to N requests a second in all (h3-load's rate, say), so that both
// protocols are measured at the same rate: CPU per request depends on how many requests a turn
// of the loop carries.
// Needs: npm run build, the native engine built, h2load, go (h3-load is built into .cache/); Bun
// is installed from npm into .cache/ (bench/lib/bun.mjs), and left out, saying why, where it can't be.
import { execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bunBinary } from "./lib/bun.mjs";
import { goTool } from "./lib/go-tool.mjs";
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
const h3load = goTool("h3-load");

const tls = makeCertificate();
const serverCode = `
import { readFileSync } from "node:fs";
import { Cog } from ${JSON.stringify(join(root, "dist", "index.js"))};
const app = new Cog({ engine: "native", http2: true, tls: { key: readFileSync(${JSON.stringify(tls.key)}), cert: readFileSync(${JSON.stringify(tls.cert)}) } });
app.get("/baseline2", (req, res) => res.send(String(Number(req.query.a) + Number(req.query.b))));
const { port } = await app.listen({ port: 0, host: "127.0.0.1", http3: true });
console.log("listening " + port);
`;
/** Starts a server pinned to the server core; resolves with its process and port once it listens. */
async function start(command, argv, env) {
  const [pc, pa] = pin(values["server-cpu"], command, argv);
  const child = spawn(pc, pa, { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...env } });
  const port = await new Promise((resolve) =>
    child.stdout.on("data", (d) => /listening (\d+)/.test(String(d)) && resolve(Number(/listening (\d+)/.exec(String(d))[1]))),
  );
  return { child, port };
}
const cog = await start(process.execPath, ["--input-type=module", "-e", serverCode]);
const bun = bunBinary();
if (bun.path === null) console.error(`Bun's HTTP/3 left out: ${bun.reason}`);
const bunServer =
  bun.path === null ? null : await start(bun.path, [join(root, "bench", "contenders", "bun-h3.mjs")], { KEY: tls.key, CERT: tls.cert, PORT: "0" });
const path = "/baseline2?a=1&b=2";
const url = `https://127.0.0.1:${cog.port}${path}`;
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
  h3: () => h3(url),
};
const servers = { h2: cog.child, h3: cog.child };
if (bunServer !== null) {
  contenders["bun-h3"] = () => h3(`https://127.0.0.1:${bunServer.port}${path}`);
  servers["bun-h3"] = bunServer.child;
}
function h3(target) {
  // h3-load exits with 1 (and execFileSync throws) if any answer is not 200 "3".
  const out = JSON.parse(run(h3load, ["-url", target, "-expect-body", "3", "-c", String(c), "-m", String(m), "-d", `${seconds}s`, "-w", "2s"]));
  if (out.errors > 0 || Object.keys(out.statuses).some((s) => s !== "200")) console.error("h3-load:", target, JSON.stringify(out));
  return { requests: out.requests, seconds: out.seconds };
}
const names = Object.keys(contenders);
const results = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  // Each round starts with the next contender, so that none is always first after the last's load.
  for (const name of [...names.slice(round % names.length), ...names.slice(0, round % names.length)]) {
    const pid = servers[name].pid;
    const before = cpuSeconds(pid);
    const load = contenders[name]();
    // The warm-up's CPU is in the span too: it is charged over the measured requests' time only.
    const cpu = (cpuSeconds(pid) - before) * (load.seconds / (load.seconds + 2));
    const row = { round, protocol: name, rps: Math.round(load.requests / load.seconds), cpuUsPerRequest: Math.round((cpu / load.requests) * 1e7) / 10 };
    console.log(JSON.stringify(row));
    results[name].push(row);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = Object.fromEntries(
  Object.entries(results).map(([k, rows]) => [k, { rps: median(rows.map((r) => r.rps)), cpuUsPerRequest: median(rows.map((r) => r.cpuUsPerRequest)) }]),
);
const ratio = (a, b) => Math.round((summary[a].cpuUsPerRequest / summary[b].cpuUsPerRequest) * 100) / 100;
summary.ratio = { cpuPerRequestH3OverH2: ratio("h3", "h2") };
if (bunServer !== null) summary.ratio.cpuPerRequestH3OverBunH3 = ratio("h3", "bun-h3");
console.log(
  JSON.stringify({ medians: summary, c, m, seconds, rounds: Number(values.rounds), h2Rps: values["h2-rps"] ?? "unbounded", bun: bun.version ?? bun.reason }),
);
cog.child.kill();
bunServer?.child.kill();
rmSync(tls.dir, { recursive: true, force: true });
