import type { ServerOptions } from "node:http";
import { runChain, type ChainOwner, type Handler } from "./chain.js";
import type { Address, Engine } from "./engines/engine.js";
import { NodeEngine, type NodeEngineSwitches } from "./engines/node/engine.js";
import { NativeEngine } from "./engines/native/engine.js";
import { nativeUnavailable } from "./engines/native/load.js";
import { HttpError, errorBody, statusOf } from "./errors.js";
import { inspectHead, NO_BODY, pathOf } from "./head.js";
import { resolveLimits, type Limits } from "./limits.js";
import { CogRequest, decodeParam, type Params, type RequestSettings } from "./request.js";
import type { CogResponse } from "./response.js";
import { Router, joinPaths, prefixCoverage, prefixMatcher, type Match } from "./router.js";
import { compileSerializers, compileValidation, type Serializer } from "./schema/compile.js";
import { buildOpenApi, type OpenApiInfo, type RouteInfo } from "./schema/openapi.js";
import type { RouteOptions } from "./schema/types.js";
import { Scope, type Layer, type Registry } from "./scope.js";
import { inject, type InjectOptions, type InjectResponse } from "./testing.js";

export type EngineName = "node" | "native" | "auto";
const ENGINES: readonly EngineName[] = ["node", "native", "auto"];

/** Every limit and timeout is an option; see `Limits` for what each means and README for the defaults. */
export interface CogOptions extends Partial<Limits> {
  /**
   * What serves HTTP (handlers don't change):
   * - "node": node:http, the default;
   * - "native": Cog's own engine in Rust (a Node-API addon built at install when Rust is present);
   * - "auto": "native" where its addon loads, else "node".
   * `listen` fails with what to do when "native" can't load.
   */
  engine?: EngineName;
  /**
   * Refuse requests a correct origin server must reject but Node lets through
   * (HTTP versions other than 1.0/1.1, duplicate or malformed Host,
   * Transfer-Encoding on HTTP/1.0, conflicting Content-Length, dot segments).
   * Default true.
   */
  strict?: boolean;
  /** Believe X-Forwarded-For for `req.ip`: `true` for any proxy, N for N proxies in front. Default false. */
  trustProxy?: boolean | number;
  /** Log errors that become 5xx responses (to stderr). Default true. */
  logErrors?: boolean;
  /** Further options for `http.createServer` (node engine only); they override those Cog derives from its limits. */
  server?: ServerOptions;
  /**
   * Node engine only. Hold each answer once `res.end()` has buffered it and write the held ones
   * together, 16 at a time or at the end of the event loop's round, so that a client on the same
   * host (a proxy, a load generator) is woken once per slice rather than once per answer.
   * Relies on Node's socket internals (src/engines/node/writes.ts, checked by
   * test/node-internals.test.ts): turn it off if a Node release breaks them, or to have every
   * answer written the moment it ends. Default true.
   */
  sliceWrites?: boolean;
  /**
   * Node engine only, on Linux where Cog's native addon is built (not in cluster workers). Each
   * time Node accepts a connection, accept the others waiting in the kernel's queue too (up to
   * 1024), so that a burst of clients is let in at once rather than one per turn of the event loop.
   * Relies on Node's net.Server internals (src/engines/node/accept.ts, checked by
   * test/node-internals.test.ts): turn it off if a Node release breaks them, or to accept
   * exactly as Node does. Default true.
   */
  drainAcceptQueue?: boolean;
}

export type ErrorHandler = (err: unknown, req: CogRequest, res: CogResponse) => unknown;
export type NotFoundHandler = (req: CogRequest, res: CogResponse) => unknown;

/** One registered route, compiled: its whole middleware + handler chain, decided at registration. */
interface Route {
  readonly handlers: Handler[];
  readonly paramNames: string[];
  readonly serializers: Map<number, Serializer> | null;
}

