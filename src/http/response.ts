import type { OutgoingHttpHeader, OutgoingHttpHeaders } from "node:http";
import { createRequire } from "node:module";
import { pipeline, type Readable } from "node:stream";
// The helpers' declared type (dist/response.d.ts) names EventEmitter.captureRejectionSymbol, a
// member every engine's response inherits: EventEmitter must be in scope there, or a project
// that checks library types (skipLibCheck off) fails on Cog's declarations.
import type { EventEmitter } from "node:events";
import { stringifySetCookie } from "cookie";
import encodeUrl from "encodeurl";
import { isStatus, isValidHeader, lowerCase } from "../engines/kit/compat.js";
import { FRAME_BODY, HOST, type BodyFraming, type ResponseSurface } from "../engines/contract/engine.js";
import { HttpError } from "../base/errors.js";
import { abortRequest, type InternalRequest } from "./request.js";
import { signCookie } from "../base/signing.js";
import { EventStream, type EventStreamOptions } from "./sse.js";
import { loadFiles } from "./files/load.js";
import type { SendFileOptions } from "./files/options.js";
import { ENGINE_HEADERS, PENDING, SERIALIZERS, SETTINGS, VALIDATES, WATCH } from "../base/symbols.js";

export type HeaderValue = string | number | readonly string[];

/** A route's compiled serializer for one status (src/schema/compile.ts makes them). */
export type Serializer = (value: unknown) => string;

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
  /** Sign the value with the app's `secret` (read it back from `req.signedCookies`). */
  signed?: boolean;
}

const TEXT = "text/plain; charset=utf-8";
const HTML = "text/html; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";
const BINARY = "application/octet-stream";
const EXPIRED = new Date(0);
// Browsers treat "\\" as "/", so "/\\evil.example" leaves the site just as "//evil.example" does.
const PROTOCOL_RELATIVE = /^[/\\]{2}/;
const BODY_HEADERS = ["content-type", "content-length", "content-encoding", "content-language", "content-range", "etag", "last-modified"];

/** What watches a response until it begins (the app's handlerTimeout): told once its head is written. */
export interface ResponseWatch {
  begun(res: object): void;
}

/**
 * Cog's state on every response, under symbols (src/base/symbols.ts) so no middleware's property
 * (`res.flush`, `res.locals`…) can collide with it, kept out of the public types. Defaults live on
 * the prototype (below).
 */
export interface ResponseInternals {
  [PENDING]: Record<string, HeaderValue> | null;
  [SERIALIZERS]: Map<number, Serializer> | null;
  [ENGINE_HEADERS]: boolean;
  [WATCH]: ResponseWatch | null;
  [VALIDATES]: { type: string; length: number } | null;
}
export type { EventEmitter };
type Internal = ResponseInternals;
/** A response's internal state (a cast, which V8 compiles away). */
const own = (res: object) => res as Internal;

/** What the helpers need from an engine's response class (Node's ServerResponse has all of it). */
export type EngineResponse = ResponseSurface & { req?: unknown };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a base class for `extends`: TypeScript takes only `any[]` constructor arguments there (TS2545)
type EngineResponseClass = abstract new (...args: any[]) => EngineResponse;

/**
 * Cog's response helpers, added to an engine's response class (Node's ServerResponse, or the
 * native engine's class of Cog's own).
 *
 * Headers set through `res.set` are collected in one object and written with a single
 * `writeHead` when the body is sent: cheaper than Node's per-call `setHeader` bookkeeping.
 * Headers that middleware put in the engine's own store are merged by `writeHead` itself.
 */
