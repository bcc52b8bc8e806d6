import { IncomingMessage, ServerResponse } from "node:http";

/**
 * Which prototype a request (or response) gets as it enters an app, as Express 5 sets
 * `app.request`/`app.response` on it. A plain node:http request (an app handed to
 * `http.createServer`) gets `app.request` itself, exactly as in Express. A request of one of
 * Cog's engines keeps its engine's class (the native engine's request is no IncomingMessage; the
 * node engine's adds the engine's body handling): it gets a *view* of `app.request` laid over
 * that class, the members of `app.request` and of the prototypes it inherits from (its parents'
 * when mounted, `express.request`) copied onto one object whose own prototype is the engine's
 * class. A view is made on an app's first request on an engine, and kept: what an app adds to
 * `app.request` or `express.request` after it began to serve is not seen on Cog's engines.
 *
 * The app an engine serves has a class of its own on that engine (`EngineHost.requestClass`,
 * `responseClass`; see server.ts): its view is that class's prototype itself, filled on the first
 * request, so that its requests are born with the prototype they need and none is changed per
 * request (`setPrototypeOf` cost V8 a new hidden class and cold property lookups on every
 * request, about 50 times what the rest of a request on the native engine costs). A mounted
 * sub-app's requests still change prototype on the way in and out, as in Express.
 */

/** On a view (and on express.request/express.response): the prototype it stands over. */
const BASE: unique symbol = Symbol("cog.express.base");
/** On a view: the app prototype (`app.request`, `app.response`) it is a view of. */
const VIEW_OF: unique symbol = Symbol("cog.express.viewOf");
/** On the prototype of an app's own class on an engine: the app prototype to fill it with, on the first request. */
const FILL_WITH: unique symbol = Symbol("cog.express.fillWith");

/**
 * Names Cog's own helpers define on its engines' classes that Express leaves to middleware
 * (body parsers, cookie-parser, the router) or leaves undefined: hidden in a view, so that an
 * Express app sees them undefined until something sets them, as in Express.
 */
const HIDDEN_ON_REQUESTS = ["body", "cookies", "signedCookies", "params", "baseUrl", "originalUrl", "route", "rawBody"];
const HIDDEN_ON_RESPONSES = ["locals"];

/** The views of one app's prototype, by the engine class it stands over. */
type Views = Map<object, object>;
const requestViews = new WeakMap<object, Views>();
const responseViews = new WeakMap<object, Views>();

/** Marks the Express prototypes with what they stand over (Node's classes). */
export function markBases(request: object, response: object): void {
  Object.defineProperty(request, BASE, { value: IncomingMessage.prototype });
  Object.defineProperty(response, BASE, { value: ServerResponse.prototype });
}

/**
 * Marks `classPrototype`, the prototype of an app's own request or response class on an engine,
 * to become the app's view of `proto` (`app.request` or `app.response`) over the engine's class.
 */
export function fillLater(classPrototype: object, proto: object): void {
  Object.defineProperty(classPrototype, FILL_WITH, { value: proto });
}

/** Sets the prototype a request or response gets in an app whose prototype for it is `proto` (`app.request` or `app.response`). */
export function enter(target: object, proto: object, isRequest: boolean): void {
  // Already the app's own (its class's prototype, once filled, or a view it was given): asked of
  // the target, whose prototype chain holds it, rather than of Object.getPrototypeOf's answer (a
  // call into V8's runtime on every request).
  if ((target as Record<symbol, unknown>)[VIEW_OF] === proto) return;
  const current = Object.getPrototypeOf(target) as Record<symbol, object | undefined>;
  const base = current[BASE] ?? current;
  const node = isRequest ? IncomingMessage.prototype : ServerResponse.prototype;
  const wanted = base === node ? proto : viewOf(proto, base, isRequest);
  if (current !== wanted) Object.setPrototypeOf(target, wanted);
}

function viewOf(proto: object, base: object, isRequest: boolean): object {
  const all = isRequest ? requestViews : responseViews;
  let views = all.get(proto);
  if (views === undefined) all.set(proto, (views = new Map()));
  let view = views.get(base);
  if (view === undefined) {
    // The app's own class on this engine is filled in place; any other base gets a view over it.
    const inPlace = (base as Record<symbol, unknown>)[FILL_WITH] === proto && !Object.hasOwn(base, VIEW_OF);
    views.set(base, (view = fill(inPlace ? base : Object.create(base), proto, base, isRequest)));
  }
  return view;
}

/** Lays `proto`'s members (and those it inherits, down to Node's class) on `view`, whose own prototype is `base`. */
function fill(view: object, proto: object, base: object, isRequest: boolean): object {
  const node = isRequest ? IncomingMessage.prototype : ServerResponse.prototype;
  for (const name of isRequest ? HIDDEN_ON_REQUESTS : HIDDEN_ON_RESPONSES) {
    Object.defineProperty(view, name, { value: undefined, writable: true, configurable: true });
  }
  // The chain from Node's class down to `proto`, so that the nearer definitions are copied last and win.
  const chain: object[] = [];
  for (let p: object | null = proto; p !== null && p !== node && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) chain.unshift(p);
  for (const p of chain) {
    for (const key of Reflect.ownKeys(p)) {
      if (key !== BASE) Object.defineProperty(view, key, Object.getOwnPropertyDescriptor(p, key)!);
    }
  }
  Object.defineProperty(view, BASE, { value: base });
  Object.defineProperty(view, VIEW_OF, { value: proto });
  return view;
}
