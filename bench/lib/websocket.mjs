// The WebSocket scenarios: HttpArena's three echo profiles, `echo-ws` (N connections each sending
// "hello" and awaiting the echo), `echo-ws-pipeline` (16 in flight per connection, sent in one
// write) and `echo-ws-limited` (10 echoes per connection, then a new connection and handshake), and `fanout` (one publisher, 1,000 subscribers: deliveries/s and p99
// delivery latency; cog also as two processes sharing a Redis). Load comes from bench/ws-load
// (Go, built on first use into .cache/). Servers on the server core, the load on the other,
// contenders checked first, interleaved over rounds, medians.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { goTool } from "./go-tool.mjs";
import { median } from "./report.mjs";
import { rotate } from "./rounds.mjs";
import { cpuSeconds, pin } from "./proc.mjs";
import { freePort, startServer } from "./server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");

export const WEBSOCKET_SCENARIOS = [
  { id: "echo-ws", title: 'echo: "hello" sent and echoed on every connection, in a loop', mode: "echo", path: "/echo", connections: 512 },
  // HttpArena's pipeline 16 (gcannon -p 16): 16 frames in one write, the 16 echoes awaited.
  {
    id: "echo-ws-pipeline",
    title: 'pipelined echo: 16 "hello" frames per write on every connection, then their 16 echoes',
    mode: "echo",
    path: "/echo",
    connections: 512,
    args: ["-pipeline", "16"],
  },
  // HttpArena's 10 requests per connection (gcannon -r 10): the upgrade handshake is a tenth of the work.
  {
    id: "echo-ws-limited",
    title: "short-lived echo: 10 echoes per connection, then it is closed and a new one upgraded",
    mode: "echo",
    path: "/echo",
    connections: 512,
    args: ["-per-conn", "10"],
  },
  { id: "fanout", title: "fan-out: one publisher, 1,000 subscribers of one topic", mode: "fanout", path: "/fanout", connections: 1000 },
];

/** Contenders: [name, file, runtime ("node" | "bun"), env]; cog-redis is two cog processes sharing a Redis (fanout only). */
export const WEBSOCKET_CONTENDERS = [
  { name: "cog", file: "cog.mjs", env: { COG_ENGINE: "node" } },
  { name: "cog-native", file: "cog.mjs", env: { COG_ENGINE: "native" } },
  { name: "uws", file: "uws.mjs" },
  { name: "hyper-express", file: "hyper-express.mjs" },
  { name: "ws", file: "ws.mjs" },
  { name: "bun", file: "bun.mjs", runtime: "bun" },
  { name: "cog-redis", file: "cog.mjs", env: { COG_ENGINE: "native" }, processes: 2, scenarios: ["fanout"] },
];

/** The load generator (Go), built on first use and rebuilt when its source changes; throws why it can't be built. */
export const loadGenerator = () => goTool("ws-load");

/** Checks a contender before timing it: /echo echoes, and /fanout delivers one socket's message to another. */
export async function checkWebSocket(port) {
  const open = (path) =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
      ws.once("open", () => resolve(ws));
      ws.once("error", reject);
    });
  const next = (ws) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no message within 2 s")), 2000);
      ws.once("message", (data) => {
        clearTimeout(timer);
        resolve(data.toString());
      });
    });
  const echo = await open("/echo");
  echo.send("hello");
  const back = await next(echo);
  echo.close();
  if (back !== "hello") throw new Error(`/echo answered ${JSON.stringify(back)}`);
  const [a, b] = [await open("/fanout"), await open("/fanout")];
  await new Promise((resolve) => setTimeout(resolve, 100));
  const got = next(b);
  a.send("published");
  const message = await got;
  a.close();
  b.close();
  if (message !== "published") throw new Error(`/fanout delivered ${JSON.stringify(message)}`);
}

/** Starts redis-server for cog-redis on a free port, or returns why not. */
async function startRedis() {
  const binary = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find(existsSync);
  if (binary === undefined) return { reason: "redis-server is not installed" };
  const port = await freePort();
  const child = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: ["ignore", "pipe", "ignore"] });
  await new Promise((resolve, reject) => {
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes("Ready to accept connections")) resolve();
    });
    child.once("exit", () => reject(new Error("redis-server exited")));
  });
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill("SIGTERM") };
}

/**
 * Runs the WebSocket scenarios; returns the rows measured and the contenders skipped (with why).
 * `settings`: { rounds, duration, warmup, connections, pinning, nodePath, bunBinary }.
 */
