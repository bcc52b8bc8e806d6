#!/usr/bin/env node
// HPACK references (issue #44): a client stores one 4,000-byte field in the server's HPACK
// dynamic table, then sends requests whose header block is only one-byte references to it
// (0x80 | 62, the first dynamic entry): each reference decodes to 4 KB the server must check.
// Measures the server's CPU per such stream (process.cpuUsage() in the server, before and after),
// and, with --impact, a normal client's latency while attackers send them as fast as they can.
//
//   npm run build && taskset -c 1 node bench/h2-header-refs.mjs [--servers bare,cog-native,cog-node]
//     [--refs 510,16000] [--streams 2000] [--per-connection 50] [--rounds 5] [--ack yes|no]
//     [--before DIR] [--impact] [--duration 5] [--attackers 2]
//
// Servers run on core 0 (taskset), this script should run on core 1. Each connection: preface,
// SETTINGS, the server's SETTINGS acknowledged (--ack no: never, so the server's advertised
// limits are not yet in force), one request that stores the field (answered), then bombs ten at
// a time, each batch answered (RST_STREAM or a response) before the next, until --per-connection
// bombs or the server ends the connection; then a new connection. --before DIR adds
// "cog-native-before", the native engine of another build (DIR/dist and DIR/native).
// Servers and rounds are interleaved; the report gives medians over rounds.
import { execFileSync, spawn } from "node:child_process";
import { connect as h2connect } from "node:http2";
import { connect } from "node:net";
import { parseArgs } from "node:util";
import { pin } from "./lib/proc.mjs";

const { values: flags } = parseArgs({
  options: {
    servers: { type: "string", default: "bare,cog-native" },
    refs: { type: "string", default: "510,16000" },
    streams: { type: "string", default: "2000" },
    "per-connection": { type: "string", default: "50" },
    rounds: { type: "string", default: "5" },
    ack: { type: "string", default: "yes" },
    before: { type: "string" },
    impact: { type: "boolean", default: false },
    duration: { type: "string", default: "5" },
    attackers: { type: "string", default: "2" },
  },
});

const root = new URL("..", import.meta.url).pathname;
const cogServer = (dir, engine) => `
import { Cog } from ${JSON.stringify(`${dir}/dist/index.js`)};
const app = new Cog({ engine: ${JSON.stringify(engine)}, http2: "h2c", logErrors: false });
app.get("/", (req, res) => res.send("ok"));
const { port } = await app.listen(0, "127.0.0.1");
console.log(port);
`;
const bareServer = `
import http2 from "node:http2";
const server = http2.createServer((req, res) => res.end("ok"));
server.on("sessionError", () => {});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`;
// Every server answers "cpu" on stdin with its process.cpuUsage() (µs).
const cpuProbe = `
process.stdin.setEncoding("utf8").on("data", () => { const u = process.cpuUsage(); process.stdout.write(JSON.stringify(u.user + u.system) + "\\n"); });
`;
const SERVERS = {
  bare: bareServer,
  "cog-native": cogServer(root.replace(/\/$/, ""), "native"),
  "cog-node": cogServer(root.replace(/\/$/, ""), "node"),
  ...(flags.before ? { "cog-native-before": cogServer(flags.before.replace(/\/$/, ""), "native") } : {}),
};

const HEADERS = 1,
  RST_STREAM = 3,
  SETTINGS = 4,
  GOAWAY = 7,
  DATA = 0;
const END_STREAM = 1,
  END_HEADERS = 4,
  ACK = 1;
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const frame = (type, flags, stream, payload = Buffer.alloc(0)) => {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
};
function integer(value, bits, mask) {
  const max = (1 << bits) - 1;
  if (value < max) return [mask | value];
  const out = [mask | max];
  for (value -= max; value >= 128; value >>= 7) out.push((value & 127) | 128);
  out.push(value);
  return out;
}
const literal = (name, value, indexed = false) =>
  Buffer.concat([
    Buffer.from([indexed ? 0x40 : 0x00, ...integer(name.length, 7, 0)]),
    Buffer.from(name),
    Buffer.from(integer(value.length, 7, 0)),
    Buffer.from(value),
  ]);
const request = Buffer.concat([literal(":method", "GET"), literal(":scheme", "http"), literal(":authority", "localhost"), literal(":path", "/")]);
const STORE = Buffer.concat([request, literal("x-bomb", "b".repeat(4000), true)]);

