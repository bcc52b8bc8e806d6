import type { CogRequest } from "./request.js";
import type { CogResponse } from "./response.js";

/** Call it to run the next middleware, or with an error to skip to the error handler. */
export type Next = (err?: unknown) => void;

/**
 * A handler or middleware, Express-style. It may be sync or async: a thrown
 * error, a rejected promise and `next(err)` all reach the app's error handler.
 */
export type Handler<Req = CogRequest, Res = CogResponse> = (
  req: Req,
  res: Res,
  next: Next,
) => unknown;

/** Where a chain reports what it can't finish itself. */
export interface ChainOwner {
  fail(err: unknown, req: CogRequest, res: CogResponse): void;
  /** `next()` called past the last handler: nothing answered this request. */
  fallThrough(req: CogRequest, res: CogResponse): void;
}

/**
 * Runs `handlers` in order for one request. The chain itself is an array built
 * once per route at registration; a request costs one small `next` closure.
 */
export function runChain(handlers: readonly Handler[], req: CogRequest, res: CogResponse, owner: ChainOwner): void {
  let index = 0;
  const next: Next = (err) => {
    if (err !== undefined && err !== null) return owner.fail(err, req, res);
    if (index >= handlers.length) return owner.fallThrough(req, res);
    invoke(handlers[index++]!, req, res, next, owner);
  };
  next();
}

function invoke(handler: Handler, req: CogRequest, res: CogResponse, next: Next, owner: ChainOwner): void {
  try {
    const result = handler(req, res, next) as PromiseLike<unknown> | undefined;
    // Only async handlers pay for a rejection handler; sync ones create no promise at all.
    if (result !== undefined && result !== null && typeof result.then === "function") {
      result.then(undefined, (err: unknown) => owner.fail(err ?? new Error("Handler rejected without a reason"), req, res));
    }
  } catch (err) {
    owner.fail(err, req, res);
  }
}
