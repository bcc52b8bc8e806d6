// Cog: PROTO tls (HTTPS/1.1), h2 (HTTP/2 over TLS), h2c or http; ENGINE node|native; WORKERS=n
// serves from n worker processes through Cog's own `listen({ workers })`.
import cluster from "node:cluster";
import { Cog, serveStatic } from "../../dist/index.js";
import { HOST, PORT, PROTO, tlsFiles } from "./processes.mjs";
import { HELLO } from "./scenarios.mjs";

const tls = PROTO === "tls" || PROTO === "h2" ? tlsFiles() : undefined;
const app = new Cog({ engine: process.env.ENGINE ?? "node", tls, http2: PROTO === "h2" ? true : PROTO === "h2c" ? "h2c" : undefined });
app.get("/", (_req, res) => res.send(HELLO));
app.get("/json", (_req, res) => res.json({ message: HELLO }));
// static-h2: the arena's files, from disk (serveStatic's own defaults: ETag, Last-Modified, ranges).
if (process.env.STATIC_DIR) app.use("/static", serveStatic(process.env.STATIC_DIR));
const workers = process.env.WORKERS === undefined ? undefined : Number(process.env.WORKERS);
await app.listen({ port: PORT, host: HOST, workers });
if (cluster.isPrimary) console.log("ready");
