import type { Server } from "node:http";
import { AppCore } from "./core/app.js";
import type { ErrorHandler, NotFoundHandler } from "./core/answer.js";
import { Group } from "./core/group.js";
import type { CogOptions } from "./core/options.js";
import type { Address, CloseHook, Closing, ListenOptions, SocketAddress } from "./core/serving.js";
import type { InjectOptions, InjectResponse } from "./engines/contract/engine.js";
import type { EngineName } from "./engines/select.js";
import type { OpenApiOptions } from "./schema/openapi.js";
import type { OpenApiDocument, OpenApiVersion } from "./schema/openapi-document.js";
import type { TlsOptions } from "./base/tls.js";
import type { OutgoingData } from "./websocket/types.js";

export type { Address, CloseHook, Closing, CogOptions, EngineName, ErrorHandler, ListenOptions, NotFoundHandler, SocketAddress };

declare module "./http/request.js" {
  /** `req.app`: the Cog app serving the request. */
  interface RequestApp extends Cog {}
}

/**
 * The application: register routes and middleware, then `listen`.
 *
 * Cog's face over the app's core (src/core/): every public member is for applications. Each
 * route's chain (the middleware that applies to it, then its handlers) is built when the route
 * is registered, so a request costs one router lookup and the calls themselves. `use` applies to
 * the routes registered after it, as in Express; it also runs for requests that match no route
 * (before the 404/405).
 */
export class Cog extends Group {
  private readonly core: AppCore;

  constructor(options: CogOptions = {}) {
    const core = new AppCore(options);
    super(core.routes, "/", null);
    this.core = core;
    core.attach(this);
    const route = this.get;
    // Express middleware reads settings with a one-argument `req.app.get(name)`: answer it rather than register a route.
    (this as { get: unknown }).get = (path: string, ...args: unknown[]) =>
      args.length === 0 ? this.setting(path) : (route as (...a: unknown[]) => this)(path, ...args);
  }

  /**
   * What Express's `app.get(name)` answers, for middleware written against Express (express-rate-limit
   * reads "trust proxy"): "trust proxy" is the `trustProxy` option, "env" is NODE_ENV (or
   * "development"); other names are undefined.
   */
  setting(name: string): unknown {
    if (name === "trust proxy") return this.core.settings.trustProxy;
    if (name === "env") return process.env.NODE_ENV ?? "development";
    return undefined;
  }

  /** Replaces the default error response (JSON `{statusCode, error, message}`). */
  onError(handler: ErrorHandler): this {
    this.core.answers.errorHandler = handler;
    return this;
  }

  /** Replaces the default 404 response. */
  notFound(handler: NotFoundHandler): this {
    this.core.answers.notFoundHandler = handler;
    return this;
  }

  /**
   * Starts serving. Resolves with the address once listening (port 0 picks a free port); the
   * callback, if given, is called then too. `listen(port, host?)` serves from this process;
   * `listen({ port, host, workers, signals, drainMs })` can also run worker processes on every
   * core and drain on SIGTERM/SIGINT (see `ListenOptions` and docs/guide/deployment.md);
   * `listen({ path })` serves on a Unix domain socket, and resolves with its path.
   */
  listen(options: ListenOptions & { path: string }, callback?: () => void): Promise<SocketAddress>;
  listen(options: ListenOptions, callback?: () => void): Promise<Address>;
  listen(port?: number, host?: string | (() => void), callback?: () => void): Promise<Address>;
  listen(port: number | ListenOptions = 3000, host?: string | (() => void), callback?: () => void): Promise<Address | SocketAddress> {
    if (typeof host === "function") {
      callback = host;
      host = undefined;
    }
    const options: ListenOptions = typeof port === "object" ? port : { port, host };
    const started = this.core.serving.listen(options);
    return callback === undefined ? started : started.then((address) => (callback(), address));
  }

