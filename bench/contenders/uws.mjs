// The baseline for uWebSockets.js: a tight hand-written server doing the
// contract's work with the same parsers Cog uses (fast-querystring, cookie).
import { parseCookie, stringifySetCookie } from "cookie";
import { parse as parseQuery } from "fast-querystring";
import { DEEP_PATH, TOKEN, htmlPage } from "../lib/contract.mjs";
import { requireNativeUws } from "./uws-native.mjs";

const uWS = requireNativeUws();
const NAME = process.env.UWS_CONTENDER ?? "uws";
// uws-reads (uws-reads.mjs) is this server reading, before each handler, what any framework on
// uWS.js has to read to route and check a request: the URL, the query and every header (uWS's
// request object dies when the handler returns). The bare server reads none of it.
const READS = NAME === "uws-reads";
// The reads' sum, so that no read is optimized away; nothing looks at it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- written, never read, on purpose (above)
let seen = 0;
const count = (name, value) => {
  seen += name.length + value.length;
};
const route = (handler) =>
  READS
    ? (res, req) => {
        const query = req.getQuery();
        seen += req.getUrl().length + (query === undefined ? 0 : query.length);
        req.forEach(count);
        handler(res, req);
      }
    : handler;
const TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";
const EXPIRED = new Date(0);

function send(res, status, type, body, cookie) {
  if (status !== "200 OK") res.writeStatus(status);
  res.writeHeader("x-powered-by", NAME).writeHeader("content-type", type);
  if (cookie !== undefined) res.writeHeader("set-cookie", cookie);
  res.end(body);
}

const app = uWS.App();
app.get(
  "/",
  route((res) => send(res, "200 OK", TEXT, `Hello from ${NAME}!`)),
);
app.get(
  DEEP_PATH,
  route((res) => send(res, "200 OK", TEXT, "Pong!")),
);
app.get(
  "/hello",
  route((res, req) => send(res, "200 OK", TEXT, `Hello, ${parseQuery(req.getQuery() ?? "").name || "user"}!`)),
);
app.get(
  "/admin",
  route((res, req) => {
    const header = req.getHeader("cookie");
    const cookies = header === "" ? {} : parseCookie(header);
    if (cookies.token === TOKEN) {
      const clear = stringifySetCookie({ name: "token", value: "", path: "/", expires: EXPIRED });
      return send(res, "200 OK", JSON_TYPE, JSON.stringify({ message: "Secret info" }), clear);
    }
    send(res, "403 Forbidden", TEXT, "Unauthenticated");
  }),
);
app.get(
  "/admin/set-token",
  route((res) => send(res, "200 OK", TEXT, "Token set!", stringifySetCookie({ name: "token", value: TOKEN, path: "/" }))),
);
app.get(
  "/json",
  route((res) => send(res, "200 OK", JSON_TYPE, JSON.stringify({ hello: "world" }))),
);
app.get(
  "/api",
  route((res, req) => {
    const { name, lastname } = parseQuery(req.getQuery() ?? "");
    send(res, "200 OK", TEXT, `Hey ${name} ${lastname}`);
  }),
);
app.get(
  "/html",
  route((res) => send(res, "200 OK", "text/html; charset=utf-8", htmlPage())),
);
app.post(
  "/parse-body",
  route((res) => {
    const chunks = [];
    let aborted = false;
    res.onAborted(() => (aborted = true));
    res.onData((chunk, isLast) => {
      // uWS reuses the chunk's memory after this callback: copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast || aborted) return;
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        return res.cork(() => send(res, "400 Bad Request", TEXT, "Bad JSON"));
      }
      res.cork(() => send(res, "200 OK", JSON_TYPE, JSON.stringify(body)));
    });
  }),
);
app.any(
  "/*",
  route((res) => send(res, "404 Not Found", TEXT, "Not Found")),
);
app.listen("127.0.0.1", Number(process.env.PORT), (socket) => {
  if (!socket) {
    console.error(`uws could not listen on port ${process.env.PORT}`);
    process.exit(1);
  }
  console.log("ready");
});
