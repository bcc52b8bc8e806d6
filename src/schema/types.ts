import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { CogRequest } from "../http/request.js";
import type { CogResponse } from "../http/response.js";
import type { CompressOptions } from "../http/compress.js";

/** A JSON Schema object (TypeBox's `Type.*` builds these). */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** Either kind of schema a route accepts: JSON Schema, or any Standard Schema (zod 4, valibot, arktype…). */
export type Schema = JsonSchema | StandardSchemaV1;

/** What a route may declare; each part is checked before the handler runs. */
export interface RouteSchema {
  params?: Schema;
  query?: Schema;
  headers?: Schema;
  body?: Schema;
  /** Response bodies by status: a JSON Schema compiles a serializer that writes only the declared fields. */
  response?: { readonly [status: number]: Schema };
  /** The rest describe the route in the OpenAPI document (`app.openapi()`), as Fastify's schema does. */
  summary?: string;
  description?: string;
  tags?: readonly string[];
  /** Unique among the app's routes; by default made from the method and path (`getUsersId`). */
  operationId?: string;
  deprecated?: boolean;
  /**
   * The security schemes a client needs, by name from the `components.securitySchemes` given to
   * `app.openapi()`: `[{ bearer: [] }]`; `[]` for a public route under a document-wide requirement.
   * (Documents only: checking the credentials is middleware's job.)
   */
  security?: ReadonlyArray<Readonly<Record<string, readonly string[]>>>;
}

/** Options given between a route's path and its handlers: `app.post("/x", { schema }, handler)`. */
export interface RouteOptions<S extends RouteSchema = RouteSchema> {
  schema?: S;
  /** Largest request body this route accepts, in bytes (413 past it); the app's `bodyLimit` otherwise. */
  bodyLimit?: number;
  /**
   * How long a request of this route has for its whole body, in ms (0: no limit; 408 past it);
   * the app's `requestTimeout` otherwise. An upload route can have minutes without loosening
   * the others.
   */
  requestTimeout?: number;
  /**
   * How the handler gets the body: "buffer" (the default) reads it whole before the handler
   * runs (`req.body`); "stream" hands it over as it arrives (`for await (const chunk of req)`),
   * never held whole, still within `bodyLimit` (the stream fails with a 413 past it).
   * A multipart/form-data body is always streamed.
   */
  body?: "buffer" | "stream";
  /** Compresses this route's responses: `true` for the defaults, or the options of `compress()`. */
  compress?: boolean | CompressOptions;
}

/** The TypeScript type a schema describes: Standard Schema's output, TypeBox's static type, else unknown. */
export type Infer<S> = S extends StandardSchemaV1<unknown, infer Output> ? Output : S extends { readonly static: infer Static } ? Static : unknown;

type Part<S, K extends string, Fallback> = S extends { readonly [P in K]: infer T } ? Infer<T> : Fallback;

/**
 * The request a schema'd route's handlers see: body, query and params typed from the schema;
 * params without a schema are typed from the path (`Params`, given by the route).
 */
export type SchemaRequest<S extends RouteSchema, Params = CogRequest["params"]> = Omit<CogRequest, "body" | "query" | "params"> & {
  body: Part<S, "body", CogRequest["body"]>;
  query: Part<S, "query", CogRequest["query"]>;
  params: Part<S, "params", Params>;
};

/** Any body one of the route's response schemas allows. */
type ResponseBody<S extends RouteSchema> = S extends { readonly response: infer R } ? { [K in keyof R]: Infer<R[K]> }[keyof R] : unknown;

/** The response a schema'd route's handlers see: `json`/`send` only take what the response schemas allow. */
export type SchemaResponse<S extends RouteSchema> = S extends { readonly response: object }
  ? Omit<CogResponse, "json" | "send"> & {
      json(value: ResponseBody<S>, status?: number): SchemaResponse<S>;
      send(body?: ResponseBody<S> | string | Buffer | NodeJS.ReadableStream | null, status?: number): SchemaResponse<S>;
    }
  : CogResponse;
