// The arena: a realistic Cog app, serving HttpArena's workloads with Cog's
// documented features only. Query strings and bodies, JSON of real size through
// a response schema, Postgres through a pooled driver, a cache-aside with a TTL,
// and schemas that validate what clients send.
//
//   DATABASE_URL=postgres://… [REDIS_URL=redis://…] [COG_ENGINE=native] [PORT=8080] npx tsx examples/arena.ts
//
// `node bench/arena/database.mjs` starts a seeded Postgres and prints its DATABASE_URL.
import { readFileSync } from "node:fs";
import { Type } from "@sinclair/typebox";
import { Cog } from "cog-http";
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
const Id = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const Page = (limit: number) => Type.Object({ items: Type.Array(ItemSchema), count: Type.Integer() }, { description: `at most ${limit} items` });

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

// JSON of real size: the first `count` items, each with a computed total, written by the response schema's serializer.
app.get(
  "/json/:count",
  {
    schema: {
      params: Type.Object({ count: Type.Integer({ minimum: 0, maximum: dataset.length }) }),
      query: Type.Object({ m: Type.Integer({ default: 1 }) }),
      response: { 200: Type.Object({ items: Type.Array(Type.Composite([ItemSchema, Type.Object({ total: Type.Integer() })])), count: Type.Integer() }) },
    },
  },
  (req, res) => {
    const { m } = req.query;
    const items = dataset.slice(0, req.params.count).map((item) => ({ ...item, total: item.price * item.quantity * m }));
    res.json({ items, count: items.length });
  },
);

if (store) {
  app.get(
    "/async-db",
    {
      schema: {
        query: Type.Object({ min: Type.Integer({ default: 10 }), max: Type.Integer({ default: 50 }), limit: Type.Integer({ default: 50 }) }),
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
        schema: {
          query: Type.Object({ category: Type.String({ default: "electronics" }), page: Type.Integer({ minimum: 1, default: 1 }), limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }) }),
          response: { 200: Type.Object({ items: Type.Array(ItemSchema), total: Type.Integer(), page: Type.Integer(), limit: Type.Integer() }) },
        },
      },
      async (req, res) => {
        const { category, page, limit } = req.query;
        const items = await store.list(category, page, limit);
        res.json({ items, total: items.length, page, limit });
      },
    );

    crud.get("/:id", { schema: { params: Id, response: { 200: ItemSchema } } }, async (req, res) => {
      const { item, cache } = await store.get(req.params.id);
      res.set("X-Cache", cache);
      if (item === undefined) return res.status(404).send(`No item ${req.params.id}`);
      res.json(item);
    });

    crud.post(
      "/",
      {
        schema: {
          body: Type.Object({ id: Type.Integer({ minimum: 1 }), name: Type.String({ minLength: 1, maxLength: 200 }), category: Type.String({ minLength: 1, maxLength: 50 }), price: Type.Integer({ minimum: 0 }), quantity: Type.Integer({ minimum: 0 }) }),
          response: { 201: ItemSchema },
        },
      },
      async (req, res) => {
        res.json(await store.upsert(req.body), 201);
      },
    );

    crud.put(
      "/:id",
      {
        schema: {
          params: Id,
          body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), price: Type.Integer({ minimum: 0 }), quantity: Type.Integer({ minimum: 0 }) }),
          response: { 200: ItemSchema },
        },
      },
      async (req, res) => {
        const item = await store.update(req.params.id, req.body);
        if (item === undefined) return res.status(404).send(`No item ${req.params.id}`);
        res.json(item);
      },
    );
  });
}

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
