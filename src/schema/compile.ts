import { createRequire } from "node:module";
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import type { Ajv as AjvInstance, ErrorObject, ValidateFunction } from "ajv";
import type { Handler, Next } from "../http/handler.js";
import { HttpError } from "../base/errors.js";
import type { CogRequest } from "../http/request.js";
import type { Serializer } from "../http/response.js";
import type { JsonSchema, RouteSchema, Schema } from "./types.js";

// ajv and fast-json-stringify are loaded on the first route that declares a JSON Schema,
// so apps without schemas never pay for loading them.
const requireHere = createRequire(import.meta.url);

type Location = "params" | "query" | "headers" | "body";
const LOCATIONS: readonly Location[] = ["params", "query", "headers", "body"];

/** One failing field of a request, as listed in the 400 answer. */
export interface ValidationIssue {
  in: Location;
  /** JSON Pointer to the field, e.g. `/items/0/price`; `/` for the whole value. */
  path: string;
  message: string;
}

export type { Serializer };

export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  return typeof schema === "object" && schema !== null && "~standard" in schema;
}

const ajvInstances = new Map<string, AjvInstance>();
/** Coerces only (see `compileCoercion`): lists every field, so each gets coerced; adds no defaults. */
const COERCE_ONLY = "coerce-only";

/**
 * Bodies are validated as sent; params, query and headers arrive as strings,
 * so their validator coerces to the declared types (`?limit=5` -> 5, and a
 * single value to an array where an array is declared), as Fastify does.
 * `allErrors` validators list every failing field; they only run once the
 * fast one (which stops at the first failure) has refused a request, so valid
 * requests never pay for them, and the body limit bounds what invalid ones cost.
 */
function ajvFor(location: Location, allErrors: boolean | typeof COERCE_ONLY): AjvInstance {
  const coerce = location !== "body";
  const key = `${coerce}/${allErrors}`;
  let ajv = ajvInstances.get(key);
  if (ajv === undefined) {
    const AjvClass = (requireHere("ajv") as typeof import("ajv")).default;
    const addFormats = (requireHere("ajv-formats") as typeof import("ajv-formats")).default;
    const coerceOnly = allErrors === COERCE_ONLY;
    ajv = new AjvClass({ allErrors: allErrors !== false, strict: false, useDefaults: !coerceOnly, coerceTypes: coerce ? "array" : false });
    addFormats(ajv);
    ajvInstances.set(key, ajv);
  }
  return ajv;
}

interface Validator {
  readonly location: Location;
  /** Stops at the first failure: the one every request runs. */
  readonly json: ValidateFunction | null;
  /** Lists every failure: run only to explain a refusal. */
  readonly jsonAll: ValidateFunction | null;
  readonly standard: StandardSchemaV1 | null;
  /** Coerces strings to a Standard Schema's declared types before it validates (params, query, headers). */
  readonly coerce: ValidateFunction | null;
}

/**
 * Builds, at registration, the middleware that checks a route's params,
 * query, headers and body. A request that fails gets 400 listing each failing
 * field; the handler is not called. Standard Schema outputs replace the input
 * (so transforms apply); JSON Schema coercion happens in place.
 */
export function compileValidation(schema: RouteSchema, where: string): Handler | null {
  const validators: Validator[] = [];
  for (const location of LOCATIONS) {
    const part = schema[location];
    if (part === undefined) continue;
    if (isStandardSchema(part)) {
      validators.push({ location, json: null, jsonAll: null, standard: part, coerce: location === "body" ? null : compileCoercion(part, location) });
    } else {
      validators.push({
        location,
        json: compileJson(part, location, where, false),
        jsonAll: compileJson(part, location, where, true),
        standard: null,
        coerce: null,
      });
    }
  }
  if (validators.length === 0) return null;

  // No closure is made for a request unless a Standard Schema validates asynchronously: the
  // middleware runs on every request of the route.
  return function validateRequest(req, _res, next) {
    let issues: ValidationIssue[] | null = null;
    let waiting: Array<Promise<void>> | null = null;
    for (const v of validators) {
      const value = read(req, v.location);
      if (v.json !== null) {
        if (!v.json(value)) {
          v.jsonAll!(value);
          (issues ??= []).push(...ajvIssues(v.jsonAll!.errors ?? [], v.location));
        }
        continue;
      }
      if (v.coerce !== null) v.coerce(value);
      const result = v.standard!["~standard"].validate(value);
      if (result instanceof Promise) (waiting ??= []).push(result.then((r) => void (issues = applyStandard(req, v.location, r, issues))));
      else issues = applyStandard(req, v.location, result, issues);
    }
    if (waiting !== null) return Promise.all(waiting).then(() => settle(issues, next));
    settle(issues, next);
  };
}

/** A Standard Schema's verdict: its output replaces the input, or its issues join `issues` (returned). */
function applyStandard(
  req: CogRequest,
  location: Location,
  result: StandardSchemaV1.Result<unknown>,
  issues: ValidationIssue[] | null,
): ValidationIssue[] | null {
  if (result.issues === undefined) {
    write(req, location, result.value);
    return issues;
  }
  (issues ??= []).push(...standardIssues(result.issues, location));
  return issues;
}

