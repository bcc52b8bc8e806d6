import type { Server, ServerOptions } from "node:http";
import { availableParallelism } from "node:os";
import { debuglog } from "node:util";
import { describe, runChain, type ChainOwner, type Handler } from "./chain.js";
import type { Address, Engine, EngineConfig, HeadVerdict } from "./engines/engine.js";
import { tooLarge } from "./body.js";
import { compress } from "./compress.js";
import { HttpError, errorBody, statusOf } from "./errors.js";
import { NO_BODY, Refusal, pathOf } from "./head.js";
import { resolveLimits, type Limits } from "./limits.js";
import { REPORT, WARN, hintFor, whereOf } from "./log.js";
import { RequestLogger, type LoggerOption } from "./logger.js";
import { RESPONSE, ROUTE, decodeParam, type InternalRequest, type Params, type Request, type RequestSettings } from "./request.js";
import { SERIALIZERS, WATCH, resetForError, type InternalResponse, type Response } from "./response.js";
import { Router, joinPaths, prefixCoverage, prefixMatcher, type Match } from "./router.js";
import { compileSerializers, compileValidation, type Serializer } from "./schema/compile.js";
import { buildOpenApi, type OpenApiInfo, type RouteInfo } from "./schema/openapi.js";
import type { OpenApiDocument } from "./schema/openapi-document.js";
import type { RouteOptions } from "./schema/types.js";
import { Scope, type Layer, type Registry } from "./scope.js";
import { secretsOf } from "./signing.js";
import { serverTlsOptions, type TlsOptions } from "./tls.js";
import { UnansweredWatch } from "./unanswered.js";
import type { InjectOptions, InjectResponse } from "./testing.js";
import { Topics, type Broker } from "./websocket/topics.js";
import type { OutgoingData } from "./websocket/types.js";
import type { WorkerPool } from "./workers.js";

export type EngineName = "node" | "native" | "auto";
const ENGINES: readonly EngineName[] = ["node", "native", "auto"];
/** `NODE_DEBUG=cog` prints which engine an app runs on (and, for "auto", why). */
const debug = debuglog("cog");

/** Every limit and timeout is an option; see `Limits` for what each means and README for the defaults. */
export interface CogOptions extends Partial<Limits> {
  /**
   * What serves HTTP (handlers don't change):
   * - "node": node:http, the default;
   * - "native": Cog's own engine in Rust (a Node-API addon, prebuilt for Linux x64 and arm64, built from source elsewhere);
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
  /** Log errors that become 5xx responses, and calls the app should not make, with method, path and route (to stderr, or to the `logger`). Default true. */
  logErrors?: boolean;
  /**
   * An access log: one line per request once it is answered (method, path, route, status, bytes,
   * duration, request id), and the error log with each request's id. `true` writes JSON lines to
   * stdout; a pino logger gets `info`/`error` calls; a function gets each line. Every response
   * then carries the request's id in X-Request-Id (`req.id`). Default false.
   */
  logger?: LoggerOption;
  /**
   * Take a request's id from its X-Request-Id header (when well-formed) instead of making one:
   * turn on only behind a proxy or load balancer that sets it, since clients can send anything.
   * Default false.
   */
  trustRequestId?: boolean;
  /** Signs cookies (`res.setCookie(name, value, { signed: true })`, read back from `req.signedCookies`); a list rotates secrets: the first signs, all are tried. */
  secret?: string | readonly string[];
  /**
   * Serve HTTPS: the certificate and key (PEM), and any other of Node's secure-context options;
   * TLS 1.2 and 1.3 only. Replace the certificate later with `app.setSecureContext`. The native
   * engine serves it with rustls (HTTP/1.1, ALPN "http/1.1"): `key`, `cert`, `passphrase`, `ca`,
   * `requestCert`, `rejectUnauthorized`, `minVersion`/`maxVersion`; it refuses OpenSSL-only options
   * such as `pfx` or `ciphers` (see docs/guide/deployment.md).
   */
  tls?: TlsOptions;
  /**
   * Node engine only. `true`: HTTP/2 over TLS (needs `tls`), with HTTP/1.1 for clients that don't
   * offer h2 by ALPN; `"h2c"`: cleartext HTTP/2 with prior knowledge (no HTTP/1.1), as behind a
   * proxy that speaks h2c. The same handlers serve every protocol.
   */
  http2?: boolean | "h2c";
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
  /**
   * Carries WebSocket publications between the processes (and machines) serving this app, e.g.
   * `redisBroker("redis://…")`: `publish` then reaches subscribers everywhere, at most once, in
   * each publisher's order (docs/guide/websockets.md).
   */
  broker?: Broker;
}