export async function runWebSocketBench(scenarios, names, settings) {
  const generator = loadGenerator();
  const wanted = WEBSOCKET_CONTENDERS.filter((c) => names === null || names.includes(c.name));
  const running = [];
  const skipped = [];
  let redis = null;
  for (const contender of wanted) {
    const runtime = contender.runtime === "bun" ? settings.bunBinary() : { path: settings.nodePath };
    if (runtime.path === null) {
      skipped.push({ name: contender.name, reason: runtime.reason });
      continue;
    }
    const env = { ...contender.env };
    if (contender.processes > 1) {
      redis ??= await startRedis().catch((err) => ({ reason: err.message }));
      if (redis.url === undefined) {
        skipped.push({ name: contender.name, reason: redis.reason });
        continue;
      }
      env.COG_REDIS_URL = redis.url;
    }
    const servers = [];
    try {
      for (let i = 0; i < (contender.processes ?? 1); i++) {
        servers.push(
          await startServer({
            runtime: runtime.path,
            file: join(root, "bench", "contenders", "websocket", contender.file),
            port: await freePort(),
            cpu: settings.pinning ? "0" : null,
            env,
          }),
        );
        await checkWebSocket(servers.at(-1).port);
      }
      running.push({ contender, servers });
      console.log(`  ok   ${contender.name} (WebSocket) passes the check`);
    } catch (err) {
      for (const server of servers) await server.stop();
      skipped.push({ name: contender.name, reason: err.message.split("\n")[0] });
      console.log(`  skip ${contender.name} (WebSocket): ${err.message.split("\n")[0]}`);
    }
  }
  const rows = [];
  try {
    for (const scenario of scenarios) {
      const servers = running.filter(({ contender }) => contender.scenarios === undefined || contender.scenarios.includes(scenario.id));
      for (let round = settings.warmup > 0 ? 0 : 1; round <= settings.rounds; round++) {
        for (const entry of rotate(servers, round)) {
          const { contender } = entry;
          const [first, second] = entry.servers;
          const args = [
            "-mode",
            scenario.mode,
            "-url",
            `ws://127.0.0.1:${first.port}${scenario.path}`,
            "-c",
            String(settings.connections ?? scenario.connections),
            "-d",
            `${round === 0 ? settings.warmup : settings.duration}s`,
            ...(scenario.args ?? []),
          ];
          if (second !== undefined) args.push("-url2", `ws://127.0.0.1:${second.port}${scenario.path}`);
          const cpuBefore = entry.servers.map((s) => cpuSeconds(s.pid));
          const result = await runLoad(generator, args, settings.pinning);
          const cpu = entry.servers.reduce((sum, s, i) => sum + (cpuSeconds(s.pid) - cpuBefore[i]), 0);
          const label = `${scenario.id} ${contender.name} ${round === 0 ? "warm-up" : `round ${round}/${settings.rounds}`}`;
          if (result.error !== undefined) {
            console.log(`  ${label}: failed: ${result.error}`);
            continue;
          }
          console.log(
            `  ${label}: ${Math.round(result.rate).toLocaleString("en-US")} msg/s, p99 ${result.p99_us} µs, ${result.errors} errors${result.reconnects > 0 ? `, ${result.reconnects.toLocaleString("en-US")} reconnects` : ""}`,
          );
          if (round > 0)
            rows.push({
              scenario: scenario.id,
              contender: contender.name,
              rate: result.rate,
              p50: result.p50_us,
              p99: result.p99_us,
              errors: result.errors,
              reconnects: result.reconnects,
              cpuPerMessageUs: result.messages > 0 ? (cpu * 1e6) / result.messages : null,
            });
        }
      }
    }
  } finally {
    for (const { servers } of running) for (const server of servers) await server.stop();
    redis?.stop?.();
  }
  return { rows, skipped };
}

function runLoad(generator, args, pinning) {
  return new Promise((resolve) => {
    const [command, argv] = pin(pinning ? "1" : null, generator, args);
    const child = spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err += c));
    child.on("exit", (code) => resolve(code === 0 ? JSON.parse(out) : { error: err.trim() || `exit ${code}` }));
  });
}

/** The report's section: medians per scenario and contender, with the ratio to bare uWS. */
export function webSocketReport({ rows, skipped }) {
  const lines = ["## WebSockets", ""];
  for (const scenario of WEBSOCKET_SCENARIOS) {
    const mine = rows.filter((r) => r.scenario === scenario.id);
    if (mine.length === 0) continue;
    const names = [...new Set(mine.map((r) => r.contender))];
    const summary = names.map((name) => {
      const of = mine.filter((r) => r.contender === name);
      return {
        name,
        rate: median(of.map((r) => r.rate)),
        p99: median(of.map((r) => r.p99)),
        cpu: median(of.map((r) => r.cpuPerMessageUs ?? 0)),
        errors: of.reduce((n, r) => n + r.errors, 0),
        reconnects: median(of.map((r) => r.reconnects ?? 0)),
      };
    });
    const uws = summary.find((s) => s.name === "uws")?.rate;
    // echo-ws-limited: the connections opened (and upgraded) after the first ones.
    const reconnecting = summary.some((s) => s.reconnects > 0);
    lines.push(
      `### ${scenario.id}: ${scenario.title}`,
      "",
      `| contender | msg/s (median) | × bare uWS | p99 µs | server CPU µs/msg | errors |${reconnecting ? " new connections (median) |" : ""}`,
      `| -- | --: | --: | --: | --: | --: |${reconnecting ? " --: |" : ""}`,
    );
    for (const s of summary.sort((a, b) => b.rate - a.rate)) {
      lines.push(
        `| ${s.name} | ${Math.round(s.rate).toLocaleString("en-US")} | ${uws ? (s.rate / uws).toFixed(2) : "-"} | ${s.p99} | ${s.cpu.toFixed(2)} | ${s.errors} |${reconnecting ? ` ${Math.round(s.reconnects).toLocaleString("en-US")} |` : ""}`,
      );
    }
    lines.push("");
  }
  for (const s of skipped) lines.push(`- skipped ${s.name}: ${s.reason}`);
  return lines.join("\n");
}
