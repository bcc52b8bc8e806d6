// What every arena server must answer, checked over real sockets before anything
// is timed (bench/run.mjs) and by test/contract/arena.test.ts: randomized inputs (so no
// answer can be cached), requests split across TCP writes, compressed and
// uncompressed negotiation, 404s, the cache header and upload counts. Answers
// that come from Postgres are compared with Postgres itself.
import { X509Certificate, createHash, randomBytes, randomInt } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { connect as http2Connect } from "node:http2";
import { request as httpsRequest } from "node:https";
import { connect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import WebSocket from "ws";
import { frame, messages } from "../grpc/frames.mjs";
import { STATIC_FILES, staticDir } from "./static-files.mjs";

export const DATASET = JSON.parse(readFileSync(new URL("../../examples/data/dataset.json", import.meta.url), "utf8"));
export const CATEGORIES = ["electronics", "tools", "clothing", "food", "toys", "office", "sports", "garden"];
export const STATIC_ACCEPT = "br;q=1, gzip;q=0.8";
const TYPES = {
  css: /^text\/css/,
  js: /^(text|application)\/javascript/,
  html: /^text\/html/,
  woff2: /^font\/woff2/,
  svg: /^image\/svg\+xml/,
  webp: /^image\/webp/,
  json: /^application\/(manifest\+)?json/,
};

/** GET /json/:count?m= as it must come back. */
export function jsonAnswer(count, m) {
  const items = DATASET.slice(0, count).map((item) => ({ ...item, total: item.price * item.quantity * m }));
  return { items, count: items.length };
}

/** One HTTP exchange on a fresh connection (with `tls`, HTTP/1.1 over TLS; the test certificate is not verified), the body not decompressed. */
export function exchange(port, { method = "GET", path, headers = {}, body, chunks, tls = false }) {
  return new Promise((resolve, reject) => {
    const options = { host: "127.0.0.1", port, method, path, headers, agent: false, ...(tls ? { rejectUnauthorized: false } : {}) };
    const req = (tls ? httpsRequest : request)(options, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
    // `chunks` goes out with Transfer-Encoding: chunked, one chunk per write.
    if (chunks) for (const c of chunks) req.write(c);
    req.end(body);
  });
}

/**
 * Writes `pieces` one by one, 15 ms apart (with `tls`, over TLS), and resolves what came back once
 * the server closed, or went quiet for `quietMs` after it began to answer. Until the first byte it
 * waits up to 10 s: a loaded machine (or Postgres, for crud) can take longer than `quietMs` to start.
 */
export function splitWrites(port, pieces, quietMs = 400, { tls = false } = {}) {
  return new Promise((resolve) => {
    const socket = tls ? tlsConnect({ port, host: "127.0.0.1", rejectUnauthorized: false }) : connect(port, "127.0.0.1");
    let text = "";
    let closed = false;
    let timer;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed });
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(finish, quietMs);
    };
    socket.on("data", (d) => {
      text += d.toString("latin1");
      arm();
    });
    socket.on("end", () => {
      closed = true;
      finish();
    });
    socket.on("error", finish);
    socket.on(tls ? "secureConnect" : "connect", async () => {
      for (const piece of pieces) {
        socket.write(piece);
        await new Promise((r) => setTimeout(r, 15));
      }
      if (text.length > 0) arm();
      else timer = setTimeout(finish, Math.max(quietMs, 10_000));
    });
  });
}

const bodyOf = (response) => response.slice(response.indexOf("\r\n\r\n") + 4);

