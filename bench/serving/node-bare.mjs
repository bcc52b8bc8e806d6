// Bare node:https / node:http2 for bench/serving.mjs, hand-written: the ceiling on Node.
// PROTO=tls (node:https), h2 (node:http2 over TLS) or h2c (node:http2 cleartext).
import { readFileSync } from "node:fs";
import { createServer as createHttps } from "node:https";
import { createSecureServer, createServer as createH2c } from "node:http2";

const proto = process.env.PROTO ?? "tls";
const tls = () => ({ key: readFileSync(process.env.TLS_KEY), cert: readFileSync(process.env.TLS_CERT) });
const handler = (req, res) => {
  if (req.url === "/json") {
    const body = JSON.stringify({ message: "Hello, World!" });
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
    res.end(body);
  } else {
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": 13 });
    res.end("Hello, World!");
  }
};
const server = proto === "tls" ? createHttps(tls(), handler) : proto === "h2" ? createSecureServer({ ...tls(), allowHTTP1: true }, handler) : createH2c(handler);
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
