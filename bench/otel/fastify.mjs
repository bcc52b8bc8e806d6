// The same app as cog.mjs on Fastify 5, with @fastify/otel's plugin when tracing.mjs loaded it.
import Fastify from "fastify";

const app = Fastify();
if (globalThis.benchOtelInstrumentation !== undefined) await app.register(globalThis.benchOtelInstrumentation.plugin());
app.get("/users/:id", async (request) => ({ id: request.params.id }));
await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
process.once("SIGTERM", () => process.exit(0));
console.log("ready");
