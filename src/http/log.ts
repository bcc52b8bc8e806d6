// The shapes of Cog's log lines and of `req.log`: types only, so that the request (which has
// `req.log`) and the access log (observe/access-log.ts, which writes the lines) share them
// without importing each other.

/**
 * Where a request's `req.log` comes from: the app's access log (observe/access-log.ts,
 * `RequestLogger`), which binds a logger to the request's id.
 */
export interface RequestLogSource {
  child(req: never): RequestLog;
}

/** One line per request, written once the response is done (sent, cut, or abandoned by the client). */
export interface RequestLogLine {
  level: "info";
  /** Milliseconds since the epoch, when the line was written. */
  time: number;
  msg: "request";
  /** The request id (`req.id`, echoed in the response's X-Request-Id). */
  id: string;
  method: string;
  /** The path without its query string (which may carry secrets). */
  path: string;
  /** The pattern of the route that matched (`/users/:id`: `req.route`), or null. */
  route: string | null;
  /** The status sent; null if the connection ended before a head was sent. */
  status: number | null;
  /** The body's length in bytes: a whole body's, a Content-Length, or what was written of a stream without one (null if unknown). */
  bytes: number | null;
  /** From the moment the engine handed the request to the app until the response was done, in milliseconds. */
  ms: number;
  /** True when the response did not complete: the client went away or the connection was cut. */
  aborted: boolean;
  /**
   * Why Cog answered the request itself when that is normal operation, not an error (absent
   * otherwise): `"draining"`, refused with 503 and `Connection: close` because the server is
   * closing (`close(drainMs)`, a stop signal, workers draining).
   */
  reason?: "draining";
}

/** An error Cog could not answer with, or that became a 5xx, with where it happened. */
export interface ErrorLogLine {
  level: "error";
  time: number;
  /** What happened, with the method, path and route. */
  msg: string;
  id: string;
  method: string;
  path: string;
  route: string | null;
  err: { type: string; message: string; stack?: string | undefined } | unknown;
}

/** A line the app wrote with `req.log`: its fields, with the level, the time, the message and the request's id. */
export interface AppLogLine {
  level: "debug" | "info" | "warn" | "error";
  time: number;
  msg: string;
  id: string | undefined;
  [field: string]: unknown;
}

/** Receives every log line (a request's, an error's, or one the app wrote with `req.log`). */
export type LogFunction = (line: RequestLogLine | ErrorLogLine | AppLogLine) => void;

/** A pino logger, or anything with pino's `info(object, msg)` and `error(object, msg)` (and, for `req.log`, `child`, `warn`, `debug`). */
export interface PinoLike {
  info(object: object, msg?: string): void;
  error(object: object, msg?: string): void;
  warn?(object: object, msg?: string): void;
  debug?(object: object, msg?: string): void;
  /** pino's: a logger whose lines carry `bindings` too (`req.log` is one, bound to the request's id). */
  child?(bindings: Record<string, unknown>): RequestLog;
}

/** A level's method of `req.log`, as pino's: a message, or fields and a message. */
export interface LogMethod {
  (msg: string): void;
  (fields: object, msg?: string): void;
}

/**
 * `req.log` with a `logger`: a logger bound to the request's id. With a pino `logger`, a pino
 * child logger (`logger.child({ id })`); with `logger: true` or a function, Cog's, whose lines
 * (`AppLogLine`) go where the access log's go.
 */
export interface RequestLog {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
}

/** `true`: JSON lines on stdout; a pino logger; or a function called with each line. */
export type LoggerOption = boolean | PinoLike | LogFunction;
