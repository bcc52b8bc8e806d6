import { parseCookie } from "cookie";
import { parse as parseQueryString } from "fast-querystring";
import { countFields, parseBody } from "./body.js";
import { HOST, type EngineHost, type EngineRequest, type EngineRequestMethods, type RequestSurface } from "../engines/contract/engine.js";
import { HttpError } from "../base/errors.js";
import { DEFAULT_LIMITS } from "../base/limits.js";
import { unsignCookies } from "../base/signing.js";
import type { FormFields, MultipartOptions } from "./multipart.js";
import { OpenStreams } from "./sse.js";
import {
  CACHED_BODY,
  CACHED_COOKIES,
  CACHED_PATH,
  CACHED_QUERY,
  CACHED_SIGNED,
  ORIGINAL_URL,
  RESPONSE,
  LOG,
  ROUTE,
  SETTINGS,
  SIGNAL,
  TRACED,
  UNSET,
} from "../base/symbols.js";
import { pathOf } from "../base/path.js";
import type { RequestLog, RequestLogSource } from "./log.js";

export type Query = Record<string, string | string[] | undefined>;
export type Cookies = Record<string, string | undefined>;
/** Signed cookies by name: the value when its signature holds, `false` when it was tampered with. */
export type SignedCookies = Record<string, string | false | undefined>;
export type Params = Record<string, string>;

/** Shared by every request without params; frozen so no handler can leak state into the next request. */
export const NO_PARAMS: Params = Object.freeze(Object.create(null));

/**
 * The app serving a request, as `req.app` shows it: declared by the application's face
 * (src/cog.ts makes it `Cog`), so that this layer needs no import of it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- empty here, for the face to merge its app's members in
export interface RequestApp {}

/** What a request needs from the app that serves it. */
export interface RequestSettings {
  /** Trust X-Forwarded-For: true for any hop, a number for that many proxies in front. */
  readonly trustProxy: boolean | number;
  /** Most fields accepted in a query string or an urlencoded body. */
  readonly maxFields: number;
  /** Deepest nesting accepted in a JSON body. */
  readonly maxJsonDepth: number;
  /** Secrets that sign cookies, the first for signing, all for checking (empty: no signing). */
  readonly secrets: readonly string[];
  /** The app's logger (its `logger` option), which `req.log` is a child of; null without one. */
  readonly logger: RequestLogSource | null;
  /** The app's open event streams (`res.sse()`), which its shutdown ends. */
  readonly openStreams: OpenStreams;
}

const DEFAULT_SETTINGS: RequestSettings = {
  trustProxy: false,
  maxFields: DEFAULT_LIMITS.maxFields,
  maxJsonDepth: DEFAULT_LIMITS.maxJsonDepth,
  secrets: [],
  logger: null,
  openStreams: new OpenStreams(),
};

/** What a request knows of the route it matched (the app's compiled route is one). */
export interface MatchedRoute {
  /** Its pattern, group prefixes included: `/users/:id`. */
  readonly path: string;
  /** Its method and pattern, for messages: `GET /users/:id` (`ALL` for `app.all`). */
  readonly where: string;
}

/** A request's `req.signal` controller, made on first use. */
function signalOf(req: object): AbortController {
  let controller = own(req)[SIGNAL];
  if (controller === undefined) {
    const made = (controller = own(req)[SIGNAL] = new AbortController());
    const res = own(req)[RESPONSE];
    // Every engine's response emits 'close' once: after 'finish' when answered, alone when the
    // connection went first. A response already destroyed has emitted it (or is about to): the
    // client left before anyone asked, and a signal read now must say so.
    if (res !== null && !res.writableFinished) {
      if (res.destroyed) made.abort(clientLeft());
      else
        res.once("close", () => {
          if (!res.writableFinished) made.abort(clientLeft());
        });
    }
  }
  return controller;
}

const clientLeft = () => new DOMException("The client closed the connection before the response was finished", "AbortError");

/** Aborts `req.signal` for a reason of the server's (a shutdown ending an event stream). */
export function abortRequest(req: object, reason: DOMException): void {
  signalOf(req).abort(reason);
}

/**
 * Cog's state on every request, under symbols (src/base/symbols.ts) so no middleware's property
 * (`req.id`, `req.session`, `req.user`…) can collide with it, kept out of the public types.
 * Defaults live on the prototype (below): a request that never sets one pays nothing for it.
 */
/**
 * What a request carries of its message on the `cog.request` tracing channel (observe/
 * request-channel.ts, `RequestMessage`): the error that reached the error handling.
 */
