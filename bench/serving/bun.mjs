// Bun: Bun.serve (its `tls` option for HTTPS) for HTTP/1.1; Bun.serve speaks no HTTP/2, so for h2
// and h2c Bun runs node:http2 (which it implements). Workers: node:cluster, which Bun implements
// with SO_REUSEPORT.
import { createSecureServer, createServer as createH2c } from "node:http2";
import { HOST, PORT, PROTO, serve, tlsFiles } from "./processes.mjs";
import { HELLO, HELLO_JSON } from "./scenarios.mjs";

const TEXT = { "content-type": "text/plain; charset=utf-8" };
const JSON_TYPE = { "content-type": "application/json; charset=utf-8" };

function serveHttp2() {
  const handler = (req, res) => {
    const json = req.url === "/json";
    const body = json ? HELLO_JSON : HELLO;
    res.writeHead(200, { ...(json ? JSON_TYPE : TEXT), "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  const server = PROTO === "h2" ? createSecureServer({ ...tlsFiles(), allowHTTP1: true }, handler) : createH2c(handler);
  return new Promise((resolve) => server.listen(PORT, HOST, resolve));
}

function serveHttp1() {
  Bun.serve({
    port: PORT,
    hostname: HOST,
    reusePort: true,
    tls: PROTO === "tls" ? tlsFiles() : undefined,
    fetch(req) {
      const json = req.url.endsWith("/json");
      return new Response(json ? HELLO_JSON : HELLO, { headers: json ? JSON_TYPE : TEXT });
    },
  });
}

await serve(PROTO === "h2" || PROTO === "h2c" ? serveHttp2 : serveHttp1);
