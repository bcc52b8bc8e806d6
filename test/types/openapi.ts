// Type tests for `app.openapi()` (checked by `tsc -p test/tsconfig.json`, never run): an OpenAPI
// 3.1 document an app can read and add to without casts.
import { Type } from "@sinclair/typebox";
import { Cog, type OpenApiDocument, type OpenApiOperation } from "../../src/index.js";

const app = new Cog();
app.get("/users/:id", { schema: { params: Type.Object({ id: Type.Integer() }), response: { 200: Type.Object({ name: Type.String() }) } } }, (req, res) => {
  res.json({ name: String(req.params.id) });
});

const doc: OpenApiDocument = app.openapi({ title: "Users", version: "1.0.0", license: { name: "MIT" } });
const version: `3.1.${number}` = doc.openapi;
const title: string = doc.info.title;
const operation: OpenApiOperation | undefined = doc.paths?.["/users/{id}"]?.get;
const operationId: string | undefined = operation?.operationId;
const response = operation?.responses?.["200"];
const description: string | undefined = response !== undefined && !("$ref" in response) ? response.description : undefined;
void [version, title, operationId, description];

// OpenAPI 3.2 when asked for, whose path items have QUERY's operation as `query`; 3.1 has it as `x-query`.
app.query("/users", { schema: { body: Type.Object({ name: Type.String() }) } }, (_req, res) => res.json([]));
const v32 = app.openapi({ title: "Users", version: "1.0.0", openapi: "3.2.0" });
const version32: `3.2.${number}` = v32.openapi;
const query: OpenApiOperation | undefined = v32.paths?.["/users"]?.query;
const extension: unknown = app.openapi({ title: "Users", version: "1.0.0", openapi: "3.1.0" }).paths?.["/users"]?.["x-query"];
// @ts-expect-error -- a 3.2 document is not a 3.1 one
const v31: `3.1.${number}` = v32.openapi;
// @ts-expect-error -- Cog writes 3.1 or 3.2
app.openapi({ title: "Users", version: "1.0.0", openapi: "3.0.3" });
void [version32, query, extension, v31];

// What Cog doesn't write, the app adds, checked against the specification.
doc.servers = [{ url: "https://api.example.com" }];
doc.components = { securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } } };
doc.security = [{ bearer: [] }];
doc["x-internal"] = true;
// @ts-expect-error -- not a kind of security scheme
doc.components = { securitySchemes: { bearer: { type: "token" } } };
// @ts-expect-error -- an http scheme names its scheme
doc.components = { securitySchemes: { basic: { type: "http" } } };
// @ts-expect-error -- the document is OpenAPI 3.1
doc.openapi = "3.0.3";
// @ts-expect-error -- a response needs a description
doc.paths = { "/x": { get: { responses: { "200": {} } } } };
// @ts-expect-error -- a parameter is in the query, a header, the path or a cookie
doc.paths = { "/x": { get: { parameters: [{ name: "q", in: "body" }] } } };
// @ts-expect-error -- info needs a version
app.openapi({ title: "Users" });

// Served as JSON as it is.
app.get("/openapi.json", (_req, res) => res.json(app.openapi()));
