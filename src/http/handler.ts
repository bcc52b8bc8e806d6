import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Request } from "./request.js";
import type { Response } from "./response.js";

/** Call it to run the next middleware, or with an error to skip to the error handler. */
export type Next = (err?: unknown) => void;

/**
 * A handler or middleware, Express-style. It may be sync or async: a thrown error, a rejected
 * promise and `next(err)` all reach the app's error handler.
 */
export type Handler<Req = Request, Res = Response> = (req: Req, res: Res, next: Next) => unknown;

/**
 * Middleware typed for Node's own request and response classes or their subclasses (node:http's,
 * node:http2's compatibility API, Express's `Request` and `Response`, Connect's node handler).
 * Cog's `req` and `res` are those classes at run time on both engines (`instanceof` holds,
 * docs/engines.md), so `app.use()` takes such middleware without a cast.
 */
export type NodeMiddleware<Req extends IncomingMessage | Http2ServerRequest, Res extends ServerResponse | Http2ServerResponse> = (
  req: Req,
  res: Res,
  next: Next,
) => unknown;
