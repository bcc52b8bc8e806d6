// Who runs the arena. Each contender is a server file (node runs it through tsx, so
// it can share examples/arena-store.ts; nginx runs from a shell script) that serves
// the arena's routes; `unable` names the scenarios it cannot run, with why — they are
// listed in the report, not dropped. Before timing, each contender must pass the
// checks (bench/arena/contract.mjs) of every scenario it runs.

const COG_NOT_YET = {
  static: "not yet: serveStatic (branch files) has not landed",
  "json-comp": "not yet: compress() (branch files) has not landed",
  upload: 'not yet: the route option body: "stream" (branch bodies) has not landed',
};

export const ARENA_CONTENDERS = [
  { name: "cog", engine: "node", file: "examples/arena.ts", env: { COG_ENGINE: "node" }, unable: COG_NOT_YET, about: "examples/arena.ts on the node engine (this repo's dist/)" },
  { name: "cog-native", engine: "native", file: "examples/arena.ts", env: { COG_ENGINE: "native" }, unable: COG_NOT_YET, about: "examples/arena.ts on Cog's native engine" },
  { name: "node-http", engine: "node", bare: true, file: "bench/arena/contenders/node-http.mjs", unable: { static: "a ceiling for static is nginx's to set" }, about: "bare node:http, hand-written (fast-querystring, ajv, node:zlib gzip): the ceiling on Node" },
  { name: "fastify", engine: "node", file: "bench/arena/contenders/fastify.mjs", package: "fastify", unable: {}, about: "with @fastify/static (preCompressed), @fastify/compress, its ajv schemas" },
  { name: "hono", engine: "node", file: "bench/arena/contenders/hono.mjs", package: "hono", unable: {}, about: "on @hono/node-server: serveStatic (precompressed), hono/compress (gzip/deflate), @hono/zod-validator" },
  { name: "express", engine: "node", file: "bench/arena/contenders/express.mjs", package: "express", unable: {}, about: "express.static (no precompressed variants), compression, express.json/text, zod" },
  { name: "ultimate-express", engine: "uws", file: "bench/arena/contenders/ultimate-express.mjs", package: "ultimate-express", unable: {}, about: "the Express app above on uWebSockets.js" },
  { name: "hyper-express", engine: "uws", file: "bench/arena/contenders/hyper-express.mjs", package: "hyper-express", unable: { static: "HyperExpress has no static file handler", "json-comp": "HyperExpress has no compression middleware" }, about: "on uWebSockets.js; zod" },
  { name: "nginx", engine: "nginx", runtime: "sh", file: "bench/arena/contenders/nginx.sh", only: ["static"], about: "Debian's nginx, one process, sendfile, gzip_static on: the ceiling for static" },
  { name: "elysia-bun", engine: "bun", runtime: "bun", file: "bench/arena/contenders/elysia-bun.mjs", package: "elysia", unable: { static: "@elysiajs/static is not installed here", "json-comp": "Elysia has no compression of its own" }, about: "Elysia on Bun: its t schemas, the request body stream for uploads" },
];

/** Why a contender cannot run a scenario, or undefined when it can. */
export function unableReason(contender, scenario) {
  if (scenario.notYet) return scenario.notYet;
  if (typeof contender.unable === "string") return contender.unable;
  if (contender.only && !contender.only.includes(scenario.id)) return `${contender.name} is a ceiling for ${contender.only.join(", ")} only`;
  return contender.unable?.[scenario.id];
}
