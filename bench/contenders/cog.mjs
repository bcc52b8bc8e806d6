// Cog: the seed's app (examples/seed-app.ts) plus the contract's three extra routes,
// on the node engine, or on Cog's native engine as cog-native.
import { Cog } from "../../dist/index.js";
import { htmlPage } from "../lib/contract.mjs";
import { ORDER_SCHEMA, SUMMARY_SCHEMA, summarize } from "../lib/validation.mjs";

const NAME = process.env.COG_CONTENDER ?? "cog";
const ENGINES = { "cog-native": "native" };
// COG_LOG=1: with the access log on (JSON lines to stdout), to measure what it costs.
const app = new Cog({ engine: ENGINES[NAME] ?? "node", logger: process.env.COG_LOG === "1" });

app.use("*", (_req, res, next) => {
  res.set("X-Powered-By", NAME);
  next();
});

app.get("/", (_req, res) => {
  res.send(`Hello from ${NAME}!`);
});

app.get("/very/deeply/nested/route/hello/there/admin/dashboard/ping", (_req, res) => {
  res.send("Pong!");
});

app.get("/hello", (req, res) => {
  const { name } = req.query;
  res.send(`Hello, ${name || "user"}!`);
});

app.group("/admin", (admin) => {
  admin.get("/", (req, res) => {
    const { token } = req.cookies;
    if (token === "my_token_12345") {
      res.clearCookie("token");
      return res.send({ message: "Secret info" });
    }
    res.send("Unauthenticated", 403);
  });

  admin.get("/set-token", (_req, res) => {
    res.setCookie("token", "my_token_12345");
    res.send("Token set!");
  });
});

app.post("/parse-body", (req, res) => {
  res.send(req.body);
});

app.get("/json", (_req, res) => res.json({ hello: "world" }));
app.get("/api", (req, res) => res.send(`Hey ${req.query.name} ${req.query.lastname}`));
app.get("/html", (_req, res) => res.html(htmlPage()));
app.post("/validate", { schema: { body: ORDER_SCHEMA, response: { 200: SUMMARY_SCHEMA } } }, (req, res) => res.json(summarize(req.body)));

app.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