/**
 * The application: register routes and middleware, then `listen`.
 *
 * Each route's chain (the middleware that applies to it, then its handlers) is
 * built when the route is registered, so a request costs one router lookup and
 * the calls themselves. `use` applies to the routes registered after it, as in
 * Express; it also runs for requests that match no route (before the 404/405).
 */
export class Cog extends Scope implements ChainOwner {
  private readonly router = new Router<Route>();
  private readonly settings: RequestSettings;
  private readonly limits: Limits;
  private readonly strict: boolean;
  private readonly engineName: EngineName;
  private readonly logErrors: boolean;
  private readonly serverOptions: ServerOptions;
  private readonly nodeSwitches: NodeEngineSwitches;
  private errorHandler: ErrorHandler | null = null;
  private notFoundHandler: NotFoundHandler | null = null;
  /** Middleware for requests that match no route, rebuilt when `use` adds some. */
  private fallbackLayers: Handler[] | null = null;
  private engine: Engine | null = null;
  private readonly routes: RouteInfo[] = [];
  private closing = false;
  private order = 0;

  constructor(options: CogOptions = {}) {
    const registry: Registry = {
      addRoute: (scope, method, path, handlers, options) => this.addRoute(scope, method, path, handlers, options),
      nextOrder: () => this.order++,
      layersChanged: () => {
        this.fallbackLayers = null;
      },
    };
    super(registry, "/", null);
    this.limits = resolveLimits(options);
    this.strict = options.strict ?? true;
    this.engineName = options.engine ?? "node";
    if ((this.engineName as string) === "uws") {
      throw new RangeError('engine "uws" was retired: use engine: "native", Cog\'s own engine, which serves what a bare uWebSockets.js server serves without its install problems (see docs/engines.md)');
    }
    if (!ENGINES.includes(this.engineName)) throw new RangeError(`engine must be one of ${ENGINES.map((e) => `"${e}"`).join(", ")}; got ${String(this.engineName)}`);
    this.settings = { trustProxy: options.trustProxy ?? false, maxFields: this.limits.maxFields, maxJsonDepth: this.limits.maxJsonDepth };
    this.logErrors = options.logErrors ?? true;
    this.serverOptions = options.server ?? {};
    this.nodeSwitches = { sliceWrites: options.sliceWrites ?? true, drainAcceptQueue: options.drainAcceptQueue ?? true };
  }

  /** Replaces the default error response (JSON `{statusCode, error, message}`). */
  onError(handler: ErrorHandler): this {
    this.errorHandler = handler;
    return this;
  }

  /** Replaces the default 404 response. */
  notFound(handler: NotFoundHandler): this {
    this.notFoundHandler = handler;
    return this;
  }

  /**
   * Starts serving. Resolves with the address once listening (port 0 picks a
   * free port); the callback, if given, is called then too.
   */
  listen(port = 3000, host?: string | (() => void), callback?: () => void): Promise<Address> {
    if (typeof host === "function") {
      callback = host;
      host = undefined;
    }
    if (this.engine !== null) return Promise.reject(new Error("This app is already listening; create another Cog to serve twice"));
    const engine = this.createEngine();
    this.engine = engine;
    this.closing = false;
    return engine.listen(port, host).then(
      (address) => {
        callback?.();
        return address;
      },
      (err: unknown) => {
        // Nothing is listening: let a later listen() try again.
        this.engine = null;
        throw err;
      },
    );
  }

  private createEngine(): Engine {
    switch (this.engineName) {
      case "native":
        return new NativeEngine(this.dispatch, this.limits, this.settings, this.strict);
      case "auto":
        if (nativeUnavailable() === null) return new NativeEngine(this.dispatch, this.limits, this.settings, this.strict);
        return new NodeEngine(this.dispatch, this.limits, this.settings, this.serverOptions, this.nodeSwitches);
      default:
        return new NodeEngine(this.dispatch, this.limits, this.settings, this.serverOptions, this.nodeSwitches);
    }
  }

