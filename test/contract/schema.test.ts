import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Type } from "@sinclair/typebox";
import { Validator } from "@seriousme/openapi-schema-validator";
import { z } from "zod";
import { Cog } from "../../src/index.js";
import { serve } from "../helpers.js";

const json = { "content-type": "application/json" };

describe("JSON Schema (TypeBox) routes", () => {
  const User = Type.Object({
    name: Type.String({ minLength: 1 }),
    age: Type.Integer({ minimum: 0 }),
    born: Type.String({ format: "date" }),
    tags: Type.Array(Type.Object({ label: Type.String() }), { maxItems: 5 }),
  });

  test("valid requests reach the handler with coerced params and query", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.post(
        "/users/:id",
        {
          schema: {
            params: Type.Object({ id: Type.Integer() }),
            query: Type.Object({ limit: Type.Integer({ default: 10 }), flag: Type.Optional(Type.Boolean()), ids: Type.Optional(Type.Array(Type.Integer())) }),
            body: User,
          },
        },
        (req, res) => res.json({ id: req.params.id, limit: req.query.limit, flag: req.query.flag ?? null, ids: req.query.ids ?? null, name: req.body.name }),
      );
    });
    const body = JSON.stringify({ name: "Ada", age: 36, born: "1815-12-10", tags: [{ label: "math" }] });
    let res = await fetch("/users/7?limit=5&flag=true&ids=3", { method: "POST", headers: json, body });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { id: 7, limit: 5, flag: true, ids: [3], name: "Ada" });
    res = await fetch("/users/7", { method: "POST", headers: json, body });
    assert.deepEqual(await res.json(), { id: 7, limit: 10, flag: null, ids: null, name: "Ada" }, "defaults apply");
  });

  test("invalid requests get 400 listing every failing field, and the handler never runs", async (t) => {
    let calls = 0;
    const { fetch } = await serve(t, (app) => {
      app.post("/users/:id", { schema: { params: Type.Object({ id: Type.Integer() }), body: User } }, (_req, res) => {
        calls++;
        res.send("ran");
      });
    });
    const res = await fetch("/users/abc", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ name: "", age: -1, born: "yesterday", tags: [{}], extra: 1 }),
    });
    assert.equal(res.status, 400);
    const answer = await res.json();
    assert.equal(answer.error, "Bad Request");
    assert.match(answer.message, /^Invalid params: \/id must be integer \(and \d+ more\)$/);
    const where = answer.validation.map((v: { in: string; path: string }) => `${v.in} ${v.path}`);
    assert.deepEqual(where.sort(), ["body /age", "body /born", "body /name", "body /tags/0/label", "params /id"].sort());
    for (const issue of answer.validation) assert.equal(typeof issue.message, "string");
    assert.equal(calls, 0);
  });

  test("valid JSON of the wrong shape, a missing body and other content types all get 400, never 500", async (t) => {
    const { fetch } = await serve(t, (app) => app.post("/u", { schema: { body: User } }, (_req, res) => res.send("ran")));
    for (const [body, headers] of [
      ["[1,2,3]", json],
      ['"just a string"', json],
      ["null", json],
      ["name=Ada&age=3", { "content-type": "application/x-www-form-urlencoded" }],
      ["<user/>", { "content-type": "application/xml" }],
      [undefined, {}],
    ] as const) {
      const res = await fetch("/u", { method: "POST", headers, body });
      assert.equal(res.status, 400, `${headers["content-type"]} ${body}`);
    }
  });

  test("deeply nested and huge input stays bounded by the body limit", async (t) => {
    const { fetch } = await serve(t, (app) => app.post("/u", { schema: { body: User } }, (_req, res) => res.send("ran")), { bodyLimit: 64 * 1024 });
    const deep = "[".repeat(50_000) + "]".repeat(50_000);
    assert.equal((await fetch("/u", { method: "POST", headers: json, body: deep })).status, 413);
    const nested = "[".repeat(5_000) + "]".repeat(5_000);
    assert.equal((await fetch("/u", { method: "POST", headers: json, body: nested })).status, 400);
    const manyTags = JSON.stringify({ name: "x", age: 1, born: "2000-01-01", tags: Array.from({ length: 2000 }, () => ({ label: 1 })) });
    const res = await fetch("/u", { method: "POST", headers: json, body: manyTags });
    assert.equal(res.status, 400);
  });

  test("headers are validated too", async (t) => {
    const { fetch } = await serve(t, (app) =>
      app.get("/h", { schema: { headers: Type.Object({ "x-api-version": Type.Integer({ minimum: 2 }) }) } }, (req, res) =>
        res.json({ v: req.headers["x-api-version"] }),
      ),
    );
    assert.equal((await fetch("/h", { headers: { "x-api-version": "1" } })).status, 400);
    assert.equal((await fetch("/h")).status, 400);
    assert.deepEqual(await (await fetch("/h", { headers: { "x-api-version": "3" } })).json(), { v: 3 });
  });

  test("a response schema writes only the declared fields", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get(
        "/me",
        { schema: { response: { 200: Type.Object({ id: Type.Integer(), name: Type.String() }), 404: Type.Object({ missing: Type.String() }) } } },
        (req, res) => {
          if (req.query.gone) return res.json({ missing: "me" }, 404);
          res.send({ id: 1, name: "Ada", password: "hunter2" });
        },
      );
    });
    let res = await fetch("/me");
    assert.equal(await res.text(), '{"id":1,"name":"Ada"}');
    assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
    res = await fetch("/me?gone=1");
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { missing: "me" });
  });

  test("a schema that does not compile is an error at registration naming the route", () => {
    const app = new Cog();
    assert.throws(() => app.post("/broken", { schema: { body: { type: "nonsense" } } }, () => {}), /Route POST \/broken: the body schema does not compile/);
    assert.throws(
      () => app.get("/bad", { schema: { response: { 200: { type: "object", properties: { a: { $ref: "#/nowhere" } } } } } }, () => {}),
      /Route GET \/bad: the 200 response schema does not compile/,
    );
    assert.throws(() => app.get("/status", { schema: { response: { 999: {} } } }, () => {}), /not an HTTP status/);
  });
});

