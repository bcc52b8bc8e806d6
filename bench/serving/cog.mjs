// Cog: PROTO tls (HTTPS/1.1), h2 (HTTP/2 over TLS), h3 (HTTP/3 over QUIC, beside HTTP/2 over TLS on
// the TCP port of the same number, as HttpArena's entries serve it), h2c or http; ENGINE
// node|native; WORKERS=n serves from n worker processes through Cog's own `listen({ workers })`.
import cluster from "node:cluster";
import { Cog, serveStatic } from "../../dist/index.js";
import { HOST, PORT, PROTO, tlsFiles } from "./processes.mjs";
import { HELLO } from "./scenarios.mjs";

const tls = PROTO === "tls" || PROTO === "h2" || PROTO === "h3" ? tlsFiles() : undefined;
const http2 = PROTO === "h2" || PROTO === "h3" ? true : PROTO === "h2c" ? "h2c" : undefined;
const app = new Cog({ engine: process.env.ENGINE ?? "node", tls, http2 });
app.get("/", (_req, res) => res.send(HELLO));
app.get("/json", (_req, res) => res.json({ message: HELLO }));
// baseline-h3: HttpArena's /baseline2, the sum of a and b.
app.get("/baseline2", (req, res) => res.send(String(Number(req.query.a) + Number(req.query.b))));
// static-h2 and static-h3: the arena's files, from disk (serveStatic's defaults: ETag,
// Last-Modified, ranges), and the .br or .gz beside a file when the client takes it.
if (process.env.STATIC_DIR) app.use("/static", serveStatic(process.env.STATIC_DIR, { precompressed: ["br", "gzip"] }));
const workers = process.env.WORKERS === undefined ? undefined : Number(process.env.WORKERS);
await app.listen({ port: PORT, host: HOST, workers, http3: PROTO === "h3" });
if (cluster.isPrimary) console.log("ready");
