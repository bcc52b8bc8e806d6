import { STATUS_CODES } from "node:http";
import { isStandardSchema } from "./compile.js";
import type { OpenApiDocument, OpenApiInfo, OpenApiMethod, OpenApiOperation, OpenApiParameter, OpenApiPathItem, OpenApiResponse } from "./openapi-document.js";
import type { JsonSchema, RouteSchema, Schema } from "./types.js";

export type { OpenApiInfo };

/** What the app remembers of each route for its OpenAPI document. */
export interface RouteInfo {
  readonly method: string;
  readonly pattern: string;
  readonly paramNames: readonly string[];
  readonly schema: RouteSchema | undefined;
}

type Json = Record<string, unknown>;

/**
 * An OpenAPI 3.1 document from the registered routes: paths (`:id` -> `{id}`),
 * parameters, request bodies and responses from their schemas. Standard
 * Schemas appear where their library can describe itself as JSON Schema
 * (Standard JSON Schema, e.g. zod 4), and as an open schema otherwise.
 */
export function buildOpenApi(routes: readonly RouteInfo[], info: OpenApiInfo): OpenApiDocument {
  const paths: Record<string, OpenApiPathItem> = {};
  for (const route of routes) {
    // A route for every method (`all`) has no single operation to describe.
    if (route.method === "*") continue;
    const path = route.pattern
      .split("/")
      .map((segment) => (segment.startsWith(":") ? `{${segment.slice(1)}}` : segment === "*" ? "{wildcard}" : segment))
      .join("/");
    const schema = route.schema ?? {};
    const operation: OpenApiOperation = {};
    if (schema.summary !== undefined) operation.summary = schema.summary;
    if (schema.description !== undefined) operation.description = schema.description;
    if (schema.tags !== undefined) operation.tags = [...schema.tags];
    operation.operationId = `${route.method.toLowerCase()}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}` || route.method.toLowerCase();

    const parameters: OpenApiParameter[] = [];
    const params = toJsonSchema(schema.params, "input");
    for (const name of route.paramNames) {
      const key = name === "*" ? "wildcard" : name;
      parameters.push({ name: key, in: "path", required: true, schema: propertyOf(params, name) ?? { type: "string" } });
    }
    for (const [location, part] of [["query", schema.query], ["header", schema.headers]] as const) {
      const json = toJsonSchema(part, "input");
      const properties = (json?.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((json?.required ?? []) as string[]);
      for (const [name, property] of Object.entries(properties)) {
        parameters.push({ name, in: location, required: required.has(name), schema: property });
      }
    }
    if (parameters.length > 0) operation.parameters = parameters;

    if (schema.body !== undefined) {
      operation.requestBody = { required: true, content: { "application/json": { schema: toJsonSchema(schema.body, "input") ?? {} } } };
    }

    const responses: Record<string, OpenApiResponse> = {};
    for (const [status, part] of Object.entries(schema.response ?? {}) as Array<[string, Schema]>) {
      responses[status] = { description: STATUS_CODES[Number(status)] ?? "Response", content: { "application/json": { schema: toJsonSchema(part, "output") ?? {} } } };
    }
    if (schema.params !== undefined || schema.query !== undefined || schema.headers !== undefined || schema.body !== undefined) {
      responses["400"] ??= { description: "The request did not match the route's schema" };
    }
    if (Object.keys(responses).length === 0) responses["200"] = { description: "OK" };
    operation.responses = responses;

    (paths[path] ??= {})[route.method.toLowerCase() as OpenApiMethod] = operation;
  }
  return { openapi: "3.1.0", info: { ...info }, paths };
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
