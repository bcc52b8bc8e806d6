import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Handler } from "./chain.js";
import type { NodeMiddleware } from "../http/handler.js";
import { pathOf } from "../base/path.js";
import type { InternalRequest, Request, RouteRequest } from "../http/request.js";
import { checkPath, joinPaths, normalizePattern, type JoinedPath, type PathParams } from "./router.js";
import type { RouteOptions, RouteSchema, SchemaRequest, SchemaResponse } from "../schema/types.js";
import { upgradeHandler } from "../websocket/route.js";
import type { Topics } from "../websocket/topics.js";
import { checkWebSocketRoute, resolveWebSocketOptions, type WebSocketHandlers, type WebSocketOptions } from "../websocket/types.js";
import { CACHED_PATH } from "../base/symbols.js";

type NodeRequest = IncomingMessage | Http2ServerRequest;
type NodeResponse = ServerResponse | Http2ServerResponse;
type AnyFunction = (...args: never[]) => unknown;

/**
 * A route-registering method: `(path, ...handlers)`, whose handlers see `req.params` typed from
 * the path (`"/users/:id"` -> `{ id: string }`, under the group's `Prefix`), or
 * `(path, { schema }, ...handlers)`, whose handlers see `req.body`, `req.query`, `req.params` and
 * `res.json` typed from the schema (the schema's params type wins over the path's).
 */
export interface AddRoute<This, Prefix extends string = ""> {
  <const Path extends string, const S extends RouteSchema>(
    path: Path,
    options: RouteOptions<S>,
    ...handlers: Array<Handler<SchemaRequest<S, PathParams<JoinedPath<Prefix, Path>>>, SchemaResponse<S>>>
  ): This;
  <const Path extends string>(path: Path, ...handlers: Array<Handler<RouteRequest<PathParams<JoinedPath<Prefix, Path>>>>>): This;
}

// Checked at run time (`route`): the typed overloads are `AddRoute`'s.
type RouteArgs = unknown[];

/** A middleware registered with `use`, and the path prefix it is limited to ("/" for all). */
export interface Layer {
  readonly prefix: string;
  readonly handler: Handler;
  /** Registration order across all groups, so 404/405 chains keep it too. */
  readonly order: number;
}

/** Where a group sends what it registers: the app's routes (src/core/routes.ts). */
export interface Registry {
  /** `webSocket`: an `app.ws` route, which the OpenAPI document leaves out. */
  addRoute(group: Group, method: string, path: string, handlers: Handler[], options: RouteOptions | undefined, webSocket?: boolean): void;
  /** The app's topics, for a WebSocket route (the app then serves WebSockets). */
  webSockets(): Topics;
  nextOrder(): number;
  layersChanged(): void;
}

/**
 * Route registration shared by the app and its groups. A group has a path prefix and middleware
 * of its own, which apply to the routes registered inside it (and to its nested groups) after
 * the `use` call.
 */
export class Group<Prefix extends string = ""> {
  readonly layers: Layer[] = [];
  /** Nested groups, so middleware of theirs can also run for unmatched paths under their prefix. */
  readonly children: Group<string>[] = [];

  constructor(
    protected readonly registry: Registry,
    readonly prefix: string,
    readonly parent: Group<string> | null,
  ) {}

  /**
   * Adds middleware. `use(mw)` and `use("*", mw)` run it for every request of this group;
   * `use("/prefix", mw)` only for paths under that prefix (a whole segment: `/admin` covers
   * `/admin/x`, never `/adminx`), and, as in Express, with the prefix taken off `req.url` while
   * it runs (`req.baseUrl` holds it, `req.originalUrl` the whole URL), so static file servers
   * and routers mounted there see the paths they serve.
   */
  use(...handlers: Handler[]): this;
  use(path: string, ...handlers: Handler[]): this;
  /** Middleware typed for Node's or Express's own classes (`NodeMiddleware`): Connect's node handler, helmet, express-rate-limit… */
  use<Req extends NodeRequest, Res extends NodeResponse>(...handlers: NodeMiddleware<Req, Res>[]): this;
  use<Req extends NodeRequest, Res extends NodeResponse>(path: string, ...handlers: NodeMiddleware<Req, Res>[]): this;
  // Node's middleware is called as Cog's is: assertHandler checks it is a function.
  use(pathOrHandler: string | Handler | AnyFunction, ...handlers: (Handler | AnyFunction)[]): this {
    let path = "/";
    if (typeof pathOrHandler === "function") handlers.unshift(pathOrHandler);
    else if (pathOrHandler === "*" || pathOrHandler === "/*") path = "/";
    else path = normalizePattern(checkPath(pathOrHandler, "use()"));
    if (handlers.length === 0) throw new TypeError("use() needs at least one middleware function");
    const prefix = joinPaths(this.prefix, path);
    for (const handler of handlers) {
      assertHandler(handler, `use(${JSON.stringify(path)})`);
      const adapted = adapt(handler);
      this.layers.push({ prefix, handler: path === "/" ? adapted : mounted(prefix, adapted), order: this.registry.nextOrder() });
    }
    this.registry.layersChanged();
    return this;
  }

