// The OpenAPI document says what the server does: what each route's schema declares passes
// through, WebSocket routes are left out, the 400 of validation is described with the body it
// really has, a parameter with a default is optional (and the server takes a request without it),
// and the document validates against the OpenAPI 3.1 schema (3.2's, asked for one).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Type } from "@sinclair/typebox";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import WebSocket from "ws";
import { z } from "zod";
import { Cog, type OpenApiDocument, type OpenApiOperation, type OpenApiResponse, type OpenApiVersion } from "../../src/index.js";
import { engine, queryRefused, serve } from "../helpers.js";
import { app as schemasExample } from "../../examples/schemas.js";

async function assertValid(doc: OpenApiDocument<OpenApiVersion>): Promise<void> {
  const verdict = await new Validator().validate(doc as never);
  assert.equal(verdict.valid, true, JSON.stringify(verdict.errors));
}

/** The document as a client gets it, over the app's own socket. */
async function served(fetch: (path: string) => Promise<Response>): Promise<OpenApiDocument> {
  const res = await fetch("/openapi.json");
  assert.equal(res.status, 200);
  return (await res.json()) as OpenApiDocument;
}

const operation = (doc: OpenApiDocument, path: string, method: "get" | "post"): OpenApiOperation => {
  const found = doc.paths?.[path]?.[method];
  assert.ok(found, `${method} ${path} is described`);
  return found;
};

