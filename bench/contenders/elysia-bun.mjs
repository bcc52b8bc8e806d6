// Elysia 1 on Bun.
import { Elysia } from "elysia";
import { htmlPage } from "../lib/contract.mjs";

const NAME = "elysia-bun";
const TEXT = "text/plain; charset=utf-8";
new Elysia()
  .onRequest(({ set }) => {
    set.headers["x-powered-by"] = NAME;
  })
  .get("/", ({ set }) => {
    set.headers["content-type"] = TEXT;
    return `Hello from ${NAME}!`;
  })
  .get("/very/deeply/nested/route/hello/there/admin/dashboard/ping", ({ set }) => {
    set.headers["content-type"] = TEXT;
    return "Pong!";
  })
  .get("/hello", ({ query, set }) => {
    set.headers["content-type"] = TEXT;
    return `Hello, ${query.name || "user"}!`;
  })
  .get("/admin", ({ cookie: { token }, set }) => {
    if (token.value === "my_token_12345") {
      token.set({ value: "", path: "/", expires: new Date(0) });
      return { message: "Secret info" };
    }
    set.status = 403;
    set.headers["content-type"] = TEXT;
    return "Unauthenticated";
  })
  .get("/admin/set-token", ({ cookie: { token }, set }) => {
    token.set({ value: "my_token_12345", path: "/" });
    set.headers["content-type"] = TEXT;
    return "Token set!";
  })
  .post("/parse-body", ({ body }) => body)
  .get("/json", () => ({ hello: "world" }))
  .get("/api", ({ query, set }) => {
    set.headers["content-type"] = TEXT;
    return `Hey ${query.name} ${query.lastname}`;
  })
  .get("/html", ({ set }) => {
    set.headers["content-type"] = "text/html; charset=utf-8";
    return htmlPage();
  })
  .listen({ port: Number(process.env.PORT), hostname: "127.0.0.1" }, () => console.log("ready"));
