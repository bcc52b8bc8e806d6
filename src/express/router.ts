import RouterModule from "router";
import Layer from "router/lib/layer.js";
import callParam from "router/lib/param.js";
import { matchedRoute } from "router/lib/symbols.js";
import { recordError, requestChannel, shouldTrace, traceParam } from "router/lib/tracing.js";
import parseUrl from "parseurl";
import createDebug from "debug";

/**
 * Express 5's router: pillarjs's `router` (its layers, routes, path matching, params, tracing),
 * with its `handle` (the walk of a request through the layers) written again to cost less per
 * request. The walk takes the same steps in the same order with the same effects on the request
 * (`req.next`, `baseUrl`, `originalUrl`, `params`, `route`, the URL trimmed under a mount path
 * and restored), the same answers to `next()`, `next('route')`, `next('router')` and errors, the
 * same OPTIONS answer, and the same deferrals (`setImmediate` at the end of the stack, and after
 * 100 layers called synchronously). What it leaves out is what the original makes per request
 * that nobody sees: the restore function and its two lists, a closure per matched layer and for
 * the prefix trim, the match object of a middleware mounted at "/", and the debug calls when
 * `DEBUG` does not name "router". A request pays one closure (`next`, which handlers are given).
 *
 * router's own `handle` cost about 3,000 instructions per middleware passed through and 7,000
 * for the app and one route (callgrind, the bench's app on the native engine).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
type Next = (err?: unknown) => void;

const debug = createDebug("router");
const matchLayer = Layer.prototype.match as (path: string) => unknown;

/** `Router([options])`, with or without `new`: router's router, with the walk below. */
export const Router = function Router(this: unknown, options?: Any) {
  const router = RouterModule(options);
  // Once per router, when it is made: its methods are router's but `handle`.
  Object.setPrototypeOf(router, Router.prototype);
  return router;
} as unknown as Any;
Router.prototype = Object.create(RouterModule.prototype, {
  constructor: { value: Router, writable: true, configurable: true },
  handle: { value: handle, writable: true, configurable: true },
});
Router.Route = RouterModule.Route;

/** One request's walk through one router's stack (router's `handle` kept these in its closure). */
class Walk {
  idx = 0;
  removed = "";
  slashAdded = false;
  sync = 0;
  /** The param callbacks already run for this request (made when a layer has params). */
  paramcalled: Record<string, Any> | null = null;
  /** The methods the matched routes accept, for an OPTIONS request's automatic answer. */
  methods: string[] | null = null;
  // What the request had on entering: restored on leaving (router's `restore`).
  readonly savedBaseUrl: unknown;
  readonly savedNext: unknown;
  readonly savedMatched: unknown;
  readonly parentUrl: string;
  next: Next = noNext;

  constructor(
    readonly router: Any,
    readonly req: Any,
    readonly res: Any,
    readonly callback: Next,
    readonly protohost: string,
    readonly parentParams: unknown,
  ) {
    this.savedBaseUrl = req.baseUrl;
    this.savedNext = req.next;
    this.savedMatched = req[matchedRoute];
    this.parentUrl = req.baseUrl || "";
  }
}

function noNext(): void {}

function handle(this: Any, req: Any, res: Any, callback: Next): void {
  if (!callback) throw new TypeError("argument callback is required");
  if (debug.enabled) debug("dispatching %s %s", req.method, req.url);
  const walk = new Walk(this, req, res, callback, getProtohost(req.url) || "", req.params);
  const next: Next = (err) => step(walk, err);
  walk.next = next;
  req.next = next;
  if (req.method === "OPTIONS") walk.methods = [];
  req.baseUrl = walk.parentUrl;
  req.originalUrl = req.originalUrl || req.url;
  step(walk, undefined);
}

/** The end of the stack, or `next("router")`: the router's callback, or an OPTIONS request's automatic answer. */
function done(walk: Walk, err: unknown): void {
  const methods = walk.methods;
  if (methods === null || err || methods.length === 0) return leave(walk, err);
  try {
    sendOptionsResponse(walk.res, methods);
  } catch (error) {
    leave(walk, error);
  }
}

