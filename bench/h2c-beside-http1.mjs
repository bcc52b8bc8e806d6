#!/usr/bin/env node
// What serving HTTP/1.1 beside h2c on one port (`http2: "h2c", allowHTTP1: true`) costs HTTP/1.1:
// the same app on a plain port and on such a port, on each engine, timed with wrk (-t1 -c32, 3 s)
// with a new connection per request (Connection: close, where the choice of protocol is made for
// every request) and with keep-alive; server CPU per request from /proc. Servers on core 0, wrk on
// core 1, a warm-up round, then 3 rounds, the servers interleaved; medians.
// See docs/decisions/h2c-beside-http1.md.
//
//   npm run build && node bench/h2c-beside-http1.mjs
import { spawn, execFileSync } from "node:child_process";
import { cpuSeconds, pin } from "./lib/proc.mjs";
const variants = [];
for (const engine of ["node", "native"]) for (const mixed of [false, true]) variants.push({ engine, mixed });
const code = (engine, mixed) =>
  `import { Cog } from "cog-http"; const app = new Cog({ engine: "${engine}"${mixed ? ', http2: "h2c", allowHTTP1: true' : ""} }); app.get("/", (_q, r) => r.send("ok")); const { port } = await app.listen(0, "127.0.0.1"); console.log("port " + port);`;
const servers = [];
for (const v of variants) {
  const child = spawn(...pin("0", process.execPath, ["--input-type=module", "-e", code(v.engine, v.mixed)]), {
    stdio: ["ignore", "pipe", "inherit"],
    cwd: process.cwd(),
  });
  const port = await new Promise((res) =>
    child.stdout.on("data", (d) => {
      const m = /port (\d+)/.exec(String(d));
      if (m) res(Number(m[1]));
    }),
  );
  servers.push({ ...v, child, port, runs: { close: [], keep: [] } });
}
const wrk = (port, close) => {
  const args = ["-t1", "-c32", "-d3s", ...(close ? ["-H", "Connection: close"] : []), `http://127.0.0.1:${port}/`];
  const out = execFileSync(...pin("1", "wrk", args), { encoding: "utf8" });
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]);
};
for (let round = 0; round < 4; round++)
  for (const mode of ["close", "keep"])
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      const before = cpuSeconds(s.child.pid);
      const rate = wrk(s.port, mode === "close");
      const cpu = cpuSeconds(s.child.pid) - before;
      if (round > 0) s.runs[mode].push({ rate, us: (cpu * 1e6) / (rate * 3) });
    }
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const s of servers) {
  console.log(
    `${s.engine.padEnd(6)} ${s.mixed ? "h2c+allowHTTP1" : "plain         "}  close: ${med(s.runs.close.map((r) => r.rate)).toFixed(0)} req/s ${med(s.runs.close.map((r) => r.us)).toFixed(1)} µs/req   keep-alive: ${med(s.runs.keep.map((r) => r.rate)).toFixed(0)} req/s ${med(s.runs.keep.map((r) => r.us)).toFixed(2)} µs/req`,
  );
  s.child.kill();
}