describe("Standard Schema (zod 4) routes", () => {
  const Order = z.object({
    item: z.string().min(1),
    quantity: z.coerce.number().int().positive(),
    note: z.string().optional(),
  });

  test("validates, and the handler sees the schema's output", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.post("/orders", { schema: { body: Order, query: z.object({ dry: z.enum(["yes", "no"]).default("no") }) } }, (req, res) =>
        res.json({ order: req.body, dry: req.query.dry }, 201),
      );
    });
    const res = await fetch("/orders", { method: "POST", headers: json, body: JSON.stringify({ item: "tea", quantity: "2", extra: true }) });
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { order: { item: "tea", quantity: 2 }, dry: "no" });
  });

  test("invalid input gets 400 with paths as JSON pointers", async (t) => {
    const { fetch } = await serve(t, (app) => app.post("/orders", { schema: { body: Order } }, (_req, res) => res.send("ran")));
    const res = await fetch("/orders", { method: "POST", headers: json, body: JSON.stringify({ item: "", quantity: -1 }) });
    assert.equal(res.status, 400);
    const answer = await res.json();
    assert.deepEqual(answer.validation.map((v: { path: string }) => v.path).sort(), ["/item", "/quantity"]);
    assert.equal((await fetch("/orders", { method: "POST", headers: json, body: "{}" })).status, 400);
    assert.equal((await fetch("/orders", { method: "POST" })).status, 400);
  });

  test("async refinements are awaited", async (t) => {
    const Name = z.object({ name: z.string().refine(async (n) => n !== "taken", "is taken") });
    const { fetch } = await serve(t, (app) => app.post("/names", { schema: { body: Name } }, (req, res) => res.send(`ok ${req.body.name}`)));
    const post = (name: string) => fetch("/names", { method: "POST", headers: json, body: JSON.stringify({ name }) });
    assert.equal(await (await post("free")).text(), "ok free");
    const taken = await post("taken");
    assert.equal(taken.status, 400);
    assert.equal((await taken.json()).validation[0].message, "is taken");
  });

  test("a response schema strips undeclared fields; a mismatch is a 500, not a leak", async (t) => {
    const { fetch } = await serve(t, (app) => {
      const Public = z.object({ id: z.number(), name: z.string() });
      app.get("/me", { schema: { response: { 200: Public } } }, (_req, res) => res.json({ id: 1, name: "Ada", password: "hunter2" }));
      app.get("/wrong", { schema: { response: { 200: Public } } }, (_req, res) => res.json({ id: "one" } as never));
    });
    assert.equal(await (await fetch("/me")).text(), '{"id":1,"name":"Ada"}');
    const wrong = await fetch("/wrong");
    assert.equal(wrong.status, 500);
    assert.doesNotMatch(await wrong.text(), /one/);
  });
});

describe("OpenAPI", () => {
  test("describes every route, and a real validator accepts the document", async () => {
    const app = new Cog();
    app.get(
      "/users/:id",
      {
        schema: {
          summary: "Get a user",
          tags: ["users"],
          params: Type.Object({ id: Type.Integer() }),
          response: { 200: Type.Object({ id: Type.Integer(), name: Type.String() }) },
        },
      },
      () => {},
    );
    app.post(
      "/users",
      {
        schema: {
          body: z.object({ name: z.string() }),
          query: Type.Object({ notify: Type.Optional(Type.Boolean()) }),
          response: { 201: z.object({ id: z.number() }) },
        },
      },
      () => {},
    );
    app.get("/files/*", () => {});
    app.get("/health", () => {});
    app.group("/admin", (admin) =>
      admin.delete("/users/:id", { schema: { headers: Type.Object({ "x-token": Type.String() }, { required: ["x-token"] }) } }, () => {}),
    );
    app.get("/openapi.json", (_req, res) => res.json(app.openapi({ title: "Test API", version: "2.0.0" })));

    const doc = (await app.inject("/openapi.json")).json();
    assert.equal(doc.openapi, "3.1.0");
    assert.deepEqual(doc.info, { title: "Test API", version: "2.0.0" });
    assert.deepEqual(Object.keys(doc.paths).sort(), ["/admin/users/{id}", "/files/{wildcard}", "/health", "/openapi.json", "/users", "/users/{id}"]);
    const getUser = doc.paths["/users/{id}"].get;
    assert.equal(getUser.summary, "Get a user");
    assert.deepEqual(getUser.parameters, [{ name: "id", in: "path", required: true, schema: { type: "integer" } }]);
    assert.equal(getUser.responses["200"].content["application/json"].schema.properties.name.type, "string");
    const postUsers = doc.paths["/users"].post;
    assert.equal(postUsers.requestBody.content["application/json"].schema.properties.name.type, "string");
    assert.deepEqual(postUsers.parameters, [{ name: "notify", in: "query", required: false, schema: { type: "boolean" } }]);
    assert.ok(postUsers.responses["201"]);
    assert.ok(postUsers.responses["400"]);
    assert.deepEqual(
      doc.paths["/admin/users/{id}"].delete.parameters.map((p: { in: string }) => p.in),
      ["path", "header"],
    );

    const validator = new Validator();
    const verdict = await validator.validate(doc);
    assert.equal(verdict.valid, true, JSON.stringify(verdict.errors));
  });
});
