// The seed's Hono app, shared by Hono on node:http (hono.mjs) and on Bun (hono-bun.mjs).
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { htmlPage } from "../lib/contract.mjs";

export function buildHonoApp(NAME) {
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
  return app;
}
