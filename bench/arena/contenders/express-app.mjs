// The arena on the Express API, shared by Express 5 and ultimate-express: express.static
// (no precompressed variants: it sends files as they are), the compression middleware on
// the JSON route, express.text/express.json for bodies, zod for validation, the request
// stream read for uploads.
import compression from "compression";
import { Z } from "../schemas.mjs";
import { STATIC_DIR, clampLimit, jsonItems, store } from "./common.mjs";

/** Runs a zod schema over a request part: the parsed value, or undefined after answering 400. */
function valid(schema, value, res) {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  res.status(400).json({ issues: result.error.issues });
  return undefined;
}

export function buildExpressArena(express) {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.use("/static", express.static(STATIC_DIR, { etag: false }));
  app.get("/baseline11", (req, res) => res.type("text").send(String(Number(req.query.a) + Number(req.query.b))));
  app.post("/baseline11", express.text(), (req, res) => res.type("text").send(String(Number(req.query.a) + Number(req.query.b) + Number(req.body))));
  app.get("/pipeline", (_req, res) => res.type("text").send("ok"));
  app.get("/json/:count", compression(), (req, res) => {
    const params = valid(Z.jsonParams, req.params, res);
    const query = params && valid(Z.jsonQuery, req.query, res);
    if (query) res.json(jsonItems(params.count, query.m));
  });
  app.post("/upload", async (req, res) => {
    let bytes = 0;
    for await (const chunk of req) bytes += chunk.length;
    res.type("text").send(String(bytes));
  });
  if (store) {
    app.get("/async-db", async (req, res) => {
      const query = valid(Z.dbQuery, req.query, res);
      if (!query) return;
      const items = await store.priceRange(query.min, query.max, clampLimit(query.limit));
      res.json({ items, count: items.length });
    });
    app.get("/crud/items", async (req, res) => {
      const query = valid(Z.listQuery, req.query, res);
      if (!query) return;
      const items = await store.list(query.category, query.page, query.limit);
      res.json({ items, total: items.length, page: query.page, limit: query.limit });
    });
    app.get("/crud/items/:id", async (req, res) => {
      const params = valid(Z.id, req.params, res);
      if (!params) return;
      const { item, cache } = await store.get(params.id);
      res.set("X-Cache", cache);
      if (item === undefined) return res.status(404).type("text").send(`No item ${params.id}`);
      res.json(item);
    });
    app.post("/crud/items", express.json(), async (req, res) => {
      const body = valid(Z.newItem, req.body, res);
      if (body) res.status(201).json(await store.upsert(body));
    });
    app.put("/crud/items/:id", express.json(), async (req, res) => {
      const params = valid(Z.id, req.params, res);
      const body = params && valid(Z.itemChanges, req.body, res);
      if (!body) return;
      const item = await store.update(params.id, body);
      if (item === undefined) return res.status(404).type("text").send(`No item ${params.id}`);
      res.json(item);
    });
  }
  return app;
}
