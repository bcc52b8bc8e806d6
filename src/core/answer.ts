import { HttpError, Refusal, errorBody, isHttpError, statusOf } from "../base/errors.js";
import type { RequestLogger } from "../observe/access-log.js";
import { type InternalRequest, type Request } from "../http/request.js";
import { resetForError, type InternalResponse, type Response, type ResponseWatch } from "../http/response.js";
import { describe, runChain, type ChainOwner, type Handler } from "./chain.js";
import type { Reports } from "./report.js";
import type { Match } from "./router.js";
import type { UnansweredWatch } from "./unanswered.js";
import { publishError } from "../observe/request-channel.js";
import { ROUTE, TRACED, WATCH } from "../base/symbols.js";
import { Linked, LinkedList } from "../base/linked-list.js";
import { clearInterval, setInterval } from "../base/loop.js";

export type ErrorHandler = (err: unknown, req: Request, res: Response) => unknown;
export type NotFoundHandler = (req: Request, res: Response) => unknown;

/**
 * The last stage of a request: answering what the route's chain did not. Any error becomes the
 * app's error response (its `onError` handler, else JSON `{statusCode, error, message}`), a chain
 * that runs out becomes the 404 (its `notFound` handler), an unmatched method the 405 with Allow;
 * an error that can no longer be answered is reported. The chains' owner (`ChainOwner`).
 */
export class Answers implements ChainOwner {
  errorHandler: ErrorHandler | null = null;
  notFoundHandler: NotFoundHandler | null = null;
  /** ChainOwner's watch on handlers that return without answering: none in production. */
  readonly returned: ChainOwner["returned"];

  constructor(
    private readonly reports: Reports,
    /** Warns of handlers that return without answering: outside production, when logging. */
    private readonly unanswered: UnansweredWatch | null,
    private readonly logger: RequestLogger | null,
  ) {
    this.returned =
      unanswered === null
        ? undefined
        : (req, res, handler, nextCalled, value) => unanswered.watch(req, res, `the handler ${describe(handler)}`, nextCalled, value);
  }