export interface TracedRequest {
  error?: unknown;
}

export interface RequestInternals {
  [SETTINGS]: RequestSettings;
  [CACHED_PATH]: string | undefined;
  [CACHED_QUERY]: Query | undefined;
  [CACHED_COOKIES]: Cookies | undefined;
  [CACHED_SIGNED]: SignedCookies | undefined;
  [CACHED_BODY]: unknown;
  [ORIGINAL_URL]: string | undefined;
  [ROUTE]: MatchedRoute | null;
  [RESPONSE]: RequestResponse | null;
  /** `req.signal`'s controller, once read (or aborted by a shutdown). */
  [SIGNAL]: AbortController | undefined;
  /** `req.log`, made on its first read (or set by a middleware, as pino-http does). */
  [LOG]: RequestLog | undefined;
  /** Its message on the `cog.request` tracing channel, while someone subscribes. */
  [TRACED]: TracedRequest | undefined;
  /** The host serving it (on the prototype: see `forApp`). */
  readonly [HOST]: EngineHost;
}
/** What `req.signal` needs of the response: its 'close', and whether it finished first. */
interface RequestResponse {
  readonly writableFinished: boolean;
  /** Cut, or its client gone: its 'close' is emitted or on its way. */
  readonly destroyed: boolean;
  once(event: "close", listener: () => void): unknown;
}
type Internal = RequestInternals;
/** A request's internal state (a cast, which V8 compiles away). */
const own = (req: object) => req as Internal;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a base class for `extends`: TypeScript takes only `any[]` constructor arguments there (TS2545)
type EngineRequestClass = abstract new (...args: any[]) => EngineRequest & EngineRequestMethods;

/**
 * Cog's request helpers, added by the host (`EngineHost.requestClass`) over an engine's bare
 * request class: on the node engine that is Node's IncomingMessage with the engine's body side, on
 * the native engine a class of Cog's own (src/engines/native/request.ts). The helpers are written
 * over what the contract's `EngineRequestMethods` declares, which the engine provides. Every
 * helper parses lazily, on first read, and caches: a route that never reads cookies never
 * parses them.
 */
