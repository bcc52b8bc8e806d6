import type { Request } from "./request.js";
import type { Response } from "./response.js";

/** Call it to run the next middleware, or with an error to skip to the error handler. */
export type Next = (err?: unknown) => void;

/**
 * A handler or middleware, Express-style. It may be sync or async: a thrown error, a rejected
 * promise and `next(err)` all reach the app's error handler.
 */
export type Handler<Req = Request, Res = Response> = (req: Req, res: Res, next: Next) => unknown;