/** A header block of `refs` one-byte references after the request's fields, in frames of at most 16,384 bytes. */
function bomb(stream, refs) {
  const block = Buffer.concat([request, Buffer.alloc(refs, 0x80 | 62)]);
  const frames = [];
  for (let at = 0; at < block.length; at += 16_384) {
    const last = at + 16_384 >= block.length;
    frames.push(frame(at === 0 ? HEADERS : 9, (at === 0 ? END_STREAM : 0) | (last ? END_HEADERS : 0), stream, block.subarray(at, at + 16_384)));
  }
  return Buffer.concat(frames);
}

async function start(name) {
  const code = SERVERS[name] + cpuProbe;
  const [command, args] = pin("0", process.execPath, ["--input-type=module", "-e", code]);
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], cwd: root });
  let out = "";
  const waiters = [];
  child.stdout.setEncoding("utf8").on("data", (c) => {
    out += c;
    let nl;
    while ((nl = out.indexOf("\n")) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      waiters.shift()?.(line);
    }
  });
  const line = () => new Promise((resolve) => waiters.push(resolve));
  const port = Number(await line());
  return {
    name,
    port,
    cpu: async () => (child.stdin.write("cpu\n"), Number(await line())),
    stop: () => child.kill("SIGKILL"),
  };
}

/**
 * One attacking connection: stores the field, then sends `count` bombs of `refs` references ten
 * at a time. Returns what the server did with them.
 */
function attack(port, refs, count, ack, tally) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    let input = Buffer.alloc(0);
    let next = 3;
    let sent = 0;
    const open = new Set();
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve();
    };
    const batch = () => {
      if (sent >= count) return finish();
      const out = [];
      for (let i = 0; i < 10 && sent < count; i++, sent++, next += 2) {
        out.push(bomb(next, refs));
        open.add(next);
      }
      tally.sent += out.length;
      socket.write(Buffer.concat(out));
    };
    const done = (id) => {
      if (!open.delete(id)) return;
      if (open.size === 0) batch();
    };
    socket.on("error", () => {});
    socket.on("close", () => {
      if (!settled) tally.closed++;
      finish();
    });
    socket.on("data", (chunk) => {
      input = input.length === 0 ? chunk : Buffer.concat([input, chunk]);
      while (input.length >= 9) {
        const length = input.readUIntBE(0, 3);
        if (input.length < 9 + length) break;
        const type = input[3],
          fl = input[4],
          id = input.readUInt32BE(5) & 0x7fffffff;
        const payload = input.subarray(9, 9 + length);
        input = input.subarray(9 + length);
        if (type === SETTINGS && !(fl & ACK)) {
          if (ack) socket.write(frame(SETTINGS, ACK, 0));
          if (id === 0 && next === 3 && !open.has(1)) {
            open.add(1);
            socket.write(frame(HEADERS, END_STREAM | END_HEADERS, 1, STORE));
          }
        } else if (type === RST_STREAM) {
          const code = payload.readUInt32BE(0);
          tally.resets[code] = (tally.resets[code] ?? 0) + 1;
          done(id);
        } else if ((type === HEADERS || type === DATA) && fl & END_STREAM) {
          if (id !== 1) tally.answered++;
          done(id);
        } else if (type === GOAWAY) {
          tally.goaways[payload.readUInt32BE(4)] = (tally.goaways[payload.readUInt32BE(4)] ?? 0) + 1;
        }
      }
    });
    socket.once("connect", () => socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0)])));
  });
}

const newTally = () => ({ sent: 0, answered: 0, closed: 0, resets: {}, goaways: {} });
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const describe = (t) =>
  `${t.sent} sent: ${t.answered} answered, resets ${JSON.stringify(t.resets)}, GOAWAY ${JSON.stringify(t.goaways)}, ${t.closed} connections closed by the server`;

/** CPU per bomb stream: `streams` bombs over connections of `perConnection`. */
async function costRound(server, refs, streams, perConnection, ack) {
  const tally = newTally();
  // Warm: a few connections first.
  for (let i = 0; i < 3; i++) await attack(server.port, refs, Math.min(perConnection, 20), ack, newTally());
  const before = await server.cpu();
  while (tally.sent < streams) await attack(server.port, refs, Math.min(perConnection, streams - tally.sent), ack, tally);
  const after = await server.cpu();
  return { us: (after - before) / tally.sent, tally };
}

