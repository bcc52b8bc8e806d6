// Hono 4 on @hono/node-server, written as the seed's Hono app.
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { zValidator } from "@hono/zod-validator";
import { htmlPage } from "../lib/contract.mjs";
import { summarize } from "../lib/validation.mjs";
import { Order } from "../lib/validation-zod.mjs";

const NAME = "hono";
const app = new Hono();
app.use("*", async (c, next) => {
  c.header("X-Powered-By", NAME);
  await next();
});
app.get("/", (c) => c.text(`Hello from ${NAME}!`));
app.get("/very/deeply/nested/route/hello/there/admin/dashboard/ping", (c) => c.text("Pong!"));
app.get("/hello", (c) => c.text(`Hello, ${c.req.query("name") || "user"}!`));
const admin = new Hono();
admin.get("/", (c) => {
  if (getCookie(c, "token") === "my_token_12345") {
    deleteCookie(c, "token");
    return c.json({ message: "Secret info" });
  }
  return c.text("Unauthenticated", 403);
});
admin.get("/set-token", (c) => {
  setCookie(c, "token", "my_token_12345");
  return c.text("Token set!");
});
app.route("/admin", admin);
app.post("/parse-body", async (c) => c.json(await c.req.json()));
app.get("/json", (c) => c.json({ hello: "world" }));
app.get("/api", (c) => c.text(`Hey ${c.req.query("name")} ${c.req.query("lastname")}`));
app.get("/html", (c) => c.html(htmlPage()));
app.post("/validate", zValidator("json", Order), (c) => c.json(summarize(c.req.valid("json"))));

serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(process.env.PORT) }, () => console.log("ready"));
