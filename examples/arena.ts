// The arena: a realistic Cog app, serving HttpArena's workloads with Cog's
// documented features only. Query strings and bodies, JSON of real size through
// a response schema, Postgres through a pooled driver, a cache-aside with a TTL,
// and schemas that validate what clients send; static files with their precompressed
// variants, compressed JSON, streamed uploads and a WebSocket echo.
//
//   DATABASE_URL=postgres://… [REDIS_URL=redis://…] [STATIC_DIR=…] [COG_ENGINE=native] [PORT=8080] npx tsx examples/arena.ts
//
// `node bench/arena/database.mjs` starts a seeded Postgres and prints its DATABASE_URL;
// `node bench/arena/static-files.mjs` writes the static files and prints their STATIC_DIR.
import { readFileSync } from "node:fs";
import { Type } from "@sinclair/typebox";
import { Cog, HttpError, serveStatic } from "cog-http";
import { openStore, type Item } from "./arena-store.js";

const dataset: Item[] = JSON.parse(readFileSync(new URL("./data/dataset.json", import.meta.url), "utf8"));

const ItemSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  category: Type.String(),
  price: Type.Integer(),
  quantity: Type.Integer(),
  active: Type.Boolean(),
  tags: Type.Array(Type.String()),
  rating: Type.Object({ score: Type.Integer(), count: Type.Integer() }),
});
// Numbers that reach Postgres's integer columns are bounded as they are: a larger one would be
// the database's error, a 500, where the client's mistake deserves a 400.
const Int32 = (options: { minimum?: number; default?: number } = {}) => Type.Integer({ minimum: -2147483648, maximum: 2147483647, ...options });
// Postgres's text holds no NUL character: refused here, it is a 400 rather than the database's 500.
const Text = (options: { minLength?: number; maxLength?: number; default?: string } = {}) => Type.String({ pattern: "^[^\\u0000]*$", ...options });
const Id = Type.Object({ id: Int32({ minimum: 1 }) });
// Cog's error body: what a thrown HttpError answers, declared so the OpenAPI document describes it.
const NotFound = Type.Object({ statusCode: Type.Integer(), error: Type.String(), message: Type.String() }, { description: "No item has this id" });
const Page = (limit: number) => Type.Object({ items: Type.Array(ItemSchema), count: Type.Integer() }, { description: `at most ${limit} items` });

// ARENA_VALIDATION=off drops the request schemas (params, query, body; the response schemas
// stay), so the bench can measure what validation costs (bench/arena/validation.mjs). The
// handlers convert with Number() and apply defaults themselves, which is a no-op when the
// schemas have done it.
const validating = process.env.ARENA_VALIDATION !== "off";
function requests<S extends { params?: unknown; query?: unknown; body?: unknown }>(schema: S): S {
  return validating ? schema : { ...schema, params: undefined, query: undefined, body: undefined };
}

const app = new Cog({ engine: process.env.COG_ENGINE === "native" ? "native" : "node" });
const databaseUrl = process.env.DATABASE_URL;
const store = databaseUrl ? await openStore({ databaseUrl, redisUrl: process.env.REDIS_URL }) : undefined;

// Plain HTTP: the query's two numbers, plus the body's on POST (sent with Content-Length or chunked).
app.get("/baseline", (req, res) => {
  res.send(String(Number(req.query.a) + Number(req.query.b)));
});
app.post("/baseline", (req, res) => {
  res.send(String(Number(req.query.a) + Number(req.query.b) + Number(String(req.body))));
});

app.get("/pipeline", (_req, res) => {
  res.send("ok");
});

// JSON of real size: the first `count` items, each with a computed total, written by the response
// schema's serializer, and compressed when the client's Accept-Encoding asks for it.
app.get(
  "/json/:count",
  {
    compress: true,
    schema: requests({
      params: Type.Object({ count: Type.Integer({ minimum: 0, maximum: dataset.length }) }),
      query: Type.Object({ m: Int32({ default: 1 }) }),
      response: { 200: Type.Object({ items: Type.Array(Type.Composite([ItemSchema, Type.Object({ total: Type.Integer() })])), count: Type.Integer() }) },
    }),
  },
  (req, res) => {
    const m = Number(req.query.m ?? 1);
    // Fields listed rather than spread ({ ...item, total }): on Node 20, the response schema's
    // serializer reads objects made by a spread 4x slower than literal ones (Node 24 doesn't care).
    const items = dataset.slice(0, Number(req.params.count)).map(({ id, name, category, price, quantity, active, tags, rating }) => ({ id, name, category, price, quantity, active, tags, rating, total: price * quantity * m }));
    res.json({ items, count: items.length });
  },
);

