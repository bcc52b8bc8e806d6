import type { EngineOptions } from "../engines/contract/engine.js";
import type { EngineName } from "../engines/select.js";
import { DEFAULT_LIMITS, type Limits } from "../base/limits.js";
import { serverTlsOptions } from "../base/tls.js";
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
export const ENGINE_OPTION_KEYS: readonly string[] = ["tls", "http2", "allowHTTP1", "server", "sliceWrites", "drainAcceptQueue"];

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
  allowHTTP1: 'allowHTTP1 is an option of the app: new Cog({ http2: "h2c", allowHTTP1: true })',
};

/**
 * Refuses protocol options that can't be served together, with what to write instead: checked
 * when the app (or `cog-http/express`'s server) is made, on either engine. Checks `tls` too.
 */
export function checkProtocols(options: EngineOptions): void {
  const { tls, http2, allowHTTP1 } = options;
  if (tls !== undefined) serverTlsOptions(tls);
  if (http2 !== undefined && http2 !== true && http2 !== false && http2 !== "h2c")
    throw new TypeError(`http2 is true (h2 over TLS), "h2c" (cleartext HTTP/2) or false; got ${JSON.stringify(http2)}`);
  if (http2 === true && tls === undefined)
    throw new TypeError('http2: true serves HTTP/2 over TLS and needs the tls option ({ key, cert }); for cleartext HTTP/2 use http2: "h2c"');
  if (http2 === "h2c" && tls !== undefined)
    throw new TypeError(
      'http2: "h2c" is cleartext HTTP/2 and takes no tls option; for HTTP/2 over TLS use http2: true (HTTP/1.1 clients are served too, by ALPN)',
    );
  if (allowHTTP1 === undefined) return;
  if (typeof allowHTTP1 !== "boolean") throw new TypeError(`allowHTTP1 is true or false; got ${JSON.stringify(allowHTTP1)}`);
  if (allowHTTP1 && http2 !== "h2c" && http2 !== true)
    throw new TypeError(
      'allowHTTP1: true serves HTTP/1.1 beside cleartext HTTP/2 and needs http2: "h2c"; without http2 the server serves HTTP/1.1 alone already',
    );
  if (!allowHTTP1 && http2 === true)
    throw new TypeError(
      "allowHTTP1: false can't be served with http2: true, which answers HTTP/1.1 to TLS clients that don't offer h2 by ALPN; drop allowHTTP1",
    );
}

/** Every key `express(options)` (cog-http/express) knows. */
export const EXPRESS_OPTION_KEYS: readonly string[] = [...Object.keys(DEFAULT_LIMITS), ...ENGINE_OPTION_KEYS, "engine", "strict"];
