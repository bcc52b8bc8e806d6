// Type tests: checked by `tsc -p test/tsconfig.json` (part of `npm test`), never run.
// Each @ts-expect-error line must fail to type-check, or tsc reports the unused directive.
import { Type } from "@sinclair/typebox";
import { z } from "zod";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import helmet from "helmet";
import rateLimit from "express-rate-limit";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Cog, HttpError, type CogRequest, type CogResponse, type Handler } from "../../src/index.js";

const app = new Cog();

// Plain routes: req and res are Cog's own types.
app.get("/plain/:id", (req, res, next) => {
  const id: string | undefined = req.params.id;
  const q: string | string[] | undefined = req.query.q;
  const token: string | undefined = req.cookies.token;
  if (!id) return next(new HttpError(400));
  res.status(200).set("x-id", id).send({ id, q, token });
});

// TypeBox: body, query and params are typed from the schema, and so is the response.
app.post(
  "/users/:id",
  {
    schema: {
      params: Type.Object({ id: Type.Integer() }),
      query: Type.Object({ verbose: Type.Optional(Type.Boolean()) }),
      body: Type.Object({ name: Type.String(), age: Type.Number() }),
      response: { 200: Type.Object({ id: Type.Integer(), name: Type.String() }) },
    },
  },
  (req, res) => {
    const id: number = req.params.id;
    const verbose: boolean | undefined = req.query.verbose;
    const name: string = req.body.name;
    // @ts-expect-error -- age is a number
    const age: string = req.body.age;
    // @ts-expect-error -- not declared in the body schema
    void req.body.email;
    void verbose;
    void age;
    res.json({ id, name });
    // @ts-expect-error -- the response schema has no such shape
    res.json({ id: "x", name });
  },
);

// zod 4 through Standard Schema: the output type (after coercion) is what the handler sees.
app.post("/orders", { schema: { body: z.object({ qty: z.coerce.number(), note: z.string().optional() }) } }, (req, res) => {
  const qty: number = req.body.qty;
  const note: string | undefined = req.body.note;
  // @ts-expect-error -- qty is a number after coercion
  const wrong: string = req.body.qty;
  void wrong;
  res.send({ qty, note });
});

// Groups take the same forms.
app.group("/admin", (admin) => {
  admin.get("/stats", { schema: { query: Type.Object({ days: Type.Integer() }) } }, (req, res) => {
    const days: number = req.query.days;
    res.json({ days });
  });
});

// Express-style middleware types fit `use`.
const logger: Handler = (req: CogRequest, _res: CogResponse, next) => {
  void req.path;
  next();
};
app.use(logger);
app.use("/api", (_req, _res, next) => next());

// Middleware typed for Node's or Express's own classes fits `use` without a cast: Cog's req and
// res are those classes at run time.
app.use(connectNodeAdapter({ routes: () => {} }));
app.use("/rpc", connectNodeAdapter({ routes: () => {} }));
app.use(helmet());
app.use(rateLimit({ windowMs: 60_000, limit: 100 }));
app.use((req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => {
  if (req.url === "/teapot") res.writeHead(418).end();
  else next();
});
// An untyped middleware still gets Cog's own types.
app.use((req, _res, next) => {
  const path: string = req.path;
  void path;
  next();
});
// @ts-expect-error -- its first parameter is no request
app.use((n: number) => n);
// @ts-expect-error -- a handler is a function
app.use(42);

// @ts-expect-error -- a handler is a function
app.get("/nope", 42);

// Unknown route options and schema keys are type errors too (and throw at registration for JavaScript).
// @ts-expect-error -- Fastify's querystring: Cog calls it query
app.get("/fastify-style", { schema: { querystring: Type.Object({ q: Type.String() }) } }, (_req, res) => res.send("x"));
// @ts-expect-error -- the handler follows the options
app.get("/handler-in-options", { schema: {}, handler: () => {} }, (_req, res) => res.send("x"));
// @ts-expect-error -- a WebSocket route's handler is message
app.ws("/live", { onMessage() {} });

// The OpenAPI pass-throughs are typed, and so is the document.
app.get("/secured", { schema: { operationId: "secured", deprecated: true, security: [{ bearer: ["read"] }] } }, (_req, res) => res.send("x"));
const security: Array<Record<string, string[]>> | undefined = app.openapi({ title: "t", version: "1", components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } } }).paths?.["/secured"]?.get?.security;
void security;
// @ts-expect-error -- deprecated is a boolean
app.get("/deprecated", { schema: { deprecated: "yes" } }, (_req, res) => res.send("x"));
