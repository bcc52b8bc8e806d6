// The bare node:http server, hand-written: the ceiling on Node for every arena scenario but
// static (nginx is that one's). Same parsers as Cog (fast-querystring, ajv with coercion),
// gzip through node:zlib's async stream for json-comp, the request stream counted for uploads.
import { createServer } from "node:http";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import Ajv from "ajv";
import { parse as parseQuery } from "fast-querystring";
import { DB_QUERY, ID_PARAMS, ITEM_CHANGES, JSON_PARAMS, JSON_QUERY, LIST_QUERY, NEW_ITEM } from "../schemas.mjs";
import { PORT, clampLimit, jsonItems, store } from "./common.mjs";

const TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";
const gzipAsync = promisify(gzip);
const coercing = new Ajv({ coerceTypes: true, useDefaults: true, strict: false });
const strict = new Ajv({ useDefaults: true, strict: false });
const check = {
  jsonParams: coercing.compile(JSON_PARAMS),
  jsonQuery: coercing.compile(JSON_QUERY),
  dbQuery: coercing.compile(DB_QUERY),
  listQuery: coercing.compile(LIST_QUERY),
  id: coercing.compile(ID_PARAMS),
  newItem: strict.compile(NEW_ITEM),
  itemChanges: strict.compile(ITEM_CHANGES),
};

function send(res, status, type, body, headers = {}) {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body), ...headers });
  res.end(body);
}
const sendJson = (res, status, value, headers) => send(res, status, JSON_TYPE, JSON.stringify(value), headers);

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

async function readJson(req, validate, res) {
  let body;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    sendJson(res, 400, { error: "Invalid JSON body" });
    return undefined;
  }
  if (validate(body)) return body;
  sendJson(res, 400, { errors: validate.errors });
  return undefined;
}

const valid = (validate, value, res) => (validate(value) ? value : (sendJson(res, 400, { errors: validate.errors }), undefined));

async function handle(req, res) {
  const url = req.url;
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? {} : parseQuery(url.slice(q + 1));
  const method = req.method;
  if (path === "/baseline11") {
    const sum = Number(query.a) + Number(query.b);
    if (method === "GET") return send(res, 200, TEXT, String(sum));
    if (method === "POST") return send(res, 200, TEXT, String(sum + Number(await readBody(req))));
  }
  if (path === "/pipeline" && method === "GET") return send(res, 200, TEXT, "ok");
  // The async profile (and bench/arena/held.mjs): the answer held back for the milliseconds the path names.
  if (path.startsWith("/delay/") && method === "GET") {
    const raw = path.slice(7);
    const ms = Number(raw);
    if (!/^\d+$/.test(raw) || ms > 10_000) return send(res, 400, TEXT, "Bad Request");
    setTimeout(() => send(res, 200, TEXT, String(ms)), ms);
    return;
  }
  if (path.startsWith("/json/") && method === "GET") {
    const params = valid(check.jsonParams, { count: path.slice(6) }, res);
    if (!params || !valid(check.jsonQuery, query, res)) return;
    const body = JSON.stringify(jsonItems(params.count, query.m));
    if (!/\bgzip\b/.test(req.headers["accept-encoding"] ?? "")) return send(res, 200, JSON_TYPE, body);
    const compressed = await gzipAsync(body);
    res.writeHead(200, { "content-type": JSON_TYPE, "content-encoding": "gzip", "content-length": compressed.length, vary: "Accept-Encoding" });
    return res.end(compressed);
  }
  if (path === "/upload" && method === "POST") {
    let bytes = 0;
    for await (const chunk of req) bytes += chunk.length;
    return send(res, 200, TEXT, String(bytes));
  }
  if (store && path === "/async-db" && method === "GET") {
    if (!valid(check.dbQuery, query, res)) return;
    const items = await store.priceRange(query.min, query.max, clampLimit(query.limit));
    return sendJson(res, 200, { items, count: items.length });
  }
  if (store && path === "/crud/items") {
    if (method === "GET") {
      if (!valid(check.listQuery, query, res)) return;
      const items = await store.list(query.category, query.page, query.limit);
      return sendJson(res, 200, { items, total: items.length, page: query.page, limit: query.limit });
    }
    if (method === "POST") {
      const body = await readJson(req, check.newItem, res);
      if (body) sendJson(res, 201, await store.upsert(body));
      return;
    }
  }
  if (store && path.startsWith("/crud/items/")) {
    const params = valid(check.id, { id: path.slice(12) }, res);
    if (!params) return;
    if (method === "GET") {
      const { item, cache } = await store.get(params.id);
      if (item === undefined) return send(res, 404, TEXT, `No item ${params.id}`, { "x-cache": cache });
      return sendJson(res, 200, item, { "x-cache": cache });
    }
    if (method === "PUT") {
      const body = await readJson(req, check.itemChanges, res);
      if (!body) return;
      const item = await store.update(params.id, body);
      return item === undefined ? send(res, 404, TEXT, `No item ${params.id}`) : sendJson(res, 200, item);
    }
  }
  send(res, 404, TEXT, "Not Found");
}

createServer((req, res) => {
  handle(req, res).catch((err) => {
    console.error(err);
    if (!res.headersSent) send(res, 500, TEXT, "Internal Server Error");
  });
}).listen(PORT, "127.0.0.1", () => console.log("ready"));
