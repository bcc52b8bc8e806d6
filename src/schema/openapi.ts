import { STATUS_CODES } from "node:http";
import { isStandardSchema } from "./compile.js";
import type {
  OpenApiComponents,
  OpenApiDocument,
  OpenApiExternalDocs,
  OpenApiInfo,
  OpenApiMethod,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiPathItem,
  OpenApiResponse,
  OpenApiSecurityRequirement,
  OpenApiServer,
  OpenApiTag,
  OpenApiVersion,
} from "./openapi-document.js";
import type { JsonSchema, RouteSchema, Schema } from "./types.js";

/** The statuses whose answers go out without a body on every engine (docs/guide/responses.md). */
const BODILESS = /^(1\d\d|204|304)$/;

/** What the app remembers of each route for its OpenAPI document. */
export interface RouteInfo {
  readonly method: string;
  readonly pattern: string;
  readonly paramNames: readonly string[];
  readonly schema: RouteSchema | undefined;
  /** An `app.ws` route: an upgrade, not an operation OpenAPI describes, so it is left out. */
  readonly webSocket: boolean;
  /** `GET /users/:id`, for error messages. */
  readonly where: string;
}

/**
 * What `app.openapi()` takes: the document's `info` (title, version…) and the document-wide
 * fields Cog can't know from the routes, given as they go into the document.
 */
export interface OpenApiOptions extends OpenApiInfo {
  /**
   * The OpenAPI version to write: "3.1.0" (the default) or "3.2.0". They differ here in QUERY
   * routes only: a 3.2 path item has their operation as `query`, a 3.1 one as `x-query` (an
   * extension, which 3.1's tools pass over).
   */
  openapi?: OpenApiVersion;
  servers?: OpenApiServer[];
  /** Reusable parts, such as the `securitySchemes` that routes name in `schema.security`. */
  components?: OpenApiComponents;
  /** The requirement of every route that has no `schema.security` of its own. */
  security?: OpenApiSecurityRequirement[];
  tags?: OpenApiTag[];
  externalDocs?: OpenApiExternalDocs;
}

type Json = Record<string, unknown>;

/** Cog's error body (src/base/errors.ts), as the 400 of a failed validation has it. */
const VALIDATION_ERROR: Json = {
  type: "object",
  required: ["statusCode", "error", "message"],
  properties: {
    statusCode: { type: "integer" },
    error: { type: "string" },
    message: { type: "string" },
    validation: {
      type: "array",
      items: {
        type: "object",
        required: ["in", "path", "message"],
        properties: { in: { enum: ["params", "query", "headers", "body"] }, path: { type: "string" }, message: { type: "string" } },
      },
    },
  },
};

/**
 * An OpenAPI 3.1 (or 3.2) document from the registered routes: paths (`:id` -> `{id}`),
 * parameters, request bodies and responses from their schemas. Standard
 * Schemas appear where their library can describe itself as JSON Schema
 * (Standard JSON Schema, e.g. zod 4), and as an open schema otherwise.
 */
