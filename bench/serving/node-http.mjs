// Bare node:http / node:https / node:http2, hand-written: the ceiling on Node for each protocol.
import { createServer as createHttp } from "node:http";
import { createSecureServer, createServer as createH2c } from "node:http2";
import { createServer as createHttps } from "node:https";
import { HOST, PORT, PROTO, serve, tlsFiles } from "./processes.mjs";
import { HELLO, HELLO_JSON } from "./scenarios.mjs";

const handler = (req, res) => {
  const json = req.url === "/json";
  const body = json ? HELLO_JSON : HELLO;
  res.writeHead(200, { "content-type": json ? "application/json; charset=utf-8" : "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
};

await serve(() => {
  const server = PROTO === "tls" ? createHttps(tlsFiles(), handler) : PROTO === "h2" ? createSecureServer({ ...tlsFiles(), allowHTTP1: true }, handler) : PROTO === "h2c" ? createH2c(handler) : createHttp(handler);
  return new Promise((resolve) => server.listen(PORT, HOST, resolve));
});
