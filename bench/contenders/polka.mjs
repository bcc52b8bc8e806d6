// Polka 0.5 with body-parser (its responses are plain ServerResponses).
import bodyParser from "body-parser";
import { parseCookie, stringifySetCookie } from "cookie";
import polka from "polka";
import { htmlPage } from "../lib/contract.mjs";

const NAME = "polka";
const TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";
function send(res, status, type, body) {
  res.statusCode = status;
  res.setHeader("content-type", type);
  res.setHeader("content-length", Buffer.byteLength(body));
  res.end(body);
}
polka()
  .use((_req, res, next) => {
    res.setHeader("X-Powered-By", NAME);
    next();
  })
  .use(bodyParser.json())
  .get("/", (_req, res) => send(res, 200, TEXT, `Hello from ${NAME}!`))
  .get("/very/deeply/nested/route/hello/there/admin/dashboard/ping", (_req, res) => send(res, 200, TEXT, "Pong!"))
  .get("/hello", (req, res) => send(res, 200, TEXT, `Hello, ${req.query.name || "user"}!`))
  .get("/admin", (req, res) => {
    const cookies = req.headers.cookie ? parseCookie(req.headers.cookie) : {};
    if (cookies.token === "my_token_12345") {
      res.setHeader("set-cookie", stringifySetCookie({ name: "token", value: "", path: "/", expires: new Date(0) }));
      return send(res, 200, JSON_TYPE, JSON.stringify({ message: "Secret info" }));
    }
    send(res, 403, TEXT, "Unauthenticated");
  })
  .get("/admin/set-token", (_req, res) => {
    res.setHeader("set-cookie", stringifySetCookie({ name: "token", value: "my_token_12345", path: "/" }));
    send(res, 200, TEXT, "Token set!");
  })
  .post("/parse-body", (req, res) => send(res, 200, JSON_TYPE, JSON.stringify(req.body)))
  .get("/json", (_req, res) => send(res, 200, JSON_TYPE, JSON.stringify({ hello: "world" })))
  .get("/api", (req, res) => send(res, 200, TEXT, `Hey ${req.query.name} ${req.query.lastname}`))
  .get("/html", (_req, res) => send(res, 200, "text/html; charset=utf-8", htmlPage()))
  .listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