  /**
   * Replaces the TLS certificate and key (any of the `tls` options) without a restart: new
   * connections get the new ones, open connections keep theirs. In the primary of `workers`,
   * call it in each worker instead (e.g. on a message or a signal each worker handles).
   */
  setSecureContext(tls: TlsOptions): void {
    this.core.serving.setSecureContext(tls);
  }

  /**
   * The engine this app runs on, "node" or "native" (with `engine: "auto"`, the one it chose;
   * `NODE_DEBUG=cog` also prints it, and why), once `listen` or `inject` has started it;
   * undefined before.
   */
  get engine(): "node" | "native" | undefined {
    return this.core.serving.engine;
  }

  /** The underlying `http.Server` once listening, on the node engine only (for upgrades, or tuning timeouts). */
  get server(): Server | undefined {
    return this.core.serving.server;
  }

  /**
   * Runs `hook` once when the app shuts down (`app.close()`, or SIGTERM/SIGINT under `signals`
   * or `workers`: in each worker), as the drain begins, after the open event streams have ended
   * and before any connection is cut; `close` awaits it. Hooks run in the order registered, each
   * awaited; in-flight requests may still be running: await `closing.drained` before closing
   * what they use (a database pool). A hook that throws fails the close (exit code 1 on a
   * signal), after the rest of the shutdown.
   */
  onClose(hook: CloseHook): this {
    if (typeof hook !== "function") throw new TypeError(`app.onClose takes a function, got ${typeof hook}`);
    this.core.serving.closeHooks.push(hook);
    return this;
  }

  /**
   * Stops accepting connections, ends open event streams (`res.sse()`), runs the `onClose`
   * hooks, lets in-flight requests finish (new requests on open connections get 503), and
   * resolves when all is closed. Connections still busy after `drainMs` are cut. A second call
   * awaits the first.
   */
  close(drainMs = 10_000): Promise<void> {
    return this.core.serving.close(drainMs);
  }

  /** Whether the app has WebSocket routes (its engine then serves upgrades). */
  get servesWebSockets(): boolean {
    return this.core.routes.topics !== null;
  }

  /**
   * Sends a message to every WebSocket subscribed to `topic`, in this process and, through the
   * app's `broker`, in every other: a string as text, bytes as binary (`isBinary` overrides).
   */
  publish(topic: string, data: OutgoingData, isBinary?: boolean): void {
    this.core.routes.topics?.publish(topic, data, isBinary, null);
  }

  /** How many WebSockets of this process subscribe to `topic`. */
  subscriberCount(topic: string): number {
    return this.core.routes.topics?.count(topic) ?? 0;
  }

  /**
   * Answers a request for tests, through this app's engine: `await app.inject({ method: "GET", url: "/" })`.
   * On the node engine it runs in memory (light-my-request); on the native engine over a
   * loopback connection to a server of its own, so the engine's own request, response and
   * header writing are what the test exercises.
   */
  inject(options: InjectOptions | string): Promise<InjectResponse> {
    return this.core.serving.inject(options);
  }

  /**
   * An OpenAPI 3.1 document describing every route but WebSocket and `all` ones: methods, paths,
   * params, schemas and statuses, each route's summary, tags, security… from its `schema`; the
   * document-wide fields (`servers`, `components`, `security`, `tags`) as given beside `info`'s.
   * Serve it with `app.get("/openapi.json", (_req, res) => res.json(app.openapi()))`. With
   * `openapi: "3.2.0"`, an OpenAPI 3.2 document, whose path items have QUERY routes as `query`
   * (a 3.1 document has them as `x-query`).
   */
  openapi(options: OpenApiOptions & { openapi: `3.2.${number}` }): OpenApiDocument<`3.2.${number}`>;
  openapi(options?: OpenApiOptions & { openapi?: `3.1.${number}` }): OpenApiDocument;
  openapi(options: OpenApiOptions = { title: "Cog API", version: "1.0.0" }): OpenApiDocument<OpenApiVersion> {
    return this.core.routes.openapi(options);
  }
}