/** Leaves the router: the request's baseUrl, next, params and matched route as they came in, then the router's callback. */
function leave(walk: Walk, err: unknown): void {
  const req = walk.req;
  req.baseUrl = walk.savedBaseUrl;
  req.next = walk.savedNext;
  req.params = walk.parentParams;
  req[matchedRoute] = walk.savedMatched;
  walk.callback(err);
}

/** router's `next(err)`. */
function step(walk: Walk, err: unknown): void {
  const req = walk.req;
  // The error has left its callback: remembered, so that enclosing routers don't claim it.
  if (err) recordError(req, err);
  let layerError = err === "route" ? null : err;
  if (walk.slashAdded) {
    const pathIsRoot = req.url === "/" || req.url.startsWith("/?");
    if (pathIsRoot || (walk.removed.endsWith("/") && req.url[0] === "/")) req.url = req.url.slice(1);
    walk.slashAdded = false;
  }
  if (walk.removed.length !== 0) {
    req.baseUrl = walk.parentUrl;
    req.url = walk.protohost + walk.removed + req.url.slice(walk.protohost.length);
    walk.removed = "";
  }
  if (layerError === "router") {
    setImmediate(done, walk, null);
    return;
  }
  const stack = walk.router.stack;
  if (walk.idx >= stack.length) {
    setImmediate(done, walk, layerError);
    return;
  }
  if (++walk.sync > 100) {
    setImmediate(walk.next, err);
    return;
  }
  const path = getPathname(req);
  if (path == null) return done(walk, layerError);

  let layer: Any;
  let match: Any;
  let route: Any;
  while (!match && walk.idx < stack.length) {
    layer = stack[walk.idx++];
    route = layer.route;
    if (layer.slash && layer.match === matchLayer) {
      // A middleware mounted at "/" matches every path: only its params object is made.
      match = SLASH;
    } else {
      try {
        match = layer.match(path);
      } catch (error) {
        // Matching can fail before a handler runs (a malformed escape): not a later handler's error.
        recordError(req, error);
        layerError = layerError || error;
        match = false;
      }
    }
    if (!match) continue;
    // Middleware takes errors and requests alike.
    if (!route) continue;
    // Routes don't match with an error pending.
    if (layerError) {
      match = false;
      continue;
    }
    const method = req.method;
    const hasMethod = route._handlesMethod(method);
    // The automatic OPTIONS answer lists what the matching routes accept.
    if (!hasMethod && method === "OPTIONS" && walk.methods !== null) walk.methods.push.apply(walk.methods, route._methods());
    if (!hasMethod && method !== "HEAD") match = false;
  }
  if (!match) return done(walk, layerError);
  if (route) req.route = route;
  const slash = match === SLASH;
  // Kept on the request before param callbacks can yield.
  req[matchedRoute] = slash ? layer.rawPath : match.pattern;
  const params = slash ? {} : match.params;
  req.params = walk.router.mergeParams ? mergeParams(params, walk.parentParams) : params;
  const keys = slash ? undefined : match.keys;
  if (!keys || keys.length === 0) {
    proceed(walk, layer, route, layerError, slash ? "" : match.path, path);
    walk.sync = 0;
    return;
  }
  walk.paramcalled ??= {};
  processParams(walk.router.params, layer, keys, walk.paramcalled, req, walk.res, (error?: unknown) => {
    if (error) step(walk, layerError || error);
    else proceed(walk, layer, route, layerError, match.path, path);
    walk.sync = 0;
  });
}

/** What router's `match` of a "/" middleware returns, stood for by one object: its params are made per request. */
const SLASH = Object.freeze({});

