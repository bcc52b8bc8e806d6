// HyperExpress 6 on uWebSockets.js.
import { requireNativeUws } from "./uws-native.mjs";
import { htmlPage } from "../lib/contract.mjs";

requireNativeUws();
const { default: HyperExpress } = await import("hyper-express");
const NAME = "hyper-express";
const server = new HyperExpress.Server();
server.use((_req, res, next) => {
  res.header("X-Powered-By", NAME);
  next();
});
server.get("/", (_req, res) => res.type("text").send(`Hello from ${NAME}!`));
server.get("/very/deeply/nested/route/hello/there/admin/dashboard/ping", (_req, res) => res.type("text").send("Pong!"));
server.get("/hello", (req, res) => res.type("text").send(`Hello, ${req.query_parameters.name || "user"}!`));
server.get("/admin", (req, res) => {
  if (req.cookies.token === "my_token_12345") {
    res.cookie("token", null);
    return res.json({ message: "Secret info" });
  }
  res.status(403).type("text").send("Unauthenticated");
});
server.get("/admin/set-token", (_req, res) => {
  res.cookie("token", "my_token_12345", undefined, { path: "/" });
  res.type("text").send("Token set!");
});
server.post("/parse-body", async (req, res) => res.json(await req.json()));
server.get("/json", (_req, res) => res.json({ hello: "world" }));
server.get("/api", (req, res) => res.type("text").send(`Hey ${req.query_parameters.name} ${req.query_parameters.lastname}`));
server.get("/html", (_req, res) => res.type("html").send(htmlPage()));
await server.listen(Number(process.env.PORT), "127.0.0.1");
console.log("ready");
