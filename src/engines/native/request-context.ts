import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import { SCOPE, STORES } from "../../base/symbols.js";
import { asyncResource } from "../../base/async-resource.js";

/**
 * Each request on the native engine in an async context of its own, at no cost to a request
 * nobody observes.
 *
 * The addon calls into JavaScript once for a batch of requests and events, in one async context
 * (one `napi_make_callback`, whose resource is `resource` below): the requests of a batch, and
 * every later event, would otherwise share it, and a store one request entered with
 * `AsyncLocalStorage.enterWith` would be the next one's. How each request gets its own depends on
 * where this Node's AsyncLocalStorage keeps its stores (`mode`):
 *
 * - "frames": in async context frames (Node 24 on; 22 with --experimental-async-context-frame),
 *   which a batch's callback scope does not reset between its calls. Each request's calls run in
 *   `server.runInAsyncScope`: the context the server was started in, with nothing another
 *   request entered (what a call enters ends with it, as in node:http on those Nodes).
 * - "resource properties": as properties of `executionAsyncResource()` (Node 20 and 22): entering
 *   a store sets one, and a promise, timer or tick made then copies it. The batch's resource keeps
 *   no properties itself: a Proxy below it reads and writes them on the request being served
 *   (`serve`), and, between requests, on the server's own. So a store entered while serving a
 *   request is that request's, for its dispatch and each of its events, and what it made copies
 *   it from there. Serving a request that enters nothing costs two assignments. This reaches
 *   below AsyncLocalStorage's public API, so it is used only on the Nodes where its probe
 *   (`proxyIsolates`) has seen it work, which test/engines/native/request-context.test.ts checks
 *   on every supported major, naming the internal if a release changes it. A request starts with
 *   no stores: the server's are not shared with it, since AsyncLocalStorage may keep them in one
 *   object it changes in place.
 * - "request resources": the same isolation through the public API alone, an AsyncResource per
 *   request whose scope each of its calls runs in; where stores are resource properties on a Node
 *   the Proxy was not checked on. It costs a small request about 5% more instructions than the
 *   Proxy (the figures are in docs/decisions/request-context.md).
 */
export class RequestContexts {
  /** The batches' async resource (the addon's `napi_async_init` resource). */
  readonly resource: object;
  /** With frames: the server's context, entered for each request's calls; else null. */
  readonly server: AsyncResource | null;

  /**
   * Each call runs in an AsyncResource's scope (not "resource properties"). (`serve` reads this
   * one boolean on every call, and keeps its other modes apart, so that it stays small enough for
   * the optimizing compiler to inline where the engine calls it.)
   */
  readonly scoped: boolean;

  constructor(readonly mode: ContextMode = contextMode) {
    this.scoped = mode !== "resource properties";
    this.server = mode === "frames" ? new AsyncResource("CogNativeServer") : null;
    this.resource = mode === "resource properties" ? storesOfServed() : {};
  }
}

/** How the native engine gives each request its own async context (see `RequestContexts`). */
export type ContextMode = "frames" | "resource properties" | "request resources";

type Stores = Record<PropertyKey, unknown>;

/** A request whose calls `serve` runs, which keeps its context: its stores, or its own AsyncResource. */
export interface Served {
  [STORES]: Stores | null;
  [SCOPE]: AsyncResource | null;
}
/** The request whose calls are running, whose stores the batch resource holds; null between them. */
let serving: Served | null = null;

/** Runs `call(a, b, c)` as `request`'s: in its context (see `RequestContexts`). */
export function serve<A, B, C>(contexts: RequestContexts, request: Served, call: (a: A, b: B, c: C) => void, self: unknown, a: A, b: B, c: C): void {
  if (contexts.scoped) return serveInScope(contexts, request, call, self, a, b, c);
  const previous = serving;
  serving = request;
  try {
    call.call(self, a, b, c);
  } finally {
    serving = previous;
  }
}

/** `serve` where each call runs in an AsyncResource's scope: the server's ("frames"), or the request's own. */
function serveInScope<A, B, C>(contexts: RequestContexts, request: Served, call: (a: A, b: B, c: C) => void, self: unknown, a: A, b: B, c: C): void {
  const scope = contexts.server ?? (request[SCOPE] ??= asyncResource("CogNativeRequest"));
  scope.runInAsyncScope(call, self, a, b, c);
}

