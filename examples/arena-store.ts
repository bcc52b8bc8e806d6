// The arena's data layer, the same for every server that runs the arena
// (examples/arena.ts, and each framework in bench/arena/contenders/): Postgres
// through a pooled standard driver, and a cache-aside for single items with a
// 200 ms TTL, in process or, when REDIS_URL is set, in Redis (shared by workers).
//
// The driver is `postgres` (porsager): a pool built in, prepared statements by
// default, parameters bound by the tagged template (no string building), pure
// JavaScript, and the fastest of the maintained Node drivers on simple queries.
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

interface Row {
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

const toItem = (r: Row): Item => ({
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

/** In-process: a Map of items with their absolute expiry. */
function memoryCache(): Cache {
  const entries = new Map<number, { item: Item; expires: number }>();
  return {
    async get(id) {
      const entry = entries.get(id);
      if (entry === undefined) return undefined;
      if (entry.expires > Date.now()) return entry.item;
      entries.delete(id);
      return undefined;
    },
    async set(id, item) {
      entries.set(id, { item, expires: Date.now() + CACHE_TTL_MS });
    },
    async delete(id) {
      entries.delete(id);
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

export interface Store {
  /** Items priced from min to max (at most `limit`): the async-db scenario's query. */
  priceRange(min: number, max: number, limit: number): Promise<Item[]>;
  /** One page of a category, by id. */
  list(category: string, page: number, limit: number): Promise<Item[]>;
  /** One item through the cache: `cache` says whether it came from it. */
  get(id: number): Promise<{ item: Item | undefined; cache: "HIT" | "MISS" }>;
  /** Inserts, or updates when the id exists. */
  upsert(item: NewItem): Promise<Item>;
  /** Updates and drops the cached copy; undefined when there is no such item. */
  update(id: number, changes: ItemChanges): Promise<Item | undefined>;
  close(): Promise<void>;
}

export async function openStore({ databaseUrl, redisUrl, poolSize = Number(process.env.DATABASE_MAX_CONN ?? 16) }: { databaseUrl: string; redisUrl?: string; poolSize?: number }): Promise<Store> {
  const sql = postgres(databaseUrl, { max: poolSize, onnotice: () => {} });
  const cache = redisUrl ? await redisCache(redisUrl) : memoryCache();
  const columns = sql`id, name, category, price, quantity, active, tags, rating_score, rating_count`;
  return {
    async priceRange(min, max, limit) {
      const rows = await sql<Row[]>`SELECT ${columns} FROM items WHERE price BETWEEN ${min} AND ${max} LIMIT ${limit}`;
      return rows.map(toItem);
    },
    async list(category, page, limit) {
      const rows = await sql<Row[]>`SELECT ${columns} FROM items WHERE category = ${category} ORDER BY id LIMIT ${limit} OFFSET ${(page - 1) * limit}`;
      return rows.map(toItem);
    },
    async get(id) {
      const cached = await cache.get(id);
      if (cached !== undefined) return { item: cached, cache: "HIT" };
      const [row] = await sql<Row[]>`SELECT ${columns} FROM items WHERE id = ${id}`;
      const item = row === undefined ? undefined : toItem(row);
      if (item !== undefined) await cache.set(id, item);
      return { item, cache: "MISS" };
    },
    async upsert({ id, name, category, price, quantity }) {
      const [row] = await sql<Row[]>`
        INSERT INTO items (id, name, category, price, quantity, active, tags, rating_score, rating_count)
        VALUES (${id}, ${name}, ${category}, ${price}, ${quantity}, true, '[]', 0, 0)
        ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, category = EXCLUDED.category, price = EXCLUDED.price, quantity = EXCLUDED.quantity
        RETURNING ${columns}`;
      await cache.delete(id);
      return toItem(row!);
    },
    async update(id, { name, price, quantity }) {
      const [row] = await sql<Row[]>`UPDATE items SET name = ${name}, price = ${price}, quantity = ${quantity} WHERE id = ${id} RETURNING ${columns}`;
      await cache.delete(id);
      return row === undefined ? undefined : toItem(row);
    },
    async close() {
      await Promise.all([sql.end({ timeout: 1 }), cache.close()]);
    },
  };
}
