// Bare node:https, hand-written: the ceiling for the echo profiles (echo-10k, echo-100k) on
// Node (OpenSSL), for bench/arena/echo-tls.mjs. The body read whole and sent back with its
// Content-Length.
import { readFileSync } from "node:fs";
import { createServer } from "node:https";

const server = createServer({ key: readFileSync(process.env.TLS_KEY), cert: readFileSync(process.env.TLS_CERT) }, (req, res) => {
  if (req.method !== "POST" || req.url !== "/echo") {
    res.writeHead(404, { "content-type": "text/plain" });
    return res.end("Not Found");
  }
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
    res.end(body);
  });
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
