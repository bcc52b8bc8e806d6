// The arena: a realistic Cog app, serving HttpArena's workloads (its test profiles, as
// github.com/MDA2AV/HttpArena specifies them) with Cog's documented features only. Query strings
// and bodies, JSON of real size through a response schema, Postgres through a pooled driver, a
// cache-aside with a TTL, and schemas that validate what clients send; static files with their
// precompressed variants, compressed JSON, streamed uploads and a WebSocket echo; the JSON over
// TLS, and HTTP/2 over TLS and cleartext, each on the port HttpArena gives it; a request held open
// on a timer (/delay/:ms) and a body echoed back over TLS (/echo); HttpArena's gRPC service
// (examples/arena-grpc.ts, cog-http/connect) over h2c on PORT, beside its HTTP/1.1 profiles (a
// connection's first bytes say which it speaks), and over TLS on H2_PORT.
//
//   [DATABASE_URL=postgres://…] [REDIS_URL=redis://…] [STATIC_DIR=…] [DATASET_PATH=…] [COG_ENGINE=native]
//   [PORT=8080] [TLS_PORT=8081] [H2_PORT=8443] [HTTP3=1] [H2C_PORT=8082] [TLS_CERT=… TLS_KEY=…] [WORKERS=auto]
//   npx tsx examples/arena.ts
//
// With DATABASE_URL, the app also serves production-stack's API (/api/, behind an edge that
// verifies a JWT per call and passes its subject in X-User-Id; a two-level cache, this process then
// Redis at REDIS_URL); `node bench/arena/stack/stack.mjs` runs it behind nginx.
//
// Each extra listener starts when its port is set: TLS_PORT (HTTP/1.1 over TLS: json-tls, static-tls,
// 8gbit, echo-10k and echo-100k), H2_PORT (HTTP/2 over TLS: baseline-h2, static-h2, unary-grpc-tls, stream-grpc-tls; with HTTP3=1, on the native
// engine, HTTP/3 on the same port over UDP too: baseline-h3, static-h3) and H2C_PORT (HTTP/2
// cleartext only: baseline-h2c, json-h2c); the TLS ones read TLS_CERT and TLS_KEY (default /certs/server.crt and .key, where
// HttpArena mounts them). WORKERS (a number or "auto") serves port PORT from that many worker
// processes; the extra listeners are then served by the primary alone.
//
// `node bench/arena/database.mjs` starts a seeded Postgres and prints its DATABASE_URL;
// `node bench/arena/static-files.mjs` writes the static files and prints their STATIC_DIR.
import cluster from "node:cluster";
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Type } from "@sinclair/typebox";
import { Cog, HttpError, serveStatic } from "cog-http";
import { grpc } from "./arena-grpc.js";
import { openStore, type Item } from "./arena-store.js";

/** A file HttpArena mounts (`/data/…`, `/certs/…`), or, when it isn't there, `fallback`. */
const mounted = (path: string, fallback: string | undefined) => (existsSync(path) ? path : fallback);

// HttpArena's 50 items, read where it mounts them; examples/data/dataset.json is a copy of the same file.
const datasetPath = process.env.DATASET_PATH ?? mounted("/data/dataset.json", fileURLToPath(new URL("./data/dataset.json", import.meta.url)))!;
const dataset: Item[] = JSON.parse(readFileSync(datasetPath, "utf8"));
const staticDir = process.env.STATIC_DIR ?? mounted("/data/static", undefined);

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

const engine = process.env.COG_ENGINE === "native" ? "native" : "node";
// HTTP/1.1, and h2c with prior knowledge for the gRPC profiles, on the one port (HttpArena's 8080).
const app = new Cog({ engine, http2: "h2c", allowHTTP1: true });
const workers = process.env.WORKERS === undefined ? undefined : process.env.WORKERS === "auto" ? "auto" : Number(process.env.WORKERS);
// Postgres allows DATABASE_MAX_CONN connections in all (HttpArena sets 256): each process that
// serves the database routes (every worker, or this one) pools its share.
const processes = workers === undefined ? 1 : workers === "auto" ? availableParallelism() : workers;
const poolSize = Math.max(1, Math.floor(Number(process.env.DATABASE_MAX_CONN ?? 16 * processes) / processes));
const databaseUrl = process.env.DATABASE_URL;
// With workers, the primary serves only the extra listeners, none of which touches the database.
const store =
  databaseUrl && (workers === undefined || cluster.isWorker) ? await openStore({ databaseUrl, redisUrl: process.env.REDIS_URL, poolSize }) : undefined;

// The routes a profile needs, registered on each listener that serves it (one Cog app per port).

/** The query's two numbers, plus the body's number on POST (sent with Content-Length or chunked). */
function sums(on: Cog, path: string, { post = true } = {}) {
  on.get(path, (req, res) => {
    res.send(String(Number(req.query.a) + Number(req.query.b)));
  });
  if (post)
    on.post(path, (req, res) => {
      // The body's bytes, whatever Content-Type says (HttpArena's own requests send none).
      res.send(String(Number(req.query.a) + Number(req.query.b) + Number(req.rawBody?.toString("latin1"))));
    });
}