export function withRequestHelpers<Base extends EngineRequestClass>(Base: Base) {
  abstract class RequestHelpers extends Base {
    /** Route params: `/users/:id` gives `req.params.id`; a trailing `*` gives `req.params["*"]`. */
    declare params: Params;
    /** The raw body, buffered before the chain runs when the request has one. */
    declare rawBody: Buffer | undefined;
    /** Express body parsers skip a request whose `_body` is true; Cog sets it once it has read the body. */
    declare _body: boolean;
    /** The path a `use("/prefix", mw)` middleware is mounted at, while it runs (Express's `req.baseUrl`); "" elsewhere. */
    declare baseUrl: string;
    /** The app serving this request. */
    declare readonly app: RequestApp;

    /**
     * This request's id when the app has a `logger`: the one in its log lines and in the
     * response's X-Request-Id (taken from the request's X-Request-Id with `trustRequestId`).
     * Without a logger Cog leaves it undefined, for a middleware of the app's own to set.
     */
    declare id: string | undefined;

    /**
     * With a `logger`, a logger bound to this request's id (`req.id`): with a pino `logger`, its
     * child (`logger.child({ id })`); with `logger: true` or a function, Cog's, whose lines go
     * where the access log's go. Made on first read. Without a logger Cog leaves it undefined, as
     * `req.id`, for a middleware to set (pino-http sets it only where it is undefined).
     */
    get log(): RequestLog | undefined {
      const made = own(this)[LOG];
      if (made !== undefined) return made;
      const logger = own(this)[SETTINGS].logger;
      return logger === null ? undefined : (own(this)[LOG] = logger.child(this as never));
    }
    set log(log: RequestLog | undefined) {
      own(this)[LOG] = log;
    }

    /**
     * "https" when the request came over TLS, else "http". With `trustProxy`, the proxy's
     * X-Forwarded-Proto (its first value) is believed instead, as a TLS-terminating proxy says
     * what the client used.
     */
    get protocol(): "http" | "https" {
      const trust = own(this)[SETTINGS].trustProxy;
      if (trust !== false && trust !== 0) {
        const forwarded = this.firstHeader("x-forwarded-proto");
        if (forwarded !== undefined) return forwarded.split(",", 1)[0]!.trim().toLowerCase() === "https" ? "https" : "http";
      }
      return this.encrypted ? "https" : "http";
    }

    /** `req.protocol === "https"`. */
    get secure(): boolean {
      return this.protocol === "https";
    }

    /**
     * An AbortSignal that fires when the client goes away before the response is finished (the
     * connection closed): hand it to `fetch`, database queries, timers, or an SSE loop, so that
     * their work stops with the client. Made on first read.
     */
    get signal(): AbortSignal {
      return signalOf(this).signal;
    }

    /**
     * Reads a multipart/form-data body (an upload form): resolves with its fields, each file
     * handed to `options.onFile` as a stream while the body arrives. Limits (file size, files,
     * fields, parts) answer 413 past them; a malformed body 400; one that isn't multipart 415.
     */
    multipart(options: MultipartOptions = {}): Promise<FormFields> {
      return import("./multipart.js").then(({ readMultipart }) => readMultipart(this as unknown as Request, options));
    }

    /**
     * The pattern of the route that matched, group prefixes included (`/users/:id`,
     * `/files/*`): the same for every request it matched, so a label for metrics and a name
     * for spans. Undefined when no route matched: a 404, a 405, and in middleware that runs
     * for them.
     */
    get route(): string | undefined {
      return own(this)[ROUTE]?.path;
    }
    set route(route: string | undefined) {
      // Someone else's router (Express's) may set its own: it is theirs from then on.
      Object.defineProperty(this, "route", { value: route, writable: true, configurable: true, enumerable: true });
    }

    /** The path without the query string, as sent (not decoded); inside a mounted middleware, the part below its prefix. */
    get path(): string {
      if (own(this)[CACHED_PATH] === undefined) own(this)[CACHED_PATH] = pathOf(this.url ?? "/");
      return own(this)[CACHED_PATH]!;
    }
    set path(path: string) {
      own(this)[CACHED_PATH] = path;
    }

    /** The URL as the client sent it, whatever a mounted middleware's `req.url` says (Express's `req.originalUrl`). */
    get originalUrl(): string {
      return own(this)[ORIGINAL_URL] ?? this.url ?? "/";
    }
    set originalUrl(url: string) {
      own(this)[ORIGINAL_URL] = url;
    }

    /**
     * The query string as an object; a repeated key gives an array. Keys are never nested
     * (`a[b]=1` is the key "a[b]"), so there is no depth to abuse. More than `maxFields` fields
     * throw an HttpError(414).
     */
    get query(): Query {
      if (own(this)[CACHED_QUERY] === undefined) {
        const url = this.url ?? "";
        const q = url.indexOf("?");
        if (q === -1) {
          own(this)[CACHED_QUERY] = Object.create(null);
        } else {
          const search = url.slice(q + 1);
          const max = own(this)[SETTINGS].maxFields;
          if (countFields(search, max) > max) throw new HttpError(414, `Query string has more than ${max} fields; raise the maxFields option to accept it`);
          own(this)[CACHED_QUERY] = parseQueryString(search) as Query;
        }
      }
      return own(this)[CACHED_QUERY]!;
    }
    set query(query: Query) {
      own(this)[CACHED_QUERY] = query;
    }

    /** Cookies by name. Never throws: a malformed percent-encoding leaves the raw value. */
    get cookies(): Cookies {
      if (own(this)[CACHED_COOKIES] === undefined) {
        const header = this.headerValue("cookie");
        own(this)[CACHED_COOKIES] = header === undefined ? Object.create(null) : parseCookie(header);
      }
      return own(this)[CACHED_COOKIES]!;
    }
    /** Assignable, so cookie parsers (cookie-parser) can set it. */
    set cookies(cookies: Cookies) {
      own(this)[CACHED_COOKIES] = cookies;
    }

    /**
     * Cookies set with `res.setCookie(name, value, { signed: true })`, checked against the app's
     * `secret`: the value when the signature holds, `false` when it does not. Only signed cookies
     * are listed; with no `secret`, none are.
     */
    get signedCookies(): SignedCookies {
      return (own(this)[CACHED_SIGNED] ??= unsignCookies(this.cookies, own(this)[SETTINGS].secrets));
    }
    /** Assignable, so cookie-parser can set it. */
    set signedCookies(cookies: SignedCookies) {
      own(this)[CACHED_SIGNED] = cookies;
    }

    /**
     * The body parsed by Content-Type: JSON, urlencoded (object), text/* (string), anything else
     * the raw Buffer; undefined without a body. Malformed JSON throws an HttpError(400) from
     * here, which reaches the error handler like any throw.
     */
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- its type is the Content-Type's; `any` keeps `req.body.name` usable, as Express types it
    get body(): any {
      if (own(this)[CACHED_BODY] === UNSET) {
        const type = this.firstHeader("content-type");
        const raw = this.rawBody ?? (type !== undefined && declaresEmptyBody(this) ? EMPTY : undefined);
        // Read before the body arrived (a tool that records the request as it starts, as Sentry
        // does): undefined for now, not for good.
        if (raw === undefined) return undefined;
        own(this)[CACHED_BODY] = parseBody(raw, type, own(this)[SETTINGS]);
      }
      return own(this)[CACHED_BODY];
    }
    /** Assignable, so Express body parsers and users' own middleware can set it. */
    set body(body: unknown) {
      own(this)[CACHED_BODY] = body;
    }

    /** A header's value by case-insensitive name (`Referer` and `Referrer` are one). */
    get(name: string): string | undefined {
      const key = name.toLowerCase();
      const value = this.headers[key === "referrer" ? "referer" : key];
      return Array.isArray(value) ? value.join(", ") : value;
    }

    /** Express's name for `get`. */
    header(name: string): string | undefined {
      return this.get(name);
    }

    /**
     * The client's address. Only with the `trustProxy` option is X-Forwarded-For believed:
     * `true` takes its leftmost address, a number N the address N hops back (the proxies
     * closest to us appear last).
     */
    get ip(): string | undefined {
      const remote = this.remoteAddress;
      const trust = own(this)[SETTINGS].trustProxy;
      if (trust === false || trust === 0) return remote;
      const header = this.get("x-forwarded-for");
      if (header === undefined) return remote;
      const hops = header
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      if (hops.length === 0) return remote;
      if (trust === true) return hops[0];
      return hops[Math.max(0, hops.length - trust)];
    }
  }
  Object.assign(RequestHelpers.prototype, {
    params: NO_PARAMS,
    rawBody: undefined,
    id: undefined,
    _body: false,
    baseUrl: "",
    [SETTINGS]: DEFAULT_SETTINGS,
    [CACHED_PATH]: undefined,
    [CACHED_QUERY]: undefined,
    [CACHED_COOKIES]: undefined,
    [CACHED_SIGNED]: undefined,
    [CACHED_BODY]: UNSET,
    [ORIGINAL_URL]: undefined,
    [ROUTE]: null,
    [RESPONSE]: null,
    [SIGNAL]: undefined,
    [TRACED]: undefined,
    [LOG]: undefined,
  });
  return RequestHelpers;
}