/** A matched layer runs: a route's dispatch, or a middleware with the mount path trimmed off the URL (router's `trimPrefix`). */
function proceed(walk: Walk, layer: Any, route: unknown, layerError: unknown, layerPath: string, path: string): void {
  const req = walk.req;
  const next = walk.next;
  if (route) return layer.handleRequest(req, walk.res, next);
  if (layerPath.length !== 0) {
    // A prefix match that ends on a path separator.
    if (layerPath !== path.substring(0, layerPath.length)) return next(layerError);
    const c = path[layerPath.length];
    if (c && c !== "/") return next(layerError);
    const protohost = walk.protohost;
    if (debug.enabled) debug("trim prefix (%s) from url %s", layerPath, req.url);
    walk.removed = layerPath;
    req.url = protohost + req.url.slice(protohost.length + layerPath.length);
    if (!protohost && req.url[0] !== "/") {
      req.url = `/${req.url}`;
      walk.slashAdded = true;
    }
    req.baseUrl = walk.parentUrl + (layerPath[layerPath.length - 1] === "/" ? layerPath.substring(0, layerPath.length - 1) : layerPath);
  }
  if (debug.enabled) debug("%s %s : %s", layer.name, layerPath, req.originalUrl);
  if (layerError) layer.handleError(layerError, req, walk.res, next);
  else layer.handleRequest(req, walk.res, next);
}

// The rest as in router 2.3's index.js.

function getPathname(req: Any): string | undefined {
  try {
    return parseUrl(req)!.pathname;
  } catch {
    return undefined;
  }
}

function getProtohost(url: unknown): string | undefined {
  if (typeof url !== "string" || url.length === 0 || url[0] === "/") return undefined;
  const searchIndex = url.indexOf("?");
  const pathLength = searchIndex !== -1 ? searchIndex : url.length;
  const fqdnIndex = url.substring(0, pathLength).indexOf("://");
  return fqdnIndex !== -1 ? url.substring(0, url.indexOf("/", 3 + fqdnIndex)) : undefined;
}

function mergeParams(params: Any, parent: Any): Any {
  if (typeof parent !== "object" || !parent) return params;
  const obj = Object.assign({}, parent);
  if (!(0 in params) || !(0 in parent)) return Object.assign(obj, params);
  let i = 0;
  let o = 0;
  while (i in params) i++;
  while (o in parent) o++;
  for (i--; i >= 0; i--) {
    params[i + o] = params[i];
    if (i < o) delete params[i];
  }
  return Object.assign(obj, params);
}

function processParams(params: Any, layer: Any, keys: string[], called: Any, req: Any, res: Any, done: Next): void {
  let i = 0;
  let paramIndex = 0;
  let key: string;
  let paramVal: unknown;
  let paramCallbacks: Any;
  let paramCalled: Any;

  function param(err?: unknown): void {
    if (err) return done(err);
    if (i >= keys.length) return done();
    paramIndex = 0;
    key = keys[i++]!;
    paramVal = req.params[key];
    paramCallbacks = params[key];
    paramCalled = called[key];
    if (paramVal === undefined || !paramCallbacks) return param();
    // Already called with the same value, or failed: the value (and error) as then.
    if (paramCalled && (paramCalled.match === paramVal || (paramCalled.error && paramCalled.error !== "route"))) {
      req.params[key] = paramCalled.value;
      return param(paramCalled.error);
    }
    called[key] = paramCalled = { error: null, match: paramVal, value: paramVal };
    paramCallback();
  }

  function paramCallback(err?: unknown): void {
    const fn = paramCallbacks[paramIndex++];
    paramCalled.value = req.params[key];
    if (err) {
      paramCalled.error = err;
      param(err);
      return;
    }
    if (!fn) return param();
    if (shouldTrace(requestChannel)) {
      traceParam(fn, { req, res, layer, handler: fn, route: req[matchedRoute], param: key }, paramCallback, paramVal, key);
      return;
    }
    callParam(fn, req, res, paramCallback, paramVal, key);
  }

  param();
}

function sendOptionsResponse(res: Any, methods: string[]): void {
  const options: Record<string, boolean> = Object.create(null);
  for (const method of methods) options[method] = true;
  const allow = Object.keys(options).sort().join(", ");
  res.setHeader("Allow", allow);
  res.setHeader("Content-Length", Buffer.byteLength(allow));
  res.setHeader("Content-Type", "text/plain");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.end(allow);
}