/**
 * JSON of real size: the first `count` items, each with a computed total, written by the response
 * schema's serializer, and compressed when the client's Accept-Encoding asks for it.
 */
function json(on: Cog, path = "/json/:count") {
  on.get(
    path,
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
      const items = dataset.slice(0, Number(req.params.count)).map(({ id, name, category, price, quantity, active, tags, rating }) => ({
        id,
        name,
        category,
        price,
        quantity,
        active,
        tags,
        rating,
        total: price * quantity * m,
      }));
      res.json({ items, count: items.length });
    },
  );
}

/**
 * The echo profiles (8gbit, echo-10k, echo-100k: HTTP/1.1 over TLS): the body's bytes back as they came,
 * whether sent with Content-Length or chunked, with a Content-Length of their own (an empty body
 * answers 200 with none).
 */
function echo(on: Cog) {
  on.post("/echo", (req, res) => {
    res.type("application/octet-stream").send(req.rawBody ?? Buffer.alloc(0));
  });
}

/** Static files, read from disk per request, with the .br/.gz written beside them preferred when the client accepts them. */
function staticFiles(on: Cog) {
  if (staticDir) on.use("/static", serveStatic(staticDir, { precompressed: true }));
}

sums(app, "/baseline11");
json(app);
staticFiles(app);
// production-stack's public routes: behind its edge, with neither authentication nor a cache.
sums(app, "/public/baseline", { post: false });
json(app, "/public/json/:count");

app.get("/pipeline", (_req, res) => {
  res.send("ok");
});

// The async profile: the request is held open for the milliseconds its path names (a timer),
// then answered with that number, as text/plain.
app.get("/delay/:ms", { schema: requests({ params: Type.Object({ ms: Type.Integer({ minimum: 0, maximum: 10_000 }) }) }) }, (req, res) => {
  const ms = Number(req.params.ms);
  // A timer's callback, as the bare servers' routes hold theirs: an async handler awaiting a
  // promised timer kept three promises, a suspended function and its frame per pending request
  // (0.8 KiB of its 1.4 on the JavaScript heap: docs/decisions/held-connection-memory.md).
  setTimeout(() => {
    if (!res.headersSent) res.send(String(ms));
  }, ms);
});
echo(app);

// Uploads: the body is read as it arrives (never held whole) and its bytes counted.
app.post("/upload", { body: "stream", bodyLimit: 64 * 1024 * 1024 }, async (req, res) => {
  let bytes = 0;
  for await (const chunk of req) bytes += (chunk as Buffer).length;
  res.send(String(bytes));
});

// A WebSocket that echoes every message.
app.ws("/ws", { message: (ws, data, isBinary) => void ws.send(data, isBinary) });

// unary-grpc and stream-grpc: BenchmarkService's GetSum and StreamSum, over h2c.
grpc(app);

// Items priced from min to max. Without a database, or when the query fails (Postgres down or
// restarting: the pool reconnects on a later request), the answer is the empty page, as
// HttpArena's specification asks, never an error.
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
    let items: Item[] = [];
    if (store)
      try {
        items = await store.priceRange(min, max, Math.min(Math.max(req.query.limit, 1), 50));
      } catch (err) {
        console.error(`async-db: ${(err as Error).message}; answering the empty page`);
      }
    res.json({ items, count: items.length });
  },
);

