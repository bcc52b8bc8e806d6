// Who is measured. Each contender is one server file in bench/contenders/ that
// implements the route contract (lib/contract.mjs); `engine` names the bare
// server it is compared with, which does the same work by hand (or `baseline`
// names another one); `capabilities`
// names the optional parts of the contract it implements (scenarios that need
// one are run only with those contenders).

export const CONTENDERS = [
  {
    name: "node-http",
    engine: "node",
    capabilities: ["validation"],
    file: "node-http.mjs",
    bare: true,
    about: "bare node:http, hand-written: the ceiling on this engine; ajv for validation",
  },
  { name: "cog", engine: "node", capabilities: ["validation"], file: "cog.mjs", about: "this repo (dist/), the seed's app; route schemas for validation" },
  {
    name: "fastify",
    engine: "node",
    capabilities: ["validation"],
    file: "fastify.mjs",
    package: "fastify",
    about: "with @fastify/cookie; its own ajv + fast-json-stringify for validation",
  },
  {
    name: "hono",
    engine: "node",
    capabilities: ["validation"],
    file: "hono.mjs",
    package: "hono",
    about: "on @hono/node-server; @hono/zod-validator for validation",
  },
  {
    name: "express",
    engine: "node",
    capabilities: ["validation"],
    file: "express.mjs",
    package: "express",
    about: "with cookie-parser and express.json; zod for validation",
  },
  {
    name: "express-cog",
    engine: "node",
    capabilities: ["validation"],
    file: "express-cog.mjs",
    about: "this repo (dist/express/): the same app as express, imported from cog-http/express, on Cog's node engine",
  },
  { name: "koa", engine: "node", file: "koa.mjs", package: "koa", about: "with @koa/router and @koa/bodyparser" },
  { name: "h3", engine: "node", file: "h3.mjs", package: "h3", about: "on srvx (node:http)" },
  { name: "polka", engine: "node", file: "polka.mjs", package: "polka", about: "with body-parser" },
  {
    name: "uws",
    engine: "uws",
    file: "uws.mjs",
    bare: true,
    package: "uWebSockets.js",
    about: "bare uWebSockets.js, hand-written: the ceiling on this engine",
  },
  {
    name: "uws-reads",
    engine: "uws",
    file: "uws-reads.mjs",
    package: "uWebSockets.js",
    about: "bare uWebSockets.js that also reads each request's URL, query and headers, as any framework on it must: the ceiling for frameworks on this engine",
  },
  {
    name: "cog-native",
    engine: "native",
    baseline: "uws",
    file: "cog-native.mjs",
    about: 'this repo (dist/), the same app as cog with engine: "native" (Cog\'s Rust engine); compared with bare uWebSockets.js, the speed it aims at',
  },
  {
    name: "express-cog-native",
    engine: "native",
    baseline: "uws",
    capabilities: ["validation"],
    file: "express-cog-native.mjs",
    about: 'this repo (dist/express/): the same app as express, imported from cog-http/express, with express({ engine: "native" })',
  },
  { name: "hyper-express", engine: "uws", file: "hyper-express.mjs", package: "hyper-express", about: "on uWebSockets.js" },
  { name: "ultimate-express", engine: "uws", file: "ultimate-express.mjs", package: "ultimate-express", about: "Express API on uWebSockets.js" },
  { name: "bun", engine: "bun", runtime: "bun", file: "bun.mjs", bare: true, about: "bare Bun.serve, hand-written" },
  { name: "hono-bun", engine: "bun", runtime: "bun", file: "hono-bun.mjs", package: "hono", about: "Hono on Bun.serve" },
  { name: "elysia-bun", engine: "bun", runtime: "bun", file: "elysia-bun.mjs", package: "elysia", about: "Elysia on Bun" },
];

export function contenderByName(name) {
  const found = CONTENDERS.find((c) => c.name === name);
  if (!found) throw new Error(`Unknown contender "${name}"; known: ${CONTENDERS.map((c) => c.name).join(", ")}`);
  return found;
}

/** The bare server a contender's `× bare` divides by: its `baseline`, or the bare server of its engine. */
export function baselineOf(contender) {
  return contender.baseline ?? CONTENDERS.find((c) => c.bare && c.engine === contender.engine)?.name ?? null;
}