/** The checks, by scenario. Each returns a list of problems (empty: it conforms). */
export const CHECKS = {
  async baseline({ port }, problems) {
    const [a, b, c] = [randomInt(1, 10_000), randomInt(1, 10_000), randomInt(1, 10_000)];
    const get = await exchange(port, { path: `/baseline11?a=${a}&b=${b}` });
    expect(problems, "GET /baseline11", get, { status: 200, type: /^text\/plain/, text: String(a + b) });
    const post = await exchange(port, { method: "POST", path: `/baseline11?a=${a}&b=${b}`, headers: { "content-type": "text/plain" }, body: String(c) });
    expect(problems, "POST /baseline11 (Content-Length)", post, { status: 200, type: /^text\/plain/, text: String(a + b + c) });
    const digits = String(c);
    const chunked = await exchange(port, {
      method: "POST",
      path: `/baseline11?a=${a}&b=${b}`,
      headers: { "content-type": "text/plain" },
      chunks: [digits.slice(0, 1), digits.slice(1)],
    });
    expect(problems, "POST /baseline11 (chunked)", chunked, { status: 200, type: /^text\/plain/, text: String(a + b + c) });
    const head = `POST /baseline11?a=${a}&b=${b} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${digits.length}\r\nConnection: close\r\n\r\n`;
    const split = await splitWrites(port, [head.slice(0, 7), head.slice(7, 40), head.slice(40), digits.slice(0, 1), digits.slice(1)]);
    if (!split.text.startsWith("HTTP/1.1 200") || bodyOf(split.text) !== String(a + b + c))
      problems.push(`POST /baseline11 split across 5 TCP writes: got ${JSON.stringify(split.text.slice(0, 120))}, expected 200 and ${a + b + c}`);
    const missing = await exchange(port, { path: `/no-such-route-${randomInt(1e9)}` });
    if (missing.status !== 404) problems.push(`GET /no-such-route: status ${missing.status}, expected 404`);
  },

  async pipelined({ port }, problems) {
    const { text } = await splitWrites(port, ["GET /pipeline HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(16)]);
    const answers = text.split(/(?=HTTP\/1\.1 )/).filter(Boolean);
    if (answers.length !== 16 || !answers.every((r) => r.startsWith("HTTP/1.1 200") && bodyOf(r) === "ok"))
      problems.push(`16 pipelined GET /pipeline: got ${answers.length} answers (${JSON.stringify(text.slice(0, 100))}…), expected 16 × 200 "ok"`);
  },

  async "limited-conn"({ port }, problems) {
    const [a, b] = [randomInt(1, 10_000), randomInt(1, 10_000)];
    const keep = `GET /baseline11?a=${a}&b=${b} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const last = `GET /baseline11?a=${b}&b=${a} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
    const { text, closed } = await splitWrites(port, [...Array(9).fill(keep), last], 2000);
    const answers = text.split(/(?=HTTP\/1\.1 )/).filter(Boolean);
    if (answers.length !== 10 || !answers.every((r) => r.startsWith("HTTP/1.1 200") && bodyOf(r) === String(a + b)))
      problems.push(`10 GET /baseline11 on one connection: got ${answers.length} answers, expected 10 × 200 "${a + b}"`);
    if (!closed) problems.push("GET /baseline11 with Connection: close: the server kept the connection open");
  },

  async json({ port }, problems) {
    for (const [count, m] of [
      [randomInt(1, 50), randomInt(2, 10)],
      [50, randomInt(2, 10)],
      [1, randomInt(2, 10)],
    ]) {
      const res = await exchange(port, { path: `/json/${count}?m=${m}` });
      expect(problems, `GET /json/${count}?m=${m}`, res, { status: 200, type: /^application\/json/, json: jsonAnswer(count, m) });
      if (res.headers["content-encoding"] !== undefined)
        problems.push(`GET /json/${count} without Accept-Encoding: Content-Encoding ${res.headers["content-encoding"]}`);
    }
  },

  async "json-comp"({ port }, problems) {
    for (const encoding of ["gzip", "br", "gzip, br"]) {
      const [count, m] = [[25, 40, 50][randomInt(3)], randomInt(2, 10)];
      const res = await exchange(port, { path: `/json/${count}?m=${m}`, headers: { "accept-encoding": encoding } });
      const used = res.headers["content-encoding"];
      // Brotli is optional (Hono's compress has none): asked for br alone, identity is a right answer too.
      const allowed = encoding === "br" ? ["br", undefined] : encoding.split(", ");
      if (!allowed.includes(used)) {
        problems.push(`GET /json/${count} with Accept-Encoding: ${encoding}: Content-Encoding ${JSON.stringify(used)}`);
        continue;
      }
      expect(
        problems,
        `GET /json/${count}?m=${m} (${used ?? "identity"})`,
        { ...res, body: decode(res.body, used) },
        { status: 200, type: /^application\/json/, json: jsonAnswer(count, m) },
      );
    }
    const plain = await exchange(port, { path: "/json/40?m=3" });
    if (plain.headers["content-encoding"] !== undefined)
      problems.push(`GET /json/40 without Accept-Encoding: Content-Encoding ${plain.headers["content-encoding"]}, expected none`);
    expect(problems, "GET /json/40?m=3 (identity)", plain, { status: 200, type: /^application\/json/, json: jsonAnswer(40, 3) });
  },

  async upload({ port }, problems) {
    const size = randomInt(400_000, 2_500_000);
    const body = randomBytes(size);
    const res = await exchange(port, { method: "POST", path: "/upload", headers: { "content-type": "application/octet-stream" }, body });
    expect(problems, `POST /upload (${size} bytes)`, res, { status: 200, type: /^text\/plain/, text: String(size) });
    const pieces = [randomBytes(randomInt(1, 70_000)), randomBytes(randomInt(1, 300_000)), randomBytes(randomInt(1, 10))];
    const total = pieces.reduce((n, p) => n + p.length, 0);
    const chunked = await exchange(port, { method: "POST", path: "/upload", headers: { "content-type": "application/octet-stream" }, chunks: pieces });
    expect(problems, `POST /upload (chunked, ${total} bytes)`, chunked, { status: 200, type: /^text\/plain/, text: String(total) });
  },

  async static({ port, tls = false }, problems) {
    const dir = staticDir();
    for (const { name } of STATIC_FILES) {
      const file = readFileSync(join(dir, name));
      const type = TYPES[name.slice(name.lastIndexOf(".") + 1)];
      const res = await exchange(port, { path: `/static/${name}`, headers: { "accept-encoding": STATIC_ACCEPT }, tls });
      const used = res.headers["content-encoding"];
      if (used !== undefined && used !== "br" && used !== "gzip") problems.push(`GET /static/${name}: Content-Encoding ${used}, expected br, gzip or none`);
      else expect(problems, `GET /static/${name} (${used ?? "identity"})`, { ...res, body: decode(res.body, used) }, { status: 200, type, bytes: file });
      const plain = await exchange(port, { path: `/static/${name}`, tls });
      if (plain.headers["content-encoding"] !== undefined)
        problems.push(`GET /static/${name} without Accept-Encoding: Content-Encoding ${plain.headers["content-encoding"]}`);
      else expect(problems, `GET /static/${name} (identity)`, plain, { status: 200, type, bytes: file });
    }
    const missing = await exchange(port, { path: `/static/missing-${randomInt(1e9)}.css`, headers: { "accept-encoding": STATIC_ACCEPT }, tls });
    if (missing.status !== 404) problems.push(`GET /static/missing.css: status ${missing.status}, expected 404`);
    const { text } = await splitWrites(port, ["GET /static/%2e%2e/%2e%2e/package.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"], 400, { tls });
    if (/^HTTP\/1\.1 2/.test(text)) problems.push("GET /static/%2e%2e/%2e%2e/package.json: answered 2xx, expected a refusal");
  },

  async "async-db"({ port, sql }, problems) {
    const min = randomInt(1, 400);
    const max = min + randomInt(10, 100);
    const limit = randomInt(1, 51);
    const res = await exchange(port, { path: `/async-db?min=${min}&max=${max}&limit=${limit}` });
    const where = `GET /async-db?min=${min}&max=${max}&limit=${limit}`;
    const parsed = expect(problems, where, res, { status: 200, type: /^application\/json/ });
    if (parsed === undefined) return;
    if (!Array.isArray(parsed.items) || parsed.count !== parsed.items.length || parsed.items.length !== limit) {
      problems.push(`${where}: expected { items, count } with ${limit} items, got ${JSON.stringify(parsed).slice(0, 120)}`);
      return;
    }
    const rows = await itemsById(
      sql,
      parsed.items.map((i) => i.id),
    );
    for (const item of parsed.items) {
      if (item.price < min || item.price > max) problems.push(`${where}: item ${item.id} has price ${item.price}`);
      if (canonical(item) !== canonical(rows.get(item.id)))
        problems.push(`${where}: item ${JSON.stringify(item)} differs from the database's ${JSON.stringify(rows.get(item.id))}`);
    }
    const empty = await exchange(port, { path: "/async-db?min=100000&max=100001" });
    expect(problems, "GET /async-db (no match)", empty, { status: 200, type: /^application\/json/, json: { items: [], count: 0 } });
  },

  async crud({ port, sql, rows }, problems) {
    const category = CATEGORIES[randomInt(CATEGORIES.length)];
    const [page, limit] = [randomInt(1, 6), randomInt(1, 21)];
    const expected = (await sql`SELECT id FROM items WHERE category = ${category} ORDER BY id LIMIT ${limit} OFFSET ${(page - 1) * limit}`).map((r) => r.id);
    const byId = await itemsById(sql, expected);
    const list = await exchange(port, { path: `/crud/items?category=${category}&page=${page}&limit=${limit}` });
    expect(problems, `GET /crud/items?category=${category}&page=${page}&limit=${limit}`, list, {
      status: 200,
      type: /^application\/json/,
      json: { items: expected.map((id) => byId.get(id)), total: expected.length, page, limit },
    });

    const id = randomInt(1, rows + 1);
    const [item] = (await itemsById(sql, [id])).values();
    const read = (what) => exchange(port, { path: `/crud/items/${id}` }).then((res) => ({ res, what }));
    for (const [cache, what] of [
      ["MISS", "first read"],
      ["HIT", "second read"],
    ]) {
      const { res } = await read(what);
      expect(problems, `GET /crud/items/${id} (${what})`, res, { status: 200, type: /^application\/json/, json: item, cache });
    }
    await new Promise((r) => setTimeout(r, 250));
    expect(problems, `GET /crud/items/${id} (after the 200 ms TTL)`, (await read()).res, {
      status: 200,
      type: /^application\/json/,
      json: item,
      cache: "MISS",
    });

    const missing = await exchange(port, { path: `/crud/items/${10_000_000 + randomInt(1e6)}` });
    if (missing.status !== 404) problems.push(`GET /crud/items/<absent>: status ${missing.status}, expected 404`);

    const created = {
      id: 900_000 + randomInt(100_000),
      name: `Arena ${randomInt(1e9)}`,
      category: "test",
      price: randomInt(1, 500),
      quantity: randomInt(1, 100),
    };
    const full = { ...created, active: true, tags: [], rating: { score: 0, count: 0 } };
    const json = { "content-type": "application/json" };
    const text = JSON.stringify(created);
    const head = `POST /crud/items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n`;
    const split = await splitWrites(port, [head.slice(0, 20), head.slice(20), text.slice(0, 9), text.slice(9)]);
    if (!split.text.startsWith("HTTP/1.1 201") || !sameJson(bodyOf(split.text), full))
      problems.push(`POST /crud/items split across 4 TCP writes: got ${JSON.stringify(split.text.slice(0, 160))}, expected 201 and ${JSON.stringify(full)}`);
    expect(problems, `GET /crud/items/${created.id} (created)`, await exchange(port, { path: `/crud/items/${created.id}` }), {
      status: 200,
      type: /^application\/json/,
      json: full,
      cache: "MISS",
    });
    const again = await exchange(port, { method: "POST", path: "/crud/items", headers: json, body: JSON.stringify({ ...created, name: "Upserted" }) });
    expect(problems, "POST /crud/items (existing id: upsert)", again, { status: 201, type: /^application\/json/, json: { ...full, name: "Upserted" } });

    const changes = { name: `Changed ${randomInt(1e9)}`, price: randomInt(1, 500), quantity: randomInt(1, 100) };
    await exchange(port, { path: `/crud/items/${created.id}` });
    const put = await exchange(port, { method: "PUT", path: `/crud/items/${created.id}`, headers: json, body: JSON.stringify(changes) });
    expect(problems, `PUT /crud/items/${created.id}`, put, { status: 200, type: /^application\/json/, json: { ...full, ...changes } });
    expect(problems, `GET /crud/items/${created.id} (after PUT: invalidated)`, await exchange(port, { path: `/crud/items/${created.id}` }), {
      status: 200,
      type: /^application\/json/,
      json: { ...full, ...changes },
      cache: "MISS",
    });
    await sql`DELETE FROM items WHERE id = ${created.id}`;

    const absent = await exchange(port, { method: "PUT", path: `/crud/items/${10_000_000 + randomInt(1e6)}`, headers: json, body: JSON.stringify(changes) });
    if (absent.status !== 404) problems.push(`PUT /crud/items/<absent>: status ${absent.status}, expected 404`);
    for (const [what, body] of [
      ["price as text", { ...created, price: "cheap" }],
      ["no name", { ...created, name: undefined }],
      ["not JSON", "{"],
    ]) {
      const bad = await exchange(port, { method: "POST", path: "/crud/items", headers: json, body: typeof body === "string" ? body : JSON.stringify(body) });
      if (bad.status !== 400) problems.push(`POST /crud/items with ${what}: status ${bad.status}, expected 400`);
    }
  },
};

// static-tls: the static checks over HTTP/1.1 on TLS (the server's TLS listener is the port checked).
CHECKS["static-tls"] = (context, problems) => CHECKS.static({ ...context, tls: true }, problems);
// async: HttpArena's checks of /delay/{ms} (validate.sh's async section).
CHECKS.async = ({ port }, problems) => HTTPARENA.async({ port }, problems);
// The TLS echo scenarios: HttpArena's echo checks (every body back byte for byte, chunked and empty ones too) on the TLS port.
for (const id of ["8gbit", "echo-10k", "echo-100k"]) CHECKS[id] = ({ port }, problems) => HTTPARENA.echo({ tlsPort: port }, problems);

// The fixed-rate scenarios send the baseline's GET; idle sends nothing, and runs a server that passes the baseline's checks.
for (const id of ["latency-10k", "latency-1m", "latency-500k-8cpu", "idle"]) CHECKS[id] = CHECKS.baseline;

// api-4 and api-16 mix the baseline, json and async-db routes (served by worker processes): a server
// runs them when it passes all three checks, asked a few times so that each worker is likely asked.
for (const id of ["api-4", "api-16"]) {
  CHECKS[id] = async (context, problems) => {
    for (let i = 0; i < 3; i++) for (const part of ["baseline", "json", "async-db"]) await CHECKS[part](context, problems);
  };
}

/** Runs the checks of the given scenarios; `sql` (a postgres client) and `rows` (seeded) are needed for async-db and crud. */
export async function checkArena({ port, scenarios, sql, rows }) {
  const problems = [];
  for (const id of scenarios) {
    try {
      await CHECKS[id]({ port, sql, rows }, problems);
    } catch (err) {
      problems.push(`${id}: ${err.message}`);
    }
  }
  return problems;
}

// ───── HttpArena's validation, check by check ─────
//
// What HttpArena's scripts/validate.sh (and validate-ws.py, for echo-ws) checks of an entry, for
// each profile its meta.json lists, re-expressed here: the same requests, the same expectations
// (no stricter, no looser), so that an entry that passes these passes the script. The checks
// above are the bench's own, stricter ones. HttpArena's ports are given as `ports`: `port`
// (HTTP/1.1, its 8080), `tlsPort` (json-tls's HTTP/1.1 over TLS, 8081), `h2Port` (HTTP/2 over
// TLS, 8443) and `h2cPort` (HTTP/2 cleartext, 8082). Certificates are not verified, as curl -k;
// `certificate` (PEM), the one the TLS ports were given, is the one the TLS posture check expects.

/** The profiles each group of validate.sh's checks runs for (its `has_test` conditions). */
const HTTPARENA_GROUPS = [
  // The latency profiles drive GET /baseline11 at a pinned rate: validate.sh covers them with the baseline's checks.
  ["baseline", ["baseline", "limited-conn", "api-4", "api-16", "latency-10k", "latency-1m"]],
  ["pipelined", ["pipelined"]],
  ["json", ["json", "api-4", "api-16"]],
  ["json-comp", ["json-comp"]],
  ["json-tls", ["json-tls"]],
  ["upload", ["upload"]],
  ["baseline-h2", ["baseline-h2"]],
  ["baseline-h2c", ["baseline-h2c"]],
  ["json-h2c", ["json-h2c"]],
  ["static", ["static"]],
  ["static-tls", ["static-tls"]],
  ["static-h2", ["static-h2"]],
  ["async-db", ["async-db", "crud", "api-4", "api-16"]],
  ["crud", ["crud"]],
  // validate-ws.py's checks, for any of the three WebSocket profiles (they differ only in the load's shape).
  ["echo-ws", ["echo-ws", "echo-ws-pipeline", "echo-ws-limited"]],
  ["async", ["async"]],
  ["echo", ["echo-10k", "echo-100k", "8gbit"]],
  // validate.sh has no gRPC section (at 28606ba): these follow the profiles' validation pages and
  // the server probe of scripts/lib/framework.sh (_wait_grpc), on the ports its load tools use.
  ["unary-grpc", ["unary-grpc"]],
  ["unary-grpc-tls", ["unary-grpc-tls"]],
  ["stream-grpc", ["stream-grpc"]],
  ["stream-grpc-tls", ["stream-grpc-tls"]],
  // validate.sh has no check of HTTP/3 itself (its curl has none): baseline-h3 and static-h3 only
  // make it wait for the server over HTTP/2 on 8443 (h2load-h3 finds a broken HTTP/3 at 0 req/s).
  ["h3", ["baseline-h3", "static-h3"]],
];

/** The profiles validate.sh knows how to check without Docker Compose (production-stack and the gateways need it). */
export const HTTPARENA_PROFILES = [...new Set(HTTPARENA_GROUPS.flatMap(([, profiles]) => profiles))];

const STATIC_NAMES = [
  "reset.css",
  "layout.css",
  "theme.css",
  "components.css",
  "utilities.css",
  "analytics.js",
  "helpers.js",
  "app.js",
  "vendor.js",
  "router.js",
  "header.html",
  "footer.html",
  "regular.woff2",
  "bold.woff2",
  "logo.svg",
  "icon-sprite.svg",
  "hero.webp",
  "thumb1.webp",
  "thumb2.webp",
  "manifest.json",
];
const random3 = () => randomInt(100, 1000);

/** validate.sh's check_header: the value as expected, or followed by parameters; text/javascript counts as application/javascript. */
function headerIs(value, expected) {
  const norm = (v) => String(v ?? "").replace("text/javascript", "application/javascript");
  return [value, norm(value)].some((v) => v === norm(expected) || String(v).startsWith(`${norm(expected)};`));
}

/**
 * validate.sh's json checks: `count` items of the full shape, each with total = price × quantity ×
 * m; with `faithful` (the json profile's), the dataset's first `count` items unchanged besides.
 */
function jsonProblem(where, body, count, m, { faithful = false } = {}) {
  let d;
  try {
    d = JSON.parse(body);
  } catch {
    return `${where}: not JSON (${JSON.stringify(String(body).slice(0, 80))})`;
  }
  const items = Array.isArray(d.items) ? d.items : [];
  const shaped = (i) =>
    ["id", "name", "category", "price", "quantity", "total"].every((k) => k in i) &&
    Array.isArray(i.tags) &&
    typeof i.active === "boolean" &&
    typeof i.rating === "object" &&
    i.rating !== null &&
    "score" in i.rating &&
    "count" in i.rating;
  if (d.count !== count || items.length === 0 || !items.every(shaped))
    return `${where}: count ${d.count}, ${items.length} items, expected ${count} with id, name, category, price, quantity, total, tags, active and rating`;
  if (!items.every((i) => i.total === i.price * i.quantity * m)) return `${where}: a total is not price × quantity × ${m}`;
  const same = (got, src) =>
    ["id", "name", "category", "price", "quantity", "active"].every((k) => got[k] === src[k]) && JSON.stringify(got.tags) === JSON.stringify(src.tags);
  if (faithful && (items.length !== count || !items.every((got, n) => same(got, DATASET[n]))))
    return `${where}: the items are not the dataset's first ${count}`;
  return undefined;
}

/** validate.sh's `rand_between`: a whole number from `low` to `high`, both included. */
const randBetween = (low, high) => randomInt(low, high + 1);

/** The three TLS 1.3 suites (validate.sh: "a real AEAD"). */
const TLS13_AEADS = ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"];

/** A TLS handshake with `options`: what the server chose, or null when none completes (an alert, a reset, no common cipher). */
function handshake(port, options) {
  return new Promise((resolve) => {
    let socket;
    try {
      socket = tlsConnect({ host: "127.0.0.1", port, servername: "localhost", rejectUnauthorized: false, ...options }, () => {
        resolve({
          fingerprint: socket.getPeerX509Certificate()?.fingerprint256,
          protocol: socket.getProtocol(),
          cipher: socket.getCipher()?.standardName,
          alpn: socket.alpnProtocol,
        });
        socket.destroy();
      });
    } catch {
      // This Node's OpenSSL cannot even offer it (no such cipher at all): nothing to complete.
      return resolve(null);
    }
    socket.once("error", () => resolve(null));
    socket.setTimeout(8_000, () => socket.destroy(new Error("no handshake within 8 s")));
  });
}

/**
 * validate.sh's tls_posture_probe and tls_quality_probe on an HTTP/1.1 TLS port: the certificate
 * it was given is the one served, TLS 1.3 with one of its AEAD suites against a client offering
 * it, ALPN http/1.1 or none when only that is offered; and no handshake completes with TLS 1.0 or
 * 1.1, nor with TLS 1.2 and a broken cipher family (NULL, aNULL, EXPORT, RC4, DES, 3DES), offered
 * at OpenSSL's security level 0 as the script offers them.
 */
async function tlsPosture(label, port, certificate, problems) {
  const got = await handshake(port, { ALPNProtocols: ["http/1.1"] });
  if (got === null) return problems.push(`${label} TLS posture: no TLS handshake completed on port ${port}`);
  if (certificate !== undefined && got.fingerprint !== new X509Certificate(certificate).fingerprint256)
    problems.push(`${label}: serves another certificate than the one it was given`);
  if (got.protocol !== "TLSv1.3") problems.push(`${label}: settled on ${got.protocol} against a client offering TLS 1.3`);
  if (!TLS13_AEADS.includes(got.cipher)) problems.push(`${label}: negotiated ${got.cipher}, not one of the three TLS 1.3 suites`);
  if (got.alpn && got.alpn !== "http/1.1") problems.push(`${label}: the client offered only http/1.1 and the server selected ${got.alpn}`);
  const old = [
    ["TLS 1.0", "TLSv1"],
    ["TLS 1.1", "TLSv1.1"],
  ].map(([what, version]) => [what, { minVersion: version, maxVersion: version, ciphers: "ALL:@SECLEVEL=0" }]);
  const weak = ["NULL", "aNULL", "EXPORT", "RC4", "DES", "3DES"].map((family) => [
    `TLS 1.2 with ${family}`,
    { minVersion: "TLSv1.2", maxVersion: "TLSv1.2", ciphers: `${family}:@SECLEVEL=0` },
  ]);
  for (const [what, options] of [...old, ...weak])
    if ((await handshake(port, options)) !== null) problems.push(`${label} TLS quality: a handshake completes with ${what}`);
}

/** One HTTP/1.1 exchange over TLS offering ALPN http/1.1 only (curl -k --http1.1); `chunks` go out chunked, as `exchange`'s. */
function exchangeTls(port, path, { method = "GET", headers = {}, body, chunks } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: "127.0.0.1", port, path, method, headers, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"], agent: false },
      (res) => {
        const parts = [];
        res.on("data", (d) => parts.push(d));
        res.on("end", () => resolve({ status: res.statusCode, version: res.httpVersion, headers: res.headers, body: Buffer.concat(parts) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path} over TLS: no answer within 10 s`)));
    if (chunks) for (const c of chunks) req.write(c);
    req.end(body);
  });
}

/** `exchange`, and the seconds it took (curl's time_total). */
async function timed(port, options) {
  const start = process.hrtime.bigint();
  const res = await exchange(port, options);
  return { ...res, secs: Number(process.hrtime.bigint() - start) / 1e9 };
}

/** GET requests over one HTTP/2 session (TLS with ALPN h2, or cleartext with prior knowledge); each answer says the session's protocol. */
async function exchangeH2(port, paths, { tls }) {
  const session = http2Connect(`${tls ? "https" : "http"}://127.0.0.1:${port}`, tls ? { rejectUnauthorized: false, ALPNProtocols: ["h2", "http/1.1"] } : {});
  try {
    await new Promise((resolve, reject) => {
      session.once("connect", resolve);
      session.once("error", reject);
    });
    const protocol = tls ? session.alpnProtocol : "h2c";
    return await Promise.all(
      paths.map(
        (path) =>
          new Promise((resolve, reject) => {
            const stream = session.request({ ":path": path });
            const parts = [];
            let headers;
            stream.on("response", (h) => (headers = h));
            stream.on("data", (d) => parts.push(d));
            stream.on("end", () => resolve({ status: headers?.[":status"], headers: headers ?? {}, body: Buffer.concat(parts), protocol }));
            stream.on("error", reject);
            stream.setTimeout(10_000, () => stream.close());
          }),
      ),
    );
  } finally {
    session.destroy();
  }
}

/**
 * One gRPC call of HttpArena's BenchmarkService as its load tools make it (h2load's headers, a
 * message framed by hand): over h2c with prior knowledge on `port`, or over TLS (ALPN h2).
 * Resolves the status, the head, the messages' fields and the trailers.
 */
async function grpcCall(port, { tls }, method, fields) {
  const session = http2Connect(`${tls ? "https" : "http"}://127.0.0.1:${port}`, tls ? { rejectUnauthorized: false, ALPNProtocols: ["h2"] } : {});
  try {
    return await new Promise((resolve, reject) => {
      session.once("error", reject);
      const stream = session.request({
        ":method": "POST",
        ":path": `/benchmark.BenchmarkService/${method}`,
        "content-type": "application/grpc",
        te: "trailers",
      });
      const parts = [];
      let head = {};
      let trailers = {};
      stream.on("response", (h) => (head = h));
      stream.on("trailers", (t) => (trailers = t));
      stream.on("data", (d) => parts.push(d));
      stream.on("end", () => {
        try {
          resolve({ status: head[":status"], head, replies: messages(Buffer.concat(parts)), trailers: { ...head, ...trailers } });
        } catch (err) {
          reject(err);
        }
      });
      stream.on("error", reject);
      stream.setTimeout(30_000, () => stream.close());
      stream.end(frame(fields));
    });
  } finally {
    session.destroy();
  }
}

/** What is wrong with a gRPC call's answer: a status other than 200 and grpc-status 0, or a content type other than gRPC's. */
function grpcProblem(what, call) {
  if (call.status !== 200) return `${what}: HTTP status ${call.status}, expected 200`;
  if (!String(call.head["content-type"] ?? "").startsWith("application/grpc"))
    return `${what}: content-type ${call.head["content-type"]}, expected application/grpc`;
  if (call.trailers["grpc-status"] !== "0") return `${what}: grpc-status ${call.trailers["grpc-status"]} (${call.trailers["grpc-message"] ?? ""}), expected 0`;
  return undefined;
}

/** unary-grpc(-tls): GetSum with HttpArena's request (h2load's grpc-sum.bin: a 1, b 2) answers 3, and random numbers their sum. */
export async function unaryGrpc(port, tls, problems) {
  const over = tls ? "over TLS" : "over h2c";
  const [a, b] = [random3(), random3()];
  for (const [x, y] of [
    [1, 2],
    [a, b],
  ]) {
    const what = `GetSum {a: ${x}, b: ${y}} ${over}`;
    const call = await grpcCall(port, { tls }, "GetSum", [x, y]);
    const problem = grpcProblem(what, call);
    if (problem) problems.push(problem);
    else if (call.replies.length !== 1 || (call.replies[0][1] ?? 0) !== x + y)
      problems.push(`${what}: ${JSON.stringify(call.replies)}, expected one SumReply {result: ${x + y}}`);
  }
}

/** stream-grpc(-tls): StreamSum {a: 13, b: 42} answers `count` replies, the i-th 55 + i, for 10, 5,000 and 0 (its validation page). */
export async function streamGrpc(port, tls, problems) {
  const over = tls ? "over TLS" : "over h2c";
  for (const count of [10, 5000, 0]) {
    const what = `StreamSum {a: 13, b: 42, count: ${count}} ${over}`;
    const call = await grpcCall(port, { tls }, "StreamSum", [13, 42, count]);
    const problem = grpcProblem(what, call);
    if (problem) problems.push(problem);
    else if (call.replies.length !== count) problems.push(`${what}: ${call.replies.length} replies, expected ${count}`);
    else {
      const wrong = call.replies.findIndex((reply, i) => (reply[1] ?? 0) !== 55 + i);
      if (wrong !== -1) problems.push(`${what}: reply ${wrong} is ${JSON.stringify(call.replies[wrong])}, expected {result: ${55 + wrong}}`);
    }
  }
}

/** The body of an answer to one raw request, sent in `fragments` 30 ms apart (validate.sh's check_fragmented). */
async function fragmentedBody(port, fragments) {
  const { text } = await new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    let out = "";
    socket.on("data", (d) => (out += d.toString("latin1")));
    socket.on("close", () => resolve({ text: out }));
    socket.on("error", () => resolve({ text: out }));
    socket.setTimeout(5000, () => socket.destroy());
    socket.on("connect", async () => {
      for (let i = 0; i < fragments.length; i++) {
        socket.write(fragments[i]);
        if (i < fragments.length - 1) await new Promise((r) => setTimeout(r, 30));
      }
    });
  });
  const split = text.indexOf("\r\n\r\n");
  if (split === -1) return "";
  const headers = Object.fromEntries(
    text
      .slice(0, split)
      .split("\r\n")
      .slice(1)
      .map((l) => [l.slice(0, l.indexOf(":")).trim().toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
  );
  let raw = text.slice(split + 4);
  if ((headers["transfer-encoding"] ?? "").toLowerCase() === "chunked") {
    let body = "";
    for (let size; (size = parseInt(raw.slice(0, raw.indexOf("\r\n")).split(";")[0], 16)) > 0;) {
      raw = raw.slice(raw.indexOf("\r\n") + 2);
      body += raw.slice(0, size);
      raw = raw.slice(size + 2);
    }
    return body.trim();
  }
  if (headers["content-length"] !== undefined) return raw.slice(0, Number(headers["content-length"])).trim();
  return raw.trim();
}

/** Runs `fn` against one WebSocket connection to /ws, which it must leave closed. */
function withSocket(port, fn) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { perMessageDeflate: false, handshakeTimeout: 5000 });
    const received = [];
    let waiter;
    ws.on("message", (data, isBinary) => {
      received.push({ data: Buffer.from(data), isBinary });
      waiter?.();
    });
    ws.on("error", reject);
    const next = () =>
      received.length > 0
        ? Promise.resolve(received.shift())
        : new Promise((r, j) => {
            const timer = setTimeout(() => j(new Error("no echo within 5 s")), 5000);
            waiter = () => {
              clearTimeout(timer);
              waiter = undefined;
              r(received.shift());
            };
          });
    ws.on("upgrade", (res) => {
      ws.once("open", () => fn({ ws, res, next }).then(resolve, reject));
    });
  });
}

const HTTPARENA = {
  async baseline({ port }, problems) {
    const url = (a, b) => `/baseline11?a=${a}&b=${b}`;
    const text = "text/plain";
    const bodyIs = async (what, res, expected) => {
      if (res.body.toString().trim() !== String(expected))
        problems.push(`${what}: body ${JSON.stringify(res.body.toString().slice(0, 40))}, expected ${expected}`);
      return res;
    };
    const get = await bodyIs("GET /baseline11?a=13&b=42", await exchange(port, { path: url(13, 42) }), 55);
    const post = await bodyIs(
      "POST /baseline11?a=13&b=42 body=20",
      await exchange(port, { method: "POST", path: url(13, 42), headers: { "content-type": text }, body: "20" }),
      75,
    );
    await bodyIs(
      "POST /baseline11?a=13&b=42 chunked body=20",
      await exchange(port, { method: "POST", path: url(13, 42), headers: { "content-type": text }, chunks: ["20"] }),
      75,
    );
    if (!headerIs(get.headers["content-type"], text)) problems.push(`GET /baseline11 Content-Type: ${get.headers["content-type"]}, expected text/plain`);
    if (!headerIs(post.headers["content-type"], text)) problems.push(`POST /baseline11 Content-Type: ${post.headers["content-type"]}, expected text/plain`);
    const [a, b] = [random3(), random3()];
    await bodyIs(`GET /baseline11?a=${a}&b=${b} (random)`, await exchange(port, { path: url(a, b) }), a + b);
    const first = random3();
    let second = random3();
    while (second === first) second = random3();
    for (const [n, body] of [
      [1, first],
      [2, second],
    ])
      await bodyIs(
        `POST body=${body} (cache check ${n})`,
        await exchange(port, { method: "POST", path: url(13, 42), headers: { "content-type": text }, body: String(body) }),
        55 + body,
      );
    const post2 = "POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n";
    for (const [what, fragments, expected] of [
      ["split request line", ["GET /baseli", "ne11?a=13&b=42 HTTP/1.1\r\n", "Host: localhost\r\nConnection: close\r\n\r\n"], "55"],
      [
        "split before headers",
        ["GET /baseline11?a=13&b=42 HTTP/1.1\r\n", "Host: localhost\r\n", "User-Agent: arena-frag/1.0\r\n", "Connection: close\r\n\r\n"],
        "55",
      ],
      ["split headers/body", [post2, "20"], "75"],
      ["split body bytes", [post2, "2", "0"], "75"],
      // Field names are case-insensitive (RFC 9110 §5.1): a lower-cased content-length is read too.
      [
        "lower-cased content-length",
        ["POST /baseline11?a=13&b=42 HTTP/1.1\r\nhost: localhost\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\n20"],
        "75",
      ],
    ]) {
      const body = await fragmentedBody(port, fragments);
      if (body !== expected) problems.push(`/baseline11 — ${what}: body ${JSON.stringify(body)}, expected ${expected}`);
    }
  },

  async pipelined({ port }, problems) {
    const res = await exchange(port, { path: "/pipeline" });
    if (res.body.toString().trim() !== "ok") problems.push(`GET /pipeline: body ${JSON.stringify(res.body.toString().slice(0, 40))}, expected ok`);
    if (!headerIs(res.headers["content-type"], "text/plain")) problems.push(`GET /pipeline Content-Type: ${res.headers["content-type"]}, expected text/plain`);
  },

  async json({ port }, problems) {
    for (const [count, m] of Array.from({ length: 4 }, () => [randBetween(1, 50), randBetween(2, 97)])) {
      const problem = jsonProblem(`GET /json/${count}?m=${m}`, (await exchange(port, { path: `/json/${count}?m=${m}` })).body, count, m, { faithful: true });
      if (problem) problems.push(problem);
    }
    const res = await exchange(port, { path: "/json/50?m=1" });
    if (!headerIs(res.headers["content-type"], "application/json"))
      problems.push(`GET /json Content-Type: ${res.headers["content-type"]}, expected application/json`);
  },

  async "json-comp"({ port }, problems) {
    const asked = { "accept-encoding": "gzip, br" };
    const first = await exchange(port, { path: "/json/50?m=1", headers: asked });
    const encoding = String(first.headers["content-encoding"] ?? "").toLowerCase();
    if (encoding !== "gzip" && encoding !== "br")
      problems.push(`json-comp: Content-Encoding ${JSON.stringify(first.headers["content-encoding"])} with Accept-Encoding: gzip, br, expected gzip or br`);
    for (const [count, m] of Array.from({ length: 3 }, () => [randBetween(5, 50), randBetween(2, 89)])) {
      const res = await exchange(port, { path: `/json/${count}?m=${m}`, headers: asked });
      let body;
      try {
        body = decode(res.body, res.headers["content-encoding"]);
      } catch (err) {
        body = `(${err.message})`;
      }
      const problem = jsonProblem(`json-comp /json/${count}?m=${m}`, body, count, m);
      if (problem) problems.push(problem);
    }
    const plain = await exchange(port, { path: "/json/50?m=1" });
    if (plain.headers["content-encoding"] !== undefined)
      problems.push(`json-comp per-request: Content-Encoding ${plain.headers["content-encoding"]} without Accept-Encoding`);
  },

  async "json-tls"({ tlsPort, certificate }, problems) {
    await tlsPosture("json-tls", tlsPort, certificate, problems);
    const first = await exchangeTls(tlsPort, "/json/1?m=1");
    if (first.version !== "1.1") problems.push(`json-tls: HTTP/${first.version} over TLS, expected 1.1`);
    for (const [count, m] of Array.from({ length: 3 }, () => [randBetween(5, 50), randBetween(2, 89)])) {
      const problem = jsonProblem(`json-tls /json/${count}?m=${m}`, (await exchangeTls(tlsPort, `/json/${count}?m=${m}`)).body, count, m);
      if (problem) problems.push(problem);
    }
    if (!/application\/json/i.test(String(first.headers["content-type"])))
      problems.push(`json-tls Content-Type: ${first.headers["content-type"]}, expected application/json`);
  },

  async upload({ port }, problems) {
    const octets = { "content-type": "application/octet-stream" };
    for (const [what, body] of [
      ["small body", Buffer.from("Hello, HttpArena!")],
      ["random body", Buffer.from(randomBytes(64).toString("base64").slice(0, 48))],
      ...[
        ["500K", 512_000],
        ["2M", 2_097_152],
        ["10M", 10_485_760],
        ["20M", 20_971_520],
      ].map(([label, size]) => [label, randomBytes(size)]),
    ]) {
      const res = await exchange(port, { method: "POST", path: "/upload", headers: octets, body });
      if (res.body.toString().trim() !== String(body.length))
        problems.push(`POST /upload ${what}: ${JSON.stringify(res.body.toString().slice(0, 40))}, expected ${body.length}`);
    }
  },

  async "baseline-h2"({ h2Port }, problems) {
    const [a, b] = [random3(), random3()];
    const [probe, fixed, randomized, typed] = await exchangeH2(
      h2Port,
      ["/baseline2?a=1&b=1", "/baseline2?a=13&b=42", `/baseline2?a=${a}&b=${b}`, "/baseline2?a=1&b=1"],
      { tls: true },
    );
    if (probe.protocol !== "h2") problems.push(`baseline-h2: ALPN chose ${probe.protocol}, expected h2`);
    if (fixed.body.toString().trim() !== "55") problems.push(`GET /baseline2?a=13&b=42 over HTTP/2: ${JSON.stringify(fixed.body.toString())}, expected 55`);
    if (randomized.body.toString().trim() !== String(a + b))
      problems.push(`GET /baseline2?a=${a}&b=${b} over HTTP/2: ${JSON.stringify(randomized.body.toString())}, expected ${a + b}`);
    if (!headerIs(typed.headers["content-type"], "text/plain"))
      problems.push(`GET /baseline2 Content-Type: ${typed.headers["content-type"]}, expected text/plain`);
  },

  async "baseline-h2c"({ h2cPort }, problems) {
    const [a, b] = [random3(), random3()];
    const [probe, fixed, randomized] = await exchangeH2(h2cPort, ["/baseline2?a=1&b=1", "/baseline2?a=13&b=42", `/baseline2?a=${a}&b=${b}`], { tls: false });
    if (probe.status !== 200) problems.push(`baseline-h2c: HTTP/2 with prior knowledge answered ${probe.status}`);
    // The port serves HTTP/2 only: an HTTP/1.1 request must not get a 200 (any other outcome passes, a reset too).
    const h1 = await exchange(h2cPort, { path: "/baseline2?a=1&b=1" }).catch(() => ({ status: 0 }));
    if (h1.status === 200) problems.push(`h2c-only: port ${h2cPort} also answered HTTP/1.1 with 200`);
    if (fixed.body.toString().trim() !== "55") problems.push(`GET /baseline2?a=13&b=42 over h2c: ${JSON.stringify(fixed.body.toString())}, expected 55`);
    if (randomized.body.toString().trim() !== String(a + b))
      problems.push(`GET /baseline2?a=${a}&b=${b} over h2c: ${JSON.stringify(randomized.body.toString())}, expected ${a + b}`);
    if (!headerIs(probe.headers["content-type"], "text/plain"))
      problems.push(`GET /baseline2 Content-Type (h2c): ${probe.headers["content-type"]}, expected text/plain`);
  },

  async "json-h2c"({ h2cPort }, problems) {
    const pairs = [
      [12, 3],
      [22, 7],
      [31, 2],
      [50, 5],
    ];
    const [probe, ...answers] = await exchangeH2(h2cPort, ["/json/1?m=1", ...pairs.map(([c, m]) => `/json/${c}?m=${m}`)], { tls: false });
    if (probe.status !== 200) problems.push(`/json over h2c: status ${probe.status}`);
    if (!headerIs(probe.headers["content-type"], "application/json"))
      problems.push(`GET /json Content-Type (h2c): ${probe.headers["content-type"]}, expected application/json`);
    answers.forEach((res, i) => {
      const [count] = pairs[i];
      let d = {};
      try {
        d = JSON.parse(res.body.toString());
      } catch {}
      if (d.count !== count || d.items?.length !== count)
        problems.push(`GET /json/${count}?m=${pairs[i][1]} (h2c): count ${d.count}, ${d.items?.length} items, expected ${count}`);
    });
  },

  async static({ port, staticDir: dir = staticDir(), tls = false }, problems) {
    for (const [name, type] of [
      ["reset.css", "text/css"],
      ["app.js", "application/javascript"],
      ["manifest.json", "application/json"],
    ]) {
      const res = await exchange(port, { path: `/static/${name}`, tls });
      if (!headerIs(res.headers["content-type"], type)) problems.push(`GET /static/${name} Content-Type: ${res.headers["content-type"]}, expected ${type}`);
    }
    for (const name of STATIC_NAMES) {
      const size = statSync(join(dir, name)).size;
      const plain = await exchange(port, { path: `/static/${name}`, tls });
      if (plain.body.length !== size) problems.push(`static/${name} size: ${plain.body.length} bytes, expected ${size}`);
      // curl --compressed's Accept-Encoding: a compressed answer must decompress to the file's size (compressing is optional).
      const asked = await exchange(port, { path: `/static/${name}`, headers: { "accept-encoding": "deflate, gzip, br, zstd" }, tls });
      const encoding = asked.headers["content-encoding"];
      if (encoding !== undefined) {
        let length;
        try {
          length = decode(asked.body, encoding.toLowerCase()).length;
        } catch {
          length = -1;
        }
        if (length !== size) problems.push(`static/${name} compression: Content-Encoding: ${encoding} but decompressed size ${length} != ${size}`);
      }
    }
    const missing = await exchange(port, { path: "/static/nonexistent.txt", tls });
    if (missing.status !== 404) problems.push(`GET /static/nonexistent.txt: HTTP ${missing.status}, expected 404`);
  },

  // static-tls: the static checks, over HTTP/1.1 on the TLS port (HttpArena's 8081, json-tls's).
  async "static-tls"({ tlsPort, staticDir: dir }, problems) {
    await HTTPARENA.static({ port: tlsPort, staticDir: dir, tls: true }, problems);
  },

  async h3({ h2Port }, problems) {
    const [probe] = await exchangeH2(h2Port, ["/baseline2?a=1&b=1"], { tls: true });
    if (probe.protocol !== "h2")
      problems.push(`baseline-h3/static-h3: the readiness probe over HTTP/2 on ${h2Port}: ALPN chose ${probe.protocol}, expected h2`);
  },

  async "static-h2"({ h2Port }, problems) {
    const types = [
      ["reset.css", "text/css"],
      ["app.js", "application/javascript"],
      ["manifest.json", "application/json"],
    ];
    const answers = await exchangeH2(h2Port, [...types.map(([name]) => `/static/${name}`), "/static/reset.css", "/static/nonexistent.txt"], { tls: true });
    types.forEach(([name, type], i) => {
      if (!headerIs(answers[i].headers["content-type"], type))
        problems.push(`GET /static/${name} Content-Type (h2): ${answers[i].headers["content-type"]}, expected ${type}`);
    });
    if (answers[3].body.length === 0) problems.push("static-h2 response size: an empty /static/reset.css");
    if (answers[4].status !== 404) problems.push(`GET /static/nonexistent.txt (h2): HTTP ${answers[4].status}, expected 404`);
  },

  async "async-db"({ port }, problems) {
    for (const [query, limit] of [
      ["min=5&max=80&limit=7", 7],
      ["min=20&max=150&limit=18", 18],
      ["min=100&max=400&limit=33", 33],
      ["min=10&max=50&limit=50", 50],
    ]) {
      let d = {};
      try {
        d = JSON.parse((await exchange(port, { path: `/async-db?${query}` })).body.toString());
      } catch {}
      const items = Array.isArray(d.items) ? d.items : [];
      const ok =
        d.count === limit &&
        items.length > 0 &&
        items.every((i) => typeof i.rating === "object" && i.rating !== null && "score" in i.rating && Array.isArray(i.tags) && typeof i.active === "boolean");
      if (!ok) problems.push(`GET /async-db?${query}: count ${d.count}, expected ${limit} items each with rating.score, a tags array and a boolean active`);
    }
    const typed = await exchange(port, { path: "/async-db?min=10&max=50&limit=50" });
    if (!headerIs(typed.headers["content-type"], "application/json"))
      problems.push(`GET /async-db Content-Type: ${typed.headers["content-type"]}, expected application/json`);
    let empty = {};
    try {
      empty = JSON.parse((await exchange(port, { path: "/async-db?min=9999&max=9999&limit=50" })).body.toString());
    } catch {}
    if (empty.count !== 0) problems.push(`GET /async-db empty range: count ${empty.count}, expected 0`);
  },

  async crud({ port }, problems) {
    const read = async (path) => {
      const res = await exchange(port, { path });
      let d = {};
      try {
        d = JSON.parse(res.body.toString());
      } catch {}
      return { res, d };
    };
    const { d: list } = await read("/crud/items?category=electronics&page=1&limit=5");
    const items = Array.isArray(list.items) ? list.items : [];
    if (!(items.length === 5 && list.total > 0 && list.page === 1 && items.every((i) => "rating" in i)))
      problems.push(`GET /crud/items list: ${items.length} items, total ${list.total}, page ${list.page}, expected 5 items with rating, total > 0, page 1`);
    const { d: one } = await read("/crud/items/1");
    if (one.id !== 1) problems.push(`GET /crud/items/1: id ${one.id}`);
    const first = (await read("/crud/items/42")).res.headers["x-cache"];
    const second = (await read("/crud/items/42")).res.headers["x-cache"];
    if (first !== "MISS" || second !== "HIT") problems.push(`crud cache-aside: X-Cache ${first} then ${second}, expected MISS then HIT`);
    const missing = await exchange(port, { path: "/crud/items/999999" });
    if (missing.status !== 404) problems.push(`GET /crud/items/999999: HTTP ${missing.status}, expected 404`);
    const json = { "content-type": "application/json" };
    const created = await exchange(port, {
      method: "POST",
      path: "/crud/items",
      headers: json,
      body: '{"id":200001,"name":"ValidateItem","category":"test","price":42,"quantity":7}',
    });
    if (created.status !== 201) problems.push(`POST /crud/items: HTTP ${created.status}, expected 201`);
    const { d: back } = await read("/crud/items/200001");
    if (back.id !== 200001) problems.push(`GET /crud/items/200001: id ${back.id}`);
    await read("/crud/items/200001");
    const put = await exchange(port, {
      method: "PUT",
      path: "/crud/items/200001",
      headers: json,
      body: '{"name":"UpdatedItem","category":"test","price":99,"quantity":1}',
    });
    const after = (await read("/crud/items/200001")).res.headers["x-cache"];
    if (put.status !== 200 || after !== "MISS") problems.push(`PUT /crud/items/200001: HTTP ${put.status}, then X-Cache ${after}, expected 200 then MISS`);
  },

  async "echo-ws"({ port }, problems) {
    // The handshake, by hand: a random key, and the Accept RFC 6455 derives from it.
    const key = randomBytes(16).toString("base64");
    const { text: handshake } = await splitWrites(
      port,
      [`GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`],
      300,
    );
    if (!/^HTTP\/1\.1 101/.test(handshake)) problems.push(`/ws upgrade: ${JSON.stringify(handshake.slice(0, 40))}, expected 101 Switching Protocols`);
    const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
    if (/^sec-websocket-accept:\s*(\S+)/im.exec(handshake)?.[1] !== accept)
      problems.push(`/ws Sec-WebSocket-Accept: ${JSON.stringify(/^sec-websocket-accept:.*$/im.exec(handshake)?.[0])}, expected ${accept}`);
    await withSocket(port, async ({ ws, res, next }) => {
      if (res.statusCode !== 101) problems.push(`/ws upgrade (ws client): status ${res.statusCode}, expected 101`);
      const text = `HttpArena-validate-${randomBytes(4).toString("hex")}`;
      ws.send(text);
      const echoed = await next();
      if (echoed.isBinary || echoed.data.toString() !== text) problems.push("/ws text echo: a different message or not text");
      const bytes = randomBytes(256);
      ws.send(bytes, { binary: true });
      const echoedBytes = await next();
      if (!echoedBytes.isBinary || !echoedBytes.data.equals(bytes)) problems.push("/ws binary echo: different bytes or not binary");
      const burst = Array.from({ length: 5 }, (_, i) => `msg-${i}-${randomBytes(4).toString("hex")}`);
      for (const m of burst) ws.send(m);
      const back = [];
      for (let i = 0; i < burst.length; i++) back.push((await next()).data.toString());
      if (back.join() !== burst.join()) problems.push(`/ws 5 messages: echoed ${JSON.stringify(back)}, expected them in order`);
      const code = await new Promise((resolve) => {
        ws.once("close", (c) => resolve(c));
        ws.close(1000, "validate done");
      });
      if (code !== 1000) problems.push(`/ws close: the server closed with ${code}, expected 1000`);
    });
    const plain = await exchange(port, { path: "/ws" });
    if (!(plain.status >= 400 && plain.status < 500)) problems.push(`GET /ws without an upgrade: HTTP ${plain.status}, expected a 4xx`);
    await withSocket(port, async ({ ws, next }) => {
      ws.send("health");
      if ((await next()).data.toString() !== "health") problems.push("/ws health check after validation: no echo");
      await new Promise((resolve) => {
        ws.once("close", resolve);
        ws.close(1000);
      });
    });
  },

  // The async profile (validate.sh's "Async delay" section): GET /delay/{ms} answers ms after at
  // least ms (0.9 ms allowed for a timer that rounds down), as text/plain; the wait tracks the
  // parameter, and 32 overlapping requests each get their own.
  async async({ port }, problems) {
    const delay = async (what, ms, minSecs) => {
      const res = await timed(port, { path: `/delay/${ms}` });
      const body =
        res.body
          .toString()
          .split("\n")
          .filter((l) => l !== "")
          .pop() ?? "";
      if (res.status !== 200) problems.push(`${what}: status ${res.status}, expected 200`);
      else if (body !== String(ms)) problems.push(`${what}: body ${JSON.stringify(body)}, expected ${ms}`);
      else if (res.secs < minSecs) problems.push(`${what}: answered in ${res.secs}s, short of the ${ms}ms it was asked to wait`);
      return res;
    };
    const ms = randomInt(10, 91);
    const random = await delay(`GET /delay/${ms} (random)`, ms, (ms / 1000) * 0.9);
    if (!headerIs(random.headers["content-type"], "text/plain"))
      problems.push(`GET /delay/${ms} Content-Type: ${random.headers["content-type"]}, expected text/plain`);
    const zero = await exchange(port, { path: "/delay/0" });
    if (zero.body.toString().trim() !== "0") problems.push(`GET /delay/0: body ${JSON.stringify(zero.body.toString().slice(0, 40))}, expected 0`);
    const short = await delay("GET /delay/10", 10, 0.008);
    const long = await delay("GET /delay/500", 500, 0.45);
    if (long.secs - short.secs < 0.3) problems.push(`/delay/500 vs /delay/10: ${short.secs}s vs ${long.secs}s — the delay does not track the parameter`);
    if (short.secs > 2) problems.push(`/delay/10: took ${short.secs}s for a 10ms delay`);
    // 13 is coprime with 400: 32 distinct delays from 100 to 499 ms, all in flight at once.
    const batch = await Promise.all(
      Array.from({ length: 32 }, (_, i) => 100 + (((i + 1) * 13) % 400)).map(async (want) => ({ want, res: await timed(port, { path: `/delay/${want}` }) })),
    );
    const bad = batch.find(({ want, res }) => res.status !== 200 || res.body.toString().trim() !== String(want) || res.secs < (want / 1000) * 0.9);
    if (bad)
      problems.push(
        `32 overlapping requests: /delay/${bad.want} answered ${bad.res.status} ${JSON.stringify(bad.res.body.toString().slice(0, 20))} in ${bad.res.secs}s`,
      );
  },

  // The gRPC profiles: h2c with prior knowledge on the HTTP/1.1 port (8080), which goes on serving
  // HTTP/1.1 beside it; TLS on 8443.
  async "unary-grpc"({ port }, problems) {
    await unaryGrpc(port, false, problems);
    const h1 = await exchange(port, { path: "/baseline11?a=1&b=2" });
    if (h1.body.toString().trim() !== "3")
      problems.push(`port ${port}: HTTP/1.1 beside h2c answered ${h1.status} ${JSON.stringify(h1.body.toString().slice(0, 40))}`);
  },
  async "unary-grpc-tls"({ h2Port }, problems) {
    await unaryGrpc(h2Port, true, problems);
  },
  async "stream-grpc"({ port }, problems) {
    await streamGrpc(port, false, problems);
  },
  async "stream-grpc-tls"({ h2Port }, problems) {
    await streamGrpc(h2Port, true, problems);
  },

  // The echo profiles (8gbit, echo-10k, echo-100k; their validation pages): POST /echo over TLS on the
  // json-tls port, ALPN http/1.1, every body back byte for byte: random ones of 1 B, 1 KB, 10 KB and
  // 100 KB, 10 KB and 100 KB sent chunked (no Content-Length to answer from), and an empty one (200,
  // empty).
  async echo({ tlsPort }, problems) {
    const octets = { "content-type": "application/octet-stream" };
    const sent = [
      ...[
        ["1 B", 1],
        ["1 KB", 1024],
        ["10 KB", 10_240],
        ["100 KB", 102_400],
      ].map(([what, size]) => [`${what} random body`, randomBytes(size), false]),
      ...[
        ["10 KB", 10_240],
        ["100 KB", 102_400],
      ].map(([what, size]) => [`${what} chunked body`, randomBytes(size), true]),
      ["empty body", Buffer.alloc(0), false],
    ];
    for (const [what, body, chunked] of sent) {
      const res = await exchangeTls(tlsPort, "/echo", {
        method: "POST",
        headers: octets,
        ...(chunked ? { chunks: [body.subarray(0, 4096), body.subarray(4096)] } : { body }),
      });
      if (res.version !== "1.1") problems.push(`POST /echo ${what}: HTTP/${res.version} over TLS, expected 1.1`);
      if (res.status !== 200) problems.push(`POST /echo ${what}: status ${res.status}, expected 200`);
      else if (!res.body.equals(body)) problems.push(`POST /echo ${what}: ${res.body.length} bytes back that are not the ${body.length} sent`);
    }
  },
};

/**
 * Runs HttpArena's validation for the `profiles` an entry lists (its meta.json `tests`), each group
 * of checks once however many listed profiles ask for it, as validate.sh does. Resolves the
 * problems found (empty: it passes); a profile validate.sh cannot check here is one.
 */
export async function checkHttpArena({ ports, profiles, staticDir: dir, certificate }) {
  const problems = [];
  for (const profile of profiles) if (!HTTPARENA_PROFILES.includes(profile)) problems.push(`${profile}: not a profile these checks cover`);
  for (const [group, enabling] of HTTPARENA_GROUPS) {
    if (!enabling.some((p) => profiles.includes(p))) continue;
    try {
      await HTTPARENA[group]({ ...ports, staticDir: dir, certificate }, problems);
    } catch (err) {
      problems.push(`${group}: ${err.message}`);
    }
  }
  return problems;
}

async function itemsById(sql, ids) {
  const rows = await sql`SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count FROM items WHERE id = ANY(${ids}::int[])`;
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        name: r.name,
        category: r.category,
        price: r.price,
        quantity: r.quantity,
        active: r.active,
        tags: r.tags,
        rating: { score: r.rating_score, count: r.rating_count },
      },
    ]),
  );
}

