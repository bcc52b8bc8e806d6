// Type tests: checked by `tsc -p test/tsconfig.json` (part of `npm test`), never run.
// Code as @types/express users write it, against cog-http/express's own types: the same
// imports, handler signatures, generics and error middleware type-check unchanged.
import { createServer } from "node:http";
import express, { Router, type ErrorRequestHandler, type Express, type NextFunction, type Request, type RequestHandler, type Response } from "cog-http/express";

const app: Express = express();
app.use(express.json());
app.use(express.urlencoded({ extended: true }));
app.use(express.static("public", { maxAge: "1d" }));
app.set("trust proxy", 1);
app.disable("x-powered-by");
const env: string = app.get("env");

// A middleware typed as RequestHandler: req, res and next inferred.
const requireToken: RequestHandler = (req, res, next) => {
  const token: string | undefined = req.get("authorization");
  if (!token) {
    res.status(401).json({ error: "no token" });
    return;
  }
  res.locals.token = token;
  next();
};

// Handlers with annotated parameters, and Request's generics: params, response body, request body, query.
const users: Router = express.Router({ mergeParams: true });
users.get("/:id", requireToken, (req: Request<{ id: string }>, res: Response, next: NextFunction) => {
  const id: string = req.params.id;
  if (id === "0") return next(new Error("no such user"));
  res.json({ id, ip: req.ip, path: req.path, secure: req.secure });
});
users.post("/", (req: Request<Record<string, string>, { created: string }, { name: string }>, res: Response<{ created: string }>) => {
  const name: string = req.body.name;
  res.status(201).json({ created: name });
});
const search: RequestHandler<Record<string, never>, { hits: number }, unknown, { q?: string }> = (req, res) => {
  const q: string | undefined = req.query.q;
  res.send({ hits: q === undefined ? 0 : q.length });
};
users.get("/search", search);
// QUERY (RFC 10008) where Node has it, as Express derives its methods from http.METHODS.
users.query("/search", express.json(), (req: Request<Record<string, string>, unknown, { q: string }>, res) => res.json({ q: req.body.q }));
app.query("/search", (_req, res) => res.json([]));
users.route("/found").query((_req, res) => res.sendStatus(204));
users.route("/:id/avatar").get((_req, res) => res.sendFile("/avatars/default.png")).put(requireToken, (_req, res) => res.sendStatus(204));
users.param("id", (req, _res, next, id: string) => {
  req.params.id = id.trim();
  next();
});

// Async handlers, cookies, redirects, content negotiation.
app.get("/async", async (req, res) => {
  await Promise.resolve();
  res.cookie("seen", "1", { httpOnly: true, maxAge: 60_000, sameSite: "lax" }).clearCookie("old");
  if (req.accepts("html")) return res.redirect(302, "/home");
  res.format({ json: () => res.json({ ok: true }), default: () => res.sendStatus(406) });
});
function named(req: Request, res: Response): void {
  res.type("text").set("X-Handler", "named").send(`${req.method} ${req.originalUrl}`);
}
app.get("/named", named);

app.use("/users", users);

// Error middleware with four parameters.
const onError: ErrorRequestHandler = (err, _req, res, _next) => {
  res.status(typeof err.status === "number" ? err.status : 500).json({ message: err instanceof Error ? err.message : String(err) });
};
app.use(onError);
app.use((err: Error, _req: Request, res: Response, next: NextFunction) => {
  if (res.headersSent) return next(err);
  res.status(500).send(err.message);
});

// The app as a listener of node:http, and app.listen's server.
createServer(app);
const server = app.listen(3000, "127.0.0.1", () => console.log(env));
server.close();

// @ts-expect-error -- a status is a number
express().use((_req: Request, res: Response) => res.status("200"));
// @ts-expect-error -- params of Request<{ id: string }> have no other name
users.get("/:id/x", (req: Request<{ id: string }>) => req.params.name.length);
