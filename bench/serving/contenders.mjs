// Who runs the serving scenarios: one server file each in this folder, given the protocol in
// PROTO (and WORKERS for the workers scenario). `unable` names the scenarios a contender cannot
// run, with why: they are listed in the report, not dropped. `baseline` or the bare server of its
// `engine` is what `× bare` divides by, as in the seeds' bench (bench/lib/contenders.mjs).

const NO_HTTP2 = "uWebSockets.js has no HTTP/2";
/** baseline-h3 and static-h3 are for the servers that speak HTTP/3: Cog's native engine and Bun. */
const noHttp3 = (why) => ({ "baseline-h3": why, "static-h3": why });

export const SERVING_CONTENDERS = [
  {
    name: "node-http",
    engine: "node",
    bare: true,
    file: "node-http.mjs",
    unable: noHttp3("node:http2 and node:https have no HTTP/3"),
    about: "bare node:https / node:http2 / node:http, hand-written (node:cluster for workers): the ceiling on Node",
  },
  {
    name: "cog",
    engine: "node",
    file: "cog.mjs",
    env: { ENGINE: "node" },
    unable: noHttp3("HTTP/3 is the native engine's (listen({ http3: true }) on the node engine is refused)"),
    about: "this repo (dist/): `tls`, `http2`, `listen({ workers })`",
  },
  {
    name: "cog-native",
    engine: "native",
    baseline: "uws",
    file: "cog.mjs",
    env: { ENGINE: "native" },
    about: "the same app on Cog's native engine; `listen({ http3: true })` for HTTP/3",
  },
  {
    name: "fastify",
    engine: "node",
    file: "fastify.mjs",
    package: "fastify",
    unable: noHttp3("Fastify runs on node:http2 and node:https, which have no HTTP/3"),
    about: "its `https` and `http2` options (node:cluster for workers)",
  },
  {
    name: "uws",
    engine: "uws",
    bare: true,
    file: "uws.mjs",
    package: "uWebSockets.js",
    unable: { "baseline-h2": NO_HTTP2, "json-h2c": NO_HTTP2, "static-h2": NO_HTTP2, ...noHttp3("uWebSockets.js's npm build serves no HTTP/3") },
    about: "bare uWebSockets.js (SSLApp for TLS; node:cluster workers on SO_REUSEPORT): the ceiling Cog's native engine aims at",
  },
  {
    name: "ultimate-express",
    engine: "uws",
    file: "ultimate-express.mjs",
    package: "ultimate-express",
    unable: { "baseline-h2": NO_HTTP2, "json-h2c": NO_HTTP2, "static-h2": NO_HTTP2, ...noHttp3("uWebSockets.js's npm build serves no HTTP/3") },
    about: "the Express API on uWebSockets.js (uwsOptions key_file_name/cert_file_name for TLS; node:cluster workers on SO_REUSEPORT)",
  },
  {
    name: "bun",
    engine: "bun",
    bare: true,
    runtime: "bun",
    file: "bun.mjs",
    about:
      "Bun.serve (its `tls`) for HTTP/1.1 and, with `http3: true`, HTTP/3; node:http2 under Bun for h2 and h2c (Bun.serve has no HTTP/2); node:cluster workers on SO_REUSEPORT",
  },
];

/**
 * What runs in a scenario: each contender as it is, or, in a scenario with `workers`, once per
 * worker count (`cog (2 workers)`), each compared with its own single worker.
 */
export function servingEntries(scenario, contenders) {
  if (scenario.workers === undefined) return contenders;
  const label = (c, n) => `${c.name} (${n} worker${n === 1 ? "" : "s"})`;
  return contenders.flatMap((c) =>
    scenario.workers.map((n) => ({ ...c, name: label(c, n), family: c.name, workers: n, baseline: label(c, scenario.workers[0]) })),
  );
}
