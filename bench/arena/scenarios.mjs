// The arena's scenarios, after HttpArena's HTTP/1.1 test profiles, with
// connection counts scaled to a 2-core machine (one core serves, the other runs
// wrk, and Postgres where there is one). Each scenario is timed with wrk and a
// Lua script that rotates its requests; `lua` returns the script's body (the
// bench adds the part that reports the figures).
import { CATEGORIES, STATIC_ACCEPT } from "./contract.mjs";
import { STATIC_FILES, staticDir } from "./static-files.mjs";

const q = (s) => JSON.stringify(String(s));
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
    sends: "the baseline's GET, every tenth request of a wrk thread with Connection: close (the server closes, wrk reconnects): 10 requests per connection on average",
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
    lua: () => rotation(7, `local pairs = { {1,3}, {5,7}, {10,2}, {15,5}, {25,4}, {40,8}, {50,6} }
  local p = pairs[n]
  return wrk.format("GET", "/json/" .. p[1] .. "?m=" .. p[2])`),
  },
  {
    id: "json-comp",
    title: "Compressed JSON: the JSON workload through the compression middleware",
    sends: "GET /json/{25,40,50}?m={4,8,6} with Accept-Encoding: gzip, br",
    connections: 64,
    lua: () => rotation(3, `local pairs = { {25,4}, {40,8}, {50,6} }
  local p = pairs[n]
  return wrk.format("GET", "/json/" .. p[1] .. "?m=" .. p[2], { ["Accept-Encoding"] = "gzip, br" })`),
  },
  {
    id: "upload",
    title: "Upload: 500 KB to 20 MB bodies, the server counts the bytes",
    sends: "POST /upload with 500 KB, 2 MB, 10 MB and 20 MB bodies in rotation",
    connections: 8,
    lua: () => rotation(4, `local sizes = { 500 * 1024, 2 * 1024 * 1024, 10 * 1024 * 1024, 20 * 1024 * 1024 }
  return wrk.format("POST", "/upload", { ["Content-Type"] = "application/octet-stream" }, string.rep("x", sizes[n]))`),
  },
  {
    id: "static",
    title: "Static files: 20 files, precompressed variants preferred",
    sends: `the 20 files under /static/ in rotation, Accept-Encoding: ${STATIC_ACCEPT}`,
    connections: 64,
    lua: () => rotation(STATIC_FILES.length, `local names = { ${STATIC_FILES.map((f) => q(f.name)).join(", ")} }
  return wrk.format("GET", "/static/" .. names[n], { ["Accept-Encoding"] = ${q(STATIC_ACCEPT)} })`),
    /** The files must exist before the servers start. */
    prepare: () => staticDir(),
  },
  {
    id: "async-db",
    title: "Async database: a price-range query over a pool",
    sends: "GET /async-db?min=&max=&limit= with random ranges (10-100 wide) and limits (5-50); Postgres scans 100,000 rows",
    connections: 64,
    needsDatabase: true,
    lua: () => rotation(1024, `local min = math.random(1, 400)
  return wrk.format("GET", "/async-db?min=" .. min .. "&max=" .. (min + math.random(10, 100)) .. "&limit=" .. math.random(5, 50))`),
  },
  {
    id: "crud",
    title: "CRUD: cached reads, updates, lists and upserts",
    sends: "75% GET /crud/items/{random id ≤ 50,000} (cache-aside, 200 ms TTL), 15% PUT /crud/items/{id}, 5% GET /crud/items?category=&page= (1-10), 5% POST /crud/items (upserts of ids from 100,001)",
    connections: 64,
    needsDatabase: true,
    lua: () => rotation(2000, `local r = math.random(100)
  local json = { ["Content-Type"] = "application/json" }
  if r <= 75 then return wrk.format("GET", "/crud/items/" .. math.random(1, 50000)) end
  if r <= 90 then return wrk.format("PUT", "/crud/items/" .. math.random(1, 50000), json, '{"name":"Updated ' .. math.random(1e6) .. '","price":' .. math.random(1, 500) .. ',"quantity":' .. math.random(1, 100) .. '}') end
  if r <= 95 then return wrk.format("GET", "/crud/items?category=" .. ({ ${CATEGORIES.map(q).join(", ")} })[math.random(${CATEGORIES.length})] .. "&page=" .. math.random(1, 10) .. "&limit=10") end
  return wrk.format("POST", "/crud/items", json, '{"id":' .. (100000 + math.random(1, 5000)) .. ',"name":"New ' .. math.random(1e6) .. '","category":"test","price":' .. math.random(1, 500) .. ',"quantity":' .. math.random(1, 100) .. '}')`),
  },
  // HttpArena's echo-ws is the WebSocket scenario of that name (bench/lib/websocket.mjs, timed with bench/ws-load).
];

/** The route the report shows for each scenario (one per scenario: its requests rotate). */
export const ARENA_ROUTES = ARENA_SCENARIOS.map((s) => ({ id: `arena-${s.id}`, method: "GET", path: pathOf(s.id), note: "(arena)", status: 200 }));

function pathOf(id) {
  return { baseline: "/baseline11", pipelined: "/pipeline", "limited-conn": "/baseline11", json: "/json/:count", "json-comp": "/json/:count", upload: "/upload", static: "/static/*", "async-db": "/async-db", crud: "/crud/items" }[id];
}

export const arenaScenario = (id) => ARENA_SCENARIOS.find((s) => s.id === id);
