import type { Request } from "../http/request.js";
import type { Response } from "../http/response.js";
import type { Handler, Next } from "../http/handler.js";

export type { Handler, Next };

/** Where a chain reports what it can't finish itself. */
export interface ChainOwner {
  fail(err: unknown, req: Request, res: Response): void;
  /** `next()` called past the last handler: nothing answered this request. */
  fallThrough(req: Request, res: Response): void;
  /**
   * A handler returned (an async one: its promise fulfilled, with `value`) without having begun
   * to answer or called `next`: maybe a bug, maybe an answer still to come (`nextCalled` tells
   * later whether it called `next` after all). Absent where nobody watches for that (in
   * production): an async handler's promise then gets no fulfilment callback at all.
   */
  readonly returned?: ((req: Request, res: Response, handler: Handler, nextCalled: () => boolean, value: unknown) => void) | undefined;
}

/**
 * Runs `handlers` in order for one request. The chain itself is an array built once per route
 * at registration; each step costs one small `next` closure, which knows whether it was called
 * already: a second call is a bug in that middleware, answered with a 500 (or logged, once the
 * response is out) rather than running the rest of the chain twice.
 */
export function runChain(handlers: readonly Handler[], req: Request, res: Response, owner: ChainOwner): void {
  step(handlers, 0, req, res, owner);
}

function step(handlers: readonly Handler[], index: number, req: Request, res: Response, owner: ChainOwner): void {
  if (index >= handlers.length) return owner.fallThrough(req, res);
  const handler = handlers[index]!;
  let called = false;
  const next: Next = (err) => {
    if (called) return owner.fail(new Error(`next() was called twice by the middleware ${describe(handler)}; call it once`), req, res);
    called = true;
    if (err !== undefined && err !== null) return owner.fail(err, req, res);
    step(handlers, index + 1, req, res, owner);
  };
  try {
    const result = handler(req, res, next) as PromiseLike<unknown> | undefined;
    // Only async handlers pay for settlement handlers; sync ones create no promise at all, and one
    // that answered before returning costs two property reads here.
    const returned = owner.returned;
    if (result !== undefined && result !== null && typeof result.then === "function") {
      result.then(
        returned === undefined
          ? undefined
          : (value) => {
              if (!called && !res.writableEnded && !res.headersSent) returned(req, res, handler, () => called, value);
            },
        (err: unknown) => owner.fail(err ?? new Error("Handler rejected without a reason"), req, res),
      );
    } else if (returned !== undefined && !called && !res.writableEnded && !res.headersSent) {
      returned(req, res, handler, () => called, result);
    }
  } catch (err) {
    owner.fail(err, req, res);
  }
}

/** A handler's name for messages: `"auth"`, or `(anonymous)`. */
export function describe(handler: Handler): string {
  return handler.name === "" ? "(anonymous)" : `"${handler.name}"`;
}