  /** The underlying `http.Server` once listening (for upgrades, or tuning timeouts). */
  get server(): NodeEngine["server"] | undefined {
    return this.engine instanceof NodeEngine ? this.engine.server : undefined;
  }

  /**
   * Stops accepting connections, lets in-flight requests finish (new requests
   * on open connections get 503), and resolves when all is closed. Connections
   * still busy after `drainMs` are cut.
   */
  async close(drainMs = 10_000): Promise<void> {
    const engine = this.engine;
    if (engine === null) return;
    this.closing = true;
    await engine.close(drainMs);
    this.engine = null;
  }

  /** Answers a request without a socket, for tests: `await app.inject({ method: "GET", url: "/" })`. */
  inject(options: InjectOptions | string): Promise<InjectResponse> {
    return inject(this.dispatch, this.settings, options);
  }

  /** The entry point for every request, bound so engines can call it directly. */
  readonly dispatch = (req: CogRequest, res: CogResponse): void => {
    if (this.closing) return this.refuseWhileClosing(req, res);
    let length: number;
    try {
      length = req.checkedHead?.() ?? inspectHead(req, this.limits, this.strict);
    } catch (err) {
      // The request broke a rule of HTTP or a limit: answer it, then close rather than guess what follows.
      res.shouldKeepAlive = false;
      return this.fail(err, req, res);
    }
    const path = req.cachedPath ?? pathOf(req.url!);
    const match = this.router.find(req.method!, path);
    if (match === null || match.data === null) return this.unmatched(req, res, match);
    const route = match.data;
    if (route.serializers !== null) res.serializers = route.serializers;
    if (match.values !== null) {
      try {
        req.params = buildParams(route.paramNames, match.values, this.limits.maxParamLength);
      } catch (err) {
        return this.fail(err, req, res);
      }
    }
    if (length !== NO_BODY) return this.receive(req, res, route.handlers, length);
    runChain(route.handlers, req, res, this);
  };

  /** Buffers the body (within the limit) before the chain runs, so `req.body` can be read synchronously. */
  private receive(req: CogRequest, res: CogResponse, handlers: Handler[], length: number): void {
    req.receiveBody(length, this.limits.bodyLimit, (err, body) => {
      if (err !== null) {
        // The rest of the body is never read: close the connection after answering.
        res.shouldKeepAlive = false;
        return this.fail(err, req, res);
      }
      req.rawBody = body!;
      req._body = true;
      runChain(handlers, req, res, this);
    });
  }

  private unmatched(req: CogRequest, res: CogResponse, match: Match<Route> | null): void {
    const final: Handler =
      match === null
        ? () => this.fallThrough(req, res)
        : req.method === "OPTIONS"
          ? () => {
              res.set("allow", match.allow);
              res.send(undefined, 204);
            }
          : () => this.fail(new HttpError(405, `Method ${req.method} is not allowed on ${req.path}; allowed: ${match.allow}`, { headers: { allow: match.allow } }), req, res);
    runChain([...this.fallbackChain(), final], req, res, this);
  }

  private refuseWhileClosing(req: CogRequest, res: CogResponse): void {
    res.shouldKeepAlive = false;
    res.set("connection", "close");
    this.fail(new HttpError(503, "The server is shutting down; retry on a new connection"), req, res);
  }

  /** Every `use` middleware, each limited at run time to its prefix, in registration order. */
  private fallbackChain(): Handler[] {
    if (this.fallbackLayers === null) {
      const layers: Layer[] = [];
      collectLayers(this, layers);
      layers.sort((a, b) => a.order - b.order);
      this.fallbackLayers = layers.map((layer) => guard(layer, prefixMatcher(layer.prefix)));
    }
    return this.fallbackLayers;
  }

