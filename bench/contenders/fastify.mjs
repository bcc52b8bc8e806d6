// Fastify 5 with @fastify/cookie; JSON bodies are parsed by Fastify itself.
import cookie from "@fastify/cookie";
import Fastify from "fastify";
import { htmlPage } from "../lib/contract.mjs";
import { ORDER_SCHEMA, SUMMARY_SCHEMA, summarize } from "../lib/validation.mjs";

const NAME = "fastify";
// COG_LOG=1: with its access log on (pino, JSON lines to stdout), as Cog's contenders take it, to compare what logging costs.
const app = Fastify({ logger: process.env.COG_LOG === "1" });
await app.register(cookie);
app.addHook("onRequest", (_req, reply, done) => {
  reply.header("X-Powered-By", NAME);
  done();
});

app.get("/", (_req, reply) => reply.type("text/plain; charset=utf-8").send(`Hello from ${NAME}!`));
app.get("/very/deeply/nested/route/hello/there/admin/dashboard/ping", (_req, reply) => reply.send("Pong!"));
app.get("/hello", (req, reply) => reply.send(`Hello, ${req.query.name || "user"}!`));
app.register(
  async (admin) => {
    admin.get("/", (req, reply) => {
      if (req.cookies.token === "my_token_12345") {
        reply.clearCookie("token", { path: "/" });
        return reply.send({ message: "Secret info" });
      }
      return reply.code(403).send("Unauthenticated");
    });
    admin.get("/set-token", (_req, reply) => {
      reply.setCookie("token", "my_token_12345", { path: "/" });
      return reply.send("Token set!");
    });
  },
  { prefix: "/admin" },
);
app.post("/parse-body", (req, reply) => reply.send(req.body));
app.get("/json", (_req, reply) => reply.send({ hello: "world" }));
app.get("/api", (req, reply) => reply.send(`Hey ${req.query.name} ${req.query.lastname}`));
app.get("/html", (_req, reply) => reply.type("text/html; charset=utf-8").send(htmlPage()));
app.post("/validate", { schema: { body: ORDER_SCHEMA, response: { 200: SUMMARY_SCHEMA } } }, (req, reply) => reply.send(summarize(req.body)));

await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
console.log("ready");
