// Hono 4 on @hono/node-server, written as the seed's Hono app; @hono/zod-validator for validation.
import { serve } from "@hono/node-server";
import { zValidator } from "@hono/zod-validator";
import { summarize } from "../lib/validation.mjs";
import { Order } from "../lib/validation-zod.mjs";
import { buildHonoApp } from "./hono-app.mjs";

const app = buildHonoApp("hono");
app.post("/validate", zValidator("json", Order), (c) => c.json(summarize(c.req.valid("json"))));

serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(process.env.PORT) }, () => console.log("ready"));