/**
 * A subclass of an engine's request class for one app (`EngineHost.requestClass`): the app, its
 * settings and the host sit on the prototype, so requests carry them without a store per request.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a base class for `extends`: TypeScript takes only `any[]` constructor arguments there (TS2545)
export function forApp<Class extends abstract new (...args: any[]) => object>(Base: Class, app: object, settings: RequestSettings, host: EngineHost): Class {
  abstract class AppRequest extends Base {}
  own(AppRequest.prototype)[SETTINGS] = settings;
  (AppRequest.prototype as { [HOST]?: EngineHost })[HOST] = host;
  Object.defineProperty(AppRequest.prototype, "app", { value: app, writable: true, configurable: true });
  return AppRequest;
}

/**
 * The request handed to handlers, on every engine: Cog's helpers over Node's IncomingMessage
 * surface. An interface, so that an app can declare what its middleware adds:
 * `declare module "cog-http" { interface Request { user?: User } }`.
 */

export interface Request extends RequestHelpers {}
type RequestHelpers = InstanceType<ReturnType<typeof withRequestHelpers<abstract new () => RequestSurface & EngineRequestMethods>>>;

/** A request as Cog's own code sees it: with its internal state. @internal */
export type InternalRequest = Request & RequestInternals;

/** The request a route's handlers see: `req.params` typed from the route's path (see `PathParams`). */
export type RouteRequest<P> = Omit<Request, "params"> & { params: P };

/** Older name of `Request`. */
export type CogRequest = Request;

/** The body of a request that sent `Content-Length: 0`: read as any empty body is (empty JSON is a 400, as chunked). */
const EMPTY = Buffer.alloc(0);
function declaresEmptyBody(req: { firstHeader(name: string): string | undefined }): boolean {
  const length = req.firstHeader("content-length");
  return length !== undefined && Number(length) === 0;
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
