import { IncomingMessage, type IncomingHttpHeaders } from "node:http";
import { parseCookie } from "cookie";
import { parse as parseQueryString } from "fast-querystring";
import { countFields, parseBody, rawHeader, readBody } from "./body.js";
import { HttpError } from "./errors.js";
import { pathOf } from "./head.js";
import { DEFAULT_LIMITS } from "./limits.js";

export type Query = Record<string, string | string[] | undefined>;
export type Cookies = Record<string, string | undefined>;
export type Params = Record<string, string>;

/** Shared by every request without params; frozen so no handler can leak state into the next request. */
export const NO_PARAMS: Params = Object.freeze(Object.create(null));
const UNSET: unique symbol = Symbol("unset");

/** What a request needs from the app that serves it. */
export interface RequestSettings {
  /** Trust X-Forwarded-For: true for any hop, a number for that many proxies in front. */
  readonly trustProxy: boolean | number;
  /** Most fields accepted in a query string or an urlencoded body. */
  readonly maxFields: number;
  /** Deepest nesting accepted in a JSON body. */
  readonly maxJsonDepth: number;
}

const DEFAULT_SETTINGS: RequestSettings = { trustProxy: false, maxFields: DEFAULT_LIMITS.maxFields, maxJsonDepth: DEFAULT_LIMITS.maxJsonDepth };

/** What the helpers need from an engine's own request object. */
export interface EngineRequest {
  url?: string | undefined;
  method?: string | undefined;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  httpVersionMajor: number;
  httpVersionMinor: number;
  /** The size of the request head, for engines whose parser does not enforce maxHeaderSize itself. */
  headBytes?: number;
  /**
   * For engines that apply Cog's head rules themselves (src/head.ts on the others): the body's
   * length (or NO_BODY), or a throw of the HttpError that refuses the request.
   */
  checkedHead?(): number;
}

/** Called once the body is buffered, or with the error (413) that refused it. */
export type BodyCallback = (err: HttpError | null, body: Buffer | null) => void;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type EngineRequestClass = abstract new (...args: any[]) => EngineRequest;

/**
 * Cog's request helpers, added to an engine's request class: on the node
 * engine that is Node's IncomingMessage, on uWebSockets.js a small class of
 * Cog's own. Every helper parses lazily, on first read, and caches: a route
 * that never reads cookies never parses them.
 */
