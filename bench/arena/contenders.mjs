// Who runs the arena. Each contender is a server file (node runs it through tsx, so
// it can share examples/arena-store.ts; nginx runs from a shell script) that serves
// the arena's routes; `unable` names the scenarios it cannot run, with why — they are
// listed in the report, not dropped. Before timing, each contender must pass the
// checks (bench/arena/contract.mjs) of every scenario it runs. `workers`: how it serves
// from worker processes (api-4, api-16): "own" (it reads WORKERS itself) or "cluster"
// (contenders/workers.mjs runs it under node:cluster); `stack`: its app has
// production-stack's routes; `delay`: its app serves GET /delay/:ms (async); `tls`: how it serves
// HTTP/1.1 over TLS (static-tls, 8gbit, echo-10k, echo-100k): "listener" (its app opens one on
// TLS_PORT beside PORT), or a server file of its own that serves POST /echo over TLS on PORT.

/** The fixed-rate scenarios and idle: the bare servers of other runtimes (uws, bun) run them too. */
const FIXED_RATE = ["latency-10k", "latency-1m", "latency-500k-8cpu", "idle"];
/** The TLS echo scenarios: bare TLS servers of their own (bench/arena/contenders/*-echo*.mjs) are their ceilings. */
const TLS_ECHO = ["8gbit", "echo-10k", "echo-100k"];

export const ARENA_CONTENDERS = [
  {
    name: "cog",
    engine: "node",
    file: "examples/arena.ts",
    env: { COG_ENGINE: "node" },
    workers: "own",
    stack: true,
    delay: true,
    tls: "listener",
    unable: {},
    about: "examples/arena.ts on the node engine (this repo's dist/)",
  },
  {
    name: "cog-native",
    engine: "native",
    file: "examples/arena.ts",
    env: { COG_ENGINE: "native" },
    workers: "own",
    stack: true,
    delay: true,
    tls: "listener",
    unable: {},
    about: "examples/arena.ts on Cog's native engine",
  },
  {
    name: "node-http",
    engine: "node",
    workers: "cluster",
    bare: true,
    file: "bench/arena/contenders/node-http.mjs",
    delay: true,
    tls: "bench/arena/contenders/https-echo.mjs",
    unable: { static: "a ceiling for static is nginx's to set", "static-tls": "a ceiling for static is nginx's to set" },
    about: "bare node:http, hand-written (fast-querystring, ajv, node:zlib gzip): the ceiling on Node",
  },
  {
    name: "fastify",
    engine: "node",
    workers: "cluster",
    file: "bench/arena/contenders/fastify.mjs",
    package: "fastify",
    delay: true,
    unable: {},
    about: "with @fastify/static (preCompressed), @fastify/compress, its ajv schemas",
  },
  {
    name: "hono",
    engine: "node",
    workers: "cluster",
    file: "bench/arena/contenders/hono.mjs",
    package: "hono",
    unable: {},
    about: "on @hono/node-server: serveStatic (precompressed), hono/compress (gzip/deflate), @hono/zod-validator",
  },
  {
    name: "express",
    engine: "node",
    workers: "cluster",
    file: "bench/arena/contenders/express.mjs",
    package: "express",
    unable: {},
    about: "express.static (no precompressed variants), compression, express.json/text, zod",
  },
  {
    name: "ultimate-express",
    engine: "uws",
    file: "bench/arena/contenders/ultimate-express.mjs",
    package: "ultimate-express",
    unable: {},
    about: "the Express app above on uWebSockets.js",
  },
  {
    name: "hyper-express",
    engine: "uws",
    file: "bench/arena/contenders/hyper-express.mjs",
    package: "hyper-express",
    unable: { static: "HyperExpress has no static file handler", "json-comp": "HyperExpress has no compression middleware" },
    about: "on uWebSockets.js; zod",
  },
  {
    name: "uws",
    engine: "uws",
    bare: true,
    file: "bench/arena/contenders/uws.mjs",
    package: "uWebSockets.js",
    delay: true,
    tls: "bench/arena/contenders/uws-echo-tls.mjs",
    only: ["upload", "async", ...FIXED_RATE, ...TLS_ECHO],
    about:
      "bare uWebSockets.js, hand-written (onData, the bytes counted; the baseline's GET and POST): the ceiling for upload and the fixed-rate scenarios on uWS.js",
  },
  {
    name: "nginx",
    engine: "nginx",
    runtime: "sh",
    file: "bench/arena/contenders/nginx.sh",
    only: ["static"],
    about: "Debian's nginx, one process, sendfile, gzip_static on: the ceiling for static",
  },
  {
    name: "bun",
    engine: "bun",
    runtime: "bun",
    bare: true,
    file: "bench/arena/contenders/bun.mjs",
    delay: true,
    only: ["async", ...FIXED_RATE],
    about: "bare Bun.serve, hand-written (the baseline's GET and POST): the ceiling for the fixed-rate scenarios on Bun",
  },
  {
    name: "elysia-bun",
    engine: "bun",
    runtime: "bun",
    file: "bench/arena/contenders/elysia-bun.mjs",
    package: "elysia",
    unable: { static: "@elysiajs/static is not installed here", "json-comp": "Elysia has no compression of its own" },
    about: "Elysia on Bun: its t schemas, the request body stream for uploads",
  },
];

const ONE_PROCESS = {
  uws: "its app runs one process: uWebSockets.js shares a port between processes only through SO_REUSEPORT, which its arena app does not set up",
  bun: "its app runs one process: Bun's workers (reusePort) are not set up in its arena app",
};

/** Why a contender cannot run a scenario, or undefined when it can. */
export function unableReason(contender, scenario) {
  if (typeof contender.unable === "string") return contender.unable;
  if (contender.only && !contender.only.includes(scenario.id)) return `${contender.name} is a ceiling for ${contender.only.join(", ")} only`;
  if (scenario.stack && !contender.stack) return "its arena app has no production-stack routes (/public/, /api/)";
  if (scenario.workers !== undefined && contender.workers === undefined) return ONE_PROCESS[contender.engine];
  if (scenario.needs === "delay" && !contender.delay) return "its arena app has no GET /delay/:ms route";
  if (scenario.needs === "tls" && contender.tls === undefined) return "its arena app serves no HTTP/1.1 over TLS";
  if (scenario.needs === "tls" && contender.tls !== "listener" && !TLS_ECHO.includes(scenario.id))
    return `its TLS server (${contender.tls}) serves POST /echo only`;
  return contender.unable?.[scenario.id];
}