/** A normal client's latency while `attackers` connections send bombs for `seconds`. */
async function impactRound(server, refs, seconds, attackers, perConnection, ack) {
  const session = h2connect(`http://127.0.0.1:${server.port}`);
  session.on("error", () => {});
  const ask = () =>
    new Promise((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const stream = session.request({ ":path": "/" });
      stream.on("data", () => {});
      stream.on("end", () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
      stream.on("error", reject);
    });
  for (let i = 0; i < 20; i++) await ask();
  const quiet = [];
  for (let i = 0; i < 50; i++) {
    quiet.push(await ask());
    await new Promise((r) => setTimeout(r, 10));
  }
  const tally = newTally();
  let stop = false;
  const cpu0 = await server.cpu();
  const t0 = Date.now();
  const loops = Array.from({ length: attackers }, async () => {
    while (!stop) await attack(server.port, refs, perConnection, ack, tally);
  });
  const loud = [];
  while (Date.now() - t0 < seconds * 1000) {
    loud.push(await ask());
    await new Promise((r) => setTimeout(r, 10));
  }
  stop = true;
  await Promise.all(loops);
  const cpu = ((await server.cpu()) - cpu0) / ((Date.now() - t0) * 1000);
  session.close();
  return { quiet: { p50: median(quiet), max: Math.max(...quiet) }, loud: { p50: median(loud), max: Math.max(...loud), n: loud.length }, cpu, tally };
}

try {
  execFileSync("taskset", ["-pc", "1", String(process.pid)], { stdio: "ignore" });
} catch {}
const names = flags.servers.split(",").concat(flags.before && !flags.servers.includes("cog-native-before") ? ["cog-native-before"] : []);
const refsList = flags.refs.split(",").map(Number);
const rounds = Number(flags.rounds);
const ack = flags.ack !== "no";
console.log(
  `node ${process.version}; servers ${names.join(", ")}; refs ${refsList.join(", ")}; ${flags.impact ? `impact: ${flags.attackers} attackers, ${flags.duration} s` : `${flags.streams} streams, ${flags["per-connection"]} a connection`}; ${rounds} rounds; settings ${ack ? "acknowledged" : "never acknowledged"}`,
);
const results = {};
for (let round = 0; round < rounds; round++) {
  // Rotated each round, so that no server always goes first.
  const order = names.map((_, i) => names[(i + round) % names.length]);
  for (const name of order) {
    const server = await start(name);
    try {
      for (const refs of refsList) {
        const key = `${name} refs=${refs}`;
        const r = flags.impact
          ? await impactRound(server, refs, Number(flags.duration), Number(flags.attackers), Number(flags["per-connection"]), ack)
          : await costRound(server, refs, Number(flags.streams), Number(flags["per-connection"]), ack);
        (results[key] ??= []).push(r);
        console.log(
          `round ${round + 1} ${key}: ${flags.impact ? `cpu ${(r.cpu * 100).toFixed(0)}%, normal client p50 ${r.loud.p50.toFixed(2)} ms max ${r.loud.max.toFixed(1)} ms (quiet: p50 ${r.quiet.p50.toFixed(2)} max ${r.quiet.max.toFixed(1)})` : `${r.us.toFixed(1)} µs/stream`}; ${describe(r.tally)}`,
        );
      }
    } finally {
      server.stop();
    }
  }
}
console.log("\nmedians over rounds:");
for (const [key, rs] of Object.entries(results)) {
  if (flags.impact) {
    console.log(
      `${key}: server cpu ${(median(rs.map((r) => r.cpu)) * 100).toFixed(0)}% of a core; normal client p50 ${median(rs.map((r) => r.loud.p50)).toFixed(2)} ms, max ${median(rs.map((r) => r.loud.max)).toFixed(1)} ms (quiet: p50 ${median(rs.map((r) => r.quiet.p50)).toFixed(2)}, max ${median(rs.map((r) => r.quiet.max)).toFixed(1)}); bombs sent ${median(rs.map((r) => r.tally.sent))}`,
    );
  } else {
    console.log(`${key}: ${median(rs.map((r) => r.us)).toFixed(1)} µs/stream (rounds: ${rs.map((r) => r.us.toFixed(0)).join(", ")})`);
  }
}
