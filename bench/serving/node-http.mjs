// Bare node:http / node:https / node:http2, hand-written: the ceiling on Node for each protocol.
import { readFile } from "node:fs";
import { createServer as createHttp } from "node:http";
import { createSecureServer, createServer as createH2c } from "node:http2";
import { createServer as createHttps } from "node:https";
import { HOST, PORT, PROTO, serve, tlsFiles } from "./processes.mjs";
import { HELLO, HELLO_JSON } from "./scenarios.mjs";

// static-h2: the arena's files, read from disk for each request (fs.readFile: open, fstat, read,
// close on libuv's threads, as a file server does), with the type of their extension.
// (node:http2's respondWithFile would be tighter, but on Node 20 it crashed the process under
// h2load, which resets streams in flight when it stops.)
const TYPES = {
  css: "text/css",
  js: "text/javascript",
  html: "text/html",
  svg: "image/svg+xml",
  json: "application/json",
  woff2: "font/woff2",
  webp: "image/webp",
};
const STATIC = process.env.STATIC_DIR;

const handler = (req, res) => {
  if (STATIC !== undefined && req.url.startsWith("/static/")) {
    const name = req.url.slice(8);
    if (name.includes("/") || name.includes("..")) return void res.writeHead(404).end();
    return void readFile(`${STATIC}/${name}`, (err, data) => {
      if (err) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream", "content-length": data.length });
      res.end(data);
    });
  }
  const json = req.url === "/json";
  const body = json ? HELLO_JSON : HELLO;
  res.writeHead(200, { "content-type": json ? "application/json; charset=utf-8" : "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
};

await serve(() => {
  const server =
    PROTO === "tls"
      ? createHttps(tlsFiles(), handler)
      : PROTO === "h2"
        ? createSecureServer({ ...tlsFiles(), allowHTTP1: true }, handler)
        : PROTO === "h2c"
          ? createH2c(handler)
          : createHttp(handler);
  return new Promise((resolve) => server.listen(PORT, HOST, resolve));
});
