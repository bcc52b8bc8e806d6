#!/usr/bin/env node
// Slow readers: N clients each ask for the same shared 4 MiB Buffer and never read it. Reports,
// per engine, the server's RSS (its own process, from /proc) before the clients come, while they
// hang on, and after they have left, and its open connections (from /proc: how many, and when its
// sendTimeout had closed them all). A server that copies each unsent answer grows by a body per client; one that
// holds the app's Buffer grows by little more than the kernel's socket buffers.
//
//   npm run build && node bench/slow-readers.mjs [--engines node,native] [--clients 300] [--hold 10] [--send-timeout 0]
//
// --hold: seconds the clients stay; --send-timeout: the server's sendTimeout in ms (0: off, so the
// clients stay the whole --hold; omitted: Cog's default).
import { spawn } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { connect } from "node:net";
import { parseArgs } from "node:util";
import { rssBytes } from "./lib/proc.mjs";

const { values: flags } = parseArgs({
  options: {
    engines: { type: "string", default: "node,native" },
    clients: { type: "string", default: "300" },
    hold: { type: "string", default: "10" },
    "send-timeout": { type: "string" },
    size: { type: "string", default: String(4 * 1024 * 1024) },
  },
});

const server = (engine, sendTimeout) => `
import { Cog } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
const body = Buffer.alloc(${Number(flags.size)}, 120);
const app = new Cog({ engine: ${JSON.stringify(engine)}, logErrors: false${sendTimeout === undefined ? "" : `, sendTimeout: ${Number(sendTimeout)}`} });
app.get("/big", (req, res) => res.type("application/octet-stream").send(body));
app.get("/ping", (req, res) => res.send("pong"));
const { port } = await app.listen(0, "127.0.0.1");
console.log(port);
`;

/** The servers not yet stopped: killed if this process exits first (cut short, or failing). */
const running = new Set();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** The server's resident set, in MiB. */
const rss = (pid) => rssBytes(pid) / 1048576;
/** The server's open sockets (its listener and connections), from /proc. */
const sockets = (pid) =>
  readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
    } catch {
      return false;
    }
  }).length;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function ping(port, n) {
  // Each on a connection of its own, closed after: the server's idle sockets are then its listener alone.
  for (let i = 0; i < n; i++) await fetch(`http://127.0.0.1:${port}/ping`, { headers: { connection: "close" } }).then((r) => r.text());
}

async function run(engine) {
  const child = spawn(process.execPath, ["--input-type=module", "-e", server(engine, flags["send-timeout"])], { stdio: ["ignore", "pipe", "inherit"] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  const port = await new Promise((resolve) => child.stdout.once("data", (d) => resolve(Number(String(d).trim()))));
  await ping(port, 200);
  await sleep(500);
  const before = rss(child.pid);
  const idleSockets = sockets(child.pid);
  const started = Date.now();
  const clients = [];
  for (let i = 0; i < Number(flags.clients); i++) {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.once("connect", () => {
      socket.write("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
      // Never read: Node stops reading the socket, the kernel's receive buffer fills, the server's send blocks.
      socket.pause();
    });
    clients.push(socket);
  }
  // The clients never read, so they can't see the server close: the server's own sockets tell.
  let peak = before;
  let open = 0;
  let mostOpen = 0;
  let allClosedAt;
  const deadline = started + Number(flags.hold) * 1000;
  while (Date.now() < deadline) {
    await sleep(250);
    peak = Math.max(peak, rss(child.pid));
    open = Math.max(0, sockets(child.pid) - idleSockets);
    mostOpen = Math.max(mostOpen, open);
    if (mostOpen > 0 && open <= 0 && allClosedAt === undefined) allClosedAt = Date.now() - started;
  }
  const during = rss(child.pid);
  for (const socket of clients) socket.destroy();
  await sleep(2000);
  await ping(port, 20);
  const after = rss(child.pid);
  child.kill();
  return { engine, before, peak, during, after, mostOpen, open, allClosedAt };
}

const mib = (x) => `${x.toFixed(0)} MiB`;
console.log(
  `${flags.clients} clients, a shared ${(Number(flags.size) / 1048576).toFixed(1)} MiB Buffer each, held ${flags.hold} s, sendTimeout ${flags["send-timeout"] ?? "default"}; Node ${process.version}`,
);
console.log("engine   RSS before   peak      at the end of hold   after they left   connections: most open, open at the end of hold (all closed after, ms)");
for (const engine of flags.engines.split(",")) {
  const r = await run(engine);
  const closed = `${r.mostOpen}, ${r.open}${r.allClosedAt === undefined ? "" : ` (${r.allClosedAt})`}`;
  console.log(
    `${engine.padEnd(8)} ${mib(r.before).padStart(10)}   ${mib(r.peak).padStart(8)}   ${mib(r.during).padStart(10)}           ${mib(r.after).padStart(10)}        ${closed}`,
  );
}
