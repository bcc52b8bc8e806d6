import { tracingChannel } from "node:diagnostics_channel";
import type { InternalRequest, Request, TracedRequest } from "../http/request.js";
import { TRACED } from "../base/symbols.js";
import type { Response } from "../http/response.js";

/**
 * What the `cog.request` tracing channel publishes for a request: the same object to each of its
 * five channels, so a subscriber can keep what it needs on it between `start` and `asyncEnd`.
 */
export interface RequestMessage {
  readonly req: Request;
  readonly res: Response;
  /** The matched route's pattern (`req.route`), known before `start`; undefined when no route matched. */
  readonly route: string | undefined;
  /** The error that reached the error handling, on `error` (and after it). */
  error?: unknown;
  /**
   * Set by a `start` subscriber that needs the chain to run inside a context of its own (as
   * OpenTelemetry's `context.with` does): Cog then runs the request's dispatch through it (a
   * chain that starts after a buffered body arrived goes on in that context too).
   * @internal
   */
  [WITHIN]?: ((chain: () => void) => void) | undefined;
}

/** The slot of `RequestMessage` through which a subscriber runs the chain in its context. */
export const WITHIN: unique symbol = Symbol("cog.request.within");

/**
 * `diagnostics_channel.tracingChannel("cog.request")`, around each request's chain:
 * - `start` once the route is known, before the body is received and the chain runs (the chain's
 *   synchronous part runs inside `start.runStores`, so a store bound with `bindStore` holds there);
 * - `end` when that synchronous part returns;
 * - `error` when an error reaches Cog's error handling (a throw, a rejection, `next(err)`, a
 *   refused body), before the error handler answers it, with `error` set;
 * - `asyncStart` then `asyncEnd` when the response is done: finished, or closed without finishing.
 */
export const requestChannel = tracingChannel<unknown, RequestMessage>("cog.request");

const { start, end, asyncStart, asyncEnd, error } = requestChannel;

/**
 * Whether anyone subscribes to any of the tracing channel's five channels, read once per
 * request: each channel's own `hasSubscribers`, which the optimizing compiler inlines into the
 * caller (a few instructions each). TracingChannel's own `hasSubscribers` (Node 22 and 20.13 on)
 * says the same, but was called rather than inlined on the dispatch path: ~70 instructions a
 * request, callgrind's count with nobody subscribed.
 */
export function isTraced(): boolean {
  return start.hasSubscribers || end.hasSubscribers || asyncStart.hasSubscribers || asyncEnd.hasSubscribers || error.hasSubscribers;
}

/**
 * Runs a request's dispatch (`proceed`: the body, then the chain) inside the channel: `start`
 * before it, `end` after its synchronous part; `asyncStart` and `asyncEnd` once the response is
 * done. Called only while someone subscribes: the message, the closure and the `close` listener
 * are what observing a request costs.
 */
export function traceRequest(req: Request, res: Response, route: string | undefined, proceed: () => void): void {
  const message: RequestMessage = { req, res, route };
  (req as InternalRequest)[TRACED] = message;
  res.once("close", () => {
    requestChannel.asyncStart.publish(message);
    requestChannel.asyncEnd.publish(message);
  });
  requestChannel.traceSync(within, message, undefined, message, proceed);
}

/** Runs the chain through the subscriber's context where one asked for it (`WITHIN`). */
function within(message: RequestMessage, chain: () => void): void {
  const run = message[WITHIN];
  if (run === undefined) chain();
  else run(chain);
}

/** Publishes `error` for a traced request (its `req[TRACED]`). */
export function publishError(message: TracedRequest, err: unknown): void {
  message.error = err;
  requestChannel.error.publish(message as RequestMessage);
}
