// h3 2 on srvx (node:http).
import { H3, deleteCookie, getCookie, getQuery, readBody, serve, setCookie } from "h3";
import { htmlPage } from "../lib/contract.mjs";

const NAME = "h3";
const app = new H3();
app.use((event) => {
  event.res.headers.set("X-Powered-By", NAME);
});
const text = (event, body, status = 200) => {
  event.res.status = status;
  event.res.headers.set("content-type", "text/plain; charset=utf-8");
  return body;
};
app.get("/", (event) => text(event, `Hello from ${NAME}!`));
app.get("/very/deeply/nested/route/hello/there/admin/dashboard/ping", (event) => text(event, "Pong!"));
app.get("/hello", (event) => text(event, `Hello, ${getQuery(event).name || "user"}!`));
app.get("/admin", (event) => {
  if (getCookie(event, "token") === "my_token_12345") {
    deleteCookie(event, "token");
    return { message: "Secret info" };
  }
  return text(event, "Unauthenticated", 403);
});
app.get("/admin/set-token", (event) => {
  setCookie(event, "token", "my_token_12345", { path: "/" });
  return text(event, "Token set!");
});
app.post("/parse-body", async (event) => readBody(event));
app.get("/json", () => ({ hello: "world" }));
app.get("/api", (event) => {
  const { name, lastname } = getQuery(event);
  return text(event, `Hey ${name} ${lastname}`);
});
app.get("/html", (event) => {
  event.res.headers.set("content-type", "text/html; charset=utf-8");
  return htmlPage();
});

const server = serve(app, { port: Number(process.env.PORT), hostname: "127.0.0.1", silent: true });
await server.ready();
console.log("ready");
