// The arena's input rules for the contenders other than Cog (which declares them
// on its routes, examples/arena.ts): JSON Schema for Fastify and the bare server
// (ajv), zod for Hono, Express, ultimate-express and HyperExpress.
import { z } from "zod";

export const NEW_ITEM = {
  type: "object",
  required: ["id", "name", "category", "price", "quantity"],
  properties: {
    id: { type: "integer", minimum: 1 },
    name: { type: "string", minLength: 1, maxLength: 200 },
    category: { type: "string", minLength: 1, maxLength: 50 },
    price: { type: "integer", minimum: 0 },
    quantity: { type: "integer", minimum: 0 },
  },
};
export const ITEM_CHANGES = {
  type: "object",
  required: ["name", "price", "quantity"],
  properties: { name: NEW_ITEM.properties.name, price: NEW_ITEM.properties.price, quantity: NEW_ITEM.properties.quantity },
};
export const ID_PARAMS = { type: "object", properties: { id: { type: "integer", minimum: 1 } } };
export const JSON_PARAMS = { type: "object", properties: { count: { type: "integer", minimum: 0, maximum: 50 } } };
export const JSON_QUERY = { type: "object", properties: { m: { type: "integer", default: 1 } } };
export const DB_QUERY = { type: "object", properties: { min: { type: "integer", default: 10 }, max: { type: "integer", default: 50 }, limit: { type: "integer", default: 50 } } };
export const LIST_QUERY = {
  type: "object",
  properties: { category: { type: "string", default: "electronics" }, page: { type: "integer", minimum: 1, default: 1 }, limit: { type: "integer", minimum: 1, maximum: 50, default: 10 } },
};

const int = z.coerce.number().int();
export const Z = {
  newItem: z.object({ id: z.number().int().min(1), name: z.string().min(1).max(200), category: z.string().min(1).max(50), price: z.number().int().min(0), quantity: z.number().int().min(0) }),
  itemChanges: z.object({ name: z.string().min(1).max(200), price: z.number().int().min(0), quantity: z.number().int().min(0) }),
  id: z.object({ id: int.min(1) }),
  jsonParams: z.object({ count: int.min(0).max(50) }),
  jsonQuery: z.object({ m: int.default(1) }),
  dbQuery: z.object({ min: int.default(10), max: int.default(50), limit: int.default(50) }),
  listQuery: z.object({ category: z.string().default("electronics"), page: int.min(1).default(1), limit: int.min(1).max(50).default(10) }),
};
