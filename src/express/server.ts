import { EventEmitter } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import statuses from "statuses";
import type { Duplex } from "node:stream";
import {
  HOST,
  type Engine,
  type EngineHost,
  type EngineOptions,
  type HeadVerdict,
  type ListenAt,
  type RequestSurface,
  type ResponseSurface,
} from "../engines/contract/engine.js";
import { chooseEngine, startEngineNow, type EngineName } from "../engines/select.js";
import { resolveLimits, type Limits } from "../base/limits.js";
import { checkProtocols } from "../core/options.js";
import { matchedRoute } from "router/lib/symbols.js";
import { fillLater } from "./prototypes.js";
import { withRequestHelpers } from "../http/request.js";
import { withResponseHelpers } from "../http/response.js";
import { nextTick } from "../base/loop.js";

/**
 * Serving an Express app on one of Cog's engines: the engine's host (every request goes to the
 * app, as node:http hands it to an app given to `http.createServer`) and the server object
 * `app.listen` returns, with Node's `http.Server` surface that Express users rely on.
 */

/** `express(options)`: where the app is served, and the engine's limits (Cog's, see docs/limits.md). */
export interface ExpressOptions extends Partial<Limits>, EngineOptions {
  /** "node" (node:http, the default), "native" (Cog's engine in Rust), or "auto" (native where it loads). */
  engine?: EngineName;
  /**
   * Refuse requests a correct origin server must reject but Node lets through (see Cog's
   * `strict`). Default false here: an Express app gets what node:http would hand it.
   */
  strict?: boolean;
}

type App = ((req: any, res: any) => void) & { [SERVING]?: ExpressOptions; request?: object; response?: object };

/** On an app made by `express(options)`: those options (which engine it serves on, its limits). */
export const SERVING: unique symbol = Symbol("cog.express.serving");