export function withResponseHelpers<Base extends EngineResponseClass>(Base: Base) {
  abstract class ResponseHelpers extends Base {
    /** Per-request values for templates and later middleware, as in Express; typed by declaring `Locals`. */
    declare locals: Locals & Record<string, unknown>;

    /** The engine's setHeader, noted so that `send` only asks the engine's store when something is in it. */
    override setHeader(name: string, value: number | string | readonly string[]): this {
      own(this)[ENGINE_HEADERS] = true;
      return super.setHeader(name, value);
    }

    /**
     * The engine's writeHead, with the headers set through `res.set` (which Cog's own `send`
     * passes itself), so they go out whoever writes the head: `write`, `end`, `flushHeaders`,
     * a piped stream or middleware (each engine's implicit head comes here too). The response
     * begins here, so the app's handler timeout no longer applies to it.
     */
    override writeHead(
      status: number,
      reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
      headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
    ): this {
      const watch = own(this)[WATCH];
      if (watch !== null) watch.begun(this);
      const pending = own(this)[PENDING];
      if (pending !== null && reason !== pending && headers !== pending) {
        if (typeof reason === "string") headers = withPending(pending, headers);
        else reason = withPending(pending, reason);
      }
      return super.writeHead(status, reason as string, headers);
    }

    /** Sets the status code; chainable: `res.status(201).json(user)`. Anything but an integer from 100 to 999 throws. */
    status(code: number): this {
      checkStatus(code);
      this.statusCode = code;
      return this;
    }

    /**
     * Sets a header (or several from an object); chainable. Names and values are checked once,
     * by the engine, when the response is written: a value containing CR or LF then throws from
     * `send`, the bad header is dropped, and the request gets a 500 instead of a split response.
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
      (own(this)[PENDING] ??= {})[key] = value;
      return this;
    }

    /** A header set on this response, whether by `res.set` or by middleware's `setHeader`. */
    get(name: string): HeaderValue | undefined {
      const key = lowerCase(name);
      const value = own(this)[PENDING]?.[key];
      return value !== undefined || !own(this)[ENGINE_HEADERS] ? value : this.getHeader(key);
    }

    /**
     * Adds a value to a header that may repeat (Set-Cookie, Vary, Link). The first value stays
     * a plain string (one header line either way, and Node writes a string faster than a
     * one-element list).
     */
    append(name: string, value: string): this {
      const current = this.get(name);
      const next = current === undefined ? value : Array.isArray(current) ? [...current, value] : [String(current), value];
      return this.set(name, next);
    }

    /**
     * Sets Content-Type: a media type as given (`"image/png"`), or an extension or file name
     * looked up as Express does (`"html"`, `".css"`, `"photo.jpg"`; text types get a charset).
     */
    type(type: string): this {
      return this.set("content-type", SHORT_TYPES[type] ?? (type.includes("/") ? type : typeFromName(type)));
    }

    /**
     * Sends a file, with the validators, conditional answers (304) and ranges (206) of
     * `serveStatic`. `path` is absolute, or relative to `options.root`. A missing file becomes a
     * 404 and any failure the app's error response; the promise resolves once the response is
     * under way (it never rejects).
     */
    sendFile(path: string, options: SendFileOptions = {}): Promise<void> {
      const req = this.req as InternalRequest;
      return loadFiles()
        .then((files) => files.sendFile(req, this as unknown as Response, path, options))
        .catch((err: unknown) => req[HOST].fail(err, req, this as unknown as Response));
    }

    /** Sends a file as a download: `res.attachment(name ?? the file's name)`, then `res.sendFile`. */
    download(path: string, name?: string, options?: SendFileOptions): Promise<void> {
      this.attachment(name ?? path.slice(path.lastIndexOf("/") + 1));
      return this.sendFile(path, options);
    }

    /**
     * Marks the response as a download: Content-Disposition `attachment` (with the file name,
     * encoded for any character), and Content-Type from the name's extension unless the app set
     * one already (a type chosen before naming the file is the one meant).
     */
    attachment(name?: string): this {
      const file = name === undefined ? undefined : name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1);
      if (file !== undefined && this.get("content-type") === undefined) this.set("content-type", typeFromName(file));
      disposition ??= requireHere("content-disposition") as typeof import("content-disposition");
      return this.set("content-disposition", disposition.create(file));
    }

    /**
     * Sends the body and ends the response, with Content-Type (unless already set) and
     * Content-Length always right: string -> text/plain, Buffer -> application/octet-stream, a
     * Readable is piped, null/undefined -> empty, anything else -> JSON.
     */
    send(body?: unknown, status?: number): this {
      if (status !== undefined) this.status(status);
      if (typeof body === "string") return finish(this, body, TEXT) as this;
      if (body === undefined || body === null) return finish(this, "", TEXT) as this;
      if (Buffer.isBuffer(body)) return finish(this, body, BINARY) as this;
      if (isReadable(body)) return stream(this, body) as this;
      if (body instanceof Uint8Array) return finish(this, Buffer.from(body.buffer, body.byteOffset, body.byteLength), BINARY) as this;
      return finish(this, serialize(this, body), JSON_TYPE) as this;
    }

    /** Sends a value as JSON (through the route's response schema for this status, if it has one). */
    json(value: unknown, status?: number): this {
      if (status !== undefined) this.status(status);
      return finish(this, serialize(this, value), JSON_TYPE) as this;
    }

    /**
     * Opens a server-sent event stream: the head goes out now, then each `send({ event, id,
     * data, retry })` writes one event at once. See `EventStream`.
     */
    sse(options: EventStreamOptions = {}): EventStream {
      const req = this.req as InternalRequest;
      return new EventStream(this as unknown as Response, options, (reason) => abortRequest(req, reason), req[SETTINGS].openStreams);
    }

    /** Sends an HTML string. */
    html(markup: string, status?: number): this {
      if (status !== undefined) this.status(status);
      return finish(this, markup, HTML) as this;
    }

    /**
     * Redirects to `url` (302 Found unless told otherwise; Express's `redirect(status, url)`
     * order works too). The location is percent-encoded (so CR/LF or spaces can't break the
     * header), and a protocol-relative one (`//host`, `/\\host`), which browsers read as another
     * site, is refused with a 400: an open redirect is nearly always user input
     * (`?next=//evil.example`) reaching this call.
     */
    redirect(url: string, status?: number): this;
    redirect(status: number, url: string): this;
    redirect(first: string | number, second?: string | number): this {
      const [url, status] = typeof first === "number" ? [second, first] : [first, second ?? 302];
      if (typeof url !== "string") throw new TypeError(`res.redirect needs a URL string, got ${typeof url}`);
      const location = encodeUrl(url);
      if (PROTOCOL_RELATIVE.test(location)) {
        throw new HttpError(400, `Refusing to redirect to the protocol-relative location "${location}"; redirect to a path or an absolute URL`);
      }
      this.status(status as number);
      this.set("location", location);
      return finish(this, `Redirecting to ${location}`, TEXT) as this;
    }

    /** Adds a Set-Cookie header. Invalid names, values or attributes throw (and so answer 500). */
    setCookie(name: string, value: string, options?: CookieOptions): this {
      if (options?.signed === true) value = signCookie(value, (this.req as InternalRequest)[SETTINGS].secrets);
      return this.append("set-cookie", stringifySetCookie(cookieOf(name, value, options, options?.expires, options?.maxAge)));
    }

    /** Tells the client to drop a cookie; pass the same path/domain it was set with. */
    clearCookie(name: string, options?: Omit<CookieOptions, "maxAge" | "expires" | "signed">): this {
      if (options === undefined) {
        let line = CLEARED.get(name);
        if (line === undefined) {
          line = stringifySetCookie(cookieOf(name, "", undefined, EXPIRED, undefined));
          if (CLEARED.size < 100) CLEARED.set(name, line);
        }
        return this.append("set-cookie", line);
      }
      return this.append("set-cookie", stringifySetCookie(cookieOf(name, "", options, EXPIRED, undefined)));
    }
  }
  Object.assign(ResponseHelpers.prototype, { [PENDING]: null, [SERIALIZERS]: null, [ENGINE_HEADERS]: false, [WATCH]: null, [VALIDATES]: null });
  // `locals` is an object per response, made on first use.
  Object.defineProperty(ResponseHelpers.prototype, "locals", {
    get(this: ResponseHelpers) {
      const locals = {};
      Object.defineProperty(this, "locals", { value: locals, writable: true, configurable: true, enumerable: true });
      return locals;
    },
    set(this: ResponseHelpers, value: Record<string, unknown>) {
      Object.defineProperty(this, "locals", { value, writable: true, configurable: true, enumerable: true });
    },
    configurable: true,
  });
  return ResponseHelpers;
}