describe("OpenAPI document", () => {
  test("summary, description, tags, operationId, deprecated and security pass through; components and the document's security, servers and tags are given to app.openapi()", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get(
        "/me",
        {
          schema: {
            summary: "Who I am",
            description: "The signed-in user.",
            tags: ["users"],
            operationId: "whoAmI",
            deprecated: true,
            security: [{ bearer: [] }, { apiKey: [] }],
          },
        },
        (_req, res) => res.json({}),
      );
      app.get("/health", { schema: { security: [] } }, (_req, res) => res.send("ok"));
      app.get("/items", (_req, res) => res.json([]));
      app.get("/items-list", (_req, res) => res.json([]));
      app.get("/items/list", (_req, res) => res.json([]));
      app.get("/openapi.json", (_req, res) =>
        res.json(
          app.openapi({
            title: "Secured",
            version: "3.0.0",
            description: "An API with a bearer token",
            servers: [{ url: "https://api.example.com" }],
            components: {
              securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" }, apiKey: { type: "apiKey", name: "x-api-key", in: "header" } },
            },
            security: [{ bearer: [] }],
            tags: [{ name: "users", description: "People" }],
          }),
        ),
      );
    });
    const doc = await served(fetch);
    assert.deepEqual(doc.info, { title: "Secured", version: "3.0.0", description: "An API with a bearer token" });
    assert.deepEqual(doc.servers, [{ url: "https://api.example.com" }]);
    assert.deepEqual(doc.security, [{ bearer: [] }]);
    assert.deepEqual(doc.tags, [{ name: "users", description: "People" }]);
    assert.deepEqual(doc.components?.securitySchemes?.bearer, { type: "http", scheme: "bearer", bearerFormat: "JWT" });
    const me = operation(doc, "/me", "get");
    assert.equal(me.summary, "Who I am");
    assert.equal(me.description, "The signed-in user.");
    assert.deepEqual(me.tags, ["users"]);
    assert.equal(me.operationId, "whoAmI");
    assert.equal(me.deprecated, true);
    assert.deepEqual(me.security, [{ bearer: [] }, { apiKey: [] }]);
    assert.deepEqual(operation(doc, "/health", "get").security, [], "[] makes a route public under the document's requirement");
    const items = operation(doc, "/items", "get");
    assert.equal(items.security, undefined, "a route without its own has the document's");
    assert.equal(items.deprecated, undefined);
    assert.equal(items.operationId, "getItems");
    assert.equal(operation(doc, "/items-list", "get").operationId, "getItemsList");
    assert.equal(operation(doc, "/items/list", "get").operationId, "getItemsList2", "made ids that would be the same are numbered");
    await assertValid(doc);
  });

  test("a security scheme the components don't define, and two routes with one operationId, are refused with the routes", () => {
    const app = new Cog({ engine });
    app.get("/me", { schema: { security: [{ bearer: [] }] } }, () => {});
    assert.throws(
      () => app.openapi({ title: "x", version: "1" }),
      /^Error: Route GET \/me: schema\.security names the security scheme "bearer", which is not in the components\.securitySchemes given to app\.openapi\(\): add it there$/,
    );
    assert.throws(
      () =>
        app.openapi({ title: "x", version: "1", components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } }, security: [{ token: [] }] }),
      /^Error: app\.openapi\(\): security names the security scheme "token"/,
    );
    app.post("/users", { schema: { operationId: "getMe" } }, () => {});
    assert.throws(
      () => app.openapi({ title: "x", version: "1", components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } } }),
      /^Error: app\.openapi\(\): routes GET \/me and POST \/users have the same operationId "getMe"; OpenAPI needs each to be unique/,
    );
  });

  test("WebSocket routes are left out of the document, and still upgrade", async (t) => {
    const { fetch, port } = await serve(t, (app) => {
      app.ws("/live", { message: (ws, data) => void ws.send(data) });
      app.group("/rooms", (rooms) => rooms.ws("/:id", { message: () => {} }));
      app.get("/page", (_req, res) => res.send("page"));
      app.get("/openapi.json", (_req, res) => res.json(app.openapi()));
    });
    const doc = await served(fetch);
    assert.deepEqual(Object.keys(doc.paths ?? {}).sort(), ["/openapi.json", "/page"]);
    assert.equal((await fetch("/live")).status, 426, "the route is still there");
    const ws = new WebSocket(`ws://127.0.0.1:${port}/live`);
    const echoed = await new Promise<string>((resolve, reject) => {
      ws.on("open", () => ws.send("hi"));
      ws.on("message", (data) => resolve(String(data)));
      ws.on("error", reject);
    });
    ws.close();
    assert.equal(echoed, "hi");
    await assertValid(doc);
  });

  test("the 400 of validation is documented on every route that validates input, with the body the server sends", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/users/:id", { schema: { params: Type.Object({ id: Type.Integer() }) } }, (_req, res) => res.send("user"));
      app.get("/search", { schema: { query: z.object({ q: z.string() }) } }, (_req, res) => res.send("found"));
      app.get("/headers", { schema: { headers: Type.Object({ "x-token": Type.String() }) } }, (_req, res) => res.send("ok"));
      app.post("/users", { schema: { body: Type.Object({ name: Type.String() }) } }, (_req, res) => res.send("made"));
      app.get("/plain", { schema: { response: { 200: Type.String() } } }, (_req, res) => res.send("plain"));
      app.get("/openapi.json", (_req, res) => res.json(app.openapi()));
    });
    const doc = await served(fetch);
    const validates: Array<[string, "get" | "post", string, RequestInit | undefined]> = [
      ["/users/{id}", "get", "/users/abc", undefined],
      ["/search", "get", "/search", undefined],
      ["/headers", "get", "/headers", undefined],
      ["/users", "post", "/users", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
    ];
    const ajv = new Ajv2020({ strict: false });
    for (const [path, method, url, init] of validates) {
      // The answer it is for, which it declared no schema of, is documented too.
      assert.deepEqual(operation(doc, path, method).responses?.["200"], { description: "OK" }, `${method} ${path} documents its 200`);
      const documented = operation(doc, path, method).responses?.["400"] as OpenApiResponse | undefined;
      assert.ok(documented, `${method} ${path} documents its 400`);
      const schema = documented.content?.["application/json"]?.schema;
      assert.ok(schema !== undefined && typeof schema === "object");
      assert.deepEqual(schema.required, ["statusCode", "error", "message"]);
      const res = await fetch(url, init);
      assert.equal(res.status, 400);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      const body = await res.json();
      assert.equal(ajv.validate(schema, body), true, `${url}: ${JSON.stringify(body)} ${ajv.errorsText()}`);
    }
    assert.equal(operation(doc, "/plain", "get").responses?.["400"], undefined, "a route that validates no input has no 400");
    await assertValid(doc);
  });

  test("a 204 or 304 response is described without content, as the server sends it: no body, no Content-Type", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.post(
        "/items/:id",
        { schema: { params: Type.Object({ id: Type.Integer() }), response: { 204: Type.Null(), 404: Type.Object({ message: Type.String() }) } } },
        (_req, res) => res.send(undefined, 204),
      );
      app.get("/cached", { schema: { response: { 200: Type.String(), 304: Type.Null() } } }, (_req, res) => res.send(undefined, 304));
      app.get("/openapi.json", (_req, res) => res.json(app.openapi()));
    });
    const doc = await served(fetch);
    const responses = operation(doc, "/items/{id}", "post").responses as Record<string, OpenApiResponse>;
    assert.deepEqual(responses["204"], { description: "No Content" });
    assert.ok(responses["404"]?.content?.["application/json"], "a status with a body keeps its content");
    assert.deepEqual((operation(doc, "/cached", "get").responses as Record<string, OpenApiResponse>)["304"], { description: "Not Modified" });
    for (const [path, init, status] of [
      ["/items/1", { method: "POST" }, 204],
      ["/cached", undefined, 304],
    ] as const) {
      const res = await fetch(path, init);
      assert.equal(res.status, status);
      assert.equal(res.headers.get("content-type"), null);
      assert.equal(await res.text(), "");
    }
    await assertValid(doc);
  });

  test("a query parameter or header with a default is optional, and the server takes a request without it", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get(
        "/page",
        {
          schema: {
            query: Type.Object({ q: Type.String(), page: Type.Integer({ default: 1 }), size: Type.Optional(Type.Integer()) }),
            headers: Type.Object({ "x-lang": Type.String({ default: "en" }) }),
          },
        },
        (req, res) => res.json({ q: req.query.q, page: req.query.page, lang: req.headers["x-lang"] }),
      );
      app.get("/sorted", { schema: { query: z.object({ sort: z.enum(["asc", "desc"]).default("asc") }) } }, (req, res) => res.json(req.query));
      app.get("/openapi.json", (_req, res) => res.json(app.openapi()));
    });
    const doc = await served(fetch);
    const required = (path: string) =>
      Object.fromEntries((operation(doc, path, "get").parameters ?? []).map((p) => ["name" in p ? p.name : "", "required" in p ? p.required : undefined]));
    assert.deepEqual(required("/page"), { q: true, page: false, size: false, "x-lang": false });
    assert.deepEqual(required("/sorted"), { sort: false });
    assert.deepEqual(await (await fetch("/page?q=x")).json(), { q: "x", page: 1, lang: "en" });
    assert.deepEqual(await (await fetch("/sorted")).json(), { sort: "asc" });
    await assertValid(doc);
  });

  test('a QUERY route is OpenAPI 3.2\'s query operation with openapi: "3.2.0", and the x-query extension in the 3.1 default; both documents are valid', async () => {
    const app = new Cog();
    app.get("/users", (_req, res) => res.send("all"));
    app.query(
      "/users",
      { schema: { summary: "Find users", body: Type.Object({ name: Type.String() }), response: { 200: Type.Array(Type.String()) } } },
      (_req, res) => res.json([]),
    );
    app.group("/teams/:team", (teams) => teams.query("/members", (_req, res) => res.json([])));
    const v32 = app.openapi({ title: "Users", version: "1.0.0", openapi: "3.2.0" });
    const version: `3.2.${number}` = v32.openapi;
    assert.equal(version, "3.2.0");
    const query = v32.paths?.["/users"]?.query;
    assert.ok(query, "QUERY /users is described");
    assert.equal(query.operationId, "queryUsers");
    assert.equal(query.summary, "Find users");
    assert.deepEqual(Object.keys(query.requestBody !== undefined && !("$ref" in query.requestBody) ? query.requestBody.content : {}), ["application/json"]);
    assert.deepEqual(Object.keys(query.responses ?? {}).sort(), ["200", "400"]);
    assert.equal(v32.paths?.["/users"]?.get?.operationId, "getUsers");
    assert.deepEqual(v32.paths?.["/teams/{team}/members"]?.query?.parameters, [{ name: "team", in: "path", required: true, schema: { type: "string" } }]);
    assert.equal(v32.paths?.["/users"]?.["x-query"], undefined);
    await assertValid(v32);

    const v31 = app.openapi({ title: "Users", version: "1.0.0" });
    assert.equal(v31.openapi, "3.1.0");
    assert.equal(v31.paths?.["/users"]?.query, undefined, "3.1 has no query operation");
    assert.deepEqual(v31.paths?.["/users"]?.["x-query"], query);
    assert.deepEqual(v31.paths?.["/teams/{team}/members"]?.["x-query"], v32.paths?.["/teams/{team}/members"]?.query);
    await assertValid(v31);
    assert.equal(app.openapi({ title: "Users", version: "1.0.0", openapi: "3.1.1" }).openapi, "3.1.1");
    assert.throws(
      () => app.openapi({ title: "Users", version: "1.0.0", openapi: "3.0.3" as never }),
      /^TypeError: app\.openapi\(\): openapi must be a 3\.1 or 3\.2 version \("3\.1\.0", "3\.2\.0"\), got "3\.0\.3"$/,
    );
  });

  test("a QUERY route's body schema is validated as a POST's", { skip: queryRefused }, async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.query("/users", { schema: { body: Type.Object({ name: Type.String() }) } }, (req, res) => res.json({ name: req.body.name }));
    });
    const send = (body: string) => fetch("/users", { method: "QUERY", headers: { "content-type": "application/json" }, body });
    assert.deepEqual(await (await send('{"name":"ada"}')).json(), { name: "ada" });
    const refused = await send('{"name":1}');
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).validation[0].in, "body");
  });

  test("the docs' example app (examples/schemas.ts) has a valid document", async () => {
    const doc = schemasExample.openapi({ title: "Users", version: "1.0.0" });
    assert.equal(doc.paths?.["/users/{id}"]?.put?.summary, "Update a user");
    await assertValid(doc);
  });
});
