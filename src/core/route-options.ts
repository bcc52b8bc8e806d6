import { refuseUnknownKeys } from "../base/known-keys.js";
import type { RouteOptions, RouteSchema } from "../schema/types.js";

// Written as records of every key of the types, so a key added to RouteOptions or RouteSchema
// and not here fails the type check rather than being refused at run time.
const OPTION_KEYS = Object.keys({ schema: true, bodyLimit: true, requestTimeout: true, body: true, compress: true } satisfies Record<keyof RouteOptions, true>);
const SCHEMA_KEYS = Object.keys({
  params: true,
  query: true,
  headers: true,
  body: true,
  response: true,
  summary: true,
  description: true,
  tags: true,
  operationId: true,
  deprecated: true,
  security: true,
} satisfies Record<keyof RouteSchema, true>);

const IN_SCHEMA = (key: string) => `it belongs in schema: { schema: { ${key} } }`;
const HOOK = "Cog's hooks are middleware, given before the handler: app.get(path, options, middleware, handler)";

/** Names other frameworks (Fastify's first) use in a route's options, and where Cog has them. */
const OPTION_HINTS: Record<string, string> = {
  handler: "the handlers follow the options: app.get(path, { schema }, handler)",
  method: "the method is the call's: app.get, app.post…",
  url: "the path is the call's first argument",
  path: "the path is the call's first argument",
  querystring: "a query schema belongs in schema, and Cog calls it query: { schema: { query } }",
  websocket: "a WebSocket route is app.ws(path, handlers, options)",
  preHandler: HOOK,
  preValidation: HOOK,
  preParsing: HOOK,
  onRequest: HOOK,
  onSend: HOOK,
  onResponse: HOOK,
  ...Object.fromEntries(SCHEMA_KEYS.filter((key) => key !== "body").map((key) => [key, IN_SCHEMA(key)])),
};

const WHOLE_SCHEMA =
  "schema holds the request's parts ({ params, query, headers, body, response }): put this schema under one of them, e.g. { schema: { body } }";

/** Names other frameworks use in a route's schema, and Cog's for them. */
const SCHEMA_HINTS: Record<string, string> = {
  querystring: "Cog calls it query",
  queryString: "Cog calls it query",
  header: "Cog calls it headers",
  param: "Cog calls it params",
  responses: "Cog calls it response: { response: { 200: schema } }",
  cookies: "cookies are not validated by a schema: read and check req.cookies in the handler",
  type: WHOLE_SCHEMA,
  properties: WHOLE_SCHEMA,
  required: WHOLE_SCHEMA,
  $schema: WHOLE_SCHEMA,
  "~standard": WHOLE_SCHEMA,
};

/**
 * Refuses, when the route is registered, route options and schema parts Cog does not know: a
 * Fastify `schema.querystring` (or a typo) would otherwise turn the validation it meant off
 * without a word.
 */
export function checkRouteOptions(options: RouteOptions, where: string): void {
  refuseUnknownKeys(options, OPTION_KEYS, OPTION_HINTS, `Route ${where}`, "route option");
  const schema: unknown = options.schema;
  if (schema === undefined) return;
  if (schema === null || typeof schema !== "object")
    throw new TypeError(
      `Route ${where}: schema must be an object of { params, query, headers, body, response }, got ${schema === null ? "null" : typeof schema}`,
    );
  refuseUnknownKeys(schema, SCHEMA_KEYS, SCHEMA_HINTS, `Route ${where}`, "schema key");
  const { tags, security, deprecated, operationId } = schema as RouteSchema;
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((tag) => typeof tag === "string")))
    throw new TypeError(`Route ${where}: schema.tags must be an array of strings`);
  if (security !== undefined && !Array.isArray(security))
    throw new TypeError(`Route ${where}: schema.security must be an array of requirements, e.g. [{ bearer: [] }] ([] for a public route)`);
  if (deprecated !== undefined && typeof deprecated !== "boolean") throw new TypeError(`Route ${where}: schema.deprecated must be true or false`);
  if (operationId !== undefined && (typeof operationId !== "string" || operationId === ""))
    throw new TypeError(`Route ${where}: schema.operationId must be a non-empty string`);
}