  /** Turns any error into a response, whatever state the response is in. */
  fail(err: unknown, req: Request, res: Response): void {
    const traced = (req as InternalRequest)[TRACED];
    if (traced !== undefined) publishError(traced, err);
    if (res.writableEnded || res.destroyed) {
      // Already answered (e.g. a handler threw after sending), or the client went away before it
      // could be (a body cut off mid-upload): nothing to send, but don't hide it, and say which.
      this.reports.report(err, req, res.writableEnded ? "after the response was sent" : "after the client closed the connection: no answer could be sent");
      return;
    }
    if (res.headersSent) {
      // Half a response is out; the only honest signal left is to cut the connection.
      this.reports.report(err, req, "after the response began: the connection was cut");
      res.destroy();
      return;
    }
    resetForError(res);
    if (this.errorHandler !== null) {
      try {
        const result = this.errorHandler(err, req, res) as PromiseLike<unknown> | undefined;
        if (result !== undefined && result !== null && typeof result.then === "function") {
          result.then(
            (value) => this.errorHandlerReturned(err, req, res, value),
            (handlerErr: unknown) => this.errorHandlerFailed(handlerErr, err, req, res),
          );
        } else {
          this.errorHandlerReturned(err, req, res, result);
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
    this.reports.report(handlerErr, req, "in the error handler");
    if (res.writableEnded || res.destroyed) return;
    if (res.headersSent) return void res.destroy();
    resetForError(res);
    this.defaultError(err, req, res);
  }

  /**
   * The app's error handler decides the answer, not whether the error is logged: an error it
   * answered with a 5xx (or, not answered yet, one that is a 5xx) is reported as the default
   * answer would report it.
   */
  private errorHandlerReturned(err: unknown, req: Request, res: Response, value: unknown): void {
    const begun = res.headersSent || res.writableEnded;
    if ((begun ? res.statusCode : statusOf(err)) >= 500 && isReported(err)) this.reports.report(err, req);
    if (this.unanswered !== null && !begun) this.unanswered.watch(req, res, "the error handler (onError)", () => false, value);
  }

  /** `next()` past a chain's last handler: the 404. */
  fallThrough(req: Request, res: Response): void {
    const route = (req as InternalRequest)[ROUTE];
    if (route !== null && !res.headersSent && !res.writableEnded) {
      this.reports.warn(
        `the last handler of route ${route.where} called next() without answering: nothing else answers, so the request gets 404 as if no route matched; answer there, or don't call next() in it`,
        req,
      );
    }
    if (this.notFoundHandler !== null) {
      const owner: ChainOwner = {
        fail: (e, rq, rs) => this.fail(e, rq, rs),
        fallThrough: () => this.defaultNotFound(req, res),
        returned:
          this.unanswered === null
            ? undefined
            : (rq, rs, _handler, nextCalled, value) => this.unanswered?.watch(rq, rs, "the notFound handler", nextCalled, value),
      };
      runChain([this.notFoundHandler as Handler], req, res, owner);
      return;
    }
    this.defaultNotFound(req, res);
  }

  /**
   * The handler that ends the chain of a request no route matched, after the app's middleware:
   * the 404 (no route has the path), OPTIONS's 204 with Allow, or the 405 with Allow.
   */
  unmatched(req: Request, res: Response, match: Match<unknown> | null): Handler {
    if (match === null) return () => this.fallThrough(req, res);
    if (req.method === "OPTIONS") {
      return () => {
        res.set("allow", match.allow);
        res.send(undefined, 204);
      };
    }
    return () => {
      // On the response before the error handler runs, so a custom one keeps it too.
      res.set("allow", match.allow);
      this.fail(
        new HttpError(405, `Method ${req.method} is not allowed on ${req.path}; allowed: ${match.allow}`, { headers: { allow: match.allow } }),
        req,
        res,
      );
    };
  }

  /**
   * A request that arrived while the server drains gets 503 and `Connection: close`: normal
   * operation, not an error, so it is not reported; the access log's line says why, at info.
   */
  refuseWhileClosing(req: Request, res: Response): void {
    res.shouldKeepAlive = false;
    res.set("connection", "close");
    this.logger?.because(req, "draining");
    this.fail(new RefusedWhileDraining(), req, res);
  }

  private defaultNotFound(req: Request, res: Response): void {
    if (res.headersSent || res.writableEnded) {
      // The chain went on past a handler that answered: a middleware called next() after responding.
      this.reports.report(new Error("next() was called after the response was sent; nothing more to do"), req);
      return;
    }
    this.fail(new HttpError(404, `Route ${req.method} ${req.path} not found`), req, res);
  }

  /** The default error response; if even that can't be written (the response is unusable), the connection is cut. */
  private defaultError(err: unknown, req: Request, res: Response): void {
    if (res.headersSent) return void res.destroy();
    const status = statusOf(err);
    if (status >= 500 && isReported(err)) this.reports.report(err, req);
    if (isHttpError(err) && err.headers !== undefined) res.set(err.headers);
    // A header the app set that can't be sent (CR/LF in its value) fails the first try and is
    // dropped by it: the second goes out without it. Failing twice, the response is unusable.
    for (let attempt = 1; ; attempt++) {
      try {
        res.json(errorBody(status, err), status);
        return;
      } catch (writeErr) {
        if (attempt === 2 || res.headersSent) {
          this.reports.report(writeErr, req, "while answering with an error: the connection was cut");
          res.destroy();
          return;
        }
      }
    }
  }
}

/** Whether a 5xx error is logged: not the refusals, which are normal operation or the client's doing. */
function isReported(err: unknown): boolean {
  return !(err instanceof RefusedWhileDraining) && !(err instanceof Refusal) && !(err instanceof HandlerTimedOut);
}

/** The 503 of a request that arrived while the server drains: expected, so not reported as an error. */
class RefusedWhileDraining extends HttpError {
  constructor() {
    super(503, "The server is shutting down; retry on a new connection");
  }
}

/**
 * The 503 of a handler that began no answer within `handlerTimeout`: its message names the limit
 * (it says nothing of the app's internals), and the sweep has reported it with its route already.
 */
class HandlerTimedOut extends HttpError {
  constructor(timeout: number) {
    super(503, `The server did not answer within handlerTimeout (${timeout} ms)`);
  }

  override get expose(): boolean {
    return true;
  }
}

/**
 * The `handlerTimeout` watch: a response whose handlers returned without beginning it is
 * answered 503 once it has waited that long. Watched responses carry their entry (`WATCH`) until
 * their head is written, when the response calls `begun` and the entry leaves the list.
 *
 * The entries are a LinkedList (oldest first), not a Map's: a Map that lives as long as the app
 * and takes and drops an entry per request makes V8 promote the requests it held (see
 * src/base/linked-list.ts), and every request answered on a later tick than its dispatch is watched
 * here. An entry that leaves is emptied, so nothing points at its request from then on.
 */
export class HandlerTimeouts {
  private readonly waiting = new LinkedList<Waiting>();
  private sweep: NodeJS.Timeout | null = null;

  constructor(
    private readonly timeout: number,
    private readonly answers: Answers,
    private readonly reports: Reports,
  ) {}

  /** After a chain returned: watch the response if it has not begun (only while serving, with a handlerTimeout). */
  watch(req: Request, res: Response): void {
    if (this.sweep !== null && !res.writableEnded && !res.destroyed && (res as InternalResponse)[WATCH] === null) {
      const entry = new Waiting(this, req, res, Date.now());
      (res as InternalResponse)[WATCH] = entry;
      this.waiting.add(entry);
    }
  }

  /** The entry's response began (its head is being written), or its time is up: it leaves the list. */
  leave(entry: Waiting): void {
    this.waiting.remove(entry);
    (entry.res as InternalResponse)[WATCH] = null;
    entry.req = null;
    entry.res = null;
  }

  start(): void {
    const timeout = this.timeout;
    if (timeout === 0 || this.sweep !== null) return;
    this.sweep = setInterval(() => this.sweepWaiting(timeout), Math.min(1000, Math.max(10, timeout / 4)));
    this.sweep.unref();
  }

  stop(): void {
    if (this.sweep !== null) clearInterval(this.sweep);
    this.sweep = null;
  }

  /** Answers 503 for each response still not begun `timeout` ms after its handler returned. */
  private sweepWaiting(timeout: number): void {
    const expired = Date.now() - timeout;
    // Oldest first: stop at the first that has time left.
    for (let entry = this.waiting.first; entry !== null && entry.since <= expired; entry = this.waiting.first) {
      const req = entry.req!;
      const res = entry.res!;
      this.leave(entry);
      if (res.headersSent || res.writableEnded || res.destroyed) continue;
      this.reports.report(
        new Error(`The handler did not answer within handlerTimeout (${timeout} ms): answered 503; answer sooner, or raise handlerTimeout`),
        req,
      );
      this.answers.fail(new HandlerTimedOut(timeout), req, res);
    }
  }
}

/** A response in the handlerTimeout watch's list: what its response calls once its head is written. */
class Waiting extends Linked<Waiting> implements ResponseWatch {
  constructor(
    private readonly list: HandlerTimeouts,
    /** Both null once it left the list. */
    public req: Request | null,
    public res: Response | null,
    readonly since: number,
  ) {
    super();
  }

  begun(): void {
    this.list.leave(this);
  }
}
