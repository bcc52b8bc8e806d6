import { METHODS } from "node:http";
import * as contentType from "content-type";
import etag from "etag";
import mime from "mime-types";
import proxyaddr from "proxy-addr";
import { parse as parseQs } from "qs";
import { parseSimpleQuery } from "./query.js";

/**
 * What `app.set` compiles (the `etag fn`, `query parser fn` and `trust proxy fn` settings Express
 * derives from `etag`, `query parser` and `trust proxy`) and the media-type helpers the response
 * shares, with Express 5's answers.
 */

/** The lower-case HTTP methods Node knows: each is an `app.<method>` and a `route.<method>`. */
export const methods: readonly string[] = METHODS.map((method) => method.toLowerCase());

/** An ETag function for `res.send`: the body's entity tag (jshttp's etag), strong or weak. */
export type ETagFn = (body: Buffer | string, encoding?: BufferEncoding) => string | undefined;

function etagMaker(weak: boolean): ETagFn {
  return (body, encoding) => etag(Buffer.isBuffer(body) ? body : Buffer.from(body, encoding), { weak });
}
export const strongETag: ETagFn = etagMaker(false);
export const weakETag: ETagFn = etagMaker(true);

/** The `etag` setting as a function: true or "weak", "strong", false (none), or the app's own. */
export function compileETag(value: unknown): ETagFn | undefined {
  if (typeof value === "function") return value as ETagFn;
  if (value === true || value === "weak") return weakETag;
  if (value === "strong") return strongETag;
  if (value === false) return undefined;
  throw new TypeError(`unknown value for etag function: ${String(value)}`);
}

/** Express 5's "extended" query parser: qs, keeping keys such as `hasOwnProperty` as Express does. */
function parseExtended(query: string): unknown {
  return parseQs(query, { allowPrototypes: true });
}

/** The `query parser` setting as a function: "simple" (node:querystring, the default), "extended" (qs), false, or the app's own. */
export function compileQueryParser(value: unknown): ((query: string) => unknown) | undefined {
  if (typeof value === "function") return value as (query: string) => unknown;
  if (value === true || value === "simple") return parseSimpleQuery;
  if (value === "extended") return parseExtended;
  if (value === false) return undefined;
  throw new TypeError(`unknown value for query parser function: ${String(value)}`);
}

/** Whether the proxy at `address`, `hop` hops from the server, is trusted (proxy-addr's form). */
export type TrustFn = (address: string | undefined, hop: number) => boolean;

/** The `trust proxy` setting as a function: true, a hop count, addresses/subnets/names (a list or a comma-separated string), or the app's own. */
export function compileTrust(value: unknown): TrustFn {
  if (typeof value === "function") return value as TrustFn;
  if (value === true) return () => true;
  if (typeof value === "number") return (_address, hop) => hop < value;
  const list = typeof value === "string" ? value.split(",").map((entry) => entry.trim()) : value;
  return proxyaddr.compile((list as string[] | undefined) || []) as TrustFn;
}

/**
 * A function of one string, its answers remembered for the last few hundred strings asked: a
 * response asks the same few questions on every request (what Content-Type "text" stands for, a
 * type with its charset), and answering them anew (mime-types' lookups, content-type's parse
 * and format) cost about a microsecond a response. What throws is not remembered.
 */
export function remembered<T>(answer: (text: string) => T, size = 256): (text: string) => T {
  const answers = new Map<string, T>();
  return (text) => {
    let known = answers.get(text);
    if (known === undefined) {
      known = answer(text);
      if (answers.size === size) answers.clear();
      answers.set(text, known);
    }
    return known;
  };
}

/** mime-types' `contentType`: a full Content-Type for a type or an extension ("text" -> "text/plain; charset=utf-8"), or false. */
export const contentTypeOf: (type: string) => string | false = remembered((type) => mime.contentType(type));

/** `type` with its charset parameter set to utf-8 (content-type's parse and format), as `res.send` sets a string's. */
export const withUtf8: (type: string) => string = remembered((type) => {
  if (!type) return type;
  const parsed = contentType.parse(type);
  parsed.parameters.charset = "utf-8";
  return contentType.format(parsed);
});

/** A media type of `res.format`'s keys: a full type with its parameters, or an extension looked up. */
export interface MediaType {
  value: string;
  quality?: number;
  params: Record<string, string>;
}

export function normalizeType(type: string): MediaType {
  return type.includes("/") ? typeWithParams(type) : { value: mime.lookup(type) || "application/octet-stream", params: {} };
}

/** `text/html; q=0.5; level=1` as its value, quality and other parameters (as Express reads them). */
function typeWithParams(text: string): MediaType {
  const end = text.length;
  const semicolon = text.indexOf(";");
  let at = semicolon === -1 ? end : semicolon;
  const type: MediaType = { value: text.slice(0, at).trim(), quality: 1, params: {} };
  while (at < end) {
    const equals = text.indexOf("=", at);
    if (equals === -1) break;
    const next = text.indexOf(";", at);
    const stop = next === -1 ? end : next;
    if (equals > stop) {
      // A parameter without a value: go on from the last semicolon before the next '='.
      at = text.lastIndexOf(";", equals - 1) + 1;
      continue;
    }
    const key = text.slice(at, equals).trim();
    const value = text.slice(equals + 1, stop).trim();
    if (key === "q") type.quality = parseFloat(value);
    else type.params[key] = value;
    at = stop + 1;
  }
  return type;
}