// Uploads: the body is read as it arrives (never held whole) and its bytes counted.
app.post("/upload", { body: "stream", bodyLimit: 64 * 1024 * 1024 }, async (req, res) => {
  let bytes = 0;
  for await (const chunk of req) bytes += (chunk as Buffer).length;
  res.send(String(bytes));
});

// Static files, with the .br/.gz written beside them preferred when the client accepts them.
if (process.env.STATIC_DIR) app.use("/static", serveStatic(process.env.STATIC_DIR, { precompressed: true }));

// A WebSocket that echoes every message.
app.ws("/ws", { message: (ws, data, isBinary) => void ws.send(data, isBinary) });

if (store) {
  app.get(
    "/async-db",
    {
      schema: {
        query: Type.Object({ min: Int32({ default: 10 }), max: Int32({ default: 50 }), limit: Int32({ default: 50 }) }),
        response: { 200: Page(50) },
      },
    },
    async (req, res) => {
      const { min, max } = req.query;
      const items = await store.priceRange(min, max, Math.min(Math.max(req.query.limit, 1), 50));
      res.json({ items, count: items.length });
    },
  );

  app.group("/crud/items", (crud) => {
    crud.get(
      "/",
      {
        schema: requests({
          query: Type.Object({ category: Text({ default: "electronics" }), page: Int32({ minimum: 1, default: 1 }), limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }) }),
          response: { 200: Type.Object({ items: Type.Array(ItemSchema), total: Type.Integer(), page: Type.Integer(), limit: Type.Integer() }) },
        }),
      },
      async (req, res) => {
        const category = req.query.category ?? "electronics";
        const page = Number(req.query.page ?? 1);
        const limit = Number(req.query.limit ?? 10);
        const items = await store.list(category, page, limit);
        res.json({ items, total: items.length, page, limit });
      },
    );

    crud.get("/:id", { schema: requests({ params: Id, response: { 200: ItemSchema, 404: NotFound } }) }, async (req, res) => {
      const { item, cache } = await store.get(Number(req.params.id));
      res.set("X-Cache", cache);
      if (item === undefined) throw new HttpError(404, `No item ${req.params.id}`);
      res.json(item);
    });

    crud.post(
      "/",
      {
        schema: requests({
          body: Type.Object({ id: Int32({ minimum: 1 }), name: Text({ minLength: 1, maxLength: 200 }), category: Text({ minLength: 1, maxLength: 50 }), price: Int32({ minimum: 0 }), quantity: Int32({ minimum: 0 }) }),
          response: { 201: ItemSchema },
        }),
      },
      async (req, res) => {
        res.json(await store.upsert(req.body), 201);
      },
    );

    crud.put(
      "/:id",
      {
        schema: requests({
          params: Id,
          body: Type.Object({ name: Text({ minLength: 1, maxLength: 200 }), price: Int32({ minimum: 0 }), quantity: Int32({ minimum: 0 }) }),
          response: { 200: ItemSchema, 404: NotFound },
        }),
      },
      async (req, res) => {
        const item = await store.update(Number(req.params.id), req.body);
        if (item === undefined) throw new HttpError(404, `No item ${req.params.id}`);
        res.json(item);
      },
    );
  });
}

// The API's description, from the routes' schemas (the WebSocket route is left out).
app.get("/openapi.json", (_req, res) => res.json(app.openapi({ title: "Arena", version: "1.0.0" })));

const { port } = await app.listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? "127.0.0.1");
console.log(`arena on http://127.0.0.1:${port} (${app.engine} engine${store ? "" : "; no DATABASE_URL, so no /async-db or /crud"})`);
console.log("ready");

const shutDown = async () => {
  await app.close(1000);
  await store?.close();
  process.exit(0);
};
process.on("SIGTERM", shutDown);
process.on("SIGINT", shutDown);