export function withRequestHelpers<Base extends EngineRequestClass>(Base: Base) {
  abstract class RequestHelpers extends Base {
  // Each field's default lives on the prototype (below), not in a constructor: a request that
  // never sets one pays nothing for it, where class fields cost every request eight property
  // definitions in a constructor of its own. (The gain is small: about 0.5% of the userland
  // instructions of a small GET on Node 20, below what paired wall-clock rounds can resolve.)
  /** Route params: `/users/:id` gives `req.params.id`; a trailing `*` gives `req.params["*"]`. */
  declare params: Params;
  /** The app's settings: on the prototype of the request class each engine makes for its app (`withSettings`). */
  declare settings: RequestSettings;
  /** The raw body, buffered before the chain runs when the request has one. */
  declare rawBody: Buffer | undefined;
  /** Express body parsers skip a request whose `_body` is true; Cog sets it once it has read the body. */
  declare _body: boolean;
  /** @internal */ declare cachedPath: string | undefined;
  /** @internal */ declare cachedQuery: Query | undefined;
  /** @internal */ declare cachedCookies: Cookies | undefined;
  /** @internal */ declare cachedBody: unknown;

  /** The client's address as the engine sees it (the peer of the TCP connection). */
  abstract get remoteAddress(): string | undefined;

  /**
   * Buffers the body the request announced (`length` bytes, or CHUNKED),
   * refusing more than `limit`; `done` is called at most once, and never if
   * the client goes away mid-body.
   * @internal
   */
  abstract receiveBody(length: number, limit: number, done: BodyCallback): void;

  /** The path without the query string, as sent (not decoded). */
  get path(): string {
    if (this.cachedPath === undefined) this.cachedPath = pathOf(this.url ?? "/");
    return this.cachedPath;
  }
  set path(path: string) {
    this.cachedPath = path;
  }

  /**
   * The query string as an object; a repeated key gives an array. Keys are
   * never nested (`a[b]=1` is the key "a[b]"), so there is no depth to abuse.
   * More than `maxFields` fields throw an HttpError(414).
   */
  get query(): Query {
    if (this.cachedQuery === undefined) {
      const url = this.url ?? "";
      const q = url.indexOf("?");
      if (q === -1) {
        this.cachedQuery = Object.create(null);
      } else {
        const search = url.slice(q + 1);
        const max = this.settings.maxFields;
        if (countFields(search, max) > max) throw new HttpError(414, `Query string has more than ${max} fields; raise the maxFields option to accept it`);
        this.cachedQuery = parseQueryString(search) as Query;
      }
    }
    return this.cachedQuery!;
  }
  set query(query: Query) {
    this.cachedQuery = query;
  }

  /** Cookies by name. Never throws: a malformed percent-encoding leaves the raw value. */
  get cookies(): Cookies {
    if (this.cachedCookies === undefined) {
      const header = this.headerValue("cookie");
      this.cachedCookies = header === undefined ? Object.create(null) : parseCookie(header);
    }
    return this.cachedCookies!;
  }
  set cookies(cookies: Cookies) {
    this.cachedCookies = cookies;
  }

  /**
   * The body parsed by Content-Type: JSON, urlencoded (object), text/* (string),
   * anything else the raw Buffer; undefined without a body. Malformed JSON throws
   * an HttpError(400) from here, which reaches the error handler like any throw.
   */
  get body(): any {
    if (this.cachedBody === UNSET) {
      this.cachedBody = this.rawBody === undefined ? undefined : parseBody(this.rawBody, this.firstHeader("content-type"), this.settings);
    }
    return this.cachedBody;
  }
  /** Assignable, so Express body parsers and users' own middleware can set it. */
  set body(body: unknown) {
    this.cachedBody = body;
  }

  /**
   * One header's value by lower-case name, repeats joined as Node joins them. Engines that keep
   * headers natively answer it without building `headers`.
   * @internal
   */
  headerValue(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  }

  /**
   * The first value of a header by lower-case name (Node keeps only the first Content-Type),
   * without building `headers`.
   * @internal
   */
  firstHeader(name: string): string | undefined {
    return rawHeader(this, name);
  }

  /** A header's value by case-insensitive name (`Referer` and `Referrer` are one). */
  get(name: string): string | undefined {
    const key = name.toLowerCase();
    const value = this.headers[key === "referrer" ? "referer" : key];
    return Array.isArray(value) ? value.join(", ") : value;
  }

  /**
   * The client's address. Only with the `trustProxy` option is X-Forwarded-For
   * believed: `true` takes its leftmost address, a number N the address N hops
   * back (the proxies closest to us appear last).
   */
  get ip(): string | undefined {
    const remote = this.remoteAddress;
    const trust = this.settings.trustProxy;
    if (trust === false || trust === 0) return remote;
    const header = this.get("x-forwarded-for");
    if (header === undefined) return remote;
    const hops = header.split(",").map((s) => s.trim()).filter((s) => s !== "");
    if (hops.length === 0) return remote;
    if (trust === true) return hops[0];
    return hops[Math.max(0, hops.length - trust)];
  }
}
  Object.assign(RequestHelpers.prototype, REQUEST_DEFAULTS);
  return RequestHelpers;
}

const REQUEST_DEFAULTS = {
  params: NO_PARAMS,
  settings: DEFAULT_SETTINGS,
  rawBody: undefined,
  _body: false,
  cachedPath: undefined,
  cachedQuery: undefined,
  cachedCookies: undefined,
  cachedBody: UNSET,
};

/**
 * A subclass of an engine's request class for one app: its settings sit on the
 * prototype, so requests carry them without a store per request.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function withSettings<Class extends abstract new (...args: any[]) => { settings: RequestSettings }>(Base: Class, settings: RequestSettings): Class {
  abstract class AppRequest extends Base {}
  AppRequest.prototype.settings = settings;
  return AppRequest;
}

/**
 * The request handed to handlers. On the node engine it *is* Node's
 * IncomingMessage (a subclass given to `http.createServer`), so Express-style
 * middleware works unchanged and no wrapper is allocated. On other engines
 * the object has the same helpers but is not a Node stream.
 */
export class CogRequest extends withRequestHelpers(IncomingMessage) {
  get remoteAddress(): string | undefined {
    return this.socket?.remoteAddress;
  }

  /** @internal */
  receiveBody(length: number, limit: number, done: BodyCallback): void {
    readBody(this, length, limit, done);
  }
}

/** Decodes param values; a malformed escape is the client's mistake, hence 400. */
export function decodeParam(value: string): string {
  if (value.indexOf("%") === -1) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    throw new HttpError(400, `Malformed percent-encoding in path segment "${value}"`);
  }
}
