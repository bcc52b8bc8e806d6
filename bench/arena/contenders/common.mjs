// What every arena contender shares that is not the framework's work: the
// dataset, the data layer (examples/arena-store.ts: Postgres pool and cache),
// and where the static files are.
import { DATASET } from "../contract.mjs";
import { staticDir } from "../static-files.mjs";
import { openStore } from "../../../examples/arena-store.ts";

export const STATIC_DIR = staticDir();
export const PORT = Number(process.env.PORT);
export const store = process.env.DATABASE_URL ? await openStore({ databaseUrl: process.env.DATABASE_URL, redisUrl: process.env.REDIS_URL }) : undefined;

/** The JSON workload: the first `count` items with their totals. */
export function jsonItems(count, m) {
  const items = DATASET.slice(0, count).map((item) => ({ ...item, total: item.price * item.quantity * m }));
  return { items, count: items.length };
}

export const clampLimit = (limit) => Math.min(Math.max(limit, 1), 50);
