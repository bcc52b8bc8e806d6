// The validation scenario (after mion's headline: validation and serialization
// out of the box): POST a ~1 KB nested order, validate it, answer a summary.
// The JSON Schemas serve Cog, Fastify and the bare server (through ajv); the
// zod schema in validation-zod.mjs describes the same shape for Hono and Express.

export const ORDER = {
  id: 48213,
  createdAt: "2024-03-24T03:12:52.000Z",
  customer: { name: "Ada Lovelace", email: "ada@example.com", age: 36, vip: true, tags: ["math", "poetry", "engines"] },
  shipping: { street: "12 St James's Square", city: "London", zip: "SW1Y 4JH", country: "GB" },
  items: [
    { sku: "AE-0001", name: "Difference engine gear", price: 12.5, quantity: 4, addedAt: "2024-03-20T10:00:00.000Z" },
    { sku: "AE-0002", name: "Punched card (pack of 100)", price: 3.25, quantity: 10, addedAt: "2024-03-20T10:05:00.000Z" },
    { sku: "AE-0003", name: "Brass crank handle", price: 27, quantity: 1, addedAt: "2024-03-21T09:30:00.000Z" },
    { sku: "AE-0004", name: "Notes on the Analytical Engine", price: 18.99, quantity: 2, addedAt: "2024-03-22T14:45:00.000Z" },
    { sku: "AE-0005", name: "Column of figure wheels", price: 44.1, quantity: 3, addedAt: "2024-03-23T08:15:00.000Z" },
  ],
  notes: "Leave the parcel with the porter; the engine parts are fragile and should be kept dry.",
};

const ITEM = {
  type: "object",
  required: ["sku", "name", "price", "quantity", "addedAt"],
  properties: {
    sku: { type: "string", pattern: "^[A-Z]{2}-\\d{4}$" },
    name: { type: "string", minLength: 1, maxLength: 200 },
    price: { type: "number", minimum: 0 },
    quantity: { type: "integer", minimum: 1, maximum: 1000 },
    addedAt: { type: "string", format: "date-time" },
  },
};

export const ORDER_SCHEMA = {
  type: "object",
  required: ["id", "createdAt", "customer", "shipping", "items"],
  properties: {
    id: { type: "integer", minimum: 1 },
    createdAt: { type: "string", format: "date-time" },
    customer: {
      type: "object",
      required: ["name", "email", "age"],
      properties: {
        name: { type: "string", minLength: 1, maxLength: 200 },
        email: { type: "string", format: "email" },
        age: { type: "integer", minimum: 0, maximum: 150 },
        vip: { type: "boolean" },
        tags: { type: "array", items: { type: "string" }, maxItems: 20 },
      },
    },
    shipping: {
      type: "object",
      required: ["street", "city", "zip", "country"],
      properties: {
        street: { type: "string", minLength: 1 },
        city: { type: "string", minLength: 1 },
        zip: { type: "string", minLength: 1 },
        country: { type: "string", minLength: 2, maxLength: 2 },
      },
    },
    items: { type: "array", minItems: 1, maxItems: 100, items: ITEM },
    notes: { type: "string", maxLength: 2000 },
  },
};

export const SUMMARY_SCHEMA = {
  type: "object",
  required: ["id", "customer", "email", "itemCount", "total", "createdAt"],
  properties: {
    id: { type: "integer" },
    customer: { type: "string" },
    email: { type: "string" },
    itemCount: { type: "integer" },
    total: { type: "number" },
    createdAt: { type: "string" },
  },
};

/** The same small piece of work every contender does with a valid order. */
export function summarize(order) {
  let total = 0;
  let itemCount = 0;
  for (const item of order.items) {
    total += item.price * item.quantity;
    itemCount += item.quantity;
  }
  return {
    id: order.id,
    customer: order.customer.name,
    email: order.customer.email,
    itemCount,
    total: Math.round(total * 100) / 100,
    createdAt: order.createdAt,
  };
}

export const VALID_BODY = JSON.stringify(ORDER);
export const INVALID_BODY = JSON.stringify({ ...ORDER, customer: { ...ORDER.customer, email: "not an email" }, items: [{ ...ORDER.items[0], quantity: 0 }] });
