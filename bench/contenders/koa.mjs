// Koa 3 with @koa/router and @koa/bodyparser.
import { bodyParser } from "@koa/bodyparser";
import Router from "@koa/router";
import Koa from "koa";
import { htmlPage } from "../lib/contract.mjs";

const NAME = "koa";
const app = new Koa();
const router = new Router();
app.use(async (ctx, next) => {
  ctx.set("X-Powered-By", NAME);
  await next();
});
app.use(bodyParser());
const text = (ctx, body, status = 200) => {
  ctx.status = status;
  ctx.type = "text/plain; charset=utf-8";
  ctx.body = body;
};
router.get("/", (ctx) => text(ctx, `Hello from ${NAME}!`));
router.get("/very/deeply/nested/route/hello/there/admin/dashboard/ping", (ctx) => text(ctx, "Pong!"));
router.get("/hello", (ctx) => text(ctx, `Hello, ${ctx.query.name || "user"}!`));
router.get("/admin", (ctx) => {
  if (ctx.cookies.get("token") === "my_token_12345") {
    ctx.cookies.set("token", "", { expires: new Date(0), httpOnly: false });
    ctx.body = { message: "Secret info" };
    return;
  }
  text(ctx, "Unauthenticated", 403);
});
router.get("/admin/set-token", (ctx) => {
  ctx.cookies.set("token", "my_token_12345", { httpOnly: false });
  text(ctx, "Token set!");
});
router.post("/parse-body", (ctx) => {
  ctx.body = ctx.request.body;
});
router.get("/json", (ctx) => {
  ctx.body = { hello: "world" };
});
router.get("/api", (ctx) => text(ctx, `Hey ${ctx.query.name} ${ctx.query.lastname}`));
router.get("/html", (ctx) => {
  ctx.type = "html";
  ctx.body = htmlPage();
});
app.use(router.routes());
app.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