/** Where and how to serve: `app.listen({ port: 8080, workers: "auto" })`. */
export interface ListenOptions {
  /** Default 3000; 0 picks a free port (with workers, one for all of them). */
  port?: number;
  /** Default: every interface ("::", which takes IPv4 too). */
  host?: string;
  /**
   * Serve from this many worker processes sharing the port ("auto": one per core), each
   * re-running the app's entry file as node:cluster does; this process supervises them: it
   * restarts one that dies (with backoff) and, on SIGTERM or SIGINT, drains them all and exits 0.
   * `listen` resolves in this process once every worker listens (and in each worker with its own).
   */
  workers?: number | "auto";
  /** Without workers: on SIGTERM or SIGINT, drain (`close(drainMs)`) and exit 0. Default false (with workers, always on). */
  signals?: boolean;
  /** How long a drain on a signal waits for in-flight requests before cutting them. Default 10000 ms. */
  drainMs?: number;
}

export type ErrorHandler = (err: unknown, req: Request, res: Response) => unknown;
export type NotFoundHandler = (req: Request, res: Response) => unknown;

/** One registered route, compiled: its whole middleware + handler chain, decided at registration. */
interface Route {
  readonly handlers: Handler[];
  /** The largest body it accepts (its `bodyLimit` option, else the app's). */
  readonly bodyLimit: number;
  /** Its handlers read the body as a stream (`body: "stream"`). */
  readonly streamsBody: boolean;
  readonly paramNames: string[];
  readonly serializers: Map<number, Serializer> | null;
  /** `GET /users/:id`, for log lines. */
  readonly where: string;
  /** `/users/:id`: `req.route`. */
  readonly path: string;
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
  private engineName: EngineName;
  private readonly logErrors: boolean;
  /** Warns of handlers that return without answering: outside production, when logging. */
  private readonly unanswered: UnansweredWatch | null;
  private readonly logger: RequestLogger | null;
  private readonly cogOptions: CogOptions;
  private errorHandler: ErrorHandler | null = null;
  private notFoundHandler: NotFoundHandler | null = null;
  /** Middleware for requests that match no route, rebuilt when `use` adds some. */
  private fallbackLayers: Handler[] | null = null;
  /** The engine listening, while it is. */
  private serving: Engine | null = null;
  /** The engine chosen for this app, once `listen` or `inject` has made it. */
  private chosen: "node" | "native" | undefined = undefined;
  /** In the primary of `listen({ workers })`: the worker processes. */
  private workerPool: WorkerPool | null = null;
  /** Removes the SIGTERM/SIGINT handlers of `listen({ signals: true })`. */
  private removeSignals: (() => void) | null = null;
  /** Responses whose handler has not begun to answer, by the time their handler returned (handlerTimeout). */
  private readonly waiting = new Map<unknown, { readonly req: Request; readonly since: number }>();
  private waitingSweep: NodeJS.Timeout | null = null;
  private readonly routes: RouteInfo[] = [];
  private closing = false;
  private starting = false;
  /** The engine `inject` answers through, made on its first use (it does not listen). */
  private injecting: Promise<Engine> | null = null;
  private order = 0;
  /** The app's WebSocket topics, made when a WebSocket route is registered. */
  private topics: Topics | null = null;