/**
 * The response handed to handlers, on every engine: Cog's helpers over Node's ServerResponse
 * surface. An interface, so that an app can declare what its middleware adds
 * (`declare module "cog-http" { interface Response { render(view: string): void } }`).
 */

export interface Response extends ResponseHelpers {}
type ResponseHelpers = InstanceType<ReturnType<typeof withResponseHelpers<abstract new () => EngineResponse>>>;

/**
 * What `res.locals` holds, declared by the app: `declare module "cog-http" { interface Locals
 * { user: User } }` types `res.locals.user` in every handler. Undeclared names stay `unknown`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- empty here, for the app to merge its own locals in
export interface Locals {}

/** Older name of `Response`. */
export type CogResponse = Response;

/** A response as Cog's own code sees it: with its internal state. @internal */
export type InternalResponse = Response & ResponseInternals;

// The libraries behind `type` and `attachment`, loaded on first use (synchronously: both return the response).
const requireHere = createRequire(import.meta.url);
let mime: typeof import("mime-types") | undefined;
let disposition: typeof import("content-disposition") | undefined;

/** The Content-Type for an extension or a file name (mime-types, as Express), or application/octet-stream. */
function typeFromName(name: string): string {
  return (mime ??= requireHere("mime-types") as typeof import("mime-types")).contentType(name) || BINARY;
}

