// Fastify for bench/serving.mjs: PROTO=tls (HTTPS/1.1), h2 (HTTP/2 over TLS, HTTP/1.1 allowed) or h2c.
import { readFileSync } from "node:fs";
import Fastify from "fastify";

const proto = process.env.PROTO ?? "http";
const https = proto === "tls" || proto === "h2" ? { key: readFileSync(process.env.TLS_KEY), cert: readFileSync(process.env.TLS_CERT), ...(proto === "h2" ? { allowHTTP1: true } : {}) } : undefined;
const app = Fastify({ https, http2: proto === "h2" || proto === "h2c" });
app.get("/", async () => "Hello, World!");
app.get("/json", async () => ({ message: "Hello, World!" }));
await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
console.log("ready");