  constructor(options: CogOptions = {}) {
    const registry: Registry = {
      addRoute: (scope, method, path, handlers, options) => this.addRoute(scope, method, path, handlers, options),
      nextOrder: () => this.order++,
      webSockets: () => (this.topics ??= new Topics(this.cogOptions.broker ?? null)),
      layersChanged: () => {
        this.fallbackLayers = null;
      },
    };
    super(registry, "/", null);
    this.limits = resolveLimits(options);
    this.strict = options.strict ?? true;
    this.cogOptions = options;
    this.engineName = options.engine ?? "node";
    if ((this.engineName as string) === "uws") {
      throw new RangeError('engine "uws" was retired: use engine: "native", Cog\'s own engine, which serves what a bare uWebSockets.js server serves without its install problems (see docs/engines.md)');
    }
    if (!ENGINES.includes(this.engineName)) throw new RangeError(`engine must be one of ${ENGINES.map((e) => `"${e}"`).join(", ")}; got ${String(this.engineName)}`);
    if (options.http2 !== undefined && options.http2 !== false) {
      if (this.engineName === "native") {
        throw new RangeError('The native engine serves HTTP/1.1 only (cleartext or TLS): http2 needs engine: "node" (or "auto", which picks it), or an HTTP/2-terminating proxy in front of the native engine (see docs/guide/deployment.md)');
      }
      // "auto" picks the engine that can serve what was asked.
      this.engineName = "node";
    }
    if (options.tls !== undefined) serverTlsOptions(options.tls);
    else if (options.http2 === true) throw new TypeError('http2: true serves HTTP/2 over TLS and needs the tls option ({ key, cert }); for cleartext HTTP/2 use http2: "h2c"');
    const route = this.get;
    // Express middleware reads settings with a one-argument `req.app.get(name)`: answer it rather than register a route.
    (this as { get: unknown }).get = (path: string, ...args: unknown[]) => (args.length === 0 ? this.setting(path) : (route as (...a: unknown[]) => this)(path, ...args));
    this.settings = { trustProxy: options.trustProxy ?? false, maxFields: this.limits.maxFields, maxJsonDepth: this.limits.maxJsonDepth, secrets: secretsOf(options.secret) };
    this.logErrors = options.logErrors ?? true;
    const unanswered = this.logErrors && process.env.NODE_ENV !== "production" ? new UnansweredWatch((message, req) => this[WARN](message, req)) : null;
    this.unanswered = unanswered;
    this.returned = unanswered === null ? undefined : (req, res, handler, nextCalled, value) => unanswered.watch(req, res, `the handler ${describe(handler)}`, nextCalled, value);
    if (options.broker !== undefined && (options.broker === null || typeof options.broker.publish !== "function")) throw new TypeError("broker must be a Broker, such as redisBroker(url)");
    this.logger = options.logger === undefined || options.logger === false ? null : new RequestLogger(options.logger, options.trustRequestId ?? false);
  }

