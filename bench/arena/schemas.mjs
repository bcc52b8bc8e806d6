// The arena's input rules for the contenders other than Cog (which declares them
// on its routes, examples/arena.ts): JSON Schema for Fastify and the bare server
// (ajv), zod for Hono, Express, ultimate-express and HyperExpress.
import { z } from "zod";

// As examples/arena.ts has them: numbers that reach Postgres's integer columns within its range,
// text without NUL (Postgres's text can't hold it), so each is the client's 400, not a 500.
const INT32 = { minimum: -2147483648, maximum: 2147483647 };
const TEXT = { pattern: "^[^\\u0000]*$" };

export const NEW_ITEM = {
  type: "object",
  required: ["id", "name", "category", "price", "quantity"],
  properties: {
    id: { type: "integer", ...INT32, minimum: 1 },
    name: { type: "string", ...TEXT, minLength: 1, maxLength: 200 },
    category: { type: "string", ...TEXT, minLength: 1, maxLength: 50 },
    price: { type: "integer", ...INT32, minimum: 0 },
    quantity: { type: "integer", ...INT32, minimum: 0 },
  },
};
export const ITEM_CHANGES = {
  type: "object",
  required: ["name", "price", "quantity"],
  properties: { name: NEW_ITEM.properties.name, price: NEW_ITEM.properties.price, quantity: NEW_ITEM.properties.quantity },
};
export const ID_PARAMS = { type: "object", properties: { id: { type: "integer", ...INT32, minimum: 1 } } };
// async's /delay/:ms: at most 10 s, as examples/arena.ts allows.
export const DELAY_PARAMS = { type: "object", properties: { ms: { type: "integer", minimum: 0, maximum: 10_000 } } };
export const JSON_PARAMS = { type: "object", properties: { count: { type: "integer", minimum: 0, maximum: 50 } } };
export const JSON_QUERY = { type: "object", properties: { m: { type: "integer", ...INT32, default: 1 } } };
export const DB_QUERY = {
  type: "object",
  properties: {
    min: { type: "integer", ...INT32, default: 10 },
    max: { type: "integer", ...INT32, default: 50 },
    limit: { type: "integer", ...INT32, default: 50 },
  },
};
export const LIST_QUERY = {
  type: "object",
  properties: {
    category: { type: "string", ...TEXT, default: "electronics" },
    page: { type: "integer", ...INT32, minimum: 1, default: 1 },
    limit: { type: "integer", minimum: 1, maximum: 50, default: 10 },
  },
};

const int = z.coerce.number().int().min(INT32.minimum).max(INT32.maximum);
const int32 = z.number().int().max(INT32.maximum);
const text = z.string().regex(/^[^\u0000]*$/);
export const Z = {
  newItem: z.object({ id: int32.min(1), name: text.min(1).max(200), category: text.min(1).max(50), price: int32.min(0), quantity: int32.min(0) }),
  itemChanges: z.object({ name: text.min(1).max(200), price: int32.min(0), quantity: int32.min(0) }),
  id: z.object({ id: int.min(1) }),
  jsonParams: z.object({ count: int.min(0).max(50) }),
  jsonQuery: z.object({ m: int.default(1) }),
  dbQuery: z.object({ min: int.default(10), max: int.default(50), limit: int.default(50) }),
  listQuery: z.object({ category: text.default("electronics"), page: int.min(1).default(1), limit: int.min(1).max(50).default(10) }),
};
