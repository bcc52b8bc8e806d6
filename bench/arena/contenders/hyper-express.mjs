// HyperExpress 6 on uWebSockets.js: zod for validation, the request stream read for
// uploads. It has no static handler and no compression of its own: those scenarios are
// listed as beyond it (bench/arena/contenders.mjs).
import { Writable } from "node:stream";
import { requireNativeUws } from "../../contenders/uws-native.mjs";
import { Z } from "../schemas.mjs";

requireNativeUws();
const { default: HyperExpress } = await import("hyper-express");
const { PORT, clampLimit, jsonItems, store } = await import("./common.mjs");

const server = new HyperExpress.Server({ max_body_length: 32 * 1024 * 1024 });
function valid(schema, value, res) {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  res.status(400).json({ issues: result.error.issues });
  return undefined;
}
server.get("/baseline11", (req, res) => res.type("text").send(String(Number(req.query_parameters.a) + Number(req.query_parameters.b))));
server.post("/baseline11", async (req, res) =>
  res.type("text").send(String(Number(req.query_parameters.a) + Number(req.query_parameters.b) + Number(await req.text()))),
);
server.get("/pipeline", (_req, res) => res.type("text").send("ok"));
server.get("/json/:count", (req, res) => {
  const params = valid(Z.jsonParams, req.path_parameters, res);
  const query = params && valid(Z.jsonQuery, req.query_parameters, res);
  if (query) res.json(jsonItems(params.count, query.m));
});
server.post("/upload", (req, res) => {
  let bytes = 0;
  const counter = new Writable({
    write(chunk, _encoding, done) {
      bytes += chunk.length;
      done();
    },
  });
  counter.on("finish", () => res.type("text").send(String(bytes)));
  req.pipe(counter);
});
if (store) {
  server.get("/async-db", async (req, res) => {
    const query = valid(Z.dbQuery, req.query_parameters, res);
    if (!query) return;
    const items = await store.priceRange(query.min, query.max, clampLimit(query.limit));
    res.json({ items, count: items.length });
  });
  server.get("/crud/items", async (req, res) => {
    const query = valid(Z.listQuery, req.query_parameters, res);
    if (!query) return;
    const items = await store.list(query.category, query.page, query.limit);
    res.json({ items, total: items.length, page: query.page, limit: query.limit });
  });
  server.get("/crud/items/:id", async (req, res) => {
    const params = valid(Z.id, req.path_parameters, res);
    if (!params) return;
    const { item, cache } = await store.get(params.id);
    res.header("X-Cache", cache);
    if (item === undefined) return res.status(404).type("text").send(`No item ${params.id}`);
    res.json(item);
  });
  const jsonBody = async (req, res) => {
    try {
      return await req.json();
    } catch {
      res.status(400).json({ error: "Invalid JSON body" });
      return undefined;
    }
  };
  server.post("/crud/items", async (req, res) => {
    const raw = await jsonBody(req, res);
    const body = raw !== undefined && valid(Z.newItem, raw, res);
    if (body) res.status(201).json(await store.upsert(body));
  });
  server.put("/crud/items/:id", async (req, res) => {
    const params = valid(Z.id, req.path_parameters, res);
    const raw = params && (await jsonBody(req, res));
    const body = raw !== undefined && raw !== false && valid(Z.itemChanges, raw, res);
    if (!body) return;
    const item = await store.update(params.id, body);
    if (item === undefined) return res.status(404).type("text").send(`No item ${params.id}`);
    res.json(item);
  });
}
await server.listen(PORT, "127.0.0.1");
console.log("ready");
