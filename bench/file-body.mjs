#!/usr/bin/env node
// The native engine's file body: sendfile(2) from Rust against the same bytes read through
// JavaScript (a read stream piped into the response, what the engine does when a middleware
// wraps `res.write`). Server pinned to core 0, wrk to core 1, the two servers interleaved over
// rounds; reports requests/s and the server's CPU time per request (from /proc), medians.
//
//   npm run build && node bench/file-body.mjs [--sizes 256k,4m] [--rounds 3] [--seconds 4] [--connections 8]
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: flags } = parseArgs({
  options: {
    sizes: { type: "string", default: "256k,4m" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "4" },
    connections: { type: "string", default: "8" },
  },
});
const dir = mkdtempSync(join(tmpdir(), "cog-file-body-"));
const bytes = (size) => Number.parseFloat(size) * { k: 1024, m: 1024 * 1024 }[size.at(-1)];
const sizes = flags.sizes.split(",");
for (const size of sizes) writeFileSync(join(dir, `${size}.bin`), Buffer.alloc(bytes(size), 1));

const server = (mode) => `
import { Cog, serveStatic } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
const app = new Cog({ engine: "native", logErrors: false });
// An own 'write' property is what a wrapping middleware leaves: the file then goes through JavaScript.
if (${JSON.stringify(mode)} === "js-stream") app.use((req, res, next) => { res.write = res.write; next(); });
app.use(serveStatic(${JSON.stringify(dir)}));
const { port } = await app.listen(0, "127.0.0.1");
console.log(port);
`;

function start(mode) {
  const child = spawn("taskset", ["-c", "0", process.execPath, "--input-type=module", "-e", server(mode)], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve) => child.stdout.once("data", (d) => resolve({ child, port: Number(String(d).trim()) })));
}

const cpuTicks = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks
};
const TICK_US = 1e6 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));

function wrk(port, size, seconds) {
  const out = execFileSync("taskset", ["-c", "1", "wrk", "-t1", `-c${flags.connections}`, `-d${seconds}s`, `http://127.0.0.1:${port}/${size}.bin`], {
    encoding: "utf8",
  });
  const requests = Number(/(\d+) requests in/.exec(out)[1]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]);
  return { requests, rps };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const modes = ["sendfile", "js-stream"];
const results = {};
for (const size of sizes) {
  for (const mode of modes) results[`${size} ${mode}`] = { rps: [], cpu: [] };
  for (let round = 0; round < Number(flags.rounds); round++) {
    for (const mode of round % 2 === 0 ? modes : [...modes].reverse()) {
      const { child, port } = await start(mode);
      wrk(port, size, 1); // warm-up
      const before = cpuTicks(child.pid);
      const { requests, rps } = wrk(port, size, Number(flags.seconds));
      const cpu = ((cpuTicks(child.pid) - before) * TICK_US) / requests;
      results[`${size} ${mode}`].rps.push(rps);
      results[`${size} ${mode}`].cpu.push(cpu);
      child.kill();
    }
  }
}
rmSync(dir, { recursive: true, force: true });
console.log("file   body path    requests/s (median)   server CPU µs/request (median)");
for (const [name, { rps, cpu }] of Object.entries(results))
  console.log(`${name.padEnd(20)} ${median(rps).toFixed(0).padStart(10)}   ${median(cpu).toFixed(1).padStart(10)}`);
for (const size of sizes) {
  const a = results[`${size} sendfile`],
    b = results[`${size} js-stream`];
  console.log(
    `${size}: sendfile/js-stream requests/s ${(median(a.rps) / median(b.rps)).toFixed(2)}x, CPU per request ${(median(a.cpu) / median(b.cpu)).toFixed(2)}x`,
  );
}
