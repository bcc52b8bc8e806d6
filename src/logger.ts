import { writeSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { pathOf } from "./head.js";
import { ROUTE, type InternalRequest, type Request } from "./request.js";
import { acceptedRequestId, nextRequestId } from "./request-id.js";
import type { Response } from "./response.js";
import { ECHO_REQUEST_ID, type RequestIdEcho, type ResponseDone } from "./engines/engine.js";

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

/** Receives every log line (a request's or an error's). */
export type LogFunction = (line: RequestLogLine | ErrorLogLine) => void;

/** A pino logger, or anything with pino's `info(object, msg)` and `error(object, msg)`. */
export interface PinoLike {
  info(object: object, msg?: string): void;
  error(object: object, msg?: string): void;
}

/** `true`: JSON lines on stdout; a pino logger; or a function called with each line. */
export type LoggerOption = boolean | PinoLike | LogFunction;

/** When the app began on this request (performance.now()), for the duration. */
const STARTED: unique symbol = Symbol("cog.started");
/** Why Cog answered it itself (see `RequestLogLine.reason`), set on the rare request that has one. */
const REASON: unique symbol = Symbol("cog.reason");
interface Timed {
  [STARTED]: number;
  [REASON]?: RequestLogLine["reason"];
}

/** How many body bytes a response carried, as its engine knows it (see `Engine.bodyBytes`). */
export type BodyBytes = (res: Response) => number | null;

/**
 * The access log and error log of an app. `begin` runs as the engine hands a request over: it
 * gives the request its id and echoes it in X-Request-Id (see `ECHO_REQUEST_ID`). The engine
 * calls `finished` once the response is done (`EngineConfig.responseDone`), from its own
 * once-per-response bookkeeping: no event listener per response.
 */
export class RequestLogger {
  private readonly write: LogFunction;
  private readonly pino: PinoLike | null;
  /** Set once the app listens: the engine's count of a response's body bytes. */
  bodyBytes: BodyBytes = () => null;

  constructor(
    option: Exclude<LoggerOption, false>,
    /** Take the id from the request's X-Request-Id (when well-formed) instead of making one. */
    private readonly trustRequestId: boolean,
  ) {
    this.pino = typeof option === "object" ? option : null;
    this.write = typeof option === "function" ? option : option === true ? jsonLines() : toPino(option);
  }

  begin(req: Request, res: Response): void {
    (req as unknown as Timed)[STARTED] = performance.now();
    const id = (this.trustRequestId ? acceptedRequestId(req.firstHeader("x-request-id")) : undefined) ?? nextRequestId();
    req.id = id;
    const echo = (res as RequestIdEcho)[ECHO_REQUEST_ID];
    if (echo !== undefined) echo.call(res, id);
    else res.setHeader("x-request-id", id);
  }

  /** Writes a response's line: the engine's `responseDone` (bound, as engines call it bare). */
  readonly finished: ResponseDone = (res, aborted) => {
    const req = res.req as Request;
    // An accepted WebSocket: its response was retired, not cut (the 101 went out on the connection).
    const answered = !aborted || res.statusCode === 101;
    const line: RequestLogLine = {
      level: "info",
      time: Date.now(),
      msg: "request",
      id: req.id!,
      method: req.method!,
      path: pathOf(req.originalUrl),
      route: (req as InternalRequest)[ROUTE]?.path ?? null,
      status: answered || res.headersSent ? res.statusCode : null,
      bytes: this.bodyBytes(res),
      ms: Math.round((performance.now() - (req as unknown as Timed)[STARTED]) * 1000) / 1000,
      aborted: !answered,
    };
    // Only a 503 can have a reason: the usual line pays one comparison for it.
    if (res.statusCode === 503) {
      const reason = (req as unknown as Timed)[REASON];
      if (reason !== undefined) line.reason = reason;
    }
    this.write(line);
  };

  /** Notes why Cog answered this request itself as part of normal operation: its line says so, at info level. */
  because(req: Request, reason: NonNullable<RequestLogLine["reason"]>): void {
    (req as unknown as Timed)[REASON] = reason;
  }

  /** Logs an error with the request's id, method, path and route. */
  error(err: unknown, req: Request, where: string): void {
    const line: ErrorLogLine = {
      level: "error",
      time: Date.now(),
      msg: where,
      id: req.id!,
      method: req.method ?? "",
      path: pathOf(req.originalUrl),
      route: (req as InternalRequest)[ROUTE]?.path ?? null,
      err: err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : err,
    };
    if (this.pino !== null) {
      // pino's own error serializer knows `err`.
      const { level: _level, time: _time, msg, ...fields } = line;
      this.pino.error({ ...fields, err }, msg);
    } else {
      this.write(line);
    }
  }
}

function toPino(pino: PinoLike): LogFunction {
  return (line) => {
    const { level: _level, time: _time, msg, ...fields } = line;
    pino.info(fields, msg);
  };
}

/**
 * JSON lines on stdout, written once per turn of the event loop rather than once per line: one
 * write(2) for all the requests answered in a turn, with no dependency. Each line is copied
 * into a buffer as it is made, so that it dies young: appending lines to one string instead
 * made a rope that every young-generation GC copied, which was most of the logger's cost (see
 * docs/decisions/request-log.md). What is still buffered is written synchronously at exit.
 */
function jsonLines(): LogFunction {
  const SIZE = 64 * 1024;
  const buffer = Buffer.allocUnsafeSlow(SIZE);
  let used = 0;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (used === 0) return;
    // A copy (from Node's pool when small), so the buffer is reused: a fresh 64 KB buffer per
    // flush was external memory that set off a full GC every few hundred requests.
    const out = Buffer.from(buffer.subarray(0, used));
    used = 0;
    process.stdout.write(out);
  };
  process.once("exit", () => {
    if (used > 0) writeSync(1, buffer, 0, used);
    used = 0;
  });
  return (line) => {
    const text = line.level === "info" && line.reason === undefined ? requestLine(line) : `${JSON.stringify(line)}\n`;
    // A UTF-8 character takes at most 3 bytes per UTF-16 unit.
    if (used + text.length * 3 > SIZE) {
      flush();
      if (text.length * 3 > SIZE) return void process.stdout.write(text);
    }
    used += buffer.write(text, used);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}

/**
 * A request's line, spelled out: JSON.stringify spent ~10,000 instructions a line on the
 * native engine (most of the logger's cost), largely turning the two non-integer numbers (the
 * time, the duration) into text; here the time's text is reused within a millisecond and the
 * duration is written from integer microseconds.
 */
function requestLine(line: RequestLogLine): string {
  // The id (made by Cog, or taken only when it matches SAFE_ID) and the method (an HTTP token)
  // need no escaping; the path and route may.
  if (line.time !== lastTime) {
    lastTime = line.time;
    lastTimeText = String(line.time);
  }
  const route = line.route === null ? "null" : quote(line.route);
  return `{"level":"info","time":${lastTimeText},"msg":"request","id":"${line.id}","method":"${line.method}","path":${quote(line.path)},"route":${route},"status":${line.status},"bytes":${line.bytes},"ms":${milliseconds(line.ms)},"aborted":${line.aborted}}\n`;
}
let lastTime = 0;
let lastTimeText = "0";

const NEEDS_ESCAPE = /["\\\x00-\x1f]/;
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** A duration in ms with up to three decimals, from its integer microseconds. */
function milliseconds(ms: number): string {
  const us = Math.round(ms * 1000);
  if (!(us < 2 ** 30)) return String(ms);
  const fraction = us % 1000;
  return `${(us - fraction) / 1000}.${fraction < 10 ? "00" : fraction < 100 ? "0" : ""}${fraction}`;
}
