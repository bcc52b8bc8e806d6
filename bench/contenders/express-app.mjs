// The Express app of the seed, shared by Express itself and ultimate-express
// (which implements the same API on uWebSockets.js).
import cookieParser from "cookie-parser";
import { htmlPage } from "../lib/contract.mjs";

export function buildExpressApp(express, NAME, { validation } = {}) {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.use(cookieParser());
  app.use(express.json());
  app.use((_req, res, next) => {
    res.set("X-Powered-By", NAME);
    next();
  });

  app.get("/", (_req, res) => res.type("text").send(`Hello from ${NAME}!`));
  app.get("/very/deeply/nested/route/hello/there/admin/dashboard/ping", (_req, res) => res.type("text").send("Pong!"));
  app.get("/hello", (req, res) => res.type("text").send(`Hello, ${req.query.name || "user"}!`));

  const admin = express.Router();
  admin.get("/", (req, res) => {
    if (req.cookies.token === "my_token_12345") {
      res.clearCookie("token");
      res.status(200).send({ message: "Secret info" });
      return;
    }
    res.status(403).type("text").send("Unauthenticated");
  });
  admin.get("/set-token", (_req, res) => {
    res.cookie("token", "my_token_12345");
    res.type("text").send("Token set!");
  });
  app.use("/admin", admin);

  app.post("/parse-body", (req, res) => res.send(req.body));
  app.get("/json", (_req, res) => res.json({ hello: "world" }));
  app.get("/api", (req, res) => res.type("text").send(`Hey ${req.query.name} ${req.query.lastname}`));
  app.get("/html", (_req, res) => res.type("html").send(htmlPage()));
  if (validation) {
    const { Order, summarize } = validation;
    app.post("/validate", (req, res) => {
      const result = Order.safeParse(req.body);
      if (!result.success) return res.status(400).json({ issues: result.error.issues });
      res.json(summarize(result.data));
    });
  }
  return app;
}
