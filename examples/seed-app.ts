import { Cog } from "cog-http";

const app = new Cog();

app.use("*", (_req, res, next) => {
  res.set("X-Powered-By", "Cog");
  next();
});

app.get("/", (_req, res) => {
  res.send("Hello from Cog!");
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
  const body = req.body;
  res.send(body);
});

app.listen(3000, "127.0.0.1", () => {
  console.log("Listening on 127.0.0.1:3000");
});