const SHORT_TYPES: Record<string, string> = { json: JSON_TYPE, html: HTML, text: TEXT, txt: TEXT, bin: BINARY, binary: BINARY };

/** The Set-Cookie line clearing a cookie, by name, for `clearCookie(name)`: the same every time (bounded). */
const CLEARED = new Map<string, string>();

/**
 * The object `stringifySetCookie` reads, always of one shape. (Spreading the options into a new
 * object gave each call a hidden class of its own on Node 20, and each of the serializer's eleven
 * reads a cache miss: ~35k instructions a cookie.) Also what cog-http/express's `res.cookie` hands it.
 */
export function cookieOf(name: string, value: string, o: CookieOptions | undefined, expires: Date | undefined, maxAge: number | undefined) {
  return {
    name,
    value,
    path: o?.path ?? "/",
    domain: o?.domain,
    maxAge,
    expires,
    httpOnly: o?.httpOnly,
    secure: o?.secure,
    partitioned: o?.partitioned,
    priority: o?.priority,
    sameSite: o?.sameSite,
  };
}

/** `res.set`'s headers under those given to writeHead (theirs win). */
function withPending(
  pending: Record<string, HeaderValue>,
  given: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined,
): OutgoingHttpHeaders | OutgoingHttpHeader[] {
  if (given === undefined) return pending as OutgoingHttpHeaders;
  if (Array.isArray(given)) return [...Object.entries(pending).flat(), ...given] as OutgoingHttpHeader[];
  return { ...pending, ...given } as OutgoingHttpHeaders;
}

/** Throws unless `code` is a status a response can carry: an integer from 100 to 999 (Node's and Express's rule). */
export function checkStatus(code: unknown): void {
  if (isStatus(code)) return;
  if (typeof code !== "number" || !Number.isInteger(code)) {
    throw new TypeError(`Invalid status code ${JSON.stringify(code) ?? String(code)}: a status must be an integer from 100 to 999`);
  }
  if (code < 100 || code > 999) throw new RangeError(`Invalid status code ${code}: a status must be an integer from 100 to 999`);
}

function serialize(res: Response, value: unknown): string {
  const serializer = own(res)[SERIALIZERS]?.get(res.statusCode);
  return serializer === undefined ? (JSON.stringify(value) ?? "null") : serializer(value);
}