function decode(body, encoding) {
  if (encoding === "br") return brotliDecompressSync(body);
  if (encoding === "gzip") return gunzipSync(body);
  if (encoding === "deflate") return inflateSync(body);
  return body;
}

/** JSON text with object keys sorted: two answers with the same fields in another order are the same answer. */
function canonical(value) {
  return JSON.stringify(value, (_key, v) =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

function sameJson(text, value) {
  try {
    return canonical(JSON.parse(text)) === canonical(value);
  } catch {
    return false;
  }
}

/** Checks one answer; returns the parsed JSON body when it was JSON. */
function expect(problems, where, res, { status, type, text, json, bytes, cache }) {
  const before = problems.length;
  if (res.status !== status) problems.push(`${where}: status ${res.status}, expected ${status} (${JSON.stringify(res.body.toString("utf8").slice(0, 100))})`);
  const contentType = res.headers["content-type"] ?? "";
  if (type && !type.test(contentType)) problems.push(`${where}: Content-Type "${contentType}" does not match ${type}`);
  if (text !== undefined && res.body.toString("utf8") !== text)
    problems.push(`${where}: body ${JSON.stringify(res.body.toString("utf8").slice(0, 80))}, expected ${JSON.stringify(text)}`);
  if (bytes !== undefined && !res.body.equals(bytes)) problems.push(`${where}: ${res.body.length} bytes that differ from the file's ${bytes.length}`);
  if (cache !== undefined && res.headers["x-cache"] !== cache) problems.push(`${where}: X-Cache ${JSON.stringify(res.headers["x-cache"])}, expected ${cache}`);
  let parsed;
  if (json !== undefined || /json/.test(contentType)) {
    try {
      parsed = JSON.parse(res.body.toString("utf8"));
    } catch {
      parsed = undefined;
    }
  }
  if (json !== undefined && canonical(parsed) !== canonical(json))
    problems.push(`${where}: body ${res.body.toString("utf8").slice(0, 120)}, expected ${JSON.stringify(json).slice(0, 120)}`);
  return problems.length === before ? parsed : undefined;
}
