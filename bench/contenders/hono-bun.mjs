// Hono 4 on Bun.serve: the same app as hono.mjs, on Bun's engine.
import { buildHonoApp } from "./hono-app.mjs";

Bun.serve({ fetch: buildHonoApp("hono-bun").fetch, port: Number(process.env.PORT), hostname: "127.0.0.1" });
console.log("ready");
