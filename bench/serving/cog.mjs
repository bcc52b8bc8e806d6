// Cog for bench/serving.mjs: PROTO=tls (HTTPS/1.1), h2 (HTTP/2 over TLS), h2c or http;
// ENGINE=node|native; WORKERS=n serves from n worker processes.
import cluster from "node:cluster";
import { readFileSync } from "node:fs";
import { Cog } from "../../dist/index.js";

const proto = process.env.PROTO ?? "http";
const tls = proto === "tls" || proto === "h2" ? { key: readFileSync(process.env.TLS_KEY), cert: readFileSync(process.env.TLS_CERT) } : undefined;
const app = new Cog({ engine: process.env.ENGINE ?? "node", tls, http2: proto === "h2" ? true : proto === "h2c" ? "h2c" : undefined });
app.get("/", (_req, res) => res.send("Hello, World!"));
app.get("/json", (_req, res) => res.json({ message: "Hello, World!" }));
const workers = process.env.WORKERS === undefined ? undefined : Number(process.env.WORKERS);
await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1", workers });
if (cluster.isPrimary) console.log("ready");
