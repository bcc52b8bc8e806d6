// req.route: the pattern of the route that matched, group prefixes included, the same on both
// engines; undefined for a 404 or a 405. The access log's `route` is the same pattern.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Request, RequestLogLine } from "../src/index.js";
import { engine, serve } from "./helpers.js";

test(`req.route is the matched pattern: params, wildcards, groups, app.all, HEAD by GET (${engine})`, async (t) => {
  const lines: RequestLogLine[] = [];
  const seenByMiddleware: Array<string | undefined> = [];
  const { fetch } = await serve(
    t,
    (app) => {
      // Middleware runs after routing: it sees the route too.
      app.use((req, _res, next) => {
        seenByMiddleware.push(req.route);
        next();
      });
      const answer = (req: Request, res: { json(body: unknown): unknown }) => void res.json({ route: req.route ?? null });
      app.get("/users/:id", answer);
      app.get("/users/:id/files/*", answer);
      app.get("/users/me", answer);
      app.all("/any", answer);
      app.group("/admin", (admin) => {
        admin.get("/", answer);
        admin.group("/teams/:team", (teams) => teams.post("/members/:member", answer));
      });
    },
    { logger: (line) => void lines.push(line as RequestLogLine) },
  );
  const routeOf = async (path: string, init?: RequestInit) => ((await (await fetch(path, init)).json()) as { route: string | null }).route;
  assert.equal(await routeOf("/users/7"), "/users/:id");
  assert.equal(await routeOf("/users/me"), "/users/me");
  assert.equal(await routeOf("/users/7/files/a/b.txt"), "/users/:id/files/*");
  assert.equal(await routeOf("/any", { method: "DELETE" }), "/any");
  assert.equal(await routeOf("/admin"), "/admin");
  assert.equal(await routeOf("/admin/teams/red/members/ann", { method: "POST" }), "/admin/teams/:team/members/:member");
  const head = await fetch("/users/9", { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.deepEqual(seenByMiddleware, ["/users/:id", "/users/me", "/users/:id/files/*", "/any", "/admin", "/admin/teams/:team/members/:member", "/users/:id"]);
  for (let i = 0; i < 20 && lines.length < 7; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(
    lines.map((line) => [line.method, line.path, line.route]),
    [
      ["GET", "/users/7", "/users/:id"],
      ["GET", "/users/me", "/users/me"],
      ["GET", "/users/7/files/a/b.txt", "/users/:id/files/*"],
      ["DELETE", "/any", "/any"],
      ["GET", "/admin", "/admin"],
      ["POST", "/admin/teams/red/members/ann", "/admin/teams/:team/members/:member"],
      ["HEAD", "/users/9", "/users/:id"],
    ],
  );
});

test(`req.route is undefined for a 404 and a 405, in middleware and in the notFound and error handlers (${engine})`, async (t) => {
  const lines: RequestLogLine[] = [];
  const seen: Array<[string, string | undefined]> = [];
  const { fetch } = await serve(
    t,
    (app) => {
      app.use((req, _res, next) => {
        seen.push(["middleware", req.route]);
        next();
      });
      app.get("/only-get", (_req, res) => void res.send("ok"));
      app.get("/fails/:why", () => {
        throw new Error("broken");
      });
      app.notFound((req, res) => {
        seen.push(["notFound", req.route]);
        res.status(404).json({ route: req.route ?? null });
      });
      app.onError((err, req, res) => {
        seen.push(["onError", req.route]);
        res.status((err as { status?: number }).status ?? 500).json({ route: req.route ?? null });
      });
    },
    { logger: (line) => void lines.push(line as RequestLogLine) },
  );
  const missing = await fetch("/nothing/here");
  assert.deepEqual([missing.status, await missing.json()], [404, { route: null }]);
  // A 405 is an error the app answers: its error handler sees no route either.
  const wrongMethod = await fetch("/only-get", { method: "PUT" });
  assert.deepEqual([wrongMethod.status, await wrongMethod.json()], [405, { route: null }]);
  const failing = await fetch("/fails/now");
  // An error in a route's handler happened in that route: the error handler sees it.
  assert.deepEqual([failing.status, await failing.json()], [500, { route: "/fails/:why" }]);
  assert.deepEqual(seen, [
    ["middleware", undefined],
    ["notFound", undefined],
    ["middleware", undefined],
    ["onError", undefined],
    ["middleware", "/fails/:why"],
    ["onError", "/fails/:why"],
  ]);
  for (let i = 0; i < 20 && lines.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(
    lines.map((line) => [line.status, line.route]),
    [
      [404, null],
      [405, null],
      [500, "/fails/:why"],
    ],
  );
});

test("req.route can be set by someone else's router (Express sets its own)", async (t) => {
  const { fetch } = await serve(t, (app) => {
    app.get("/mine", (req, res) => {
      (req as { route: unknown }).route = { path: "/theirs" };
      res.json({ route: req.route });
    });
  });
  assert.deepEqual(await (await fetch("/mine")).json(), { route: { path: "/theirs" } });
});
