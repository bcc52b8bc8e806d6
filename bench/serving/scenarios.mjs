// The serving scenarios, after HttpArena's: the same small answers over TLS, HTTP/2, cleartext
// HTTP/2 and HTTP/3, and the same app on 1 and 2 worker processes. Every contender answers GET / and
// GET /json alike (checked before timing, over the scenario's protocol: ./check.mjs).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { STATIC_ACCEPT } from "../arena/contract.mjs";
import { STATIC_FILES, staticDir } from "../arena/static-files.mjs";

export const HELLO = "Hello, World!";
export const HELLO_JSON = JSON.stringify({ message: HELLO });

const ANSWERS = {
  "/": { type: /^text\/plain/, body: () => HELLO },
  "/json": { type: /^application\/json/, json: { message: HELLO } },
  "/static/reset.css": { type: /^text\/css/, body: () => readFileSync(join(staticDir(), "reset.css"), "utf8") },
  "/baseline2?a=1&b=1": { type: /^text\/plain/, body: () => "2" },
};

/** The arena's 20 static files (bench/arena/static-files.mjs, HttpArena's names and sizes), which static-h2 and static-h3 ask for in turn. */
const STATIC_PATHS = STATIC_FILES.map((f) => `/static/${f.name}`);

/**
 * `protocol`: http (HTTP/1.1), tls (HTTPS/1.1), h2 (HTTP/2 over TLS, ALPN), h2c (cleartext,
 * prior knowledge) or h3 (HTTP/3 over QUIC, on the UDP port of the same number as the TLS one).
 * `tool`: the load generator (wrk speaks HTTP/1.1 with or without TLS, h2load HTTP/2, h3-load
 * HTTP/3); `streams`: h2load's and h3-load's concurrent streams per connection; `headers` go with
 * every request; `expectBody`: h3-load fails the run on any other body; `bare`: the bare server
 * every contender's `× bare` divides by in this scenario, when not its engine's; `parallel`: what each load
 * generator asks for, when not `path` alone (static-h2: the files in turn, from STATIC_DIR, which
 * every contender serves under /static/). `workers`: the scenario runs
 * each contender that can with that many processes each, unpinned (they need both cores).
 */
export const SERVING_SCENARIOS = [
  {
    id: "json-tls",
    title: "JSON over HTTPS/1.1",
    protocol: "tls",
    path: "/json",
    tool: "wrk",
    connections: 50,
    sends: "GET /json over HTTP/1.1 with TLS (wrk, keep-alive)",
  },
  {
    id: "baseline-h2",
    title: "Plain text over HTTP/2 with TLS",
    protocol: "h2",
    path: "/",
    tool: "h2load",
    connections: 50,
    streams: 10,
    sends: "GET / over HTTP/2 with TLS, ALPN h2 (h2load)",
  },
  {
    id: "json-h2c",
    title: "JSON over cleartext HTTP/2",
    protocol: "h2c",
    path: "/json",
    tool: "h2load",
    connections: 50,
    streams: 10,
    sends: "GET /json over cleartext HTTP/2 with prior knowledge (h2load)",
  },
  {
    id: "static-h2",
    title: "Static files over HTTP/2 with TLS",
    protocol: "h2",
    path: "/static/reset.css",
    tool: "h2load",
    connections: 50,
    streams: 10,
    parallel: () => [{ paths: STATIC_PATHS }],
    sends:
      "GET the arena's 20 static files (3-300 KB, about 840 KB in all) in turn over HTTP/2 with TLS, ALPN h2 (h2load -i), each server reading them from disk",
  },
  // HttpArena's HTTP/3 profiles, with its URLs, 64 connections and 64 streams each (its
  // scripts/lib/tools/h2load-h3.sh), timed by bench/h3-load (quic-go) where HttpArena has h2load
  // built with ngtcp2 (Debian's has no HTTP/3). h3-load checks every answer (status, length, and
  // baseline-h3's body) and fails the run on a wrong one. Its Go client costs several times the
  // server's CPU per request, so CPU per request is the figure to compare, not requests/s.
  {
    id: "baseline-h3",
    title: "Plain text over HTTP/3",
    protocol: "h3",
    path: "/baseline2?a=1&b=1",
    tool: "h3-load",
    connections: 64,
    streams: 64,
    expectBody: "2",
    // Bun.serve is the one bare HTTP/3 server here (node:http2 and uWebSockets.js have none).
    bare: "bun",
    sends: 'GET /baseline2?a=1&b=1 over HTTP/3 (bench/h3-load on quic-go; every answer must be 200 "2")',
  },
  {
    id: "static-h3",
    title: "Static files over HTTP/3",
    protocol: "h3",
    path: "/static/reset.css",
    tool: "h3-load",
    connections: 64,
    streams: 64,
    headers: { "accept-encoding": STATIC_ACCEPT },
    bare: "bun",
    parallel: () => [{ paths: STATIC_PATHS }],
    sends: `GET the arena's 20 static files in turn over HTTP/3 with Accept-Encoding: ${STATIC_ACCEPT} (bench/h3-load -i; precompressed variants where the server has them, every answer a 200 as long as its Content-Length)`,
  },
  {
    id: "workers",
    title: "JSON over HTTP/1.1 from 1 and 2 worker processes",
    protocol: "http",
    path: "/json",
    tool: "wrk",
    connections: 50,
    workers: [1, 2],
    sends: "GET /json over HTTP/1.1 (wrk) to each contender run with 1, then 2 worker processes on one port; servers and wrk share both cores",
  },
];

/** One route per scenario (`serving-<scenario>`), in the shape of the contract's (bench/lib/contract.mjs). */
export const SERVING_ROUTES = SERVING_SCENARIOS.map((s) => ({
  id: `serving-${s.id}`,
  method: "GET",
  path: s.path,
  headers: s.headers ?? {},
  status: 200,
  ...ANSWERS[s.path],
}));

/** The tools a run of these scenarios needs, each with how to install it. */
export function servingTools(scenarios) {
  const tools = new Map();
  for (const s of scenarios) {
    if (s.tool === "wrk") tools.set("wrk", "apt-get install wrk");
    if (s.tool === "h2load") tools.set("h2load", "apt-get install nghttp2-client");
    if (s.tool === "h3-load") tools.set("go", "Go 1.22 or later, https://go.dev/dl/ (bench/h3-load is built with it)");
    if (s.protocol === "tls" || s.protocol === "h2" || s.protocol === "h3") tools.set("openssl", "apt-get install openssl");
  }
  return tools;
}