/** What a failure the app could not answer itself gets: its status and the status's words. */
function answerFailure(err: unknown, res: ResponseSurface): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const e = err as { status?: unknown; statusCode?: unknown } | null;
  const status = typeof e?.status === "number" ? e.status : typeof e?.statusCode === "number" ? e.statusCode : 500;
  const code = status >= 400 && status < 600 ? status : 500;
  const body = statuses.message[code] ?? String(code);
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  res.statusCode = code;
  res.setHeader("Content-Type", "text/plain; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

/** Where requests go: the app, or (while others listen for it too) the server's 'request' event. */
type RequestHandler = (req: RequestSurface, res: ResponseSurface) => void;

/** The host an engine serves an Express app through; `route` changes where its requests go. */
function hostFor(app: App): { host: EngineHost; route(handler: RequestHandler): void } {
  let handle: RequestHandler = app;
  const host: EngineHost = {
    dispatch(req: RequestSurface, res: ResponseSurface, verdict: HeadVerdict) {
      if (typeof verdict === "number") {
        handle(req, res);
        return undefined;
      }
      // A request that broke a rule of HTTP or a limit: answered, then the connection closes.
      res.shouldKeepAlive = false;
      answerFailure(verdict, res);
      return undefined;
    },
    fail: (err, _req, res) => answerFailure(err, res),
    report: (err, _req, when) => console.error(when === undefined ? err : `${when}:`, when === undefined ? "" : err),
    responseDone: null,
    servesWebSockets: false,
    // The app's own classes on this engine, over Cog's helpers: filled with its `request`/`response`
    // members on its first request (prototypes.ts), so that no request or response changes prototype.
    requestClass(Base) {
      // Typed as the engine's class: Express's own members below stand in for the helpers'.
      abstract class ExpressRequest extends (withRequestHelpers(Base) as typeof Base) {
        // What Express's app, router and common middleware set on every request, there from the
        // start in one order: each request then has one shape as it goes, and the router's and
        // middleware's stores to these find it in their caches (set one by one as the request
        // goes, each store met a new shape: megamorphic, ~150 instructions each).
        res = undefined;
        next = undefined;
        baseUrl = undefined;
        originalUrl = undefined;
        params = undefined;
        route = undefined;
        [matchedRoute] = undefined;
        _parsedUrl = undefined;
        secret = undefined;
        cookies = undefined;
        signedCookies = undefined;
        body = undefined;
      }
      (ExpressRequest.prototype as { [HOST]?: EngineHost })[HOST] = host;
      if (app.request !== undefined) fillLater(ExpressRequest.prototype, app.request);
      return ExpressRequest;
    },
    responseClass(Base) {
      abstract class ExpressResponse extends withResponseHelpers(Base) {}
      if (app.response !== undefined) fillLater(ExpressResponse.prototype, app.response);
      return ExpressResponse;
    },
  };
  return { host, route: (handler) => (handle = handler) };
}

/** The engine for an app, made (not listening yet) from its options, and where its requests go. */
function engineFor(app: App, options: ExpressOptions): { engine: Engine; route(handler: RequestHandler): void } {
  const name = chooseEngine(options.engine);
  checkProtocols(options);
  const { host, route } = hostFor(app);
  return { engine: startEngineNow(name, { host, limits: resolveLimits(options), strict: options.strict ?? false, options }), route };
}

/**
 * Like `http.createServer(app)`, on the engine `options.engine` names (by default, the options
 * the app was made with): not yet listening. On the node engine it is node:http's own Server
 * (Cog's engine serves through it); on the native engine, a `CogServer` with the same surface.
 */
export function createServer(app: App, options: ExpressOptions = app[SERVING] ?? {}): Server | CogServer {
  const { engine, route } = engineFor(app, options);
  if (engine.name === "node") return (engine as unknown as { server: Server }).server;
  return new CogServer(engine, app, route);
}

/** `app.listen(...)`: Node's `server.listen` arguments; the callback also hears a failure to listen (as in Express 5). */
export function listen(app: App, options: ExpressOptions, args: unknown[]): Server | CogServer {
  const server = createServer(app, options);
  const last = args[args.length - 1];
  if (typeof last === "function") {
    let called = false;
    const done = (...results: unknown[]) => {
      if (called) return;
      called = true;
      (last as (...results: unknown[]) => void).apply(server, results);
    };
    args[args.length - 1] = done;
    server.once("error", done);
  }
  return (server.listen as (...args: unknown[]) => Server | CogServer)(...args);
}

const LISTENING = Object.freeze({});

/**
 * A server on Cog's native engine, with what Express apps use of node:http's Server: `listen`
 * (a port and host, or a Unix domain socket's path, and the callback), `address()`, `close()`,
 * `listening`, the 'listening', 'close' and 'error' events, and the 'upgrade' event (`ws`'s
 * `WebSocketServer({ server })`, socket.io): while it has a listener, a request that asks to
 * change protocols is emitted there with its connection, as node:http does, not handed to the app.
 * The app is its 'request' listener, as with `http.createServer(app)`: requests go to the app
 * directly while it is the only one, and through the event once something else takes it
 * (engine.io, under socket.io, takes the server's 'request' listeners and calls them itself).
 */
export class CogServer extends EventEmitter {
  private closing: Promise<void> | null = null;

  constructor(
    private readonly engine: Engine,
    app?: App,
    route?: (handler: RequestHandler) => void,
  ) {
    super();
    engine.serveAs?.(this);
    const routeRequests = () => {
      const listeners = this.rawListeners("request");
      route?.(listeners.length === 1 && listeners[0] === app ? app! : this.emitRequest);
    };
    // The engine is told when the first 'upgrade' listener comes and when the last goes.
    this.on("newListener", (event: string | symbol) => {
      if (event === "upgrade" && this.listenerCount("upgrade") === 0) engine.handUpgrades(this.emitUpgrade);
      // Once it is added (before any request can come: they come from the loop).
      else if (event === "request") nextTick(routeRequests);
    });
    this.on("removeListener", (event: string | symbol) => {
      if (event === "upgrade" && this.listenerCount("upgrade") === 0) engine.handUpgrades(null);
      else if (event === "request") routeRequests();
    });
    if (app !== undefined) this.on("request", app);
  }

  private readonly emitRequest = (req: RequestSurface, res: ResponseSurface): void => {
    this.emit("request", req, res);
  };

  private readonly emitUpgrade = (req: RequestSurface, socket: Duplex, head: Buffer): void => {
    this.emit("upgrade", req, socket, head);
  };

  get listening(): boolean {
    return this.engine.address() !== null;
  }

  /**
   * Node's name for the listening socket, null when closed: test clients (supertest) close the
   * servers they started only when it is set. The native engine holds its socket itself.
   */
  get _handle(): object | null {
    return this.listening ? LISTENING : null;
  }

  listen(...args: unknown[]): this {
    const callback = typeof args[args.length - 1] === "function" ? (args.pop() as () => void) : undefined;
    const at = listenAt(args);
    if (callback !== undefined) this.once("listening", callback);
    this.closing = null;
    // Emitted on a tick of their own, out of the promise: a listener's throw is then an uncaught
    // exception, as from node:http, not an unhandled rejection.
    this.engine.listen(at, false).then(
      () => nextTick(emit, this, "listening"),
      (err: unknown) => nextTick(emit, this, "error", err),
    );
    return this;
  }

  /** As node:http's: the address and port, or a Unix domain socket's path; null when not listening. */
  address(): AddressInfo | string | null {
    const bound = this.engine.address();
    if (bound === null) return null;
    if ("path" in bound) return bound.path;
    return { address: bound.host, family: bound.host.includes(":") ? "IPv6" : "IPv4", port: bound.port };
  }

  /**
   * Stops accepting; calls back once the requests in flight are answered and the connections
   * closed (as node:http's `close`, which also closes idle keep-alive connections).
   */
  close(callback?: (err?: Error) => void): this {
    if (this.closing === null && !this.listening) {
      const err = Object.assign(new Error("Server is not running."), { code: "ERR_SERVER_NOT_RUNNING" });
      if (callback !== undefined) nextTick(callback, err);
      return this;
    }
    if (this.closing === null) {
      this.closing = this.engine.close(2 ** 31 - 1);
      this.closing.then(
        () => nextTick(emit, this, "close"),
        (err: unknown) => nextTick(emit, this, "error", err),
      );
    }
    // Out of the promise, as the events above: a throw in the callback is an uncaught exception.
    if (callback !== undefined)
      this.closing.then(
        () => nextTick(callback),
        (err: unknown) => nextTick(callback, err),
      );
    return this;
  }

  /** Node's Server methods that have nothing to do here: the engine keeps its own timeouts (Cog's limits). */
  setTimeout(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

function emit(server: CogServer, event: string, ...args: unknown[]): void {
  server.emit(event, ...args);
}

/**
 * Where `server.listen(...)` asks to listen, read as node:http reads it: a port (a number, or a
 * string of one) and a host, an options object with `port` and `host` or `path`, or a string
 * that is no number: a Unix domain socket's path.
 */
function listenAt(args: unknown[]): ListenAt {
  let port: unknown = args[0];
  let host: unknown = args[1];
  if (port !== null && typeof port === "object") {
    const options = port as { port?: unknown; host?: unknown; path?: unknown };
    if (typeof options.path === "string") return { path: options.path };
    ({ port, host } = options);
  } else if (typeof port === "string" && !(Number(port) >= 0)) {
    return { path: port };
  }
  const number = port === undefined || port === null ? 0 : Number(port);
  if (!Number.isInteger(number) || number < 0 || number > 65535)
    throw new RangeError(`The native engine listens on a TCP port (0 to 65535) or a Unix domain socket's path; got ${String(port)}`);
  return { port: number, host: typeof host === "string" ? host : undefined };
}
