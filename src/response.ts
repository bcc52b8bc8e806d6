import { ServerResponse, validateHeaderName, validateHeaderValue, type OutgoingHttpHeaders } from "node:http";
import { pipeline, type Readable } from "node:stream";
import { stringifySetCookie } from "cookie";
import encodeUrl from "encodeurl";
import { HttpError } from "./errors.js";
import type { Serializer } from "./schema/compile.js";

export type HeaderValue = string | number | readonly string[];

export interface CookieOptions {
  /** Defaults to `/`, so the cookie is sent back on every path. */
  path?: string;
  domain?: string;
  /** Lifetime in seconds (as in the Set-Cookie attribute, unlike Express's milliseconds). */
  maxAge?: number;
  expires?: Date;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: boolean | "lax" | "strict" | "none";
  partitioned?: boolean;
  priority?: "low" | "medium" | "high";
}

const TEXT = "text/plain; charset=utf-8";
const HTML = "text/html; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";
const BINARY = "application/octet-stream";
const EXPIRED = new Date(0);
// Browsers treat "\\" as "/", so "/\\evil.example" leaves the site just as "//evil.example" does.
const PROTOCOL_RELATIVE = /^[/\\]{2}/;
const BODY_HEADERS = ["content-type", "content-length", "content-encoding", "content-language", "content-range", "etag", "last-modified"];