export function buildOpenApi(routes: readonly RouteInfo[], options: OpenApiOptions): OpenApiDocument<OpenApiVersion> {
  const { openapi = "3.1.0", servers, components, security, tags, externalDocs, ...info } = options;
  if (typeof openapi !== "string" || !/^3\.[12]\.\d+$/.test(openapi)) {
    throw new TypeError(`app.openapi(): openapi must be a 3.1 or 3.2 version ("3.1.0", "3.2.0"), got ${JSON.stringify(openapi)}`);
  }
  // QUERY's operation: OpenAPI 3.2 has a field for it, 3.1 none (an extension then).
  const queryField = openapi.startsWith("3.2.") ? "query" : "x-query";
  const schemes = new Set(Object.keys(components?.securitySchemes ?? {}));
  const checkSecurity = (requirements: ReadonlyArray<Readonly<Record<string, readonly string[]>>>, where: string) => {
    for (const requirement of requirements) {
      for (const name of Object.keys(requirement)) {
        if (!schemes.has(name))
          throw new Error(`${where} names the security scheme "${name}", which is not in the components.securitySchemes given to app.openapi(): add it there`);
      }
    }
  };
  if (security !== undefined) checkSecurity(security, "app.openapi(): security");
  const operationIds = new Map<string, string>();
  const paths: Record<string, OpenApiPathItem> = {};
  for (const route of routes) {
    // A route for every method (`all`) has no single operation to describe; a WebSocket route's
    // 101 is not an answer OpenAPI clients can call.
    if (route.method === "*" || route.webSocket) continue;
    const path = route.pattern
      .split("/")
      .map((segment) => (segment.startsWith(":") ? `{${segment.slice(1)}}` : segment === "*" ? "{wildcard}" : segment))
      .join("/");
    const schema = route.schema ?? {};
    const operation: OpenApiOperation = {};
    if (schema.summary !== undefined) operation.summary = schema.summary;
    if (schema.description !== undefined) operation.description = schema.description;
    if (schema.tags !== undefined) operation.tags = [...schema.tags];
    let operationId = schema.operationId;
    if (operationId === undefined) {
      // Made from the method and path; two paths that make the same one (`/a-b`, `/a/b`) are numbered.
      const made = `${route.method.toLowerCase()}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`;
      operationId = made;
      for (let n = 2; operationIds.has(operationId); n++) operationId = `${made}${n}`;
    }
    const twin = operationIds.get(operationId);
    if (twin !== undefined)
      throw new Error(
        `app.openapi(): routes ${twin} and ${route.where} have the same operationId "${operationId}"; OpenAPI needs each to be unique: give one a schema.operationId of its own`,
      );
    operationIds.set(operationId, route.where);
    operation.operationId = operationId;
    if (schema.deprecated !== undefined) operation.deprecated = schema.deprecated;
    if (schema.security !== undefined) {
      checkSecurity(schema.security, `Route ${route.where}: schema.security`);
      operation.security = schema.security.map((requirement) => Object.fromEntries(Object.entries(requirement).map(([name, scopes]) => [name, [...scopes]])));
    }

    const parameters: OpenApiParameter[] = [];
    const params = toJsonSchema(schema.params, "input");
    for (const name of route.paramNames) {
      const key = name === "*" ? "wildcard" : name;
      parameters.push({ name: key, in: "path", required: true, schema: propertyOf(params, name) ?? { type: "string" } });
    }
    for (const [location, part] of [
      ["query", schema.query],
      ["header", schema.headers],
    ] as const) {
      const json = toJsonSchema(part, "input");
      const properties = (json?.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((json?.required ?? []) as string[]);
      for (const [name, property] of Object.entries(properties)) {
        // A parameter with a default may be left out: the validator fills it in.
        const hasDefault = typeof property === "object" && property !== null && "default" in property;
        parameters.push({ name, in: location, required: required.has(name) && !hasDefault, schema: property });
      }
    }
    if (parameters.length > 0) operation.parameters = parameters;

    if (schema.body !== undefined) {
      operation.requestBody = { required: true, content: { "application/json": { schema: toJsonSchema(schema.body, "input") ?? {} } } };
    }

    const responses: Record<string, OpenApiResponse> = {};
    for (const [status, part] of Object.entries(schema.response ?? {}) as Array<[string, Schema]>) {
      const description = STATUS_CODES[Number(status)] ?? "Response";
      // A 204, 304 or 1xx answer goes out without a body or Content-Type: described without content.
      responses[status] = BODILESS.test(status)
        ? { description }
        : { description, content: { "application/json": { schema: toJsonSchema(part, "output") ?? {} } } };
    }
    // A route that declares none of its answers still answers: a 200 of unknown content (before
    // the 400 its input schemas add, which is not the answer it is for).
    if (Object.keys(responses).length === 0) responses["200"] = { description: "OK" };
    if (schema.params !== undefined || schema.query !== undefined || schema.headers !== undefined || schema.body !== undefined) {
      responses["400"] ??= { description: "The request did not match the route's schema", content: { "application/json": { schema: VALIDATION_ERROR } } };
    }
    operation.responses = responses;

    const item = (paths[path] ??= {});
    if (route.method === "QUERY") item[queryField] = operation;
    else item[route.method.toLowerCase() as OpenApiMethod] = operation;
  }
  const document: OpenApiDocument<OpenApiVersion> = { openapi, info, paths };
  if (servers !== undefined) document.servers = servers;
  if (components !== undefined) document.components = components;
  if (security !== undefined) document.security = security;
  if (tags !== undefined) document.tags = tags;
  if (externalDocs !== undefined) document.externalDocs = externalDocs;
  return document;
}

function propertyOf(schema: Json | null, name: string): Json | undefined {
  const properties = schema?.properties as Record<string, Json> | undefined;
  return properties?.[name];
}

/** A plain JSON Schema object for either kind of schema, or null when none can be had. */
function toJsonSchema(schema: Schema | undefined, io: "input" | "output"): Json | null {
  if (schema === undefined) return null;
  if (isStandardSchema(schema)) {
    const describe = (schema["~standard"] as { jsonSchema?: Record<string, (options: { target: string }) => Json> }).jsonSchema?.[io];
    if (typeof describe !== "function") return {};
    try {
      return withoutDialect(describe({ target: "draft-2020-12" }));
    } catch {
      return {};
    }
  }
  // A JSON round trip drops TypeBox's symbol-keyed metadata and any functions.
  return withoutDialect(JSON.parse(JSON.stringify(schema)) as Json);
}

function withoutDialect(schema: Json): Json {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
