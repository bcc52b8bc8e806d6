// The arena's scenarios, after HttpArena's HTTP/1.1 test profiles, with
// connection counts scaled to a 2-core machine (one core serves, the other runs
// wrk, and Postgres where there is one). Each scenario is timed with wrk and a
// Lua script that rotates its requests; `lua` returns the script's body (the
// bench adds the part that reports the figures).
import { CATEGORIES, STATIC_ACCEPT } from "./contract.mjs";
import { JWT_SECRET, TOKEN_CLAIMS, signToken } from "./stack/authsvc.mjs";
import { STATIC_FILES, staticDir } from "./static-files.mjs";

const q = (s) => JSON.stringify(String(s));

/** A fixed-rate scenario's rate: `default`, or what ARENA_RATES says (`latency-10k=5000,latency-1m=20000`). */
export function rateOf(id, fallback, rates = process.env.ARENA_RATES ?? "") {
  for (const pair of rates.split(",")) {
    const [key, value] = pair.split("=").map((x) => x.trim());
    if (key === id && Number(value) > 0) return Number(value);
  }
  return fallback;
}
/** A script that builds `count` requests at start with `make` (a Lua function body returning request n) and sends them in rotation. */
const rotation = (count, make) => `
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local list = {}
local i = 0
init = function(args)
  for n = 1, ${count} do list[n] = (function(n) ${make} end)(n) end
end
request = function()
  i = i % #list + 1
  return list[i]
end`;

const baselineRequest = `
  local a, b, kind = math.random(1, 10000), math.random(1, 10000), math.random(3)
  local path = "/baseline11?a=" .. a .. "&b=" .. b
  if kind == 1 then return wrk.format("GET", path) end
  local body = tostring(math.random(1, 10000))
  if kind == 2 then return wrk.format("POST", path, { ["Content-Type"] = "text/plain" }, body) end
  return "POST " .. path .. " HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: text/plain\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n"
    .. string.format("%x", #body) .. "\\r\\n" .. body .. "\\r\\n0\\r\\n\\r\\n"`;

