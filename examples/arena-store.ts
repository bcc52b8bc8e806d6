// The arena's data layer, the same for every server that runs the arena
// (examples/arena.ts, and each framework in bench/arena/contenders/): Postgres
// through a pooled standard driver, and two caches. crud's cache-aside for single
// items has a 200 ms TTL, in process or, when REDIS_URL is set, in Redis (shared by
// workers). production-stack's has two levels, as HttpArena's profile asks: in this
// process first (≤ 1 s) and, when REDIS_URL is set, Redis second (items ≤ 1 s,
// users ≤ 30 s), through node-redis's client-side caching: Redis tells each process
// when a key it holds is changed or deleted, so an update made through one worker
// drops the copy every other worker holds.
//
// The driver is `postgres` (porsager): prepared statements by default, parameters
// bound by the tagged template (no string building), pipelining, pure JavaScript,
// and the fastest of the maintained Node drivers on simple queries. Its pool is
// not used: `connections` below says why.
import postgres from "postgres";

export interface Item {
  id: number;
  name: string;
  category: string;
  price: number;
  quantity: number;
  active: boolean;
  tags: string[];
  rating: { score: number; count: number };
}

/** What POST /crud/items takes; the rest of a new item gets defaults. */
export interface NewItem {
  id: number;
  name: string;
  category: string;
  price: number;
  quantity: number;
}

/** What PUT /crud/items/:id changes. */
export interface ItemChanges {
  name: string;
  price: number;
  quantity: number;
}

/** A user of the production-stack profile (its `users` table): whom a verified token's subject names. */
export interface User {
  id: number;
  name: string;
  email: string;
  plan: string;
}

/** An answer through a cache: the value (undefined: no such row), and whether a cache level had it. */
export interface Cached<T> {
  value: T | undefined;
  cache: "HIT" | "MISS";
}

/** A row of `items`, as Postgres gives it. */
export interface ItemRow {
  id: number;
  name: string;
  category: string;
  price: number;
  quantity: number;
  active: boolean;
  tags: string[];
  rating_score: number;
  rating_count: number;
}

const CACHE_TTL_MS = 200;
/** production-stack: each level keeps an item at most this long, and a user at most USER_TTL_MS (the first level 1 s). */
const ITEM_TTL_MS = 1000;
const USER_TTL_MS = 30_000;
const LOCAL_TTL_MS = 1000;

/** The item a row of `items` is, as the arena's routes answer it. */
export const toItem = (r: ItemRow): Item => ({
  id: r.id,
  name: r.name,
  category: r.category,
  price: r.price,
  quantity: r.quantity,
  active: r.active,
  tags: r.tags,
  rating: { score: r.rating_score, count: r.rating_count },
});

interface Cache {
  get(id: number): Promise<Item | undefined>;
  set(id: number, item: Item): Promise<void>;
  delete(id: number): Promise<void>;
  close(): Promise<void>;
}

/** In process: values with their absolute expiry, dropped when read expired, and all expired ones once past 50,000 (keys read once would stay). */
function expiringMap<K, V>() {
  const entries = new Map<K, { value: V; expires: number }>();
  return {
    get(key: K): V | undefined {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.expires > Date.now()) return entry.value;
      entries.delete(key);
      return undefined;
    },
    set(key: K, value: V, ttlMs: number) {
      if (entries.size >= 50_000) {
        const now = Date.now();
        for (const [k, e] of entries) if (e.expires <= now) entries.delete(k);
      }
      entries.set(key, { value, expires: Date.now() + ttlMs });
    },
    delete(key: K) {
      entries.delete(key);
    },
  };
}

/** crud's cache in process. */
function memoryCache(): Cache {
  const items = expiringMap<number, Item>();
  return {
    async get(id) {
      return items.get(id);
    },
    async set(id, item) {
      items.set(id, item, CACHE_TTL_MS);
    },
    async delete(id) {
      items.delete(id);
    },
    async close() {},
  };
}

