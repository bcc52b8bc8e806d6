// The arena's gRPC scenarios, HttpArena's unary-grpc and stream-grpc (its
// site/content/docs/test-profiles/grpc and scripts/lib/tools/{h2load,ghz}.sh), over h2c on the
// contender's one port, connection counts scaled to a 2-core machine:
//   unary-grpc   POST /benchmark.BenchmarkService/GetSum with HttpArena's 9-byte frame (SumRequest
//                {a: 1, b: 2}), h2load with 100 streams per connection; the figure is calls/s
//   stream-grpc  StreamSum {a: 1, b: 2, count: 5000} from ghz, 4 streams per connection; the
//                figure is messages/s (calls/s x 5,000), as HttpArena scores it. A run is a
//                number of calls, not a time (HttpArena's is 5 s): in a timed run the calls still
//                streaming at its end (up to 16, against some tens finished by a slow server)
//                cost the server CPU their messages are not counted for

// Contenders: examples/arena.ts on each engine (cog-http/connect; gRPC beside HTTP/1.1 on its port,
// as HttpArena's entries serve it), Connect's handler on bare node:http2 and @grpc/grpc-js's own
// server (bench/grpc/server.mjs). Each is checked first with HttpArena's checks of both profiles
// (bench/arena/contract.mjs: h2load counts HTTP statuses, not grpc-status). Server on the server
// core, the load on the other; a warm-up run, contenders interleaved over rounds; medians, and the
// server's CPU time per call or message (/proc).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { streamGrpc, unaryGrpc } from "../arena/contract.mjs";
import { frame } from "../grpc/frames.mjs";
import { measure } from "./load.mjs";
import { cpuSeconds, pin } from "./proc.mjs";
import { median } from "./report.mjs";
import { rotate } from "./rounds.mjs";
import { startServer } from "./server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const PROTO = join(root, "bench", "grpc", "benchmark.proto");

export const GRPC_SCENARIOS = [
  {
    id: "unary-grpc",
    title: "unary gRPC: GetSum over h2c",
    sends: "POST /benchmark.BenchmarkService/GetSum, HttpArena's frame (a 1, b 2), h2load: 4 connections x 100 streams",
    tool: "h2load",
    path: "/benchmark.BenchmarkService/GetSum",
    body: frame([1, 2]),
    connections: 4,
    streams: 100,
    messagesPerCall: 1,
  },
  {
    id: "stream-grpc",
    title: "server-streaming gRPC: StreamSum, 5,000 replies a call, over h2c",
    sends: "StreamSum {a: 1, b: 2, count: 5000}, ghz: 4 connections x 4 calls in flight, 64 calls a run (5 s a run in HttpArena)",
    tool: "ghz",
    connections: 4,
    streams: 4,
    messagesPerCall: 5000,
    callsPerRun: 64,
  },
];
// HttpArena's own request file for unary-grpc (requests/grpc-sum.bin): the frame above must be it.
if (!GRPC_SCENARIOS[0].body.equals(Buffer.from("000000000408011002", "hex"))) throw new Error("unary-grpc's frame is not HttpArena's grpc-sum.bin");

/** Who answers: a file run by node through tsx, with its environment. */
export const GRPC_CONTENDERS = [
  {
    name: "cog-native",
    file: "examples/arena.ts",
    env: { COG_ENGINE: "native" },
    about: "examples/arena.ts on the native engine: cog-http/connect, h2c beside HTTP/1.1",
  },
  { name: "cog", file: "examples/arena.ts", env: { COG_ENGINE: "node" }, about: "examples/arena.ts on the node engine: cog-http/connect, h2c beside HTTP/1.1" },
  { name: "connect", file: "bench/grpc/server.mjs", env: { GRPC_SERVER: "connect" }, about: "Connect's Node handler on bare node:http2 (h2c)" },
  { name: "grpc-js", file: "bench/grpc/server.mjs", env: { GRPC_SERVER: "grpc-js" }, about: "@grpc/grpc-js's own server (h2c)" },
];