  private addRoute(scope: Scope, method: string, path: string, handlers: Handler[], options: RouteOptions | undefined): void {
    const pattern = joinPaths(scope.prefix, path);
    const where = `${method === "*" ? "ALL" : method} ${pattern}`;
    const chain: Handler[] = [];
    const scopes: Scope[] = [];
    for (let s: Scope | null = scope; s !== null; s = s.parent) scopes.unshift(s);
    for (const s of scopes) {
      for (const layer of s.layers) {
        const coverage = prefixCoverage(layer.prefix, pattern);
        if (coverage === "all") chain.push(layer.handler);
        else if (coverage === "some") chain.push(guard(layer, prefixMatcher(layer.prefix)));
      }
    }
    const schema = options?.schema;
    const validate = schema === undefined ? null : compileValidation(schema, where);
    if (validate !== null) chain.push(validate);
    chain.push(...handlers);
    const route: Route = { handlers: chain, paramNames: [], serializers: schema === undefined ? null : compileSerializers(schema.response, where) };
    route.paramNames.push(...this.router.add(method, pattern, route));
    this.routes.push({ method, pattern, paramNames: route.paramNames, schema });
  }

  /**
   * An OpenAPI 3.1 document describing every route: methods, paths, params,
   * schemas and statuses. Serve it with `app.get("/openapi.json", (_req, res) => res.json(app.openapi()))`.
   */
  openapi(info: OpenApiInfo = { title: "Cog API", version: "1.0.0" }): Record<string, unknown> {
    return buildOpenApi(this.routes, info);
  }

  /** Turns any error into a response, whatever state the response is in. */
  fail(err: unknown, req: CogRequest, res: CogResponse): void {
    if (res.writableEnded || res.destroyed) {
      // Already answered (e.g. a handler threw after sending): nothing to send, but don't hide it.
      this.log(err);
      return;
    }
    if (res.headersSent) {
      // Half a response is out; the only honest signal left is to cut the connection.
      this.log(err);
      res.destroy();
      return;
    }
    res.resetHeaders();
    if (this.errorHandler !== null) {
      try {
        const result = this.errorHandler(err, req, res) as PromiseLike<unknown> | undefined;
        if (result !== undefined && result !== null && typeof result.then === "function") {
          result.then(undefined, (e: unknown) => this.defaultError(e, res));
        }
        return;
      } catch (handlerErr) {
        this.log(handlerErr);
        if (res.headersSent) return void res.destroy();
        res.resetHeaders();
      }
    }
    this.defaultError(err, res);
  }

  fallThrough(req: CogRequest, res: CogResponse): void {
    if (this.notFoundHandler !== null) {
      runChain([this.notFoundHandler as Handler], req, res, { fail: (e, rq, rs) => this.fail(e, rq, rs), fallThrough: () => this.defaultNotFound(req, res) });
      return;
    }
    this.defaultNotFound(req, res);
  }

  private defaultNotFound(req: CogRequest, res: CogResponse): void {
    this.fail(new HttpError(404, `Route ${req.method} ${req.path} not found`), req, res);
  }

  private defaultError(err: unknown, res: CogResponse): void {
    if (res.headersSent) return void res.destroy();
    const status = statusOf(err);
    if (status >= 500) this.log(err);
    if (err instanceof HttpError && err.headers !== undefined) res.set(err.headers);
    res.json(errorBody(status, err), status);
  }

  private log(err: unknown): void {
    if (this.logErrors) console.error(err);
  }
}

function collectLayers(scope: Scope, into: Layer[]): void {
  into.push(...scope.layers);
  for (const child of scope.children) collectLayers(child, into);
}

function guard(layer: Layer, applies: (path: string) => boolean): Handler {
  const handler = layer.handler;
  return (req, res, next) => (applies(req.path) ? handler(req, res, next) : next());
}

function buildParams(names: readonly string[], values: readonly string[], maxLength: number): Params {
  const params: Params = {};
  for (let i = 0; i < names.length; i++) {
    const value = values[i]!;
    if (value.length > maxLength) {
      throw new HttpError(414, `Route param "${names[i]}" is longer than ${maxLength} characters; raise the maxParamLength option to accept it`);
    }
    params[names[i]!] = decodeParam(value);
  }
  return params;
}