  /**
   * What Express's `app.get(name)` answers, for middleware written against Express (express-rate-limit
   * reads "trust proxy"): "trust proxy" is the `trustProxy` option, "env" is NODE_ENV (or
   * "development"); other names are undefined.
   */
  setting(name: string): unknown {
    if (name === "trust proxy") return this.settings.trustProxy;
    if (name === "env") return process.env.NODE_ENV ?? "development";
    return undefined;
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
   * Starts serving. Resolves with the address once listening (port 0 picks a free port); the
   * callback, if given, is called then too. `listen(port, host?)` serves from this process;
   * `listen({ port, host, workers, signals, drainMs })` can also run worker processes on every
   * core and drain on SIGTERM/SIGINT (see `ListenOptions` and docs/guide/deployment.md).
   */
  listen(options: ListenOptions, callback?: () => void): Promise<Address>;
  listen(port?: number, host?: string | (() => void), callback?: () => void): Promise<Address>;
  listen(port: number | ListenOptions = 3000, host?: string | (() => void), callback?: () => void): Promise<Address> {
    if (typeof host === "function") {
      callback = host;
      host = undefined;
    }
    const options: ListenOptions = typeof port === "object" ? port : { port, host };
    const started = this.start(options);
    return callback === undefined ? started : started.then((address) => (callback(), address));
  }

  private async start(options: ListenOptions): Promise<Address> {
    const drainMs = options.drainMs ?? 10_000;
    if (options.workers !== undefined) {
      const workers = await import("./workers.js");
      if (!workers.isCogWorker()) return this.startWorkers(options, drainMs);
      let address: Address;
      try {
        address = await this.serve(Number(process.env[workers.WORKER_PORT]), options.host, true);
      } catch (err) {
        workers.reportListenFailure(err);
        throw err;
      }
      workers.serveAsWorker((ms) => this.close(ms), drainMs);
      return address;
    }
    const address = await this.serve(options.port ?? 3000, options.host, false);
    if (options.signals === true) {
      const { drainOnSignals } = await import("./signals.js");
      this.removeSignals = drainOnSignals(async (signal) => {
        console.error(`cog: ${signal}: draining, up to ${drainMs} ms`);
        await this.close(drainMs);
      });
    }
    return address;
  }

  /** The primary of `workers`: forks them, and answers `close` by draining them. */
  private async startWorkers(options: ListenOptions, drainMs: number): Promise<Address> {
    if (this.serving !== null || this.starting || this.workerPool !== null) throw new Error("This app is already listening; create another Cog to serve twice");
    const requested = options.workers;
    const count = requested === "auto" ? availableParallelism() : requested;
    if (typeof count !== "number" || !Number.isInteger(count) || count < 1) throw new RangeError(`listen({ workers }) takes a whole number of processes (1 or more) or "auto"; got ${String(requested)}`);
    this.starting = true;
    try {
      const { WorkerPool } = await import("./workers.js");
      const { pool, address } = await WorkerPool.start(count, options.port ?? 3000, options.host, drainMs);
      this.workerPool = pool;
      return address;
    } finally {
      this.starting = false;
    }
  }

  /** Listens in this process. `shared`: other processes (Cog's workers) listen on the port too. */
  private async serve(port: number, host: string | undefined, shared: boolean): Promise<Address> {
    if (this.serving !== null || this.starting || this.workerPool !== null) throw new Error("This app is already listening; create another Cog to serve twice");
    this.starting = true;
    this.closing = false;
    try {
      const engine = await this.createEngine(true);
      await this.topics?.start();
      const address = await engine.listen(port, host, shared);
      this.serving = engine;
      this.startWatch();
      return address;
    } finally {
      // On failure nothing is listening: a later listen() may try again.
      this.starting = false;
    }
  }

  /**
   * The engine this app serves with, loaded on demand: an app on one engine never loads the other.
   * `listening`: for `listen` (not `inject`), where "auto" says on stderr when it falls back.
   */
  private async createEngine(listening = false): Promise<Engine> {
    const config: EngineConfig = { app: this, dispatch: this.dispatch, limits: this.limits, settings: this.settings, strict: this.strict, options: this.cogOptions, responseDone: this.logger?.finished ?? null };
    let name: "node" | "native";
    if (this.engineName === "auto") {
      const unavailable = (await import("./engines/native/load.js")).nativeUnavailable();
      name = unavailable === null ? "native" : "node";
      debug('engine "auto" chose %s%s', name, unavailable === null ? ": the native engine loads here" : `, because ${unavailable}`);
      // Serving slower than asked is worth one line, once per listen: an install without the
      // native engine is otherwise found out by its speed. Where "auto" gets native, it says nothing.
      if (listening && unavailable !== null) console.warn(`cog: engine "auto" serves on "node", because ${unavailable}`);
    } else {
      name = this.engineName;
      debug('engine "%s"', name);
    }
    const engine =
      name === "native" ? new (await import("./engines/native/engine.js")).NativeEngine(config) : new (await import("./engines/node/engine.js")).NodeEngine(config);
    if (this.logger !== null) this.logger.bodyBytes = (res) => engine.bodyBytes(res);
    this.chosen = name;
    return engine;
  }

  /**
   * Replaces the TLS certificate and key (any of the `tls` options) without a restart: new
   * connections get the new ones, open connections keep theirs. In the primary of `workers`,
   * call it in each worker instead (e.g. on a message or a signal each worker handles).
   */
  setSecureContext(tls: TlsOptions): void {
    if (this.cogOptions.tls === undefined) throw new Error("setSecureContext needs an app made with the tls option: new Cog({ tls: { key, cert } })");
    const engine = this.serving;
    if (engine === null) throw new Error("setSecureContext works once the app listens; before that, pass the certificate as the tls option");
    engine.setSecureContext!(tls);
  }

  /**
   * The engine this app runs on, "node" or "native" (with `engine: "auto"`, the one it chose;
   * `NODE_DEBUG=cog` also prints it, and why), once `listen` or `inject` has started it;
   * undefined before.
   */
  get engine(): "node" | "native" | undefined {
    return this.chosen;
  }

  /** The underlying `http.Server` once listening, on the node engine only (for upgrades, or tuning timeouts). */
  get server(): Server | undefined {
    return this.serving?.name === "node" ? (this.serving as unknown as { server: Server }).server : undefined;
  }

  /**
   * Stops accepting connections, lets in-flight requests finish (new requests
   * on open connections get 503), and resolves when all is closed. Connections
   * still busy after `drainMs` are cut.
   */
  async close(drainMs = 10_000): Promise<void> {
    this.removeSignals?.();
    this.removeSignals = null;
    const pool = this.workerPool;
    if (pool !== null) {
      await pool.stop();
      this.workerPool = null;
    }
    const engine = this.serving;
    if (engine === null) return;
    this.closing = true;
    await engine.close(drainMs);
    await this.topics?.stop();
    this.serving = null;
    this.stopWatch();
  }

  /** Whether the app has WebSocket routes (its engine then serves upgrades). */
  get servesWebSockets(): boolean {
    return this.topics !== null;
  }

  /**
   * Sends a message to every WebSocket subscribed to `topic`, in this process and, through the
   * app's `broker`, in every other: a string as text, bytes as binary (`isBinary` overrides).
   */
  publish(topic: string, data: OutgoingData, isBinary?: boolean): void {
    this.topics?.publish(topic, data, isBinary, null);
  }

  /** How many WebSockets of this process subscribe to `topic`. */
  subscriberCount(topic: string): number {
    return this.topics?.count(topic) ?? 0;
  }

  /**
   * Answers a request for tests, through this app's engine: `await app.inject({ method: "GET", url: "/" })`.
   * On the node engine it runs in memory (light-my-request); on the native engine over a
   * loopback connection to a server of its own, so the engine's own request, response and
   * header writing are what the test exercises.
   */
  async inject(options: InjectOptions | string): Promise<InjectResponse> {
    this.injecting ??= this.createEngine();
    return (await this.injecting).inject(options);
  }

  /**
   * The entry point for every request, bound so engines can call it directly: the engine has
   * read the head and says what body follows, or why the request is refused.
   */
  readonly dispatch = (req: Request, res: Response, verdict: HeadVerdict): void => {
    (req as InternalRequest)[RESPONSE] = res;
    if (this.logger !== null) this.logger.begin(req, res);
    if (this.closing) return this.refuseWhileClosing(req, res);
    if (typeof verdict !== "number") {
      // The request broke a rule of HTTP or a limit: answer it, then close rather than guess what follows.
      res.shouldKeepAlive = false;
      return this.fail(verdict, req, res);
    }
    const match = this.router.find(req.method!, pathOf(req.url!));
    if (match === null || match.data === null) return this.unmatched(req, res, match);
    const route = match.data;
    (req as InternalRequest)[ROUTE] = route;
    if (route.serializers !== null) (res as InternalResponse)[SERIALIZERS] = route.serializers;
    if (match.values !== null) {
      try {
        req.params = buildParams(route.paramNames, match.values, this.limits.maxParamLength);
      } catch (err) {
        return this.fail(err, req, res);
      }
    }
    if (verdict === NO_BODY) return this.run(route.handlers, req, res);
    if (route.streamsBody || isMultipart(req)) return this.stream(req, res, route, verdict);
    this.receive(req, res, route, verdict);
  };

  /** Buffers the body (within the limit) before the chain runs, so `req.body` can be read synchronously. */
  private receive(req: Request, res: Response, route: Route, length: number): void {
    req.receiveBody(length, route.bodyLimit, (err, body) => {
      if (err !== null) return this.refuseBody(err, req, res);
      const encoding = req.firstHeader("content-encoding");
      if (encoding === undefined) return this.received(body!, req, res, route);
      void import("./inflate.js").then(({ inflateBody }) =>
        inflateBody(body!, encoding, route.bodyLimit, (error, inflated) => (error !== null ? this.refuseBody(error, req, res) : this.received(inflated!, req, res, route))),
      );
    });
  }

  private received(body: Buffer, req: Request, res: Response, route: Route): void {
    req.rawBody = body;
    req._body = true;
    this.run(route.handlers, req, res);
  }

  /** The body is refused (too large, or undecodable): answer, then close the connection rather than read the rest. */
  private refuseBody(err: HttpError, req: Request, res: Response): void {
    res.shouldKeepAlive = false;
    this.fail(err, req, res);
  }

  /** Runs the chain at once, the body flowing through `req` as it arrives (within the route's limit). */
  private stream(req: Request, res: Response, route: Route, length: number): void {
    if (length > route.bodyLimit) return this.refuseBody(tooLarge(route.bodyLimit), req, res);
    // A body past the limit fails the stream with a 413, which the handler's read rethrows; the
    // connection is then not reused (the rest of the body is never read). Listening also keeps
    // a failure no handler reads from ending the process.
    req.on("error", (err) => {
      if (err instanceof HttpError && err.status === 413) res.shouldKeepAlive = false;
    });
    req.streamBody(length, route.bodyLimit);
    this.run(route.handlers, req, res);
  }

  /** Runs a chain; a response its handlers have not begun by the time they return is watched for handlerTimeout. */
  private run(handlers: readonly Handler[], req: Request, res: Response): void {
    runChain(handlers, req, res, this);
    if (!res.headersSent && this.waitingSweep !== null && !res.writableEnded && !res.destroyed && (res as InternalResponse)[WATCH] === null) {
      (res as InternalResponse)[WATCH] = this.waiting;
      this.waiting.set(res, { req, since: Date.now() });
    }
  }

  private startWatch(): void {
    const timeout = this.limits.handlerTimeout;
    if (timeout === 0 || this.waitingSweep !== null) return;
    this.waitingSweep = setInterval(() => this.sweepWaiting(timeout), Math.min(1000, Math.max(10, timeout / 4)));
    this.waitingSweep.unref();
  }

  private stopWatch(): void {
    if (this.waitingSweep !== null) clearInterval(this.waitingSweep);
    this.waitingSweep = null;
  }

  /** Answers 503 for each response still not begun `timeout` ms after its handler returned. */
  private sweepWaiting(timeout: number): void {
    const expired = Date.now() - timeout;
    // Oldest first (a Map keeps insertion order): stop at the first that has time left.
    for (const [key, { req, since }] of this.waiting) {
      const res = key as InternalResponse;
      if (since > expired) break;
      this.waiting.delete(key);
      res[WATCH] = null;
      if (res.headersSent || res.writableEnded || res.destroyed) continue;
      this[REPORT](new Error(`The handler did not answer within handlerTimeout (${timeout} ms): answered 503; answer sooner, or raise handlerTimeout`), req);
      this.fail(new HttpError(503, "The server did not answer in time"), req, res);
    }
  }

  private unmatched(req: Request, res: Response, match: Match<Route> | null): void {
    const final: Handler =
      match === null
        ? () => this.fallThrough(req, res)
        : req.method === "OPTIONS"
          ? () => {
              res.set("allow", match.allow);
              res.send(undefined, 204);
            }
          : () => {
              // On the response before the error handler runs, so a custom one keeps it too.
              res.set("allow", match.allow);
              this.fail(new HttpError(405, `Method ${req.method} is not allowed on ${req.path}; allowed: ${match.allow}`, { headers: { allow: match.allow } }), req, res);
            };
    this.run([...this.fallbackChain(), final], req, res);
  }

  /**
   * A request that arrived while the server drains gets 503 and `Connection: close`: normal
   * operation, not an error, so it is not reported; the access log's line says why, at info.
   */
  private refuseWhileClosing(req: Request, res: Response): void {
    res.shouldKeepAlive = false;
    res.set("connection", "close");
    this.logger?.because(req, "draining");
    this.fail(new RefusedWhileDraining(), req, res);
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
    const compression = options?.compress;
    if (compression !== undefined && compression !== false) chain.unshift(compress(compression === true ? {} : compression));
    const validate = schema === undefined ? null : compileValidation(schema, where);
    if (validate !== null) chain.push(validate);
    chain.push(...handlers);
    const bodyLimit = options?.bodyLimit ?? this.limits.bodyLimit;
    if (!Number.isInteger(bodyLimit) || bodyLimit < 0) throw new RangeError(`Route ${where}: bodyLimit must be a whole number >= 0, got ${String(bodyLimit)}`);
    const bodyMode = options?.body ?? "buffer";
    if (bodyMode !== "buffer" && bodyMode !== "stream") throw new RangeError(`Route ${where}: body must be "buffer" or "stream", got ${JSON.stringify(bodyMode)}`);
    const route: Route = {
      handlers: chain,
      bodyLimit,
      streamsBody: bodyMode === "stream",
      paramNames: [],
      serializers: schema === undefined ? null : compileSerializers(schema.response, where),
      where,
      path: pattern,
    };
    route.paramNames.push(...this.router.add(method, pattern, route));
    this.routes.push({ method, pattern, paramNames: route.paramNames, schema });
  }

  /**
   * An OpenAPI 3.1 document describing every route: methods, paths, params,
   * schemas and statuses. Serve it with `app.get("/openapi.json", (_req, res) => res.json(app.openapi()))`.
   */
  openapi(info: OpenApiInfo = { title: "Cog API", version: "1.0.0" }): OpenApiDocument {
    return buildOpenApi(this.routes, info);
  }

  /** Turns any error into a response, whatever state the response is in. */
  fail(err: unknown, req: Request, res: Response): void {
    if (res.writableEnded || res.destroyed) {
      // Already answered (e.g. a handler threw after sending): nothing to send, but don't hide it.
      this[REPORT](err, req, "after the response was sent");
      return;
    }
    if (res.headersSent) {
      // Half a response is out; the only honest signal left is to cut the connection.
      this[REPORT](err, req, "after the response began: the connection was cut");
      res.destroy();
      return;
    }
    resetForError(res);
    if (this.errorHandler !== null) {
      try {
        const result = this.errorHandler(err, req, res) as PromiseLike<unknown> | undefined;
        if (result !== undefined && result !== null && typeof result.then === "function") {
          result.then(
            (value) => this.errorHandlerReturned(req, res, value),
            (handlerErr: unknown) => this.errorHandlerFailed(handlerErr, err, req, res),
          );
        } else {
          this.errorHandlerReturned(req, res, result);
        }
        return;
      } catch (handlerErr) {
        return this.errorHandlerFailed(handlerErr, err, req, res);
      }
    }
    this.defaultError(err, req, res);
  }

  /** The app's error handler threw or rejected: that is reported, and the original error answered as if there were none. */
  private errorHandlerFailed(handlerErr: unknown, err: unknown, req: Request, res: Response): void {
    this[REPORT](handlerErr, req, "in the error handler");
    if (res.writableEnded || res.destroyed) return;
    if (res.headersSent) return void res.destroy();
    resetForError(res);
    this.defaultError(err, req, res);
  }

  private errorHandlerReturned(req: Request, res: Response, value: unknown): void {
    if (this.unanswered !== null && !res.writableEnded && !res.headersSent) this.unanswered.watch(req, res, "the error handler (onError)", () => false, value);
  }

  /** ChainOwner's watch on handlers that return without answering: none in production. */
  readonly returned: ChainOwner["returned"];

  fallThrough(req: Request, res: Response): void {
    const route = (req as InternalRequest)[ROUTE];
    if (route !== null && !res.headersSent && !res.writableEnded) {
      this[WARN](`the last handler of route ${route.where} called next() without answering: nothing else answers, so the request gets 404 as if no route matched; answer there, or don't call next() in it`, req);
    }
    if (this.notFoundHandler !== null) {
      const owner: ChainOwner = {
        fail: (e, rq, rs) => this.fail(e, rq, rs),
        fallThrough: () => this.defaultNotFound(req, res),
        returned: this.unanswered === null ? undefined : (rq, rs, _handler, nextCalled, value) => this.unanswered?.watch(rq, rs, "the notFound handler", nextCalled, value),
      };
      runChain([this.notFoundHandler as Handler], req, res, owner);
      return;
    }
    this.defaultNotFound(req, res);
  }

  private defaultNotFound(req: Request, res: Response): void {
    if (res.headersSent || res.writableEnded) {
      // The chain went on past a handler that answered: a middleware called next() after responding.
      this[REPORT](new Error("next() was called after the response was sent; nothing more to do"), req);
      return;
    }
    this.fail(new HttpError(404, `Route ${req.method} ${req.path} not found`), req, res);
  }

  /** The default error response; if even that can't be written (the response is unusable), the connection is cut. */
  private defaultError(err: unknown, req: Request, res: Response): void {
    if (res.headersSent) return void res.destroy();
    const status = statusOf(err);
    if (status >= 500 && !(err instanceof RefusedWhileDraining) && !(err instanceof Refusal)) this[REPORT](err, req);
    if (err instanceof HttpError && err.headers !== undefined) res.set(err.headers);
    // A header the app set that can't be sent (CR/LF in its value) fails the first try and is
    // dropped by it: the second goes out without it. Failing twice, the response is unusable.
    for (let attempt = 1; ; attempt++) {
      try {
        res.json(errorBody(status, err), status);
        return;
      } catch (writeErr) {
        if (attempt === 2 || res.headersSent) {
          this[REPORT](writeErr, req, "while answering with an error: the connection was cut");
          res.destroy();
          return;
        }
      }
    }
  }

  /** Logs an error with where it happened (method, path, route), and how to fix it where Cog knows, unless `logErrors` is off. */
  [REPORT](err: unknown, req: Request, when?: string): void {
    if (!this.logErrors) return;
    const where = whereOf(req);
    if (this.logger !== null) return this.logger.error(err, req, `cog: ${where}${when === undefined ? "" : ` (${when})`}`);
    const hint = hintFor(err);
    if (hint === undefined) console.error(`cog: ${where}${when === undefined ? "" : ` (${when})`}:`, err);
    else console.error(`cog: ${where}${when === undefined ? "" : ` (${when})`}:`, err, `\n  (${hint})`);
  }

  /** Logs a warning about how the app uses Cog, with where (method, path, route), unless `logErrors` is off. */
  [WARN](message: string, req: Request): void {
    if (this.logErrors) console.warn(`cog: warning: ${whereOf(req)}: ${message}`);
  }
}

/** The 503 of a request that arrived while the server drains: expected, so not reported as an error. */
class RefusedWhileDraining extends HttpError {
  constructor() {
    super(503, "The server is shutting down; retry on a new connection");
  }
}

function collectLayers(scope: Scope, into: Layer[]): void {
  into.push(...scope.layers);
  for (const child of scope.children) collectLayers(child, into);
}

/** Whether the body is multipart: left unread, as a stream, for a multipart parser (multer, busboy). */
function isMultipart(req: Request): boolean {
  const type = req.firstHeader("content-type");
  return type !== undefined && type.length >= 19 && type.slice(0, 19).toLowerCase() === "multipart/form-data";
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