/**
 * ghz, as HttpArena loads stream-grpc: GHZ names it, else `ghz` on the PATH, else the one built
 * from the Go module proxy into .cache/ on first use. Returns its path, or why there is none.
 */
export function ghzBinary() {
  const found = (path) => {
    try {
      execFileSync(path, ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  if (process.env.GHZ) return found(process.env.GHZ) ? { path: process.env.GHZ } : { reason: `GHZ=${process.env.GHZ} does not run` };
  if (found("ghz")) return { path: "ghz" };
  const built = join(root, ".cache", "ghz");
  if (!existsSync(built)) {
    mkdirSync(dirname(built), { recursive: true });
    try {
      execFileSync("go", ["install", "github.com/bojand/ghz/cmd/ghz@v0.120.0"], {
        env: { ...process.env, GOBIN: dirname(built) },
        stdio: ["ignore", "ignore", "pipe"],
      });
    } catch (err) {
      return {
        reason: `ghz could not be built (go install github.com/bojand/ghz/cmd/ghz@v0.120.0): ${String(err.stderr ?? err.message)
          .trim()
          .split("\n")
          .at(-1)}`,
      };
    }
  }
  return { path: built };
}

/**
 * stream-grpc as HttpArena runs it (scripts/lib/tools/ghz.sh), but for a number of calls (a
 * warm-up, a quarter of them): the calls that ended OK, the others, and the run's seconds.
 */
function ghzLoad(ghz, port, scenario, warmUp, pinning) {
  const args = [
    "--insecure",
    "--proto",
    PROTO,
    "--call",
    "benchmark.BenchmarkService/StreamSum",
    "-d",
    JSON.stringify({ a: 1, b: 2, count: scenario.messagesPerCall }),
    "--connections",
    String(scenario.connections),
    "-c",
    String(scenario.connections * scenario.streams),
    "-n",
    String(warmUp ? scenario.callsPerRun / 4 : scenario.callsPerRun),
    "-O",
    "json",
    `127.0.0.1:${port}`,
  ];
  const report = JSON.parse(execFileSync(...pin(pinning ? "1" : null, ghz, args), { encoding: "utf8", maxBuffer: 64 << 20 }));
  const ok = report.statusCodeDistribution?.OK ?? 0;
  return { calls: ok, failed: report.count - ok, seconds: report.total / 1e9 };
}

/** One run: calls completed and failed, and its seconds. */
async function load(scenario, port, seconds, tools, pinning, warmUp) {
  if (scenario.tool === "ghz") return ghzLoad(tools.ghz, port, scenario, warmUp, pinning);
  const r = await measure({
    tool: "h2load",
    url: `http://127.0.0.1:${port}${scenario.path}`,
    method: "POST",
    headers: { "content-type": "application/grpc", te: "trailers" },
    body: scenario.body,
    connections: scenario.connections,
    streams: scenario.streams,
    duration: seconds,
    cpu: pinning ? "1" : null,
  });
  return { calls: r.requests, failed: r.errors + r.timeouts + r.statuses["non-2xx/3xx"], seconds };
}

/**
 * Runs `scenarios` (of GRPC_SCENARIOS) against the contenders `names` allows (null: all);
 * `settings`: rounds, duration, warmup (s), pinning, nodePath. Resolves the rows (one per run)
 * and the contenders or scenarios skipped, with why.
 */
export async function runGrpcBench(scenarios, names, settings) {
  const skipped = [];
  const tools = {};
  if (scenarios.some((s) => s.tool === "ghz")) {
    const ghz = ghzBinary();
    if (ghz.path) tools.ghz = ghz.path;
    else {
      skipped.push({ name: "stream-grpc", reason: ghz.reason });
      scenarios = scenarios.filter((s) => s.tool !== "ghz");
    }
  }
  const running = [];
  for (const contender of GRPC_CONTENDERS.filter((c) => names === null || names.includes(c.name))) {
    try {
      const server = await startServer({
        runtime: settings.nodePath,
        args: ["--import", "tsx"],
        file: join(root, contender.file),
        cpu: settings.pinning ? "0" : null,
        env: contender.env,
        cwd: root,
      });
      const problems = [];
      await unaryGrpc(server.port, false, problems);
      await streamGrpc(server.port, false, problems);
      if (problems.length > 0) {
        await server.stop();
        throw new Error(`fails HttpArena's gRPC checks: ${problems.join("; ")}`);
      }
      running.push({ contender, server });
      console.log(`  ok   ${contender.name} (gRPC) passes HttpArena's unary-grpc and stream-grpc checks`);
    } catch (err) {
      skipped.push({ name: contender.name, reason: err.message.split("\n")[0] });
      console.log(`  skip ${contender.name} (gRPC): ${err.message.split("\n")[0]}`);
    }
  }
  const rows = [];
  try {
    for (const scenario of scenarios) {
      for (let round = settings.warmup > 0 ? 0 : 1; round <= settings.rounds; round++) {
        for (const { contender, server } of rotate(running, round)) {
          const seconds = round === 0 ? settings.warmup : settings.duration;
          const label = `${scenario.id} ${contender.name} ${round === 0 ? "warm-up" : `round ${round}/${settings.rounds}`}`;
          const before = cpuSeconds(server.pid);
          let result;
          try {
            result = await load(scenario, server.port, seconds, tools, settings.pinning, round === 0);
          } catch (err) {
            // A run in which no call finished (a server far slower than the others, on a loaded
            // machine) is said so and counted as none, rather than ending the bench.
            console.log(`  ${label}: failed: ${err.message.split("\n")[0]}`);
            continue;
          }
          const cpu = cpuSeconds(server.pid) - before;
          const messages = result.calls * scenario.messagesPerCall;
          console.log(`  ${label}: ${Math.round(messages / result.seconds).toLocaleString("en-US")} ${unitOf(scenario)}s/s, ${result.failed} failed`);
          if (round > 0)
            rows.push({
              scenario: scenario.id,
              contender: contender.name,
              perSecond: messages / result.seconds,
              cpuUs: messages > 0 ? (cpu * 1e6) / messages : null,
              failed: result.failed,
            });
        }
      }
    }
  } finally {
    for (const { server } of running) await server.stop();
  }
  return { rows, skipped, contenders: running.map(({ contender }) => contender) };
}

const unitOf = (scenario) => (scenario.messagesPerCall === 1 ? "call" : "message");

/** The report's section: per scenario, each contender's medians, CPU per call (or message) beside the rate, and its ratio to cog-native's. */
export function grpcReport({ rows, skipped, contenders }) {
  const out = ["## gRPC (HttpArena's unary-grpc and stream-grpc, h2c)", ""];
  for (const scenario of GRPC_SCENARIOS) {
    const mine = rows.filter((r) => r.scenario === scenario.id);
    if (mine.length === 0) continue;
    const unit = unitOf(scenario);
    out.push(`### ${scenario.id}: ${scenario.title}`, "", scenario.sends, "");
    out.push(`| contender | ${unit}s/s (median) | server CPU per ${unit} (median) | vs cog-native | failed |`, "| -- | --: | --: | --: | --: |");
    const cpuOf = (name) => {
      const values = mine.filter((r) => r.contender === name && r.cpuUs !== null).map((r) => r.cpuUs);
      return values.length > 0 ? median(values) : null;
    };
    const base = cpuOf("cog-native");
    for (const contender of contenders) {
      const runs = mine.filter((r) => r.contender === contender.name);
      if (runs.length === 0) continue;
      const cpu = cpuOf(contender.name);
      const rate = Math.round(median(runs.map((r) => r.perSecond))).toLocaleString("en-US");
      const ratio = cpu !== null && base ? `x${(cpu / base).toFixed(2)}` : "";
      const failed = runs.reduce((n, r) => n + r.failed, 0);
      out.push(`| ${contender.name} | ${rate} | ${cpu === null ? "" : `${cpu.toFixed(2)} µs`} | ${ratio} | ${failed} |`);
    }
    out.push("");
  }
  out.push(...contenders.map((c) => `- **${c.name}**: ${c.about}`));
  for (const { name, reason } of skipped) out.push(`- skipped **${name}**: ${reason}`);
  return out.join("\n");
}
