// Type tests for per-request state an app declares (checked by `tsc -p test/tsconfig.json`, never
// run): `Locals` types `res.locals`, and `Request`/`Response` take members by declaration merging,
// as Fastify's FastifyRequest does. The declarations below apply to the whole program, as an
// app's would; their names are this file's own so that no other test depends on them. The
// members added to Request and Response are optional here only because this program compiles
// Cog's own source too, whose engines make requests without them: an app, which sees Cog's
// declarations, declares required ones (test/require-from-commonjs.test.ts checks that).
import { Type } from "@sinclair/typebox";
import { Cog, type Handler, type Request, type Response } from "cog-http";

interface AugmentedUser {
  id: number;
  name: string;
}

declare module "cog-http" {
  interface Locals {
    augmentedUser: AugmentedUser;
  }
  interface Request {
    augmentedTenant?: string;
  }
  interface Response {
    augmentedRender?(view: string): void;
  }
}

const app = new Cog();

// Middleware sets what it declared; a handler reads it typed, without a cast.
app.use((req, res, next) => {
  req.augmentedTenant = "acme";
  res.locals.augmentedUser = { id: 1, name: "Ada" };
  // @ts-expect-error -- augmentedUser is an AugmentedUser
  res.locals.augmentedUser = { id: "1", name: "Ada" };
  // @ts-expect-error -- augmentedTenant is a string
  req.augmentedTenant = 5;
  next();
});

app.get("/me/:id", (req, res) => {
  const name: string = res.locals.augmentedUser.name;
  const tenant: string | undefined = req.augmentedTenant;
  const id: string = req.params.id;
  // @ts-expect-error -- a typo is caught on the declared state
  void res.locals.augmentedUser.nmae;
  // @ts-expect-error -- not declared on Request
  void req.augmentedTenantt;
  // Undeclared locals are still allowed, as unknown.
  const other: unknown = res.locals.somethingElse;
  // @ts-expect-error -- unknown, not any
  const wrong: string = res.locals.somethingElse;
  void [other, wrong];
  res.augmentedRender?.("me");
  res.json({ name, tenant, id });
});

// Routes with a schema see the same declared members.
app.post("/items", { schema: { body: Type.Object({ title: Type.String() }) } }, (req, res) => {
  const tenant: string | undefined = req.augmentedTenant;
  const user: AugmentedUser = res.locals.augmentedUser;
  res.json({ tenant, user, title: req.body.title });
});

// Written against the exported types, outside a route.
const handler: Handler = (req: Request, res: Response) => {
  const tenant: string | undefined = req.augmentedTenant;
  res.locals.augmentedUser = { id: 2, name: tenant ?? "none" };
  res.end();
};
app.get("/other", handler);

// Groups too.
app.group("/admin", (admin) => {
  admin.get("/", (req, res) => res.send(req.augmentedTenant ?? res.locals.augmentedUser.name));
});
