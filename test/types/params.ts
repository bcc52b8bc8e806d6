// Type tests for `req.params` (checked by `tsc -p test/tsconfig.json`, never run): typed from the
// path literal, through groups, and from the params schema when one is given.
import { Type } from "@sinclair/typebox";
import { z } from "zod";
import { Cog, type Group, type Handler, type PathParams } from "../../src/index.js";

const app = new Cog();

// Each :param of the path, as a string; nothing else.
app.get("/users/:id", (req, res) => {
  const id: string = req.params.id;
  // @ts-expect-error -- a typo of a param is caught
  void req.params.idd;
  res.send(id);
});

app.get("/orgs/:org/repos/:repo", (req, res) => {
  const { org, repo }: { org: string; repo: string } = req.params;
  // @ts-expect-error -- params are strings, without a schema
  const n: number = req.params.org;
  void n;
  res.send(`${org}/${repo}`);
});

// A trailing wildcard is the param "*".
app.get("/files/:bucket/*", (req, res) => {
  const rest: string = req.params["*"];
  const bucket: string = req.params.bucket;
  res.send(`${bucket}:${rest}`);
});

// A static path has no params.
app.get("/health", (req, res) => {
  // @ts-expect-error -- no params on a static path
  void req.params.id;
  res.send("ok");
});

// Every method takes the same forms, and so do several handlers in a row.
const audit: Handler = (_req, _res, next) => next();
app.delete("/users/:id", audit, (req, res) => res.send(req.params.id));
app.all("/any/:thing", (req, res) => res.send(req.params.thing));
app.query("/users/:id/search", audit, (req, res) => {
  const id: string = req.params.id;
  // @ts-expect-error -- a typo of a param is caught on QUERY routes too
  void req.params.idd;
  res.json({ id, body: req.body });
});
// A QUERY route's body schema types req.body, as a POST's does.
app.query("/people/:team", { schema: { body: Type.Object({ name: Type.String() }) } }, (req, res) => {
  const name: string = req.body.name;
  const team: string = req.params.team;
  // @ts-expect-error -- the schema says string
  const n: number = req.body.name;
  void n;
  res.json({ name, team });
});

// A path that is not a literal gives Record<string, string>.
const dynamicPath: string = "/x/:y";
app.get(dynamicPath, (req, res) => {
  const y: string | undefined = req.params.y;
  res.send(y ?? "");
});

// Through groups, nested too: the prefixes' params join the route's.
app.group("/users/:uid", (users) => {
  users.get("/posts/:pid", (req, res) => {
    const uid: string = req.params.uid;
    const pid: string = req.params.pid;
    // @ts-expect-error -- not a param of this route
    void req.params.id;
    res.send(`${uid}/${pid}`);
  });
  users.query("/posts", (req, res) => res.send(req.params.uid));
  users.group("/albums/:aid", (albums) => {
    albums.query("/photos/:pid", (req, res) => res.send(`${req.params.uid}/${req.params.aid}/${req.params.pid}`));
    albums.get("/", (req, res) => res.send(`${req.params.uid}/${req.params.aid}`));
    albums.get("/photos/*", (req, res) => res.send(req.params["*"] + req.params.aid + req.params.uid));
  });
});

// A function that registers routes on any group sees the params of its own paths.
function postsRoutes(group: Group): void {
  group.get("/posts/:pid", (req, res) => res.send(req.params.pid));
}
app.group("/blogs", postsRoutes);

// With a params schema, the schema's type wins (coerced: an integer, not a string).
app.get("/items/:id", { schema: { params: Type.Object({ id: Type.Integer() }) } }, (req, res) => {
  const id: number = req.params.id;
  // @ts-expect-error -- the schema says number
  const s: string = req.params.id;
  void s;
  res.json({ id });
});
app.get("/orders/:id", { schema: { params: z.object({ id: z.number().int() }) } }, (req, res) => {
  const id: number = req.params.id;
  res.json({ id });
});

// A schema without params leaves the path's.
app.get("/tags/:tag", { schema: { query: Type.Object({ page: Type.Integer() }) } }, (req, res) => {
  const tag: string = req.params.tag;
  const page: number = req.query.page;
  // @ts-expect-error -- a typo of a param is caught here too
  void req.params.tagg;
  res.json({ tag, page });
});

// The type on its own.
const params: PathParams<"/a/:b/c/:d/*"> = { b: "1", d: "2", "*": "rest" };
// @ts-expect-error -- d is missing
const missing: PathParams<"/a/:b/c/:d"> = { b: "1" };
void params;
void missing;