if (store) {
  app.group("/crud/items", (crud) => {
    crud.get(
      "/",
      {
        schema: requests({
          query: Type.Object({
            category: Text({ default: "electronics" }),
            page: Int32({ minimum: 1, default: 1 }),
            limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }),
          }),
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
          body: Type.Object({
            id: Int32({ minimum: 1 }),
            name: Text({ minLength: 1, maxLength: 200 }),
            category: Text({ minLength: 1, maxLength: 50 }),
            price: Int32({ minimum: 0 }),
            quantity: Int32({ minimum: 0 }),
          }),
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

// production-stack's API: behind an edge (nginx) that checks the JWT of every /api/ call and passes
// the request on with X-User-Id, the token's subject (HttpArena's auth contract: the app never sees
// the token, and trusts the header). Reads go through a two-level cache-aside (this process, then
// Redis when REDIS_URL is set; examples/arena-store.ts); a write updates Postgres and drops the
// item from both levels. `node bench/arena/stack/stack.mjs` runs the whole stack.
if (store) {
  const Changes = Type.Object({ name: Text({ minLength: 1, maxLength: 200 }), price: Int32({ minimum: 0 }), quantity: Int32({ minimum: 0 }) });
  const UserSchema = Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String(), plan: Type.String() });
  const Unauthorized = Type.Object(
    { statusCode: Type.Integer(), error: Type.String(), message: Type.String() },
    { description: "No X-User-Id: the request did not come through the edge's check" },
  );

  app.get("/api/items/:id", { schema: requests({ params: Id, response: { 200: ItemSchema, 404: NotFound } }) }, async (req, res) => {
    const { value, cache } = await store.itemJson(Number(req.params.id));
    if (value === undefined) throw new HttpError(404, `No item ${req.params.id}`);
    // The item's JSON as the cache holds it: written once, when it was read from Postgres.
    res.set("X-Cache", cache).type("json").send(value);
  });

  app.post(
    "/api/items/:id",
    { schema: requests({ params: Id, body: Changes, response: { 204: Type.Null({ description: "Updated" }), 404: NotFound } }) },
    async (req, res) => {
      const item = await store.update(Number(req.params.id), req.body);
      if (item === undefined) throw new HttpError(404, `No item ${req.params.id}`);
      res.send(undefined, 204);
    },
  );

  app.get(
    "/api/me",
    {
      schema: { headers: Type.Object({ "x-user-id": Type.Optional(Int32({ minimum: 1 })) }), response: { 200: UserSchema, 401: Unauthorized, 404: NotFound } },
    },
    async (req, res) => {
      const id = Number(req.get("x-user-id"));
      if (!(id >= 1)) throw new HttpError(401, "No user: X-User-Id is set by the edge once it has verified the token");
      const { value, cache } = await store.userJson(id);
      if (value === undefined) throw new HttpError(404, `No user ${id}`);
      res.set("X-Cache", cache).type("json").send(value);
    },
  );
}

// The API's description, from the routes' schemas (the WebSocket route is left out).
app.get("/openapi.json", (_req, res) => res.json(app.openapi({ title: "Arena", version: "1.0.0" })));

const host = process.env.HOST ?? "127.0.0.1";
const { port } = await app.listen({ port: Number(process.env.PORT ?? 8080), host, workers });
const listening = [
  `arena on http://${host}:${port} (${engine} engine${workers === undefined ? "" : `, ${processes} workers`}${databaseUrl ? "" : "; no DATABASE_URL, so no /crud and an empty /async-db"})`,
];
// Each worker keeps its own cache without Redis: a read another worker cached, or an update another
// worker made, is not seen, and /crud's X-Cache answers depend on which worker a connection reaches.
if (workers !== undefined && databaseUrl && !process.env.REDIS_URL)
  listening.push("arena: WORKERS without REDIS_URL: each worker caches /crud/items/:id on its own");
const servers = [app];

// The extra listeners, each a Cog app of its own; with workers, the primary serves them.
if (cluster.isPrimary) {
  const tls = () => {
    const certPath = process.env.TLS_CERT ?? "/certs/server.crt";
    const keyPath = process.env.TLS_KEY ?? "/certs/server.key";
    if (!existsSync(certPath) || !existsSync(keyPath))
      throw new Error(`TLS_PORT and H2_PORT need a certificate: ${certPath} and ${keyPath} (TLS_CERT, TLS_KEY) do not both exist`);
    return { cert: readFileSync(certPath), key: readFileSync(keyPath) };
  };
  const extra = async (port: string | undefined, make: () => Cog, says: string, http3 = false) => {
    if (port === undefined) return;
    const server = make();
    const address = await server.listen({ port: Number(port), host, http3 });
    servers.push(server);
    listening.push(`arena ${says} on ${host}:${address.port}`);
    if (http3) listening.push(`arena h3 on ${host}:${address.port}/udp`);
  };
  // json-tls, static-tls, 8gbit, echo-10k and echo-100k: HTTP/1.1 over TLS, on the app's engine.
  await extra(
    process.env.TLS_PORT,
    () => {
      const server = new Cog({ engine, tls: tls() });
      json(server);
      staticFiles(server);
      echo(server);
      return server;
    },
    "https/1.1",
  );
  // baseline-h2 and static-h2: HTTP/2 over TLS (ALPN h2, HTTP/1.1 for clients without it), on the app's engine;
  // with HTTP3=1, baseline-h3 and static-h3 on the same port over UDP (the node engine refuses it, naming the native one).
  const http3 = process.env.HTTP3 === "1";
  await extra(
    process.env.H2_PORT,
    () => {
      const server = new Cog({ engine, http2: true, tls: tls() });
      sums(server, "/baseline2", { post: false });
      staticFiles(server);
      // unary-grpc-tls and stream-grpc-tls.
      grpc(server);
      return server;
    },
    "h2",
    http3,
  );
  // baseline-h2c and json-h2c: HTTP/2 cleartext with prior knowledge, on the app's engine.
  await extra(
    process.env.H2C_PORT,
    () => {
      const server = new Cog({ engine, http2: "h2c" });
      sums(server, "/baseline2", { post: false });
      json(server);
      return server;
    },
    "h2c",
  );
}
if (!cluster.isWorker) {
  for (const line of listening) console.log(line);
  console.log("ready");
}

// With workers, Cog drains them on SIGTERM and SIGINT itself (and the primary exits).
if (workers === undefined) {
  const shutDown = async () => {
    await Promise.all(servers.map((s) => s.close(1000)));
    await store?.close();
    process.exit(0);
  };
  process.on("SIGTERM", shutDown);
  process.on("SIGINT", shutDown);
}
