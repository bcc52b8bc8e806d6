import { AsyncResource } from "node:async_hooks";

/**
 * The async context a request runs in, on every engine: its dispatch (middleware, handlers, the
 * error handler, and what they await) and, on the native engine, each later event for it (body
 * pieces, 'drain', 'close'). One per request, so that what a request keeps in an
 * AsyncLocalStorage (with `run` or `enterWith`), a span a tracer opened, or a user an error
 * reporter bound, is never seen by another request. node:http runs a request in its
 * connection's context, which the requests of a keep-alive connection share; the native engine
 * calls into JavaScript once for a batch of requests, in one context.
 *
 * Made where the request arrives, so it inherits the context the server was started in (as a
 * node:http server's connections do).
 */
export class RequestScope extends AsyncResource {
  constructor() {
    super("CogRequest");
  }
}

/** The scope of a native response, under a symbol: set when its request arrives. */
export const SCOPE: unique symbol = Symbol("cog.scope");
