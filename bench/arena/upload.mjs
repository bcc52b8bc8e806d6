#!/usr/bin/env node
// The arena's upload scenario measured as docs/decisions/request-bodies.md does: each server
// started fresh for each measurement (`taskset -c 0`, wrk `taskset -c 1`), warmed for a second,
// then timed; contenders interleaved over rounds; medians of the server's CPU µs per request,
// user and system apart, and its page faults per request (`perf stat`, where perf runs).
// A server kept up across rounds, as `npm run bench` keeps it, falls after 20-30 s of uploads
// into stretches of mark-compact collections that come and go between runs (the decision says why).
//
//   node bench/arena/upload.mjs [--contenders cog-native,cog,node-http,uws] [--rounds 5] [--duration 5]
//                               [--before DIR]   also time cog-native and cog from another checkout
//                                                (built: dist/ and native/cog-native.node), as *-before
//   node bench/arena/upload.mjs --instructions [--contenders cog-native] [--requests 40] [--before DIR]
//     instructions per request under callgrind (userland only; repeatable where the CPU time is not),
//     the four sizes in rotation over 4 connections after as many requests to warm up
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { arenaScenario } from "./scenarios.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { values: flags } = parseArgs({
  options: {
    contenders: { type: "string" },
    rounds: { type: "string", default: "5" },
    duration: { type: "string", default: "5" },
    before: { type: "string" },
    instructions: { type: "boolean", default: false },
    requests: { type: "string", default: "40" },
  },
});

const SERVERS = {
  "cog-native": { file: "examples/arena.ts", env: { COG_ENGINE: "native" }, tsx: true },
  cog: { file: "examples/arena.ts", env: { COG_ENGINE: "node" }, tsx: true },
  "node-http": { file: "bench/arena/contenders/node-http.mjs", env: {}, tsx: true },
  uws: { file: "bench/arena/contenders/uws.mjs", env: {}, tsx: false },
};
const names = (flags.contenders ?? (flags.instructions ? "cog-native" : "cog-native,cog,node-http,uws")).split(",");
const contenders = names.flatMap((name) => {
  if (!SERVERS[name]) throw new Error(`unknown contender ${name} (${Object.keys(SERVERS).join(", ")})`);
  const here = { name, dir: root, ...SERVERS[name] };
  return flags.before && name.startsWith("cog") ? [{ ...here, name: `${name}-before`, dir: resolve(flags.before) }, here] : [here];
});
const work = mkdtempSync(join(tmpdir(), "cog-upload-"));
process.once("exit", () => rmSync(work, { recursive: true, force: true }));

/** Starts a contender's server (under `wrap`, e.g. valgrind); resolves once it says "ready". */
async function start(c, port, wrap = []) {
  const args = [...(c.tsx ? ["--import", "tsx"] : []), c.file];
  const [command, ...rest] = [...wrap, process.execPath, ...args];
  const child = spawn(command, rest, {
    cwd: c.dir,
    env: { ...process.env, ...c.env, PORT: String(port), NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise((ready, fail) => {
    const listen = (d) => {
      output += d;
      if (/^ready$/m.test(output)) ready();
    };
    child.stdout.on("data", listen);
    child.stderr.on("data", listen);
    child.once("exit", () => fail(new Error(`${c.name} ended:\n${output}`)));
  });
  return child;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
let nextPort = 21000 + Math.floor(Math.random() * 2000);

if (flags.instructions) {
  const sizes = [500 * 1024, 2 * 1024 * 1024, 10 * 1024 * 1024, 20 * 1024 * 1024].map((n) => Buffer.alloc(n, "x"));
  const N = Number(flags.requests);
  for (const c of contenders) {
    const port = nextPort++;
    const out = join(work, c.name);
    const child = await start(c, port, ["valgrind", "--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${out}.%p`]);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const post = (body) =>
      new Promise((done, fail) => {
        const req = request(
          { port, method: "POST", path: "/upload", agent, headers: { "content-type": "application/octet-stream", "content-length": body.length } },
          (res) => {
            let text = "";
            res.on("data", (d) => (text += d));
            res.on("end", () => (text === String(body.length) ? done() : fail(new Error(`${c.name} answered ${text}`))));
          },
        );
        req.on("error", fail);
        req.end(body);
      });
    const send = (n) => Promise.all(Array.from({ length: n }, (_, i) => post(sizes[i % sizes.length])));
    await send(N);
    execFileSync("callgrind_control", ["-i", "on", String(child.pid)], { stdio: "ignore" });
    await send(N);
    execFileSync("callgrind_control", ["-d", String(child.pid)], { stdio: "ignore" });
    child.kill("SIGKILL");
    agent.destroy();
    let total = 0;
    for (const f of readdirSync(work).filter((f) => f.startsWith(`${c.name}.`)))
      total += Number(/^summary: (\d+)/m.exec(readFileSync(join(work, f), "utf8"))?.[1] ?? 0);
    console.log(`${c.name.padEnd(18)} ${Math.round(total / N).toLocaleString("en-US")} instructions per request (${N} requests)`);
  }
  process.exit(0);
}

const script = join(work, "upload.lua");
writeFileSync(script, arenaScenario("upload").lua());
const perf = spawnSync("perf", ["--version"]).status === 0;
/** utime and stime of a process, in clock ticks. */
const ticks = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return [Number(fields[11]), Number(fields[12])];
};
const wrk = (port, seconds) => {
  const out = execFileSync("taskset", ["-c", "1", "wrk", "-t1", "-c8", `-d${seconds}s`, "-s", script, `http://127.0.0.1:${port}/upload`], { encoding: "utf8" });
  if (/Non-2xx/.test(out)) throw new Error(`non-2xx answers:\n${out}`);
  return Number(/(\d+) requests in/.exec(out)[1]);
};
const results = new Map(contenders.map((c) => [c.name, []]));
const rounds = Number(flags.rounds);
for (let round = 1; round <= rounds; round++) {
  for (const c of contenders) {
    const port = nextPort++;
    const child = await start(c, port, ["taskset", "-c", "0"]);
    wrk(port, 1);
    const counting = perf ? spawn("perf", ["stat", "-x,", "-e", "page-faults", "-p", String(child.pid)], { stdio: ["ignore", "ignore", "pipe"] }) : null;
    let counted = "";
    counting?.stderr.on("data", (d) => (counted += d));
    const [user0, system0] = ticks(child.pid);
    const requests = wrk(port, Number(flags.duration));
    const [user1, system1] = ticks(child.pid);
    if (counting) {
      counting.kill("SIGINT");
      await new Promise((done) => counting.once("exit", done));
    }
    child.kill("SIGKILL");
    // A tick is 10 ms: µs per request.
    const user = ((user1 - user0) * 1e4) / requests;
    const system = ((system1 - system0) * 1e4) / requests;
    const faults = Number(/^(\d+),,page-faults/m.exec(counted)?.[1] ?? NaN) / requests;
    results.get(c.name).push({ user, system, faults });
    console.log(
      `round ${round}/${rounds} ${c.name}: ${requests} requests, ${Math.round(user + system)} µs CPU a request (user ${Math.round(user)}, system ${Math.round(system)}), ${Math.round(faults)} page faults a request`,
    );
  }
}
console.log("\nmedians (CPU µs per request: user + system; page faults per request):");
for (const [name, rows] of results) {
  const m = (key) => Math.round(median(rows.map((r) => (key === "cpu" ? r.user + r.system : r[key]))));
  console.log(`${name.padEnd(18)} ${String(m("cpu")).padStart(6)} (${m("user")} + ${m("system")})  faults ${m("faults")}`);
}
