import { writeSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { pathOf } from "../base/path.js";
import type { InternalRequest, Request } from "../http/request.js";
import type { AppLogLine, ErrorLogLine, LogFunction, LoggerOption, LogMethod, PinoLike, RequestLog, RequestLogLine } from "../http/log.js";
import { acceptedRequestId, nextRequestId } from "./request-id.js";
import type { Response } from "../http/response.js";
import { ECHO_REQUEST_ID, type RequestIdEcho, type ResponseDone } from "../engines/contract/engine.js";
import { REASON, ROUTE, STARTED } from "../base/symbols.js";
import { setImmediate } from "../base/loop.js";

export type { AppLogLine, ErrorLogLine, LogFunction, LoggerOption, LogMethod, PinoLike, RequestLog, RequestLogLine } from "../http/log.js";

interface Timed {
  [STARTED]: number;
  [REASON]?: RequestLogLine["reason"];
}

/**
 * The access log and error log of an app. `begin` runs as the engine hands a request over: it
 * gives the request its id and echoes it in X-Request-Id (see `ECHO_REQUEST_ID`). The engine
 * calls `finished` once the response is done (`EngineHost.responseDone`), from its own
 * once-per-response bookkeeping (no event listener per response), with the count of the body
 * bytes it carried.
 */
export class RequestLogger {
  private readonly write: LogFunction;
  /** Where `req.log`'s lines go without pino: the access log's function, or JSON lines on stdout. */
  private readonly writeApp: (line: AppLogLine) => void;
  private readonly pino: PinoLike | null;

  constructor(
    option: Exclude<LoggerOption, false>,
    /** Take the id from the request's X-Request-Id (when well-formed) instead of making one. */
    private readonly trustRequestId: boolean,
  ) {
    this.pino = typeof option === "object" ? option : null;
    const json = option === true ? jsonLines() : null;
    this.write = typeof option === "function" ? option : option === true ? json!.line : toPino(option);
    this.writeApp = typeof option === "function" ? option : json !== null ? (line) => json.text(`${JSON.stringify(line)}\n`) : noop;
  }

  /** `req.log` for a request (made on its first read): bound to its id. */
  child(req: Request): RequestLog {
    const id = req.id;
    const pino = this.pino;
    if (pino !== null) {
      if (typeof pino.child === "function") return pino.child({ id });
      // A pino-like logger without child(): its methods, with the id added to the fields.
      const at = (method: ((object: object, msg?: string) => void) | undefined): LogMethod =>
        ((fields: object | string, msg?: string) => {
          const bound = typeof fields === "string" ? { id } : { ...fields, id };
          (method ?? pino.info).call(pino, bound, typeof fields === "string" ? fields : msg);
        }) as LogMethod;
      return { debug: at(pino.debug), info: at(pino.info), warn: at(pino.warn), error: at(pino.error) };
    }
    const write = this.writeApp;
    const at = (level: AppLogLine["level"]): LogMethod =>
      ((fields: object | string, msg?: string) => {
        const line: AppLogLine =
          typeof fields === "string" ? { level, time: Date.now(), msg: fields, id } : { level, time: Date.now(), msg: msg ?? "", id, ...fields };
        if (fields instanceof Error) line.err = { type: fields.name, message: fields.message, stack: fields.stack };
        write(line);
      }) as LogMethod;
    return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
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
  readonly finished: ResponseDone = (response, aborted, bytes) => {
    const res = response as Response;
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
      bytes,
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

const noop = (): void => {};

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
function jsonLines(): { line: LogFunction; text: (text: string) => void } {
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
  const text = (text: string): void => {
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
  // Cog's own lines: request lines spelled out, error lines as JSON (app lines come through `text`).
  const line: LogFunction = (line) =>
    text(line.level === "info" && line.reason === undefined ? requestLine(line as RequestLogLine) : `${JSON.stringify(line)}\n`);
  return { line, text };
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
