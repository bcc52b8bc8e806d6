import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";

/**
 * Each request on the native engine in an async context of its own, at no cost to a request
 * nobody observes.
 *
 * The addon calls into JavaScript once for a batch of requests and events, in one async context
 * (one `napi_make_callback`, whose resource is `resource` below): the requests of a batch, and
 * every later event, would otherwise share it, and a store one request entered with
 * `AsyncLocalStorage.enterWith` would be the next one's. A per-request AsyncResource entered for
 * each call isolates them, but cost about 5% of a small request's instructions (the figures are
 * in docs/guide/observability.md), so the engine does it as follows.
 *
 * Where AsyncLocalStorage keeps its stores on async resources (Node 20 and 22: entering a store
 * sets a property of `executionAsyncResource()`, and a promise, timer or tick made then copies
 * it), the batch's resource keeps no properties itself: it reads and writes them on the request
 * being served (`serve`), and, between requests, on the server's own. So a store entered while
 * serving a request is that request's, for its dispatch and each of its events, and what it
 * made copies it from there. Serving a request that enters nothing costs two assignments. A
 * request starts with none: the server's are not shared with it, since AsyncLocalStorage may
 * keep them in one object it changes in place (Node 24 without frames does).
 *
 * Where AsyncLocalStorage keeps its stores in async context frames (Node 24 on, 22 with
 * --experimental-async-context-frame), which a batch's callback scope does not reset between
 * its calls, each request's calls run in `frames.runInAsyncScope`: the context the server was
 * started in, with nothing another request entered.
 */
export class RequestContexts {
  /** The batches' async resource (the addon's `napi_async_init` resource). */
  readonly resource: object;
  /** With async context frames: the server's context, entered for each request's calls; else null. */
  readonly frames: AsyncResource | null = storesInFrames ? new AsyncResource("CogNativeServer") : null;

  constructor() {
    const server: Stores = Object.create(null) as Stores;
    const storesOf = (): Stores => (serving === null ? server : (serving[STORES] ??= Object.create(null) as Stores));
    // A Proxy as the prototype of a bare object: only the properties the object lacks, which are
    // all of them, reach its traps, and a batch that touches none never calls them.
    this.resource = Object.create(
      new Proxy(Object.prototype, {
        get(target, key, receiver) {
          const stores = serving === null ? server : serving[STORES];
          return stores != null && key in stores ? stores[key] : Reflect.get(target, key, receiver);
        },
        set(_target, key, value) {
          storesOf()[key] = value;
          return true;
        },
      }),
    ) as object;
  }
}

type Stores = Record<PropertyKey, unknown>;

/** What a request keeps of the batch resource's properties (its stores), on its response; null until it sets one. */
export const STORES: unique symbol = Symbol("cog.native.stores");

/** The request whose calls are running, whose stores the batch resource holds; null between them. */
export interface Served {
  [STORES]: Stores | null;
}
let serving: Served | null = null;

/** Runs `call(a, b, c)` as `request`'s: with its stores (or, with frames, in the server's context). */
export function serve<A, B, C>(contexts: RequestContexts, request: Served, call: (a: A, b: B, c: C) => void, self: unknown, a: A, b: B, c: C): void {
  const frames = contexts.frames;
  const previous = serving;
  serving = request;
  try {
    if (frames === null) call.call(self, a, b, c);
    else frames.runInAsyncScope(call, self, a, b, c);
  } finally {
    serving = previous;
  }
}

/**
 * Whether AsyncLocalStorage keeps its stores in async context frames rather than on async
 * resources: its `enterWith` sets a frame then (read from its source, which names it).
 */
export const storesInFrames = AsyncLocalStorage.prototype.enterWith.toString().includes("AsyncContextFrame");
