// Fastify 5: @fastify/static (precompressed .br/.gz), @fastify/compress, its own
// ajv for validation, a content-type parser that counts an upload as it streams.
import compress from "@fastify/compress";
import fastifyStatic from "@fastify/static";
import { setTimeout as sleep } from "node:timers/promises";
import Fastify from "fastify";
import { DB_QUERY, DELAY_PARAMS, ID_PARAMS, ITEM_CHANGES, JSON_PARAMS, JSON_QUERY, LIST_QUERY, NEW_ITEM } from "../schemas.mjs";
import { PORT, STATIC_DIR, clampLimit, jsonItems, store } from "./common.mjs";

const app = Fastify({ logger: false, bodyLimit: 32 * 1024 * 1024 });
await app.register(compress, { global: false });
await app.register(fastifyStatic, { root: STATIC_DIR, prefix: "/static/", preCompressed: true });
app.addContentTypeParser("text/plain", { parseAs: "string" }, (_req, body, done) => done(null, body));
app.addContentTypeParser("application/octet-stream", (_req, payload, done) => {
  let bytes = 0;
  payload.on("data", (chunk) => (bytes += chunk.length));
  payload.on("end", () => done(null, bytes));
  payload.on("error", done);
});

app.get("/baseline11", (req, reply) => reply.send(String(Number(req.query.a) + Number(req.query.b))));
app.post("/baseline11", (req, reply) => reply.send(String(Number(req.query.a) + Number(req.query.b) + Number(req.body))));
app.get("/pipeline", (_req, reply) => reply.send("ok"));
const jsonRoute = { schema: { params: JSON_PARAMS, querystring: JSON_QUERY } };
// One route serves both: @fastify/compress answers by Accept-Encoding (identity without one).
app.get("/json/:count", { ...jsonRoute, compress: {} }, (req, reply) => reply.send(jsonItems(req.params.count, req.query.m)));
app.post("/upload", (req, reply) => reply.send(String(req.body)));
// async: the answer held back for the milliseconds the path names, on a timer.
app.get("/delay/:ms", { schema: { params: DELAY_PARAMS } }, async (req, reply) => {
  await sleep(req.params.ms);
  return reply.type("text/plain").send(String(req.params.ms));
});

if (store) {
  app.get("/async-db", { schema: { querystring: DB_QUERY } }, async (req) => {
    const items = await store.priceRange(req.query.min, req.query.max, clampLimit(req.query.limit));
    return { items, count: items.length };
  });
  app.get("/crud/items", { schema: { querystring: LIST_QUERY } }, async (req) => {
    const { category, page, limit } = req.query;
    const items = await store.list(category, page, limit);
    return { items, total: items.length, page, limit };
  });
  app.get("/crud/items/:id", { schema: { params: ID_PARAMS } }, async (req, reply) => {
    const { item, cache } = await store.get(req.params.id);
    reply.header("X-Cache", cache);
    if (item === undefined) return reply.code(404).send(`No item ${req.params.id}`);
    return item;
  });
  app.post("/crud/items", { schema: { body: NEW_ITEM } }, async (req, reply) => reply.code(201).send(await store.upsert(req.body)));
  app.put("/crud/items/:id", { schema: { params: ID_PARAMS, body: ITEM_CHANGES } }, async (req, reply) => {
    const item = await store.update(req.params.id, req.body);
    if (item === undefined) return reply.code(404).send(`No item ${req.params.id}`);
    return item;
  });
}

await app.listen({ port: PORT, host: "127.0.0.1" });
console.log("ready");
