// Fastify with its own https / http2 options (h2 over TLS allows HTTP/1.1, as the others do).
import Fastify from "fastify";
import { HOST, PORT, PROTO, serve, tlsFiles } from "./processes.mjs";
import { HELLO } from "./scenarios.mjs";

await serve(async () => {
  const https = PROTO === "tls" ? tlsFiles() : PROTO === "h2" ? { ...tlsFiles(), allowHTTP1: true } : undefined;
  const app = Fastify({ https, http2: PROTO === "h2" || PROTO === "h2c" });
  app.get("/", async () => HELLO);
  app.get("/json", async () => ({ message: HELLO }));
  // static-h2: the arena's files, from disk.
  if (process.env.STATIC_DIR) await app.register((await import("@fastify/static")).default, { root: process.env.STATIC_DIR, prefix: "/static/" });
  await app.listen({ port: PORT, host: HOST });
});