/** The request goes on, or is refused with every issue found. */
function settle(issues: ValidationIssue[] | null, next: Next): void {
  if (issues !== null) throw validationError(issues);
  next();
}

function compileJson(schema: JsonSchema, location: Location, where: string, allErrors: boolean): ValidateFunction {
  try {
    return ajvFor(location, allErrors).compile(schema);
  } catch (err) {
    throw new Error(`Route ${where}: the ${location} schema does not compile: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Params, query and headers arrive as strings. A Standard Schema that describes its input as
 * JSON Schema (Standard JSON Schema's `~standard.jsonSchema`, which zod 4, valibot and arktype
 * offer) has them coerced to the types it declares before it validates, as a JSON Schema route's
 * are: `z.number()` on `/:id` sees 7, not "7". Ajv, compiled from that JSON Schema, does the
 * coercing (in place, where the value has the declared type's form; "7x" stays a string, and
 * the Standard Schema refuses it); the verdict and the value handlers see are the Standard
 * Schema's. A schema that can't describe itself so (no `jsonSchema`, or a type JSON Schema
 * can't express) is given the strings, as before: its own coercion applies (`z.coerce.number()`).
 */
function compileCoercion(schema: StandardSchemaV1, location: Location): ValidateFunction | null {
  const describe = (schema["~standard"] as Partial<StandardJSONSchemaV1.Props>).jsonSchema;
  if (describe === undefined) return null;
  try {
    const jsonSchema = describe.input({ target: "draft-07" });
    return ajvFor(location, COERCE_ONLY).compile(jsonSchema);
  } catch {
    return null;
  }
}

function read(req: CogRequest, location: Location): unknown {
  switch (location) {
    case "params":
      return req.params;
    case "query":
      return req.query;
    case "headers":
      return req.headers;
    case "body":
      return req.body;
  }
}

function write(req: CogRequest, location: Location, value: unknown): void {
  switch (location) {
    case "params":
      req.params = value as CogRequest["params"];
      break;
    case "query":
      req.query = value as CogRequest["query"];
      break;
    case "headers":
      req.headers = value as CogRequest["headers"];
      break;
    case "body":
      req.body = value;
      break;
  }
}

function ajvIssues(errors: readonly ErrorObject[], location: Location): ValidationIssue[] {
  return errors.map((e) => {
    const missing = e.keyword === "required" ? `/${(e.params as { missingProperty: string }).missingProperty}` : "";
    const path = `${e.instancePath}${missing}` || "/";
    return { in: location, path, message: e.message ?? "is invalid" };
  });
}

function standardIssues(issues: readonly StandardSchemaV1.Issue[], location: Location): ValidationIssue[] {
  return issues.map((issue) => {
    const segments = (issue.path ?? []).map((p) =>
      String(typeof p === "object" ? p.key : p)
        .replace(/~/g, "~0")
        .replace(/\//g, "~1"),
    );
    return { in: location, path: segments.length === 0 ? "/" : `/${segments.join("/")}`, message: issue.message };
  });
}

function validationError(issues: ValidationIssue[]): HttpError {
  const first = issues[0]!;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  return new HttpError(400, `Invalid ${first.in}: ${first.path} ${first.message}${more}`, { data: { validation: issues } });
}

/**
 * Builds, at registration, a serializer per response status. A JSON Schema
 * compiles with fast-json-stringify, which writes only the declared fields, so
 * a handler can't leak a field it forgot to remove. A Standard Schema checks
 * (and strips, where the library does) the value, then JSON.stringify writes it.
 */
export function compileSerializers(response: RouteSchema["response"], where: string): Map<number, Serializer> | null {
  if (response === undefined) return null;
  const serializers = new Map<number, Serializer>();
  for (const [key, schema] of Object.entries(response) as Array<[string, Schema]>) {
    const status = Number(key);
    if (!Number.isInteger(status) || status < 100 || status > 599) throw new Error(`Route ${where}: response schema key "${key}" is not an HTTP status`);
    serializers.set(status, isStandardSchema(schema) ? standardSerializer(schema, where, status) : jsonSerializer(schema, where, status));
  }
  return serializers;
}

function jsonSerializer(schema: JsonSchema, where: string, status: number): Serializer {
  const build = requireHere("fast-json-stringify") as typeof import("fast-json-stringify").default;
  try {
    return build(schema as unknown as Parameters<typeof build>[0]) as Serializer;
  } catch (err) {
    throw new Error(`Route ${where}: the ${status} response schema does not compile: ${(err as Error).message}`, { cause: err });
  }
}

function standardSerializer(schema: StandardSchemaV1, where: string, status: number): Serializer {
  return (value) => {
    const result = schema["~standard"].validate(value);
    if (result instanceof Promise)
      throw new Error(`Route ${where}: the ${status} response schema validates asynchronously; response schemas must be synchronous`);
    if (result.issues !== undefined) {
      const issue = result.issues[0]!;
      throw new Error(`Route ${where}: the ${status} response does not match its schema: ${issue.message}`);
    }
    return JSON.stringify(result.value);
  };
}
