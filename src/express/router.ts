import RouterModule from "router";
import Layer from "router/lib/layer.js";
import callParam from "router/lib/param.js";
import { matchedRoute } from "router/lib/symbols.js";
import { recordError, requestChannel, shouldTrace, traceParam } from "router/lib/tracing.js";
import parseUrl from "parseurl";
import createDebug from "debug";
import { NO_QUERY, NOT_PLAIN_URL, plainQueryIndex } from "./url.js";
import { setImmediate } from "../base/loop.js";

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
 * `DEBUG` does not name "router", a route's `dispatch` closure when the route has one handler
 * (`dispatch` below), and router's `Layer#handleRequest` around each handler (`callLayer`). A
 * request pays one closure (`next`, which handlers are given).
 *
 * router's own `handle` cost about 3,000 instructions per middleware passed through and 7,000
 * for the app and one route (callgrind, the bench's app on the native engine); this walk about
 * 3,700 for the app's four layers and a route (docs/decisions/express-face.md).
 */

type Any = any;
type Next = (err?: unknown) => void;

const debug = createDebug("router");
let debugNamespaces: unknown = null;
let debugOn = false;
/**
 * debug's `enabled`, asked again only when the namespaces it was enabled for change
 * (`debug.enable()`; what its getter itself compares): the getter, on a function object, cost
 * ~250 instructions a request. Nothing else can set this instance's own override.
 */
function debugEnabled(): boolean {
  if (createDebug.namespaces !== debugNamespaces) {
    debugNamespaces = createDebug.namespaces;
    debugOn = debug.enabled;
  }
  return debugOn;
}
const matchLayer = Layer.prototype.match as (path: string) => unknown;

/** `Router([options])`, with or without `new`: router's router, with the walk below. */
export const Router = function Router(this: unknown, options?: Any) {
  const router = RouterModule(options);
  // Once per router, when it is made: its methods are router's but `handle`.
  Object.setPrototypeOf(router, Router.prototype);
  router[PLANS] = [];
  return router;
} as unknown as Any;
Router.prototype = Object.create(RouterModule.prototype, {
  constructor: { value: Router, writable: true, configurable: true },
  handle: { value: handle, writable: true, configurable: true },
  route: {
    value: function route(this: Any, path: unknown) {
      const made = RouterModule.prototype.route.call(this, path);
      const layer = this.stack[this.stack.length - 1];
      markStatic(layer, true, this.caseSensitive, this.strict);
      // The layer calls `made.dispatch` through a closure of router's: the walk may call it itself.
      dispatchers.set(layer, { route: made, handle: layer.handle });
      return made;
    },
    writable: true,
    configurable: true,
  },
  use: {
    value: function use(this: Any, ...args: unknown[]) {
      const from = this.stack.length;
      RouterModule.prototype.use.apply(this, args);
      for (let i = from; i < this.stack.length; i++) markStatic(this.stack[i], false, this.caseSensitive, false);
      return this;
    },
    writable: true,
    configurable: true,
  },
});
Router.Route = RouterModule.Route;
const RouteProto = RouterModule.Route.prototype;
const handlesMethod = RouteProto._handlesMethod;
const routeDispatch = RouteProto.dispatch;
const handleRequest = Layer.prototype.handleRequest;

/** A route's layer made by `route()`: the route its handle dispatches to, and that handle (router's closure). */
const dispatchers = new WeakMap<object, { route: unknown; handle: unknown }>();
/** Layers whose path is plain text: what `matchStatic` needs (see `markStatic`). */
const staticPaths = new WeakMap<object, StaticPath>();

/** On a router: the plans of its stack's layers, by index (see `Plan`). */
const PLANS: unique symbol = Symbol("cog.express.plans");

/**
 * What the walk keeps of one layer of a router's stack, in a list beside the stack (checked
 * against it by identity: a layer added, moved or replaced gets a plan anew). Kept here rather
 * than on the layers: the layers' shapes vary (routes, middleware, methods), so loads of our own
 * keys from them missed V8's caches (~150 instructions each, several per layer and request);
 * plans have one shape.
 */
class Plan {
  /** Its path as text to compare, when plain (markStatic). */
  readonly plain: StaticPath | undefined;
  readonly slash: boolean;
  /** For a route made by `route()`: the route and the handle (router's closure) that dispatches to it. */
  readonly dispatches: unknown;
  readonly dispatchHandle: unknown;
  /** The layer's handle whose arity `arity` is (`fn.length` is answered by a C++ accessor: ~450 instructions). */
  fn: unknown = undefined;
  arity = 0;
  /** For a route of one handler: the plan of its handler's layer. */
  inner: Plan | null = null;
  /** For a route: whether it handles `asked`, a method, when its stack was `askedOf` of `askedAt` layers (see `routeHandles`). */
  asked: unknown = undefined;
  askedOf: unknown = undefined;
  askedAt = 0;
  handles = false;

  constructor(readonly layer: Any) {
    this.plain = staticPaths.get(layer);
    this.slash = layer.slash === true;
    const dispatcher = dispatchers.get(layer);
    this.dispatches = dispatcher?.route;
    this.dispatchHandle = dispatcher?.handle;
  }
}

function planOf(plans: Plan[], at: number, layer: Any): Plan {
  const plan = plans[at];
  if (plan !== undefined && plan.layer === layer) return plan;
  return (plans[at] = new Plan(layer));
}

/**
 * A layer whose path is plain text (no params, wildcards, groups or escapes, ASCII): what its
 * path-to-regexp expression matches, found without it. router's layer matches such a path with
 * `^(?:TEXT)(?:\/$)?$` (a route) or `^(?:TEXT)(?:\/$)?(?=\/|$)` (a middleware), case-insensitive
 * unless `case sensitive routing`, the trailing slash optional unless `strict routing` (and
 * stripped from TEXT then); `match` below answers as that expression does, for any path.
 */
export interface StaticPath {
  /** TEXT, lower-cased unless the match is case-sensitive. */
  readonly text: string;
  readonly end: boolean;
  readonly sensitive: boolean;
  /** The trailing slash is optional (not `strict`). */
  readonly trailing: boolean;
}
/** path-to-regexp's special characters, and anything past ASCII (which its case-insensitive match folds its own way). */
const NOT_PLAIN = /[:*{}()[\]+?!\\]|[^\x20-\x7e]/;
const TRAILING_SLASHES = /\/+$/;

/** Marks a layer whose path is plain text with what `matchStatic` needs. */
function markStatic(layer: Any, end: boolean, sensitive: unknown, strict: unknown): void {
  const plain = staticPathOf(layer, end, sensitive, strict);
  if (plain !== undefined) staticPaths.set(layer, plain);
}

/** What `matchStatic` needs of a layer whose path is plain text, or undefined. @internal Exported for its test. */
export function staticPathOf(layer: Any, end: boolean, sensitive: unknown, strict: unknown): StaticPath | undefined {
  const path = layer?.rawPath;
  if (typeof path !== "string" || NOT_PLAIN.test(path) || layer.slash) return undefined;
  // router's `loosen`: without `strict`, trailing slashes are not part of the text ("/" stays).
  const text = strict || path === "/" ? path : path.replace(TRAILING_SLASHES, "");
  if (text.length === 0) return undefined;
  return { text: sensitive ? text : text.toLowerCase(), end, sensitive: Boolean(sensitive), trailing: !strict };
}

/** The part of `path` a static layer's expression matches, or null. @internal Exported for its test. */
export function matchStatic(at: StaticPath, path: string): string | null {
  const text = at.text;
  const n = text.length;
  if (path.length < n) return null;
  // Paths are nearly always written as the routes are: compared whole first (V8 compares the
  // characters in one go), then character by character, ignoring case, where that missed.
  if (!path.startsWith(text)) {
    if (at.sensitive) return null;
    for (let i = 0; i < n; i++) {
      const c = path.charCodeAt(i);
      const t = text.charCodeAt(i);
      // ASCII letters in either case; nothing past ASCII folds to ASCII.
      if (c !== t && !(c >= 0x41 && c <= 0x5a && c + 0x20 === t)) return null;
    }
  }
  const rest = path.length - n;
  if (rest === 0) return path;
  const next = path.charCodeAt(n);
  if (at.trailing && rest === 1 && next === 0x2f) return path;
  if (!at.end && next === 0x2f) return path.slice(0, n);
  return null;
}

/** A method's lower case, remembered for the few methods there are (router lowers it at each route). */
const lowerMethods = new Map<string, string>();
function lowerMethod(method: string): string {
  switch (method) {
    case "GET":
      return "get";
    case "POST":
      return "post";
    case "HEAD":
      return "head";
  }
  let lower = lowerMethods.get(method);
  if (lower === undefined) {
    lower = method.toLowerCase();
    if (lowerMethods.size < 64) lowerMethods.set(method, lower);
  }
  return lower;
}

/**
 * router's Route `_handlesMethod`, with the method's lower case remembered, and the answer kept
 * in the route's plan for the method last asked: a route's methods change only as handlers are
 * added to it (`route.get(fn)`…), each a layer of its stack.
 */
function routeHandles(route: Any, method: unknown, plan: Plan): boolean {
  if (route._handlesMethod !== handlesMethod) return route._handlesMethod(method);
  const stack = route.stack;
  if (plan.asked === method && plan.askedOf === stack && plan.askedAt === stack.length) return plan.handles;
  const handles = handlesOf(route, method);
  plan.asked = method;
  plan.askedOf = stack;
  plan.askedAt = stack.length;
  plan.handles = handles;
  return handles;
}

function handlesOf(route: Any, method: unknown): boolean {
  const methods = route.methods;
  if (methods._all) return true;
  let name = typeof method === "string" ? lowerMethod(method) : method;
  if (name === "head" && !methods.head) name = "get";
  return Boolean(methods[name as string]);
}

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
  /** The URL whose path `path` is (see `step`). */
  url: unknown = undefined;
  path: string | undefined = undefined;
  /** Whether `DEBUG` names "router", asked once per walk. */
  readonly debugs = debugEnabled();

  constructor(
    readonly router: Any,
    readonly req: Any,
    readonly res: Any,
    /** The router's callback, or null for `last(app, req, res, err)` (see `handleLast`). */
    readonly callback: Next | null,
    readonly app: unknown,
    readonly last: Last | null,
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
  start(new Walk(this, req, res, callback, null, null, getProtohost(req.url) || "", req.params));
}

/** What an app calls at the end of its router's stack (finalhandler), with the app, rather than a closure per request. */
type Last = (app: Any, req: Any, res: Any, err: unknown) => void;

/** `router.handle(req, res, (err) => last(app, req, res, err))`, without making that closure. */
export function handleLast(router: Any, req: Any, res: Any, app: unknown, last: Last): void {
  if (router.handle !== handle) return router.handle(req, res, (err: unknown) => last(app, req, res, err));
  start(new Walk(router, req, res, null, app, last, getProtohost(req.url) || "", req.params));
}

function start(walk: Walk): void {
  const req = walk.req;
  if (walk.debugs) debug("dispatching %s %s", req.method, req.url);
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
  if (walk.callback !== null) walk.callback(err);
  else walk.last!(walk.app, req, walk.res, err);
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
  // The path of the URL the walk last read (parseurl's, which it keeps on the request): the URL
  // changes as mount paths are trimmed and restored, or when a middleware rewrites it.
  const url = req.url;
  let path = walk.path;
  if (url !== walk.url || path === undefined) {
    path = getPathname(req);
    walk.url = url;
    walk.path = path;
  }
  if (path == null) return done(walk, layerError);

  const plans: Plan[] = walk.router[PLANS] ?? (walk.router[PLANS] = []);
  let layer: Any;
  let plan!: Plan;
  let match: Any;
  let route: Any;
  // The matched part of the path, for a layer matched without its match object (SLASH, STATIC_MATCH).
  let matched = "";
  while (!match && walk.idx < stack.length) {
    const at = walk.idx++;
    layer = stack[at];
    plan = planOf(plans, at, layer);
    route = layer.route;
    const own = layer.match === matchLayer;
    const plain = own ? plan.plain : undefined;
    if (own && plan.slash) {
      // A middleware mounted at "/" matches every path: only its params object is made.
      match = SLASH;
      matched = "";
    } else if (plain !== undefined) {
      const part = matchStatic(plain, path);
      if (part !== null) {
        match = STATIC_MATCH;
        matched = part;
      }
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
    const hasMethod = routeHandles(route, method, plan);
    // The automatic OPTIONS answer lists what the matching routes accept.
    if (!hasMethod && method === "OPTIONS" && walk.methods !== null) walk.methods.push(...route._methods());
    if (!hasMethod && method !== "HEAD") match = false;
  }
  if (!match) return done(walk, layerError);
  if (route) req.route = route;
  // Kept on the request before param callbacks can yield.
  if (match === SLASH || match === STATIC_MATCH) {
    req[matchedRoute] = layer.rawPath;
    // As router's matches make them: {} for "/", and path-to-regexp's null-prototype object.
    const params = match === SLASH ? {} : Object.create(null);
    req.params = walk.router.mergeParams ? mergeParams(params, walk.parentParams) : params;
    proceed(walk, layer, plan, route, layerError, matched, path);
    walk.sync = 0;
    return;
  }
  req[matchedRoute] = match.pattern;
  req.params = walk.router.mergeParams ? mergeParams(match.params, walk.parentParams) : match.params;
  const keys = match.keys;
  if (!keys || keys.length === 0) {
    proceed(walk, layer, plan, route, layerError, match.path, path);
    walk.sync = 0;
    return;
  }
  walk.paramcalled ??= {};
  processParams(walk.router.params, layer, keys, walk.paramcalled, req, walk.res, (error?: unknown) => {
    if (error) step(walk, layerError || error);
    else proceed(walk, layer, plan, route, layerError, match.path, path);
    walk.sync = 0;
  });
}

/** What router's `match` of a "/" middleware returns, stood for by one object: its params are made per request. */
const SLASH = Object.freeze({});
/** A static layer's match (`matchStatic`), stood for by one object likewise. */
const STATIC_MATCH = Object.freeze({});

/** A matched layer runs: a route's dispatch, or a middleware with the mount path trimmed off the URL (router's `trimPrefix`). */
function proceed(walk: Walk, layer: Any, plan: Plan, route: unknown, layerError: unknown, layerPath: string, path: string): void {
  const req = walk.req;
  const next = walk.next;
  if (route) return dispatch(walk, layer, plan, route);
  if (layerPath.length !== 0) {
    // A prefix match that ends on a path separator.
    if (layerPath !== path.substring(0, layerPath.length)) return next(layerError);
    const c = path[layerPath.length];
    if (c && c !== "/") return next(layerError);
    const protohost = walk.protohost;
    if (walk.debugs) debug("trim prefix (%s) from url %s", layerPath, req.url);
    walk.removed = layerPath;
    req.url = protohost + req.url.slice(protohost.length + layerPath.length);
    if (!protohost && req.url[0] !== "/") {
      req.url = `/${req.url}`;
      walk.slashAdded = true;
    }
    req.baseUrl = walk.parentUrl + (layerPath[layerPath.length - 1] === "/" ? layerPath.substring(0, layerPath.length - 1) : layerPath);
  }
  if (walk.debugs) debug("%s %s : %s", layer.name, layerPath, req.originalUrl);
  if (layerError) layer.handleError(layerError, req, walk.res, next);
  else callLayer(layer, plan, req, walk.res, next);
}

/**
 * A matched route runs: router's layer calls the route's `dispatch`, which walks the route's own
 * stack with a closure of its own as each handler's `next`. A route of one handler (what
 * `app.get(path, handler)` makes) is walked here instead, with the router's `next` as the
 * handler's: the route's `next` would hand every outcome straight to it (`"route"` as nothing,
 * `"router"` and errors as they are, which the router's `next` reads the same way). Anything
 * else, or a layer, route or handle something replaced, goes through router's own steps.
 */
function dispatch(walk: Walk, layer: Any, plan: Plan, route: Any): void {
  const req = walk.req;
  const next = walk.next;
  const stack = route.stack;
  if (
    plan.dispatches !== route ||
    layer.handle !== plan.dispatchHandle ||
    layer.handleRequest !== handleRequest ||
    route.dispatch !== routeDispatch ||
    stack.length !== 1
  ) {
    return layer.handleRequest(req, walk.res, next);
  }
  // Route's dispatch: the method in lower case (HEAD served by GET's handler if it has none of its own).
  let method = typeof req.method === "string" ? lowerMethod(req.method) : req.method;
  if (method === "head" && !route.methods.head) method = "get";
  req.route = route;
  const handler = stack[0];
  if (handler.method && handler.method !== method) return next();
  let inner = plan.inner;
  if (inner === null || inner.layer !== handler) inner = plan.inner = new Plan(handler);
  callLayer(handler, inner, req, walk.res, next);
}

/**
 * router's `Layer#handleRequest` (untraced): a handler of more than three arguments (an error
 * handler) is passed over, a handler's throw and its returned promise's rejection go to `next`.
 * The handler's arity is kept in its plan. With tracing subscribers, a layer whose
 * `handleRequest` is not router's, or a promise that is not a native one (router deprecates
 * those), router's own method runs.
 */
const callLayer = {
  // Named as router's method, so that stack traces read "at Layer.handleRequest" above a
  // handler, as under Express: express-rate-limit looks for it there to warn of a limiter made
  // in a handler. (A name given in the source, which costs nothing to call.)
  "Layer.handleRequest"(layer: Any, plan: Plan, req: Any, res: Any, next: Next): void {
    if (layer.handleRequest !== handleRequest || shouldTrace(requestChannel)) return layer.handleRequest(req, res, next);
    const fn = layer.handle;
    if (plan.fn !== fn) {
      plan.fn = fn;
      plan.arity = fn.length;
    }
    if (plan.arity > 3) return next();
    try {
      const ret: unknown = fn(req, res, next);
      if (ret instanceof Promise) {
        ret.then(noop, (error: unknown) => next(error || new Error("Rejected promise")));
      } else if (ret !== null && (typeof ret === "object" || typeof ret === "function") && typeof (ret as { then?: unknown }).then === "function") {
        // Another thenable: router's layer takes it (with its deprecation), handed the handler's answer.
        handleRequest.call({ handle: () => ret }, req, res, next);
      }
    } catch (err) {
      next(err);
    }
  },
}["Layer.handleRequest"];

function noop(): void {}

// The rest as in router 2.3's index.js.

function getPathname(req: Any): string | undefined {
  const url = req.url;
  const query = plainQueryIndex(url);
  if (query === NOT_PLAIN_URL) return parsedPathname(req);
  return query === NO_QUERY ? url : url.substring(0, query);
}

function parsedPathname(req: Any): string | undefined {
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