export const ARENA_SCENARIOS = [
  {
    id: "baseline",
    title: "Baseline: query and body arithmetic",
    sends: "GET /baseline11?a=&b=, POST with a Content-Length body and POST with a chunked body, in equal parts; 1,024 random variants",
    connections: 64,
    lua: () => rotation(1024, baselineRequest),
  },
  {
    id: "pipelined",
    title: "Pipelined: 16 requests per write",
    sends: "GET /pipeline, 16 pipelined per connection",
    connections: 16,
    pipelining: 16,
    lua: () => rotation(1, `return string.rep(wrk.format("GET", "/pipeline"), 16)`),
  },
  {
    id: "limited-conn",
    title: "Short-lived connections: closed after 10 requests",
    sends:
      "the baseline's GET, every tenth request of a wrk thread with Connection: close (the server closes, wrk reconnects): 10 requests per connection on average",
    connections: 64,
    lua: () =>
      rotation(
        1000,
        `local a, b = math.random(1, 10000), math.random(1, 10000)
  local headers = {}
  if n % 10 == 0 then headers["Connection"] = "close" end
  return wrk.format("GET", "/baseline11?a=" .. a .. "&b=" .. b, headers)`,
      ),
  },
  {
    id: "json",
    title: "JSON: 1-50 items with a computed total, through the serializer",
    sends: "GET /json/{count}?m={m} rotating (1,3) (5,7) (10,2) (15,5) (25,4) (40,8) (50,6)",
    connections: 64,
    lua: () =>
      rotation(
        7,
        `local pairs = { {1,3}, {5,7}, {10,2}, {15,5}, {25,4}, {40,8}, {50,6} }
  local p = pairs[n]
  return wrk.format("GET", "/json/" .. p[1] .. "?m=" .. p[2])`,
      ),
  },
  {
    id: "json-comp",
    title: "Compressed JSON: the JSON workload through the compression middleware",
    sends: "GET /json/{25,40,50}?m={4,8,6} with Accept-Encoding: gzip, br",
    connections: 64,
    lua: () =>
      rotation(
        3,
        `local pairs = { {25,4}, {40,8}, {50,6} }
  local p = pairs[n]
  return wrk.format("GET", "/json/" .. p[1] .. "?m=" .. p[2], { ["Accept-Encoding"] = "gzip, br" })`,
      ),
  },
  {
    id: "upload",
    title: "Upload: 500 KB to 20 MB bodies, the server counts the bytes",
    sends: "POST /upload with 500 KB, 2 MB, 10 MB and 20 MB bodies in rotation",
    connections: 8,
    lua: () =>
      rotation(
        4,
        `local sizes = { 500 * 1024, 2 * 1024 * 1024, 10 * 1024 * 1024, 20 * 1024 * 1024 }
  return wrk.format("POST", "/upload", { ["Content-Type"] = "application/octet-stream" }, string.rep("x", sizes[n]))`,
      ),
  },
  {
    id: "static",
    title: "Static files: 20 files, precompressed variants preferred",
    sends: `the 20 files under /static/ in rotation, Accept-Encoding: ${STATIC_ACCEPT}`,
    connections: 64,
    lua: () =>
      rotation(
        STATIC_FILES.length,
        `local names = { ${STATIC_FILES.map((f) => q(f.name)).join(", ")} }
  return wrk.format("GET", "/static/" .. names[n], { ["Accept-Encoding"] = ${q(STATIC_ACCEPT)} })`,
      ),
    /** The files must exist before the servers start. */
    prepare: () => staticDir(),
  },
  {
    id: "async-db",
    title: "Async database: a price-range query over a pool",
    sends: "GET /async-db?min=&max=&limit= with random ranges (10-100 wide) and limits (5-50); Postgres scans 100,000 rows",
    connections: 64,
    needsDatabase: true,
    lua: () =>
      rotation(
        1024,
        `local min = math.random(1, 400)
  return wrk.format("GET", "/async-db?min=" .. min .. "&max=" .. (min + math.random(10, 100)) .. "&limit=" .. math.random(5, 50))`,
      ),
  },
  {
    id: "crud",
    title: "CRUD: cached reads, updates, lists and upserts",
    sends:
      "75% GET /crud/items/{random id ≤ 50,000} (cache-aside, 200 ms TTL), 15% PUT /crud/items/{id}, 5% GET /crud/items?category=&page= (1-10), 5% POST /crud/items (upserts of ids from 100,001)",
    connections: 64,
    needsDatabase: true,
    // Each kind of request alone (bench/arena-instructions.mjs counts them apart): the value of `r` that picks it.
    kinds: { read: 1, update: 80, list: 93, create: 100 },
    lua: (r = "math.random(100)") =>
      rotation(
        2000,
        `local r = ${r}
  local json = { ["Content-Type"] = "application/json" }
  if r <= 75 then return wrk.format("GET", "/crud/items/" .. math.random(1, 50000)) end
  if r <= 90 then return wrk.format("PUT", "/crud/items/" .. math.random(1, 50000), json, '{"name":"Updated ' .. math.random(1e6) .. '","price":' .. math.random(1, 500) .. ',"quantity":' .. math.random(1, 100) .. '}') end
  if r <= 95 then return wrk.format("GET", "/crud/items?category=" .. ({ ${CATEGORIES.map(q).join(", ")} })[math.random(${CATEGORIES.length})] .. "&page=" .. math.random(1, 10) .. "&limit=10") end
  return wrk.format("POST", "/crud/items", json, '{"id":' .. (100000 + math.random(1, 5000)) .. ',"name":"New ' .. math.random(1e6) .. '","category":"test","price":' .. math.random(1, 500) .. ',"quantity":' .. math.random(1, 100) .. '}')`,
      ),
  },
  // api-4 and api-16: HttpArena's mixed workload on a server limited to 4 and 16 CPUs. Here both
  // run on this machine's two cores, with a worker process per core; what tells them apart is
  // HttpArena's connection counts.
  ...["api-4", "api-16"].map((id) => ({
    id,
    title: `${id.toUpperCase()}: baseline, JSON and async-db mixed, from a worker process per core`,
    sends:
      "HttpArena's 8 templates in rotation: GET /baseline11?a=13&b=42 (3), GET /json/50?m=1 (3), GET /async-db?min=10&max=50&limit=50 (2); every fifth request says Connection: close (5 requests per connection, then a new one)",
    connections: id === "api-4" ? 256 : 1024,
    needsDatabase: true,
    workers: 2,
    lua: () =>
      rotation(
        40,
        `local templates = { "/baseline11?a=13&b=42", "/baseline11?a=13&b=42", "/baseline11?a=13&b=42", "/json/50?m=1", "/json/50?m=1", "/json/50?m=1", "/async-db?min=10&max=50&limit=50", "/async-db?min=10&max=50&limit=50" }
  local headers = {}
  if n % 5 == 0 then headers["Connection"] = "close" end
  return wrk.format("GET", templates[(n - 1) % 8 + 1], headers)`,
      ),
  })),
  {
    id: "production-stack",
    title: "Production stack: nginx, a JWT check on every API call, a two-level cache, Postgres",
    sends:
      "HTTP/2 over TLS to nginx (bench/arena/stack/), from two h2load at once, every request with HttpArena's Bearer token: reads in HttpArena's 20,000-URI rotation (30% static files, which nginx serves, 10% GET /public/baseline, 50% GET /api/items/{1-10,000}, 10% GET /api/me); writes, POST /api/items/{1-20} with a JSON body, from 8 more connections × 8 streams",
    connections: 32,
    streams: 16,
    needsDatabase: true,
    stack: true,
    protocol: "h2",
    tool: "h2load",
    parallel: () => {
      const headers = { authorization: `Bearer ${signToken(TOKEN_CLAIMS, JWT_SECRET)}` };
      return [
        { paths: stackReads(), headers: { ...headers, "accept-encoding": STATIC_ACCEPT } },
        {
          paths: Array.from({ length: 20 }, (_, i) => `/api/items/${i + 1}`),
          body: JSON.stringify({ name: "bench-updated", price: 250, quantity: 10 }),
          headers: { ...headers, "content-type": "application/json" },
          connections: 8,
          streams: 8,
        },
      ];
    },
  },
  // HttpArena's fixed-rate profiles: a paced, open-loop rate (bench/rate-load: latency from each
  // request's due time) over 1,024 keep-alive connections, scored on CPU per request, p99 and mean
  // (bench/arena/score.mjs). latency-10k keeps HttpArena's rate (the standing cost of a running
  // server: the rate itself is the point); latency-1m and latency-500k-8cpu keep its load per
  // logical CPU (1M on 64, 500K on 8) on the one server core here. ARENA_RATES overrides a rate.
  ...[
    ["latency-10k", 10_000, "HttpArena's rate: near idle, what is left is the standing cost of a running server"],
    ["latency-1m", 15_625, "HttpArena's 1,000,000 on 64 logical CPUs, as the same load on one"],
    ["latency-500k-8cpu", 62_500, "HttpArena's 500,000 on 8 logical CPUs, as the same load on one: near or past saturation"],
  ].map(([id, rate, why]) => ({
    id,
    title: `${id}: GET /baseline11 at a fixed ${rateOf(id, rate).toLocaleString("en-US")} req/s`,
    sends: `GET /baseline11?a=1&b=2 at ${rateOf(id, rate).toLocaleString("en-US")} req/s (${why}), paced open-loop by bench/rate-load over 1,024 keep-alive connections; latency from each request's due time`,
    connections: 1024,
    tool: "rate-load",
    rate: rateOf(id, rate),
    fixedRate: true,
  })),
  {
    id: "idle",
    title: "Idle: the CPU a server uses with nothing to do",
    sends: "nothing for 10 s (no connection open), after the checks: the server's CPU per second of idling",
    connections: 0,
    tool: "rate-load",
    rate: 0,
    duration: 10,
  },
  // HttpArena's async: GET /delay/15, a flat 15 ms wait, on held keep-alive connections, each
  // request answered from a timer: 32,000 connections on 64 logical CPUs there, 512 on the one
  // server core here (conns / delay caps it at ~34,000 req/s). Memory per held connection, the other
  // half of what it shows, is bench/arena/held.mjs's (10,000 to 64,000 connections).
  {
    id: "async",
    title: "Async: GET /delay/15 on held connections, each answer due 15 ms later",
    sends: "GET /delay/15 on 512 keep-alive connections, each waiting for its answer before the next (at most 512 / 15 ms ≈ 34,000 req/s)",
    connections: 512,
    needs: "delay",
    lua: () => rotation(1, `return wrk.format("GET", "/delay/15")`),
  },
  // HttpArena's static-tls: the static profile over HTTP/1.1 on TLS (its port 8081), 200 requests
  // per connection, so handshakes are part of the work.
  {
    id: "static-tls",
    title: "Static files over TLS: the static profile on HTTP/1.1 over TLS",
    sends: `the 20 files under /static/ in rotation over TLS, Accept-Encoding: ${STATIC_ACCEPT}; every 200th request of a wrk thread with Connection: close (a new TLS handshake)`,
    connections: 64,
    protocol: "tls",
    needs: "tls",
    lua: () =>
      rotation(
        200,
        `local names = { ${STATIC_FILES.map((f) => q(f.name)).join(", ")} }
  local headers = { ["Accept-Encoding"] = ${q(STATIC_ACCEPT)} }
  if n == 200 then headers["Connection"] = "close" end
  return wrk.format("GET", "/static/" .. names[(n - 1) % #names + 1], headers)`,
      ),
    prepare: () => staticDir(),
  },
  // A body POSTed to /echo over TLS and sent back, at a fixed rate (bench/rate-load compares every
  // answer with the body sent): HttpArena's 8gbit (10 KB at 50,000 req/s on 64 logical CPUs, as the
  // same load on one core here) and its earlier echo-10k and echo-100k (at bench/arena/echo-tls.mjs's
  // rates). Scored as the other fixed-rate profiles. ARENA_RATES overrides a rate.
  ...[
    ["8gbit", 10_240, 512, 781, "HttpArena's 50,000 on 64 logical CPUs, as the same load on one"],
    ["echo-10k", 10_240, 64, 2_000, "the rate bench/arena/echo-tls.mjs's 10 KB runs used"],
    ["echo-100k", 102_400, 64, 500, "the rate bench/arena/echo-tls.mjs's 100 KB runs used"],
  ].map(([id, size, connections, rate, why]) => ({
    id,
    title: `${id}: POST /echo over TLS, ${size / 1024} KB echoed, at a fixed ${rateOf(id, rate).toLocaleString("en-US")} req/s`,
    sends: `POST /echo with ${size.toLocaleString("en-US")}-byte bodies over TLS at ${rateOf(id, rate).toLocaleString("en-US")} req/s (${why}), paced open-loop by bench/rate-load over ${connections} keep-alive connections, every answer compared with the body sent`,
    connections,
    tool: "rate-load",
    rate: rateOf(id, rate),
    fixedRate: true,
    protocol: "tls",
    needs: "tls",
    method: "POST",
    bodySize: size,
    checkEcho: true,
  })),
  // HttpArena's echo-ws is the WebSocket scenario of that name (bench/lib/websocket.mjs, timed with bench/ws-load).
];