/** Redis (node-redis): the item's JSON under `item:<id>`, expiring after the TTL. */
async function redisCache(url: string): Promise<Cache> {
  const { createClient } = await import("redis");
  const client = createClient({ url });
  client.on("error", (err: Error) => console.error(`redis (${url}): ${err.message}`));
  await client.connect();
  return {
    async get(id) {
      const json = await client.get(`item:${id}`);
      return json === null ? undefined : (JSON.parse(json) as Item);
    },
    async set(id, item) {
      await client.set(`item:${id}`, JSON.stringify(item), { expiration: { type: "PX", value: CACHE_TTL_MS } });
    },
    async delete(id) {
      await client.del(`item:${id}`);
    },
    async close() {
      await client.quit();
    },
  };
}

/** production-stack's cache: JSON answers by key, each with its own TTL at the second level. */
interface TieredCache {
  get(key: string): Promise<string | undefined>;
  set(key: string, json: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

/** The first level alone (no REDIS_URL): JSON answers in process, each for at most LOCAL_TTL_MS. */
function localTieredCache(): TieredCache {
  const answers = expiringMap<string, string>();
  return {
    async get(key) {
      return answers.get(key);
    },
    async set(key, json, ttlMs) {
      answers.set(key, json, Math.min(ttlMs, LOCAL_TTL_MS));
    },
    async delete(key) {
      answers.delete(key);
    },
    async close() {},
  };
}

/**
 * Both levels: Redis with node-redis's client-side caching (RESP3 and CLIENT TRACKING). A read
 * answers from this process's copy when it has one (≤ LOCAL_TTL_MS old), else asks Redis and keeps
 * the answer; Redis sends an invalidation when a key this process read changes, expires or is
 * deleted, from whichever process.
 */
async function redisTieredCache(url: string): Promise<TieredCache> {
  const { createClient } = await import("redis");
  const client = createClient({ url, RESP: 3, clientSideCache: { ttl: LOCAL_TTL_MS, maxEntries: 100_000, recordStats: false } });
  client.on("error", (err: Error) => console.error(`redis (${url}): ${err.message}`));
  await client.connect();
  return {
    async get(key) {
      const json = await client.get(key);
      return json === null ? undefined : String(json);
    },
    async set(key, json, ttlMs) {
      await client.set(key, json, { expiration: { type: "PX", value: ttlMs } });
    },
    async delete(key) {
      await client.del(key);
    },
    async close() {
      await client.quit();
    },
  };
}

/** Cache-aside through `cache`: the cached JSON, else `load`'s row as JSON, kept for `ttlMs` (nothing is kept for a missing row). */
async function cacheAside<T>(cache: TieredCache, key: string, ttlMs: number, load: () => Promise<T | undefined>): Promise<Cached<string>> {
  const cached = await cache.get(key);
  if (cached !== undefined) return { value: cached, cache: "HIT" };
  const row = await load();
  if (row === undefined) return { value: undefined, cache: "MISS" };
  const json = JSON.stringify(row);
  await cache.set(key, json, ttlMs);
  return { value: json, cache: "MISS" };
}

export interface Store {
  /** Items priced from min to max (at most `limit`): the async-db scenario's query. */
  priceRange(min: number, max: number, limit: number): Promise<Item[]>;
  /** One page of a category, by id. */
  list(category: string, page: number, limit: number): Promise<Item[]>;
  /** One item through the cache: `cache` says whether it came from it. */
  get(id: number): Promise<{ item: Item | undefined; cache: "HIT" | "MISS" }>;
  /** Inserts, or updates when the id exists. */
  upsert(item: NewItem): Promise<Item>;
  /** Updates and drops the cached copies (crud's, and production-stack's at both levels); undefined when there is no such item. */
  update(id: number, changes: ItemChanges): Promise<Item | undefined>;
  /** production-stack: an item's JSON through the two-level cache (undefined: no such item). */
  itemJson(id: number): Promise<Cached<string>>;
  /** production-stack: a user's JSON through the two-level cache (undefined: no such user). */
  userJson(id: number): Promise<Cached<string>>;
  close(): Promise<void>;
}

/**
 * `size` connections to Postgres, as clients of one connection each, a query taken by each in turn
 * (each pipelines what it is given, as the driver's own pool does). Not one client with `max: size`:
 * the driver's pool keeps its connections in queues (postgres 3.4.9, src/queue.js) whose `shift`
 * leaves a hole and whose `remove` scans the whole array, holes included, with indexOf; an array
 * is emptied only when a shift takes its last connection. Under steady load some connection is
 * always busy, so every query adds a hole and scans all the earlier ones: after a minute of crud
 * the scans were 23% of a server's CPU (a `--cpu-prof` profile) and 58% of its instructions
 * (callgrind), and grew with the server's uptime. A client of one connection empties its queues
 * on every shift. In turn rather than to an idle connection first (as the driver's pool hands
 * them out while it has one): that cost every contender's cached read some 10% more instructions
 * without the collector's and the compiler's (172k → 188k on Fastify's, callgrind), as each
 * query then went alone to a connection, a write and a read of its own.
 */
function connections(databaseUrl: string, size: number) {
  const clients = Array.from({ length: size }, () => postgres(databaseUrl, { max: 1, onnotice: () => {} }));
  let next = 0;
  return {
    /** The client the next query goes to. */
    take() {
      const client = clients[next]!;
      next = next + 1 === size ? 0 : next + 1;
      return client;
    },
    end: () => Promise.all(clients.map((client) => client.end({ timeout: 1 }))),
  };
}

export async function openStore({
  databaseUrl,
  redisUrl,
  poolSize = Number(process.env.DATABASE_MAX_CONN ?? 16),
}: {
  databaseUrl: string;
  redisUrl?: string;
  poolSize?: number;
}): Promise<Store> {
  const pool = connections(databaseUrl, poolSize);
  const cache = redisUrl ? await redisCache(redisUrl) : memoryCache();
  const tiered = redisUrl ? await redisTieredCache(redisUrl) : localTieredCache();
  const itemKey = (id: number) => `api:item:${id}`;
  // A fragment (never run by itself): whichever client made it, any client's query can hold it.
  const columns = pool.take()`id, name, category, price, quantity, active, tags, rating_score, rating_count`;
  const item = async (id: number) => {
    const [row] = await pool.take()<ItemRow[]>`SELECT ${columns} FROM items WHERE id = ${id}`;
    return row === undefined ? undefined : toItem(row);
  };
  return {
    async priceRange(min, max, limit) {
      const rows = await pool.take()<ItemRow[]>`SELECT ${columns} FROM items WHERE price BETWEEN ${min} AND ${max} LIMIT ${limit}`;
      return rows.map(toItem);
    },
    async list(category, page, limit) {
      const rows = await pool.take()<
        ItemRow[]
      >`SELECT ${columns} FROM items WHERE category = ${category} ORDER BY id LIMIT ${limit} OFFSET ${(page - 1) * limit}`;
      return rows.map(toItem);
    },
    async get(id) {
      const cached = await cache.get(id);
      if (cached !== undefined) return { item: cached, cache: "HIT" };
      const found = await item(id);
      if (found !== undefined) await cache.set(id, found);
      return { item: found, cache: "MISS" };
    },
    async upsert({ id, name, category, price, quantity }) {
      const [row] = await pool.take()<ItemRow[]>`
        INSERT INTO items (id, name, category, price, quantity, active, tags, rating_score, rating_count)
        VALUES (${id}, ${name}, ${category}, ${price}, ${quantity}, true, '[]', 0, 0)
        ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, category = EXCLUDED.category, price = EXCLUDED.price, quantity = EXCLUDED.quantity
        RETURNING ${columns}`;
      await Promise.all([cache.delete(id), tiered.delete(itemKey(id))]);
      return toItem(row!);
    },
    async update(id, { name, price, quantity }) {
      const [row] = await pool.take()<
        ItemRow[]
      >`UPDATE items SET name = ${name}, price = ${price}, quantity = ${quantity} WHERE id = ${id} RETURNING ${columns}`;
      await Promise.all([cache.delete(id), tiered.delete(itemKey(id))]);
      return row === undefined ? undefined : toItem(row);
    },
    itemJson(id) {
      return cacheAside(tiered, itemKey(id), ITEM_TTL_MS, () => item(id));
    },
    userJson(id) {
      return cacheAside(tiered, `api:user:${id}`, USER_TTL_MS, async () => {
        const [user] = await pool.take()<User[]>`SELECT id, name, email, plan FROM users WHERE id = ${id}`;
        return user;
      });
    },
    async close() {
      await Promise.all([pool.end(), cache.close(), tiered.close()]);
    },
  };
}
