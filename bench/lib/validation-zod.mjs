// The order schema of lib/validation.mjs, in zod, for the contenders whose idiom is zod.
import { z } from "zod";

const Item = z.object({
  sku: z.string().regex(/^[A-Z]{2}-\d{4}$/),
  name: z.string().min(1).max(200),
  price: z.number().min(0),
  quantity: z.number().int().min(1).max(1000),
  addedAt: z.iso.datetime(),
});

export const Order = z.object({
  id: z.number().int().min(1),
  createdAt: z.iso.datetime(),
  customer: z.object({
    name: z.string().min(1).max(200),
    email: z.email(),
    age: z.number().int().min(0).max(150),
    vip: z.boolean().optional(),
    tags: z.array(z.string()).max(20).optional(),
  }),
  shipping: z.object({ street: z.string().min(1), city: z.string().min(1), zip: z.string().min(1), country: z.string().length(2) }),
  items: z.array(Item).min(1).max(100),
  notes: z.string().max(2000).optional(),
});