function finish(res: Response, body: string | Buffer, type: string): Response {
  const headers = own(res)[PENDING] ?? {};
  const status = res.statusCode;
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
    // These statuses have no body, so they must not describe one either.
    delete headers["content-type"];
    delete headers["content-length"];
    writeHeaders(res, status, headers);
    res.end();
    return res;
  }
  defaultType(res, headers, type);
  const frame = (res as BodyFraming)[FRAME_BODY];
  if (frame !== undefined) frame.call(res, body);
  else headers["content-length"] = typeof body === "string" ? Buffer.byteLength(body) : body.length;
  writeHeaders(res, status, headers);
  res.end(body);
  return res;
}

/** Sets Content-Type to `type` unless one was set already, by `res.set` or by the engine's `setHeader`. */
function defaultType(res: Response, headers: Record<string, HeaderValue>, type: string): void {
  if (headers["content-type"] === undefined && !(own(res)[ENGINE_HEADERS] && res.hasHeader("content-type"))) headers["content-type"] = type;
}

/**
 * writeHead, which validates the status and every header; on a bad header, forget it so that the
 * error response can go out.
 */
function writeHeaders(res: Response, status: number, headers: Record<string, HeaderValue>): void {
  checkStatus(status);
  try {
    res.writeHead(status, headers as OutgoingHttpHeaders);
  } catch (err) {
    for (const name of Object.keys(headers)) if (!isValidHeader(name, headers[name])) delete headers[name];
    throw err;
  }
}

/**
 * Writes a stream as the body, with backpressure. The head waits for the stream's first byte
 * (or its end): a stream that fails before it (a file that isn't there) becomes the app's
 * error response, 404 for a missing file; one that fails later cuts the connection, the only
 * honest signal left once a status is out.
 */
function stream(res: Response, body: Readable): Response {
  const headers = own(res)[PENDING] ?? {};
  defaultType(res, headers, BINARY);
  const req = res.req as InternalRequest;
  const start = () => {
    body.off("error", failEarly);
    res.off("close", abandon);
    try {
      writeHeaders(res, res.statusCode, headers);
    } catch (err) {
      body.destroy();
      return req[HOST].fail(err, req, res);
    }
    // pipeline destroys both sides on error, so a failing stream ends the connection instead of hanging it.
    pipeline(body, res, () => {});
  };
  const failEarly = (err: Error) => {
    body.off("readable", start);
    res.off("close", abandon);
    req[HOST].fail(streamError(err), req, res);
  };
  // The client went away first: nothing is waiting for the stream.
  const abandon = () => body.destroy();
  body.once("readable", start);
  body.once("error", failEarly);
  res.once("close", abandon);
  return res;
}

/** What a stream's failure before its first byte answers: its own HttpError, 404 for a missing file, 403 for a forbidden one, else 500. */
function streamError(err: Error): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  const status = code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR" ? 404 : code === "EACCES" || code === "EPERM" ? 403 : 0;
  // The file system's message names the server's path: the client gets a plain one.
  if (status !== 0)
    return new HttpError(status, status === 404 ? "The file sent as the body was not found" : "The file sent as the body may not be read", { cause: err });
  return err;
}

/**
 * Forgets what described the body being replaced, when an error response takes its place:
 * the status text and the body's headers. Others stay (CORS or X-Powered-By headers belong on
 * error responses too); an invalid one was already dropped by `writeHeaders`.
 */
export function resetForError(res: Response): void {
  // A bad statusMessage would fail the error response too, and a kept one ("OK") would be wrong.
  res.statusMessage = undefined as unknown as string;
  const pending = own(res)[PENDING];
  for (const name of BODY_HEADERS) {
    if (pending !== null) delete pending[name];
    res.removeHeader(name);
  }
}

function isReadable(value: unknown): value is Readable {
  return typeof (value as Readable).pipe === "function" && typeof (value as Readable).on === "function";
}