  readonly get: AddRoute<this, Prefix> = (path: string, ...args: RouteArgs) => this.route("GET", path, args);
  readonly post: AddRoute<this, Prefix> = (path: string, ...args: RouteArgs) => this.route("POST", path, args);
  readonly put: AddRoute<this, Prefix> = (path: string, ...args: RouteArgs) => this.route("PUT", path, args);
  readonly patch: AddRoute<this, Prefix> = (path: string, ...args: RouteArgs) => this.route("PATCH", path, args);
  readonly delete: AddRoute<this, Prefix> = (path: string, ...args: RouteArgs) => this.route("DELETE", path, args);
  readonly head: AddRoute<this, Prefix> = (path: string, ...args: RouteArgs) => this.route("HEAD", path, args);
  readonly options: AddRoute<this, Prefix> = (path: string, ...args: RouteArgs) => this.route("OPTIONS", path, args);
  /**
   * QUERY (RFC 10008): a safe, idempotent request with a body that says what to answer, a GET
   * whose query is too big or too structured for the URL. Its body is read as POST's
   * (`req.body`). On the node engine, Node 20.19.3+ or 22.2+ parse the method (older Node answers
   * 400 itself); see docs/guide/routing.md.
   */
  readonly query: AddRoute<this, Prefix> = (path: string, ...args: RouteArgs) => this.route("QUERY", path, args);
  /** Every method on this path. */
  readonly all: AddRoute<this, Prefix> = (path: string, ...args: RouteArgs) => this.route("*", path, args);

  /**
   * A WebSocket endpoint: a GET route whose middleware (the app's, as for any route) runs on the
   * upgrade request, then the `upgrade` hook, then the handshake; `handlers` follow the socket's
   * life. A request that is not a WebSocket handshake gets 426. See docs/guide/websockets.md.
   */
  ws<Data = undefined>(path: string, handlers: WebSocketHandlers<Data>, options: WebSocketOptions = {}): this {
    const where = `WebSocket route ${joinPaths(this.prefix, path)}`;
    if (handlers === null || typeof handlers !== "object")
      throw new TypeError(`${where}: handlers must be an object of { upgrade?, open?, message?, drain?, close? }`);
    if (options === null || typeof options !== "object")
      throw new TypeError(`${where}: options must be an object of { maxPayload?, idleTimeout?, maxBackpressure?, onBackpressure?, perMessageDeflate? }`);
    checkWebSocketRoute(handlers, options, where);
    for (const name of ["upgrade", "open", "message", "drain", "close"] as const) {
      if (handlers[name] !== undefined && typeof handlers[name] !== "function") throw new TypeError(`${where}: handlers.${name} must be a function`);
    }
    const handler = upgradeHandler(handlers as WebSocketHandlers<unknown>, resolveWebSocketOptions(options, where), this.registry.webSockets());
    return this.route("GET", path, [handler], true);
  }

  /**
   * Routes under a common prefix with middleware of their own: `app.group("/admin", (admin) => …)`.
   * The prefix's params are typed in its routes' `req.params` too.
   */
  group<const G extends string>(prefix: G, define: (group: Group<JoinedPath<Prefix, G>>) => void): this {
    const child = new Group<JoinedPath<Prefix, G>>(this.registry, joinPaths(this.prefix, checkPath(prefix, "group()")), this);
    this.children.push(child);
    define(child);
    return this;
  }

  protected route(method: string, path: string, args: RouteArgs, webSocket = false): this {
    const first = args[0];
    const options = typeof first === "object" && first !== null ? (first as RouteOptions) : undefined;
    const handlers = (options === undefined ? args : args.slice(1)) as Handler[];
    checkPath(path, `${method === "*" ? "ALL" : method} ${String(path)}`);
    if (handlers.length === 0) throw new TypeError(`Route ${method} ${path} needs at least one handler`);
    for (const handler of handlers) assertHandler(handler, `${method} ${path}`);
    this.registry.addRoute(this, method, path, handlers, options, webSocket);
    return this;
  }
}

function assertHandler(handler: unknown, where: string): asserts handler is Handler {
  if (typeof handler !== "function") throw new TypeError(`${where}: expected a function, got ${handler === null ? "null" : typeof handler}`);
}

/**
 * Runs `handler` with `prefix` (a pattern: its `:params` match any segment) taken off `req.url`
 * and put in `req.baseUrl`, as Express's `app.use(path, mw)` does; both are restored when it
 * calls `next`.
 */
function mounted(prefix: string, handler: Handler): Handler {
  const segments = prefix.split("/").length - 1;
  const run: Handler = (req, res, next) => {
    const url = req.url!;
    const path = pathOf(url);
    let cut = 0;
    for (let i = 0; i < segments && cut !== -1; i++) cut = path.indexOf("/", cut + 1);
    if (cut === -1) cut = path.length;
    const base = req.baseUrl;
    const rest = url.slice(cut);
    // eslint-disable-next-line no-self-assign -- the getter's value (req.url, as sent) is stored before req.url changes
    req.originalUrl = req.originalUrl;
    req.url = rest.charCodeAt(0) === 47 /* / */ ? rest : `/${rest}`;
    req.baseUrl = base + url.slice(0, cut);
    (req as InternalRequest)[CACHED_PATH] = undefined;
    let restored = false;
    return handler(req, res, (err) => {
      if (!restored) {
        restored = true;
        req.url = url;
        req.baseUrl = base;
        (req as InternalRequest)[CACHED_PATH] = undefined;
      }
      next(err);
    });
  };
  return named(run, handler);
}

/**
 * The few adjustments the field's middleware needs. cookie-parser skips a request whose
 * `req.cookies` is already set, and Cog's is always there (parsed on first read), so it would
 * never verify signed cookies: while it runs, `req.cookies` is left to it.
 */
function adapt(handler: Handler): Handler {
  if (handler.name !== "cookieParser") return handler;
  const run: Handler = (req, res, next) => {
    Object.defineProperty(req, "cookies", { value: undefined, writable: true, configurable: true, enumerable: true });
    return handler(req as Request, res, next);
  };
  return named(run, handler);
}

/** Keeps the middleware's name on its wrapper, for error messages. */
function named(wrapper: Handler, handler: Handler): Handler {
  return Object.defineProperty(wrapper, "name", { value: handler.name });
}
