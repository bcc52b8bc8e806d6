// The baseline for Bun: a tight hand-written Bun.serve doing the contract's work.
import { parseCookie, stringifySetCookie } from "cookie";
import { parse as parseQuery } from "fast-querystring";
import { DEEP_PATH, TOKEN, htmlPage } from "../lib/contract.mjs";

const NAME = "bun";
const TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";
const EXPIRED = new Date(0);

const reply = (status, type, body, cookie) => {
  const headers = { "x-powered-by": NAME, "content-type": type };
  if (cookie !== undefined) headers["set-cookie"] = cookie;
  return new Response(body, { status, headers });
};

Bun.serve({
  port: Number(process.env.PORT),
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = req.url;
    const start = url.indexOf("/", 8);
    const q = url.indexOf("?", start);
    const path = q === -1 ? url.slice(start) : url.slice(start, q);
    const query = () => (q === -1 ? {} : parseQuery(url.slice(q + 1)));
    if (req.method === "POST" && path === "/parse-body") return reply(200, JSON_TYPE, JSON.stringify(await req.json()));
    switch (path) {
      case "/":
        return reply(200, TEXT, `Hello from ${NAME}!`);
      case DEEP_PATH:
        return reply(200, TEXT, "Pong!");
      case "/hello":
        return reply(200, TEXT, `Hello, ${query().name || "user"}!`);
      case "/admin": {
        const header = req.headers.get("cookie");
        const cookies = header ? parseCookie(header) : {};
        if (cookies.token === TOKEN) {
          const clear = stringifySetCookie({ name: "token", value: "", path: "/", expires: EXPIRED });
          return reply(200, JSON_TYPE, JSON.stringify({ message: "Secret info" }), clear);
        }
        return reply(403, TEXT, "Unauthenticated");
      }
      case "/admin/set-token":
        return reply(200, TEXT, "Token set!", stringifySetCookie({ name: "token", value: TOKEN, path: "/" }));
      case "/json":
        return reply(200, JSON_TYPE, JSON.stringify({ hello: "world" }));
      case "/api": {
        const { name, lastname } = query();
        return reply(200, TEXT, `Hey ${name} ${lastname}`);
      }
      case "/html":
        return reply(200, "text/html; charset=utf-8", htmlPage());
    }
    return reply(404, TEXT, "Not Found");
  },
});
console.log("ready");
