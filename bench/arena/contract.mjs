// What every arena server must answer, checked over real sockets before anything
// is timed (bench/run.mjs) and by test/contract/arena.test.ts: randomized inputs (so no
// answer can be cached), requests split across TCP writes, compressed and
// uncompressed negotiation, 404s, the cache header and upload counts. Answers
// that come from Postgres are compared with Postgres itself.
import { randomBytes, randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { STATIC_FILES, staticDir } from "./static-files.mjs";

export const DATASET = JSON.parse(readFileSync(new URL("../../examples/data/dataset.json", import.meta.url), "utf8"));
export const CATEGORIES = ["electronics", "tools", "clothing", "food", "toys", "office", "sports", "garden"];
export const STATIC_ACCEPT = "br;q=1, gzip;q=0.8";
const TYPES = { css: /^text\/css/, js: /^(text|application)\/javascript/, html: /^text\/html/, woff2: /^font\/woff2/, svg: /^image\/svg\+xml/, webp: /^image\/webp/, json: /^application\/(manifest\+)?json/ };

/** GET /json/:count?m= as it must come back. */
export function jsonAnswer(count, m) {
  const items = DATASET.slice(0, count).map((item) => ({ ...item, total: item.price * item.quantity * m }));
  return { items, count: items.length };
}

/** One HTTP exchange on a fresh connection, the body not decompressed. */
export function exchange(port, { method = "GET", path, headers = {}, body, chunks }) {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers, agent: false }, (res) => {
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

/** Writes `pieces` one by one, 15 ms apart, and resolves what came back once the server closed or went quiet. */
export function splitWrites(port, pieces, quietMs = 400) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
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
    socket.on("connect", async () => {
      for (const piece of pieces) {
        socket.write(piece);
        await new Promise((r) => setTimeout(r, 15));
      }
      arm();
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
    const chunked = await exchange(port, { method: "POST", path: `/baseline11?a=${a}&b=${b}`, headers: { "content-type": "text/plain" }, chunks: [digits.slice(0, 1), digits.slice(1)] });
    expect(problems, "POST /baseline11 (chunked)", chunked, { status: 200, type: /^text\/plain/, text: String(a + b + c) });
    const head = `POST /baseline11?a=${a}&b=${b} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${digits.length}\r\nConnection: close\r\n\r\n`;
    const split = await splitWrites(port, [head.slice(0, 7), head.slice(7, 40), head.slice(40), digits.slice(0, 1), digits.slice(1)]);
    if (!split.text.startsWith("HTTP/1.1 200") || bodyOf(split.text) !== String(a + b + c)) problems.push(`POST /baseline11 split across 5 TCP writes: got ${JSON.stringify(split.text.slice(0, 120))}, expected 200 and ${a + b + c}`);
    const missing = await exchange(port, { path: `/no-such-route-${randomInt(1e9)}` });
    if (missing.status !== 404) problems.push(`GET /no-such-route: status ${missing.status}, expected 404`);
  },

  async pipelined({ port }, problems) {
    const { text } = await splitWrites(port, ["GET /pipeline HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(16)]);
    const answers = text.split(/(?=HTTP\/1\.1 )/).filter(Boolean);
    if (answers.length !== 16 || !answers.every((r) => r.startsWith("HTTP/1.1 200") && bodyOf(r) === "ok")) problems.push(`16 pipelined GET /pipeline: got ${answers.length} answers (${JSON.stringify(text.slice(0, 100))}…), expected 16 × 200 "ok"`);
  },

  async "limited-conn"({ port }, problems) {
    const [a, b] = [randomInt(1, 10_000), randomInt(1, 10_000)];
    const keep = `GET /baseline11?a=${a}&b=${b} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const last = `GET /baseline11?a=${b}&b=${a} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
    const { text, closed } = await splitWrites(port, [...Array(9).fill(keep), last], 2000);
    const answers = text.split(/(?=HTTP\/1\.1 )/).filter(Boolean);
    if (answers.length !== 10 || !answers.every((r) => r.startsWith("HTTP/1.1 200") && bodyOf(r) === String(a + b))) problems.push(`10 GET /baseline11 on one connection: got ${answers.length} answers, expected 10 × 200 "${a + b}"`);
    if (!closed) problems.push("GET /baseline11 with Connection: close: the server kept the connection open");
  },

  async json({ port }, problems) {
    for (const [count, m] of [[randomInt(1, 50), randomInt(2, 10)], [50, randomInt(2, 10)], [1, randomInt(2, 10)]]) {
      const res = await exchange(port, { path: `/json/${count}?m=${m}` });
      expect(problems, `GET /json/${count}?m=${m}`, res, { status: 200, type: /^application\/json/, json: jsonAnswer(count, m) });
      if (res.headers["content-encoding"] !== undefined) problems.push(`GET /json/${count} without Accept-Encoding: Content-Encoding ${res.headers["content-encoding"]}`);
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
      expect(problems, `GET /json/${count}?m=${m} (${used ?? "identity"})`, { ...res, body: decode(res.body, used) }, { status: 200, type: /^application\/json/, json: jsonAnswer(count, m) });
    }
    const plain = await exchange(port, { path: "/json/40?m=3" });
    if (plain.headers["content-encoding"] !== undefined) problems.push(`GET /json/40 without Accept-Encoding: Content-Encoding ${plain.headers["content-encoding"]}, expected none`);
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

  async static({ port }, problems) {
    const dir = staticDir();
    for (const { name } of STATIC_FILES) {
      const file = readFileSync(join(dir, name));
      const type = TYPES[name.slice(name.lastIndexOf(".") + 1)];
      const res = await exchange(port, { path: `/static/${name}`, headers: { "accept-encoding": STATIC_ACCEPT } });
      const used = res.headers["content-encoding"];
      if (used !== undefined && used !== "br" && used !== "gzip") problems.push(`GET /static/${name}: Content-Encoding ${used}, expected br, gzip or none`);
      else expect(problems, `GET /static/${name} (${used ?? "identity"})`, { ...res, body: decode(res.body, used) }, { status: 200, type, bytes: file });
      const plain = await exchange(port, { path: `/static/${name}` });
      if (plain.headers["content-encoding"] !== undefined) problems.push(`GET /static/${name} without Accept-Encoding: Content-Encoding ${plain.headers["content-encoding"]}`);
      else expect(problems, `GET /static/${name} (identity)`, plain, { status: 200, type, bytes: file });
    }
    const missing = await exchange(port, { path: `/static/missing-${randomInt(1e9)}.css`, headers: { "accept-encoding": STATIC_ACCEPT } });
    if (missing.status !== 404) problems.push(`GET /static/missing.css: status ${missing.status}, expected 404`);
    const { text } = await splitWrites(port, ["GET /static/%2e%2e/%2e%2e/package.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"]);
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
    const rows = await itemsById(sql, parsed.items.map((i) => i.id));
    for (const item of parsed.items) {
      if (item.price < min || item.price > max) problems.push(`${where}: item ${item.id} has price ${item.price}`);
      if (canonical(item) !== canonical(rows.get(item.id))) problems.push(`${where}: item ${JSON.stringify(item)} differs from the database's ${JSON.stringify(rows.get(item.id))}`);
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
    expect(problems, `GET /crud/items?category=${category}&page=${page}&limit=${limit}`, list, { status: 200, type: /^application\/json/, json: { items: expected.map((id) => byId.get(id)), total: expected.length, page, limit } });

    const id = randomInt(1, rows + 1);
    const [item] = (await itemsById(sql, [id])).values();
    const read = (what) => exchange(port, { path: `/crud/items/${id}` }).then((res) => ({ res, what }));
    for (const [cache, what] of [["MISS", "first read"], ["HIT", "second read"]]) {
      const { res } = await read(what);
      expect(problems, `GET /crud/items/${id} (${what})`, res, { status: 200, type: /^application\/json/, json: item, cache });
    }
    await new Promise((r) => setTimeout(r, 250));
    expect(problems, `GET /crud/items/${id} (after the 200 ms TTL)`, (await read()).res, { status: 200, type: /^application\/json/, json: item, cache: "MISS" });

    const missing = await exchange(port, { path: `/crud/items/${10_000_000 + randomInt(1e6)}` });
    if (missing.status !== 404) problems.push(`GET /crud/items/<absent>: status ${missing.status}, expected 404`);

    const created = { id: 900_000 + randomInt(100_000), name: `Arena ${randomInt(1e9)}`, category: "test", price: randomInt(1, 500), quantity: randomInt(1, 100) };
    const full = { ...created, active: true, tags: [], rating: { score: 0, count: 0 } };
    const json = { "content-type": "application/json" };
    const text = JSON.stringify(created);
    const head = `POST /crud/items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n`;
    const split = await splitWrites(port, [head.slice(0, 20), head.slice(20), text.slice(0, 9), text.slice(9)]);
    if (!split.text.startsWith("HTTP/1.1 201") || !sameJson(bodyOf(split.text), full)) problems.push(`POST /crud/items split across 4 TCP writes: got ${JSON.stringify(split.text.slice(0, 160))}, expected 201 and ${JSON.stringify(full)}`);
    expect(problems, `GET /crud/items/${created.id} (created)`, await exchange(port, { path: `/crud/items/${created.id}` }), { status: 200, type: /^application\/json/, json: full, cache: "MISS" });
    const again = await exchange(port, { method: "POST", path: "/crud/items", headers: json, body: JSON.stringify({ ...created, name: "Upserted" }) });
    expect(problems, "POST /crud/items (existing id: upsert)", again, { status: 201, type: /^application\/json/, json: { ...full, name: "Upserted" } });

    const changes = { name: `Changed ${randomInt(1e9)}`, price: randomInt(1, 500), quantity: randomInt(1, 100) };
    await exchange(port, { path: `/crud/items/${created.id}` });
    const put = await exchange(port, { method: "PUT", path: `/crud/items/${created.id}`, headers: json, body: JSON.stringify(changes) });
    expect(problems, `PUT /crud/items/${created.id}`, put, { status: 200, type: /^application\/json/, json: { ...full, ...changes } });
    expect(problems, `GET /crud/items/${created.id} (after PUT: invalidated)`, await exchange(port, { path: `/crud/items/${created.id}` }), { status: 200, type: /^application\/json/, json: { ...full, ...changes }, cache: "MISS" });
    await sql`DELETE FROM items WHERE id = ${created.id}`;

    const absent = await exchange(port, { method: "PUT", path: `/crud/items/${10_000_000 + randomInt(1e6)}`, headers: json, body: JSON.stringify(changes) });
    if (absent.status !== 404) problems.push(`PUT /crud/items/<absent>: status ${absent.status}, expected 404`);
    for (const [what, body] of [["price as text", { ...created, price: "cheap" }], ["no name", { ...created, name: undefined }], ["not JSON", "{"]]) {
      const bad = await exchange(port, { method: "POST", path: "/crud/items", headers: json, body: typeof body === "string" ? body : JSON.stringify(body) });
      if (bad.status !== 400) problems.push(`POST /crud/items with ${what}: status ${bad.status}, expected 400`);
    }
  },
};

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

async function itemsById(sql, ids) {
  const rows = await sql`SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count FROM items WHERE id = ANY(${ids}::int[])`;
  return new Map(rows.map((r) => [r.id, { id: r.id, name: r.name, category: r.category, price: r.price, quantity: r.quantity, active: r.active, tags: r.tags, rating: { score: r.rating_score, count: r.rating_count } }]));
}

function decode(body, encoding) {
  if (encoding === "br") return brotliDecompressSync(body);
  if (encoding === "gzip") return gunzipSync(body);
  return body;
}

/** JSON text with object keys sorted: two answers with the same fields in another order are the same answer. */
function canonical(value) {
  return JSON.stringify(value, (_key, v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));
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
  if (text !== undefined && res.body.toString("utf8") !== text) problems.push(`${where}: body ${JSON.stringify(res.body.toString("utf8").slice(0, 80))}, expected ${JSON.stringify(text)}`);
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
  if (json !== undefined && canonical(parsed) !== canonical(json)) problems.push(`${where}: body ${res.body.toString("utf8").slice(0, 120)}, expected ${JSON.stringify(json).slice(0, 120)}`);
  return problems.length === before ? parsed : undefined;
}
