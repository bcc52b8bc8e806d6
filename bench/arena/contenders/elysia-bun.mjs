// Elysia 1 on Bun: its t schemas for validation (validation failures answered 400, as the
// others do, instead of Elysia's default 422), the request body stream read for uploads.
// Elysia has no compression of its own and @elysiajs/static is not installed here: those
// scenarios are listed as beyond it (bench/arena/contenders.mjs).
import { Elysia, t } from "elysia";
import { PORT, clampLimit, jsonItems, store } from "./common.mjs";

const int = (options = {}) => t.Numeric({ multipleOf: 1, ...options });
const app = new Elysia()
  .onError(({ code, error, set }) => {
    if (code === "VALIDATION" || code === "PARSE") {
      set.status = 400;
      return { error: String(error.message ?? error).slice(0, 500) };
    }
  })
  .get("/baseline11", ({ query }) => String(Number(query.a) + Number(query.b)))
  .post("/baseline11", ({ query, body }) => String(Number(query.a) + Number(query.b) + Number(body)))
  .get("/pipeline", () => "ok")
  .get("/json/:count", ({ params, query }) => jsonItems(params.count, query.m ?? 1), {
    params: t.Object({ count: int({ minimum: 0, maximum: 50 }) }),
    query: t.Object({ m: t.Optional(int()) }),
  })
  .post(
    "/upload",
    async ({ request }) => {
      let bytes = 0;
      for await (const chunk of request.body ?? []) bytes += chunk.length;
      return String(bytes);
    },
    { parse: "none" },
  );

if (store) {
  const Id = t.Object({ id: int({ minimum: 1 }) });
  app
    .get(
      "/async-db",
      async ({ query }) => {
        const items = await store.priceRange(query.min ?? 10, query.max ?? 50, clampLimit(query.limit ?? 50));
        return { items, count: items.length };
      },
      { query: t.Object({ min: t.Optional(int()), max: t.Optional(int()), limit: t.Optional(int()) }) },
    )
    .get(
      "/crud/items",
      async ({ query }) => {
        const { category = "electronics", page = 1, limit = 10 } = query;
        const items = await store.list(category, page, limit);
        return { items, total: items.length, page, limit };
      },
      { query: t.Object({ category: t.Optional(t.String()), page: t.Optional(int({ minimum: 1 })), limit: t.Optional(int({ minimum: 1, maximum: 50 })) }) },
    )
    .get(
      "/crud/items/:id",
      async ({ params, set }) => {
        const { item, cache } = await store.get(params.id);
        set.headers["x-cache"] = cache;
        if (item === undefined) {
          set.status = 404;
          return `No item ${params.id}`;
        }
        return item;
      },
      { params: Id },
    )
    .post(
      "/crud/items",
      async ({ body, set }) => {
        set.status = 201;
        return store.upsert(body);
      },
      {
        body: t.Object({
          id: t.Integer({ minimum: 1 }),
          name: t.String({ minLength: 1, maxLength: 200 }),
          category: t.String({ minLength: 1, maxLength: 50 }),
          price: t.Integer({ minimum: 0 }),
          quantity: t.Integer({ minimum: 0 }),
        }),
      },
    )
    .put(
      "/crud/items/:id",
      async ({ params, body, set }) => {
        const item = await store.update(params.id, body);
        if (item === undefined) {
          set.status = 404;
          return `No item ${params.id}`;
        }
        return item;
      },
      {
        params: Id,
        body: t.Object({ name: t.String({ minLength: 1, maxLength: 200 }), price: t.Integer({ minimum: 0 }), quantity: t.Integer({ minimum: 0 }) }),
      },
    );
}

app.listen({ port: PORT, hostname: "127.0.0.1" }, () => console.log("ready"));
