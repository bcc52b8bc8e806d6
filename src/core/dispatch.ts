import { asyncResource } from "../base/async-resource.js";
import { tooLarge } from "../engines/kit/body-intake.js";
import { NO_BODY, type HeadVerdict, type RequestSurface, type ResponseSurface } from "../engines/contract/engine.js";
import { HttpError } from "../base/errors.js";
import type { Limits } from "../base/limits.js";
import type { RequestLogger } from "../observe/access-log.js";
import { pathOf } from "../base/path.js";
import { decodeParam, type InternalRequest, type Params, type Request } from "../http/request.js";
import { type InternalResponse, type Response } from "../http/response.js";
import type { Answers, HandlerTimeouts } from "./answer.js";
import { runChain, type Handler } from "./chain.js";
import type { Match, Router } from "./router.js";
import type { Route, Routes } from "./routes.js";
import { isTraced, traceRequest } from "../observe/request-channel.js";
import { RESPONSE, ROUTE, SERIALIZERS } from "../base/symbols.js";

/**
 * The second stage, where an engine hands each request over (`EngineHost.dispatch`): find the
 * route, receive the body as the route asks (buffered before the chain, or streamed through it),
 * run the chain. What the chain leaves unanswered goes to the answers.
 */
export class Dispatcher {
  /** The server drains: new requests get 503 (see `Answers.refuseWhileClosing`). */
  closing = false;
  private readonly router: Router<Route>;

  constructor(
    private readonly routes: Routes,
    private readonly answers: Answers,
    private readonly timeouts: HandlerTimeouts,
    private readonly limits: Limits,
    private readonly logger: RequestLogger | null,
  ) {
    this.router = routes.router;
  }

  /**
   * The entry point for every request, bound so engines can call it directly: the engine has
   * read the head and says what body follows, or why the request is refused.
   *
   * What every request runs is kept small, and what few requests need is in methods of its own
   * (`traced`, `unusual`, `withParams`, `withBody`): the optimizing compiler inlines callees into
   * the engine's request handler within a budget of bytecode, cold branches included, and a
   * call it does not inline costs a request ~30-70 instructions.
   */
  readonly dispatch = (request: RequestSurface, response: ResponseSurface, verdict: HeadVerdict): number | undefined => {
    const req = request as Request;
    const res = response as Response;
    (req as InternalRequest)[RESPONSE] = res;
    if (this.logger !== null) this.logger.begin(req, res);
    // The route is found first, so the tracing channel's `start` knows it.
    const match = typeof verdict === "number" ? this.router.find(req.method!, pathOf(req.url!)) : null;
    if (isTraced()) return this.traced(req, res, verdict, match);
    return this.proceed(req, res, verdict, match);
  };

  /** A request someone traces: its dispatch inside the tracing channel. */
  private traced(req: Request, res: Response, verdict: HeadVerdict, match: Match<Route> | null): number | undefined {
    let bodyTime: number | undefined;
    traceRequest(req, res, match?.data?.path, () => {
      bodyTime = this.proceed(req, res, verdict, match);
    });
    return bodyTime;
  }

  /** The rest of a request's dispatch, once its route is found (`match`; null for a refused request, or no route). */
  private proceed(req: Request, res: Response, verdict: HeadVerdict, match: Match<Route> | null): number | undefined {
    if (this.closing || typeof verdict !== "number" || match === null || match.data === null) {
      this.unusual(req, res, verdict, match);
      return undefined;
    }
    const route = match.data;
    (req as InternalRequest)[ROUTE] = route;
    if (route.serializers !== null) (res as InternalResponse)[SERIALIZERS] = route.serializers;
    if (match.values !== null) return this.withParams(req, res, verdict, route, match.values);
    if (verdict === NO_BODY) {
      this.run(route.handlers, req, res);
      return undefined;
    }
    return this.withBody(req, res, route, verdict);
  }

  /** A request that no route serves: refused while the server drains, broken, or unmatched. */
  private unusual(req: Request, res: Response, verdict: HeadVerdict, match: Match<Route> | null): void {
    if (this.closing) return this.answers.refuseWhileClosing(req, res);
    if (typeof verdict !== "number") {
      // The request broke a rule of HTTP or a limit: answer it, then close rather than guess what follows.
      res.shouldKeepAlive = false;
      return this.answers.fail(verdict, req, res);
    }
    if (match === null) return this.run(this.unmatchedChain(), req, res);
    this.run([...this.routes.fallbackChain(), this.answers.unmatched(req, res, match)], req, res);
  }

