// Bun: Bun.serve (its `tls` option for HTTPS) for HTTP/1.1, and with `http3: true` for HTTP/3;
// Bun.serve speaks no HTTP/2, so for h2 and h2c Bun runs node:http2 (which it implements).
// Workers: node:cluster, which Bun implements with SO_REUSEPORT.
import { existsSync } from "node:fs";
import { createSecureServer, createServer as createH2c } from "node:http2";
import { join } from "node:path";
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

/**
 * static-h3: the arena's file, or the .br or .gz beside it when the client takes that encoding
 * (br first, as Cog's serveStatic with `precompressed: ["br", "gzip"]` does); 404 for none.
 */
function staticFile(req, name) {
  const path = join(process.env.STATIC_DIR, name);
  if (name.includes("/") || name.includes("..") || !existsSync(path)) return new Response("Not Found", { status: 404 });
  const type = { "content-type": Bun.file(path).type, vary: "accept-encoding" };
  const accepts = req.headers.get("accept-encoding") ?? "";
  for (const [encoding, suffix] of [
    ["br", ".br"],
    ["gzip", ".gz"],
  ]) {
    if (new RegExp(`\\b${encoding}\\b(?!;q=0(\\.0*)?\\b)`).test(accepts) && existsSync(path + suffix))
      return new Response(Bun.file(path + suffix), { headers: { ...type, "content-encoding": encoding } });
  }
  return new Response(Bun.file(path), { headers: type });
}

// baseline-h3 and static-h3: Bun.serve with HTTP/3 beside HTTPS/1.1 on the same port number.
function serveHttp3() {
  Bun.serve({
    port: PORT,
    hostname: HOST,
    http3: true,
    tls: tlsFiles(),
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/baseline2") return new Response(String(Number(url.searchParams.get("a")) + Number(url.searchParams.get("b"))), { headers: TEXT });
      if (url.pathname.startsWith("/static/")) return staticFile(req, url.pathname.slice(8));
      return new Response("Not Found", { status: 404 });
    },
  });
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

await serve(PROTO === "h2" || PROTO === "h2c" ? serveHttp2 : PROTO === "h3" ? serveHttp3 : serveHttp1);
