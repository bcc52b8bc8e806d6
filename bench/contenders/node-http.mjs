// The baseline: a tight hand-written node:http server doing the contract's work
// with the same parsers Cog uses (fast-querystring, cookie), and nothing else.
import { createServer } from "node:http";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { parseCookie, stringifySetCookie } from "cookie";
import { parse as parseQuery } from "fast-querystring";
import { DEEP_PATH, TOKEN, htmlPage } from "../lib/contract.mjs";
import { ORDER_SCHEMA, summarize } from "../lib/validation.mjs";

const NAME = "node-http";
const TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";
const EXPIRED = new Date(0);
// The same ajv settings Cog uses for bodies.
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
addFormats(ajv);
const validateOrder = ajv.compile(ORDER_SCHEMA);

function send(res, status, type, body, cookie) {
  const headers = { "x-powered-by": NAME, "content-type": type, "content-length": Buffer.byteLength(body) };
  if (cookie !== undefined) headers["set-cookie"] = cookie;
  res.writeHead(status, headers);
  res.end(body);
}

const server = createServer((req, res) => {
  const url = req.url;
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const query = () => (q === -1 ? {} : parseQuery(url.slice(q + 1)));
  if (req.method === "GET") {
    switch (path) {
      case "/":
        return send(res, 200, TEXT, `Hello from ${NAME}!`);
      case DEEP_PATH:
        return send(res, 200, TEXT, "Pong!");
      case "/hello":
        return send(res, 200, TEXT, `Hello, ${query().name || "user"}!`);
      case "/admin": {
        const header = req.headers.cookie;
        const cookies = header === undefined ? {} : parseCookie(header);
        if (cookies.token === TOKEN) {
          const clear = stringifySetCookie({ name: "token", value: "", path: "/", expires: EXPIRED });
          return send(res, 200, JSON_TYPE, JSON.stringify({ message: "Secret info" }), clear);
        }
        return send(res, 403, TEXT, "Unauthenticated");
      }
      case "/admin/set-token":
        // Serialized per request, as every framework does.
        return send(res, 200, TEXT, "Token set!", stringifySetCookie({ name: "token", value: TOKEN, path: "/" }));
      case "/json":
        return send(res, 200, JSON_TYPE, JSON.stringify({ hello: "world" }));
      case "/api": {
        const { name, lastname } = query();
        return send(res, 200, TEXT, `Hey ${name} ${lastname}`);
      }
      case "/html":
        return send(res, 200, "text/html; charset=utf-8", htmlPage());
    }
  } else if (req.method === "POST" && (path === "/parse-body" || path === "/validate")) {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        return send(res, 400, TEXT, "Bad JSON");
      }
      if (path === "/parse-body") return send(res, 200, JSON_TYPE, JSON.stringify(body));
      if (!validateOrder(body)) return send(res, 400, JSON_TYPE, JSON.stringify({ errors: validateOrder.errors }));
      send(res, 200, JSON_TYPE, JSON.stringify(summarize(body)));
    });
    return;
  }
  send(res, 404, TEXT, "Not Found");
});

server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