  /** The 404 after the app's middleware, for a path no route has: one handler for every such request. */
  private readonly notFound: Handler = (req, res) => this.answers.fallThrough(req, res);
  private unmatched: readonly Handler[] = [];
  private unmatchedFrom: readonly Handler[] | null = null;

  /**
   * The app's middleware, then the 404: the chain of every request whose path no route has
   * (middleware mounted with `use`, such as static files, serves most of them), made again only
   * when the middleware changes, not per request.
   */
  private unmatchedChain(): readonly Handler[] {
    const layers = this.routes.fallbackChain();
    if (layers !== this.unmatchedFrom) {
      this.unmatched = [...layers, this.notFound];
      this.unmatchedFrom = layers;
    }
    return this.unmatched;
  }

  /** A route with params: `req.params`, then the rest of the dispatch. */
  private withParams(req: Request, res: Response, verdict: number, route: Route, values: readonly string[]): number | undefined {
    try {
      req.params = buildParams(route.paramNames, values, this.limits.maxParamLength);
    } catch (err) {
      this.answers.fail(err, req, res);
      return undefined;
    }
    if (verdict === NO_BODY) {
      this.run(route.handlers, req, res);
      return undefined;
    }
    return this.withBody(req, res, route, verdict);
  }

  /**
   * A request with a body: received whole before the chain, or streamed through it, as the route
   * asks. Returns the route's own requestTimeout, which the engine times the body against.
   */
  private withBody(req: Request, res: Response, route: Route, length: number): number | undefined {
    if (route.streamsBody || isMultipart(req)) this.stream(req, res, route, length);
    else this.receive(req, res, route, length);
    return route.requestTimeout;
  }

  /**
   * Buffers the body (within the limit) before the chain runs, so `req.body` can be read
   * synchronously. A body still to come arrives in the connection's events, outside the
   * request's async context: the chain then goes on in the context dispatch ran in (`scope`),
   * so that what a tool entered around the request holds in its handlers (Sentry's scope, a
   * tracing channel subscriber's store, a span), as Express's body parser (raw-body) and
   * Fastify's content-type parser do it. A body that came with the head costs nothing for it.
   */
  private receive(req: Request, res: Response, route: Route, length: number): void {
    const scope = req.complete ? null : asyncResource("CogRequestBody");
    req.receiveBody(length, route.bodyLimit, (err, body) => {
      if (scope === null) this.bodyArrived(err, body, req, res, route);
      else scope.runInAsyncScope(this.bodyArrived, this, err, body, req, res, route);
    });
  }

  private bodyArrived(err: HttpError | null, body: Buffer | null, req: Request, res: Response, route: Route): void {
    if (err !== null) return this.refuseBody(err, req, res);
    const encoding = req.firstHeader("content-encoding");
    if (encoding === undefined) return this.received(body!, req, res, route);
    void import("../http/inflate.js").then(({ inflateBody }) =>
      inflateBody(body!, encoding, route.bodyLimit, (error, inflated) =>
        error !== null ? this.refuseBody(error, req, res) : this.received(inflated!, req, res, route),
      ),
    );
  }

  private received(body: Buffer, req: Request, res: Response, route: Route): void {
    req.rawBody = body;
    req._body = true;
    this.run(route.handlers, req, res);
  }

  /** The body is refused (too large, or undecodable): answer, then close the connection rather than read the rest. */
  private refuseBody(err: HttpError, req: Request, res: Response): void {
    res.shouldKeepAlive = false;
    this.answers.fail(err, req, res);
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
    runChain(handlers, req, res, this.answers);
    if (!res.headersSent) this.timeouts.watch(req, res);
  }
}

/** Whether the body is multipart: left unread, as a stream, for a multipart parser (multer, busboy). */
function isMultipart(req: Request): boolean {
  const type = req.firstHeader("content-type");
  return type !== undefined && type.length >= 19 && type.slice(0, 19).toLowerCase() === "multipart/form-data";
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
