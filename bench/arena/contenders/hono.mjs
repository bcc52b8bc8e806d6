// Hono 4 on @hono/node-server: serveStatic (precompressed .br/.gz), hono/compress on the
// JSON route, @hono/zod-validator for validation, the request body stream read for uploads.
import { serve } from "@hono/node-server";
import { serveStatic } from "@hono/node-server/serve-static";
import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import { compress } from "hono/compress";
import { relative } from "node:path";
import { Z } from "../schemas.mjs";
import { PORT, STATIC_DIR, clampLimit, jsonItems, store } from "./common.mjs";

const app = new Hono();
const bad = (result, c) => (result.success ? undefined : c.json({ issues: result.error.issues }, 400));
app.use(
  "/static/*",
  serveStatic({ root: relative(process.cwd(), STATIC_DIR), rewriteRequestPath: (path) => path.slice("/static".length), precompressed: true }),
);
app.get("/baseline11", (c) => c.text(String(Number(c.req.query("a")) + Number(c.req.query("b")))));
app.post("/baseline11", async (c) => c.text(String(Number(c.req.query("a")) + Number(c.req.query("b")) + Number(await c.req.text()))));
app.get("/pipeline", (c) => c.text("ok"));
app.get("/json/:count", compress(), zValidator("param", Z.jsonParams, bad), zValidator("query", Z.jsonQuery, bad), (c) =>
  c.json(jsonItems(c.req.valid("param").count, c.req.valid("query").m)),
);
app.post("/upload", async (c) => {
  let bytes = 0;
  for await (const chunk of c.req.raw.body ?? []) bytes += chunk.length;
  return c.text(String(bytes));
});
if (store) {
  app.get("/async-db", zValidator("query", Z.dbQuery, bad), async (c) => {
    const { min, max, limit } = c.req.valid("query");
    const items = await store.priceRange(min, max, clampLimit(limit));
    return c.json({ items, count: items.length });
  });
  app.get("/crud/items", zValidator("query", Z.listQuery, bad), async (c) => {
    const { category, page, limit } = c.req.valid("query");
    const items = await store.list(category, page, limit);
    return c.json({ items, total: items.length, page, limit });
  });
  app.get("/crud/items/:id", zValidator("param", Z.id, bad), async (c) => {
    const { id } = c.req.valid("param");
    const { item, cache } = await store.get(id);
    c.header("X-Cache", cache);
    return item === undefined ? c.text(`No item ${id}`, 404) : c.json(item);
  });
  app.post("/crud/items", zValidator("json", Z.newItem, bad), async (c) => c.json(await store.upsert(c.req.valid("json")), 201));
  app.put("/crud/items/:id", zValidator("param", Z.id, bad), zValidator("json", Z.itemChanges, bad), async (c) => {
    const { id } = c.req.valid("param");
    const item = await store.update(id, c.req.valid("json"));
    return item === undefined ? c.text(`No item ${id}`, 404) : c.json(item);
  });
}

serve({ fetch: app.fetch, hostname: "127.0.0.1", port: PORT }, () => console.log("ready"));
