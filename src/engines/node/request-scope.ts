import { AsyncResource } from "node:async_hooks";

/**
 * The async context a request runs in on the node engine: its dispatch (middleware, handlers,
 * the error handler, and what they await). One per request, so that what a request keeps in an
 * AsyncLocalStorage (with `run` or `enterWith`), a span a tracer opened, or a user an error
 * reporter bound, is never seen by another request: node:http runs a request in its
 * connection's context, which the requests of a keep-alive connection share. (The native
 * engine's is in native/request-context.ts.)
 *
 * Made where the request arrives, inside the connection's context, so it inherits what that
 * context holds (the context the server was started in).
 */
export class RequestScope extends AsyncResource {
  constructor() {
    super("CogRequest");
  }
}