/** What the helpers need from an engine's own response object (Node's ServerResponse has all of it). */
export interface EngineResponse {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  shouldKeepAlive: boolean;
  /** The engine writes Content-Length from the body it is given (Node's ServerResponse needs it set). */
  readonly framesBody?: boolean;
  setHeader(name: string, value: number | string | readonly string[]): this;
  getHeader(name: string): number | string | string[] | undefined;
  hasHeader(name: string): boolean;
  removeHeader(name: string): void;
  writeHead(status: number, headers: OutgoingHttpHeaders): this;
  end(body?: string | Buffer): this;
  destroy(err?: Error): this;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type EngineResponseClass = abstract new (...args: any[]) => EngineResponse;

/**
 * Cog's response helpers, added to an engine's response class (Node's
 * ServerResponse, or uWebSockets.js's small class of Cog's own).
 *
 * Headers set through `res.set` are collected in one object and written with
 * a single `writeHead` when the body is sent: cheaper than Node's per-call
 * `setHeader` bookkeeping. Headers that middleware put in Node's own store
 * are merged by `writeHead` itself.
 */
export function withResponseHelpers<Base extends EngineResponseClass>(Base: Base) {
  abstract class ResponseHelpers extends Base {
  // Defaults on the prototype (below), as for requests: no per-response property definitions.
  /** Headers set with `res.set`, by lower-case name; null until the first one. */
  /** @internal */ declare pending: Record<string, HeaderValue> | null;
  /** The route's compiled response serializers by status, when it declared response schemas. */
  declare serializers: Map<number, Serializer> | null;
  /** Whether anything used Node's own header store (`setHeader`), which `send` then has to consult. */
  /** @internal */ declare nodeHeaders: boolean;

  /** Node's setHeader, noted so that `send` only asks Node's store when something is in it. */
  /** @internal */
  override setHeader(name: string, value: number | string | readonly string[]): this {
    this.nodeHeaders = true;
    return super.setHeader(name, value);
  }

  /** Sets the status code; chainable: `res.status(201).json(user)`. */
  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  /**
   * Sets a header (or several from an object); chainable. Names and values are
   * checked once, by Node, when the response is written: a value containing CR
   * or LF then throws from `send`, the bad header is dropped, and the request
   * gets a 500 instead of a split response.
   */
  set(name: string | Record<string, HeaderValue>, value?: HeaderValue): this {
    if (typeof name === "object") {
      for (const key of Object.keys(name)) this.set(key, name[key]!);
      return this;
    }
    if (value === undefined) throw new TypeError(`res.set("${name}") needs a value`);
    const key = lowerCase(name);
    // A plain object (not Object.create(null), which V8 keeps in slow dictionary mode):
    // writeHead walks it with for-in on every response. "__proto__" is the one key it can't hold.
    if (key === "__proto__") throw new TypeError('"__proto__" is not a usable header name');
    (this.pending ??= {})[key] = value;
    return this;
  }

  /** A header set on this response, whether by `res.set` or by middleware's `setHeader`. */
  get(name: string): HeaderValue | undefined {
    const key = lowerCase(name);
    const value = this.pending?.[key];
    return value !== undefined || !this.nodeHeaders ? value : this.getHeader(key);
  }

  /**
   * Adds a value to a header that may repeat (Set-Cookie, Vary, Link). The
   * first value stays a plain string (one header line either way, and Node
   * writes a string faster than a one-element list).
   */
  append(name: string, value: string): this {
    const current = this.get(name);
    const next = current === undefined ? value : Array.isArray(current) ? [...current, value] : [String(current), value];
    return this.set(name, next);
  }

  /**
   * Sends the body and ends the response, with Content-Type (unless already
   * set) and Content-Length always right:
   * string -> text/plain, Buffer -> application/octet-stream, a Readable is
   * piped, null/undefined -> empty, anything else -> JSON.
   */
  send(body?: unknown, status?: number): this {
    if (status !== undefined) this.statusCode = status;
    if (typeof body === "string") return this.finish(body, TEXT);
    if (body === undefined || body === null) return this.finish("", TEXT);
    if (Buffer.isBuffer(body)) return this.finish(body, BINARY);
    if (isReadable(body)) return this.stream(body);
    if (body instanceof Uint8Array) return this.finish(Buffer.from(body.buffer, body.byteOffset, body.byteLength), BINARY);
    return this.finish(this.serialize(body), JSON_TYPE);
  }

  /** Sends a value as JSON (through the route's response schema for this status, if it has one). */
  json(value: unknown, status?: number): this {
    if (status !== undefined) this.statusCode = status;
    return this.finish(this.serialize(value), JSON_TYPE);
  }

  /** @internal */ serialize(value: unknown): string {
    const serializer = this.serializers?.get(this.statusCode);
    return serializer === undefined ? (JSON.stringify(value) ?? "null") : serializer(value);
  }

  /** Sends an HTML string. */
  html(markup: string, status?: number): this {
    if (status !== undefined) this.statusCode = status;
    return this.finish(markup, HTML);
  }

  /**
   * Redirects to `url` (302 Found unless told otherwise). The location is
   * percent-encoded (so CR/LF or spaces can't break the header), and a
   * protocol-relative one (`//host`, `/\\host`), which browsers read as
   * another site, is refused with a 400: an open redirect is nearly always
   * user input (`?next=//evil.example`) reaching this call.
   */
  redirect(url: string, status = 302): this {
    const location = encodeUrl(url);
    if (PROTOCOL_RELATIVE.test(location)) {
      throw new HttpError(400, `Refusing to redirect to the protocol-relative location "${location}"; redirect to a path or an absolute URL`);
    }
    this.set("location", location);
    this.statusCode = status;
    return this.finish(`Redirecting to ${location}`, TEXT);
  }

  /** Adds a Set-Cookie header. Invalid names, values or attributes throw (and so answer 500). */
  setCookie(name: string, value: string, options?: CookieOptions): this {
    const cookie = stringifySetCookie(options === undefined ? { name, value, path: "/" } : { ...options, name, value, path: options.path ?? "/" });
    return this.append("set-cookie", cookie);
  }

  /** Tells the client to drop a cookie; pass the same path/domain it was set with. */
  clearCookie(name: string, options?: Omit<CookieOptions, "maxAge" | "expires">): this {
    return this.setCookie(name, "", { ...options, expires: EXPIRED, maxAge: undefined });
  }

  /**
   * Forgets the headers that described the body being replaced, when an error
   * response takes its place. Others stay (CORS or X-Powered-By headers belong
   * on error responses too); an invalid one was already dropped by `writeHeaders`.
   */
  resetHeaders(): void {
    for (const name of BODY_HEADERS) {
      if (this.pending !== null) delete this.pending[name];
      this.removeHeader(name);
    }
  }

  /** @internal */ finish(body: string | Buffer, type: string): this {
    const headers = this.pending ?? {};
    const status = this.statusCode;
    if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
      // These statuses have no body, so they must not describe one either.
      delete headers["content-type"];
      delete headers["content-length"];
      this.writeHeaders(status, headers);
      this.end();
      return this;
    }
    this.defaultType(headers, type);
    if (this.framesBody !== true) headers["content-length"] = typeof body === "string" ? Buffer.byteLength(body) : body.length;
    this.writeHeaders(status, headers);
    this.end(body);
    return this;
  }

  /** Sets Content-Type to `type` unless one was set already, by `res.set` or by Node's `setHeader`. */
  /** @internal */ defaultType(headers: Record<string, HeaderValue>, type: string): void {
    if (headers["content-type"] === undefined && !(this.nodeHeaders && this.hasHeader("content-type"))) headers["content-type"] = type;
  }

  /** writeHead, which validates every header; on a bad one, forget it so the error response can go out. */
  /** @internal */ writeHeaders(status: number, headers: Record<string, HeaderValue>): void {
    try {
      this.writeHead(status, headers as OutgoingHttpHeaders);
    } catch (err) {
      for (const name of Object.keys(headers)) {
        try {
          validateHeaderName(name);
          validateHeaderValue(name, headers[name] as string);
        } catch {
          delete headers[name];
        }
      }
      throw err;
    }
  }

  /** @internal */ stream(body: Readable): this {
    const headers = this.pending ?? {};
    this.defaultType(headers, BINARY);
    this.writeHeaders(this.statusCode, headers);
    this.pipeFrom(body);
    return this;
  }

  /**
   * Writes a stream as the body (headers already written), with backpressure,
   * cutting the connection if the stream fails.
   * @internal
   */
  abstract pipeFrom(body: Readable): void;
  }
  Object.assign(ResponseHelpers.prototype, { pending: null, serializers: null, nodeHeaders: false });
  return ResponseHelpers;
}

/**
 * The response handed to handlers. On the node engine it *is* Node's
 * ServerResponse, so Express-style middleware that calls `setHeader` works.
 * On other engines the object has the same helpers but is not a Node stream.
 */
export class CogResponse extends withResponseHelpers(ServerResponse) {
  /** @internal */
  pipeFrom(body: Readable): void {
    // pipeline destroys both sides on error, so a failing stream ends the connection instead of hanging it.
    pipeline(body, this, () => {});
  }
}

/**
 * Header names are nearly always the same few literals: remember their lower
 * case instead of allocating a new string per response (bounded, so arbitrary
 * names can't grow it without limit).
 */
const LOWER_CASE = new Map<string, string>();
export function lowerCase(name: string): string {
  let lower = LOWER_CASE.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (LOWER_CASE.size < 1000) LOWER_CASE.set(name, lower);
  }
  return lower;
}

function isReadable(value: unknown): value is Readable {
  return typeof (value as Readable).pipe === "function" && typeof (value as Readable).on === "function";
}