/**
 * An object whose properties are those of the request being served (`serving`), or between
 * requests a stores object of its own: a bare object over a Proxy, so that only the properties it
 * lacks, which are all of them, reach the traps, and a batch that touches none never calls them.
 */
function storesOfServed(): object {
  const between: Stores = Object.create(null) as Stores;
  const storesOf = (): Stores => (serving === null ? between : (serving[STORES] ??= Object.create(null) as Stores));
  return Object.create(
    new Proxy(Object.prototype, {
      get(target, key, receiver) {
        const stores = serving === null ? between : serving[STORES];
        return stores != null && key in stores ? stores[key] : Reflect.get(target, key, receiver);
      },
      set(_target, key, value) {
        storesOf()[key] = value;
        return true;
      },
    }),
  ) as object;
}

/**
 * Whether the batch resource's Proxy gives each request its own stores on this Node (for the
 * canary test: asking sets executionAsyncResource() to work for good, see `storesInFrames`): a
 * store a request enters, with `enterWith` or `run`, is its own: another request, and the time between
 * requests, don't see it, and it is there when the request is served again. Run in an
 * AsyncResource whose properties are those of the request being served, as the batch resource's
 * are.
 */
export function proxyIsolates(): boolean {
  const als = new AsyncLocalStorage<string>();
  // An AsyncResource (the resource its scope runs in) made over a batch resource's Proxy: what
  // it sets on itself, as what async hooks set on the batch resource, goes through the Proxy.
  function ProbeResource(): void {}
  ProbeResource.prototype = storesOfServed();
  const scope = Reflect.construct(AsyncResource, ["CogProbe"], ProbeResource) as AsyncResource;
  const first: Served = { [STORES]: null, [SCOPE]: null };
  const second: Served = { [STORES]: null, [SCOPE]: null };
  const seen: unknown[] = [];
  const as = (request: Served, fn: () => void): void => {
    const previous = serving;
    serving = request;
    try {
      fn();
    } finally {
      serving = previous;
    }
  };
  try {
    AsyncResource.prototype.runInAsyncScope.call(scope, () => {
      as(first, () => als.enterWith("first"));
      as(second, () => seen.push(als.getStore(), als.run("run", () => als.getStore()), als.getStore()));
      seen.push(als.getStore());
      as(first, () => seen.push(als.getStore()));
    });
  } finally {
    als.disable();
  }
  return seen.length === 5 && seen[0] === undefined && seen[1] === "run" && seen[2] === undefined && seen[3] === undefined && seen[4] === "first";
}

const major = Number(process.versions.node.split(".")[0]);

/**
 * Whether AsyncLocalStorage keeps its stores in async context frames (see `RequestContexts`): by
 * default from Node 24, with --experimental-async-context-frame on 22 and 23, not with
 * --no-async-context-frame (flags Node takes from its command line only). Read from Node's
 * version and flags, not asked of AsyncLocalStorage: asking it calls executionAsyncResource(),
 * after which Node hands every native callback's resource to JavaScript for the life of the
 * process, in an app that may never use AsyncLocalStorage (within callgrind's noise here, but a
 * cost with no use). test/engines/native/request-context.test.ts asks it, and fails if the two
 * disagree.
 */
export const storesInFrames = major >= 24 ? !process.execArgv.includes("--no-async-context-frame") : process.execArgv.includes("--experimental-async-context-frame");

/**
 * The Nodes on which the batch resource's Proxy was seen to isolate requests (the canary test,
 * run on every supported major): 20 to 26. On a later one, where stores are resource properties
 * (--no-async-context-frame), the engine takes the public API's way until it is seen there too.
 */
const PROXY_CHECKED_THROUGH = 26;

/** This Node's mode; what a server made from now on uses (see `useContextMode`). */
export let contextMode: ContextMode = storesInFrames ? "frames" : major <= PROXY_CHECKED_THROUGH ? "resource properties" : "request resources";

/** @internal For the tests of the fallback: the mode of the servers made from now on. */
export function useContextMode(mode: ContextMode): void {
  contextMode = mode;
}