/**
 * production-stack's reads, as HttpArena's requests/production-stack-reads.txt lists them: 1,000
 * blocks of 20 (6 static files, 2 /public/baseline, 10 consecutive /api/items ids, 2 /api/me).
 */
function stackReads() {
  const files = ["reset.css", "components.css", "app.js", "vendor.js", "header.html", "hero.webp"];
  const sums = ["a=1&b=1", "a=13&b=42", "a=100&b=7"];
  const paths = [];
  for (let block = 0; block < 1000; block++) {
    paths.push(...files.map((f) => `/static/${f}`));
    for (let i = 0; i < 2; i++) paths.push(`/public/baseline?${sums[(block * 2 + i) % 3]}`);
    for (let i = 1; i <= 10; i++) paths.push(`/api/items/${block * 10 + i}`);
    paths.push("/api/me", "/api/me");
  }
  return paths;
}

/** The route the report shows for each scenario (one per scenario: its requests rotate). */
export const ARENA_ROUTES = ARENA_SCENARIOS.map((s) => ({ id: `arena-${s.id}`, method: s.method ?? "GET", path: pathOf(s.id), note: "(arena)", status: 200 }));

function pathOf(id) {
  return {
    baseline: "/baseline11",
    pipelined: "/pipeline",
    "limited-conn": "/baseline11",
    json: "/json/:count",
    "json-comp": "/json/:count",
    upload: "/upload",
    static: "/static/*",
    "async-db": "/async-db",
    crud: "/crud/items",
    "api-4": "/baseline11, /json, /async-db",
    "api-16": "/baseline11, /json, /async-db",
    "production-stack": "/api/items/:id",
    "latency-10k": "/baseline11?a=1&b=2",
    "latency-1m": "/baseline11?a=1&b=2",
    "latency-500k-8cpu": "/baseline11?a=1&b=2",
    idle: "/",
    async: "/delay/15",
    "static-tls": "/static/*",
    "8gbit": "/echo",
    "echo-10k": "/echo",
    "echo-100k": "/echo",
  }[id];
}

export const arenaScenario = (id) => ARENA_SCENARIOS.find((s) => s.id === id);
