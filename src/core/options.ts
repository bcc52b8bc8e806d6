import type { EngineOptions } from "../engines/contract/engine.js";
import type { EngineName } from "../engines/select.js";
import { DEFAULT_LIMITS, type Limits } from "../base/limits.js";
import type { LoggerOption } from "../observe/access-log.js";
import type { Broker } from "../websocket/topics.js";

/** Every limit and timeout is an option; see `Limits` for what each means and README for the defaults. */
export interface CogOptions extends Partial<Limits>, EngineOptions {
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
   * Carries WebSocket publications between the processes (and machines) serving this app, e.g.
   * `redisBroker("redis://…")`: `publish` then reaches subscribers everywhere, at most once, in
   * each publisher's order (docs/guide/websockets.md).
   */
  broker?: Broker;
}

/** The engine options `new Cog()` and `express()` take (`EngineOptions`). */
export const ENGINE_OPTION_KEYS: readonly string[] = ["tls", "http2", "server", "sliceWrites", "drainAcceptQueue"];

/** Every key `new Cog(options)` knows: a key outside it is refused when the app is made. */
export const COG_OPTION_KEYS: readonly string[] = [
  ...Object.keys(DEFAULT_LIMITS),
  ...ENGINE_OPTION_KEYS,
  "engine",
  "strict",
  "trustProxy",
  "logErrors",
  "logger",
  "trustRequestId",
  "secret",
  "broker",
];

/** Where options other frameworks (or other parts of Cog) take belong here: named in the refusal. */
export const OPTION_HINTS: Readonly<Record<string, string>> = {
  port: "the port is listen()'s: app.listen({ port })",
  host: "the host is listen()'s: app.listen({ port, host })",
  workers: "workers are listen()'s: app.listen({ port, workers })",
  https: "HTTPS is the tls option: { tls: { key, cert } }",
  http3: "HTTP/3 is listen()'s: app.listen({ port, http3: true }) (the native engine, with the tls option)",
  trustProxies: "did you mean trustProxy?",
  requestIdHeader: "the request id comes from X-Request-Id with trustRequestId: true",
  cookieSecret: "cookies are signed with the secret option",
  connectionTimeout: "the timeouts are headersTimeout, requestTimeout, keepAliveTimeout, sendTimeout and handlerTimeout",
};

/** Every key `listen(options)` knows. */
export const LISTEN_OPTION_KEYS: readonly string[] = ["port", "host", "path", "workers", "signals", "drainMs", "http3"];

/** Where options of the app, given to `listen()`, belong. */
export const LISTEN_OPTION_HINTS: Readonly<Record<string, string>> = {
  tls: "tls is an option of the app: new Cog({ tls })",
  engine: "engine is an option of the app: new Cog({ engine })",
  http2: "http2 is an option of the app: new Cog({ http2 })",
};

/** Every key `express(options)` (cog-http/express) knows. */
export const EXPRESS_OPTION_KEYS: readonly string[] = [...Object.keys(DEFAULT_LIMITS), ...ENGINE_OPTION_KEYS, "engine", "strict"];
