import { EventEmitter } from "node:events";
import { resolve } from "node:path";
import finalhandler from "finalhandler";
import { enter } from "./prototypes.js";
import { request } from "./request.js";
import { response } from "./response.js";
import { handleLast, Router } from "./router.js";
import { listen, SERVING, type ExpressOptions } from "./server.js";
import { compileETag, compileQueryParser, compileTrust, methods } from "./settings.js";
import { View } from "./view.js";
import { refuseUnknownKeys } from "../base/known-keys.js";
import { EXPRESS_OPTION_KEYS, OPTION_HINTS } from "../core/options.js";

/**
 * Express 5's application: `express()` makes a function `(req, res, next)` that is also an
 * EventEmitter with the members below (settings, routing, mounting, views, `listen`), as Express
 * makes it. Routing is pillarjs's `router` (Express 5's own), so paths, params and the order of
 * middleware and routes are Express's exactly.
 */

type App = any;

/** Whether `trust proxy` still has its default: a mounted app then inherits its parent's. */
const TRUST_PROXY_DEFAULT = "@@symbol:trust_proxy_default";

export const application: Record<string, unknown> = {};

application.init = function (this: App) {
  let router: unknown = null;
  this.cache = Object.create(null);
  this.engines = Object.create(null);
  this.settings = Object.create(null);
  this.defaultConfiguration();
  // Made on first use, so that `case sensitive routing` and `strict routing` set before it apply.
  Object.defineProperty(this, "router", {
    configurable: true,
    enumerable: true,
    get(this: App) {
      router ??= new Router({ caseSensitive: this.enabled("case sensitive routing"), strict: this.enabled("strict routing") });
      return router;
    },
  });
};

application.defaultConfiguration = function (this: App) {
  const env = process.env.NODE_ENV || "development";
  this.enable("x-powered-by");
  this.set("etag", "weak");
  this.set("env", env);
  this.set("query parser", "simple");
  this.set("subdomain offset", 2);
  this.set("trust proxy", false);
  Object.defineProperty(this.settings, TRUST_PROXY_DEFAULT, { configurable: true, value: true });
  this.on("mount", function (this: App, parent: App) {
    // An app mounted without its own `trust proxy` trusts what its parent trusts.
    if (this.settings[TRUST_PROXY_DEFAULT] === true && typeof parent.settings["trust proxy fn"] === "function") {
      delete this.settings["trust proxy"];
      delete this.settings["trust proxy fn"];
    }
    // Settings, engines and the request/response members not its own come from the parent.
    Object.setPrototypeOf(this.request, parent.request);
    Object.setPrototypeOf(this.response, parent.response);
    Object.setPrototypeOf(this.engines, parent.engines);
    Object.setPrototypeOf(this.settings, parent.settings);
  });
  this.locals = Object.create(null);
  this.mountpath = "/";
  this.locals.settings = this.settings;
  this.set("view", View);
  this.set("views", resolve("views"));
  this.set("jsonp callback name", "callback");
  if (env === "production") this.enable("view cache");
};

application.handle = function (this: App, req: App, res: App, callback?: (err?: unknown) => void) {
  if (this.enabled("x-powered-by")) res.setHeader("X-Powered-By", "Express");
  req.res = res;
  res.req = req;
  enter(req, this.request, true);
  enter(res, this.response, false);
  if (!res.locals) res.locals = Object.create(null);
  // finalhandler is made only for a request that gets to the end of the app's middleware (the
  // router calls `finish` with the app, rather than a closure made for every request).
  if (callback) this.router.handle(req, res, callback);
  else handleLast(this.router, req, res, this, finish);
};

/** The end of an app's middleware, for a request the app was given without a callback: finalhandler's answer. */
function finish(app: App, req: App, res: App, err: unknown): void {
  finalhandler(req, res, { env: app.get("env"), onerror: logErrorOf(app) })(err);
}

/** What finalhandler calls with an error it answers: logged, except in the "test" env (one function per app). */
const logErrors = new WeakMap<App, (err: unknown) => void>();
function logErrorOf(app: App): (err: unknown) => void {
  let log = logErrors.get(app);
  if (log === undefined) {
    log = (err: unknown) => {
      if (app.get("env") !== "test") console.error(err);
    };
    logErrors.set(app, log);
  }
  return log;
}

/** Whether `fn` is an Express app (or one that quacks like one), mounted as a sub-app rather than as middleware. */
function isApp(fn: App): boolean {
  return Boolean(fn && fn.handle && fn.set);
}

application.use = function (this: App, first: unknown, ...rest: unknown[]) {
  let path: unknown = "/";
  let handlers: unknown[] = [first, ...rest];
  if (typeof first !== "function") {
    let arg = first;
    while (Array.isArray(arg) && arg.length !== 0) arg = arg[0];
    // A leading path (a string, a RegExp, or a list of them), then the middleware.
    if (typeof arg !== "function") {
      path = first;
      handlers = rest;
    }
  }
  const fns = handlers.flat(Infinity);
  if (fns.length === 0) throw new TypeError("app.use() requires a middleware function");
  const router = this.router;
  for (const fn of fns as App[]) {
    if (!isApp(fn)) {
      router.use(path, fn);
      continue;
    }
    fn.mountpath = path;
    fn.parent = this;
    router.use(path, function mounted_app(req: App, res: App, next: (err?: unknown) => void) {
      const outer = req.app;
      fn.handle(req, res, (err: unknown) => {
        // Back in the outer app: its request and response members again.
        enter(req, outer.request, true);
        enter(res, outer.response, false);
        next(err);
      });
    });
    fn.emit("mount", this);
  }
  return this;
};

application.route = function (this: App, path: unknown) {
  return this.router.route(path);
};

application.engine = function (this: App, ext: string, fn: unknown) {
  if (typeof fn !== "function") throw new Error("callback function required");
  this.engines[ext[0] === "." ? ext : `.${ext}`] = fn;
  return this;
};

application.param = function (this: App, name: string | string[], fn: unknown) {
  if (Array.isArray(name)) {
    for (const one of name) this.param(one, fn);
    return this;
  }
  this.router.param(name, fn);
  return this;
};

application.set = function (this: App, setting: string, value?: unknown) {
  if (arguments.length === 1) return this.settings[setting];
  this.settings[setting] = value;
  // The settings Express compiles into functions once, rather than per request.
  if (setting === "etag") this.set("etag fn", compileETag(value));
  else if (setting === "query parser") this.set("query parser fn", compileQueryParser(value));
  else if (setting === "trust proxy") {
    this.set("trust proxy fn", compileTrust(value));
    Object.defineProperty(this.settings, TRUST_PROXY_DEFAULT, { configurable: true, value: false });
  }
  return this;
};

application.path = function (this: App): string {
  return this.parent ? this.parent.path() + this.mountpath : "";
};

application.enabled = function (this: App, setting: string) {
  return Boolean(this.set(setting));
};
application.disabled = function (this: App, setting: string) {
  return !this.set(setting);
};
application.enable = function (this: App, setting: string) {
  return this.set(setting, true);
};
application.disable = function (this: App, setting: string) {
  return this.set(setting, false);
};

for (const method of methods) {
  application[method] = function (this: App, path: unknown, ...handlers: unknown[]) {
    const route = this.route(path);
    route[method](...handlers);
    return this;
  };
}
const route = application.get as (this: App, path: unknown, ...handlers: unknown[]) => App;
application.get = function (this: App, path: unknown) {
  // app.get(name) reads a setting (res.send asks for "etag fn" on every response: no list made for it).
  if (arguments.length === 1) return this.set(path);
  // eslint-disable-next-line prefer-rest-params -- no rest array made on every call (res.send reads a setting through app.get on every response)
  return route.apply(this, arguments as unknown as [unknown, ...unknown[]]);
};

application.all = function (this: App, path: unknown, ...handlers: unknown[]) {
  const route = this.route(path);
  for (const method of methods) route[method](...handlers);
  return this;
};

application.render = function (this: App, name: string, options?: unknown, callback?: (err: Error | null, html?: string) => void) {
  let done = callback;
  let opts = (options || {}) as Record<string, unknown>;
  if (typeof options === "function") {
    done = options as typeof callback;
    opts = {};
  }
  // The app's locals, then the response's, then the call's own.
  const renderOptions: Record<string, unknown> = { ...this.locals, ...(opts._locals as object), ...opts };
  if (renderOptions.cache == null) renderOptions.cache = this.enabled("view cache");
  let view: App = renderOptions.cache ? this.cache[name] : undefined;
  if (!view) {
    const ViewClass = this.get("view");
    view = new ViewClass(name, { defaultEngine: this.get("view engine"), root: this.get("views"), engines: this.engines });
    if (!view.path) {
      const roots = view.root;
      const where =
        Array.isArray(roots) && roots.length > 1 ? `directories "${roots.slice(0, -1).join('", "')}" or "${roots[roots.length - 1]}"` : `directory "${roots}"`;
      const err = Object.assign(new Error(`Failed to lookup view "${name}" in views ${where}`), { view });
      return done!(err);
    }
    if (renderOptions.cache) this.cache[name] = view;
  }
  try {
    view.render(renderOptions, done);
  } catch (err) {
    done!(err as Error);
  }
};

application.listen = function (this: App, ...args: unknown[]) {
  return listen(this, this[SERVING] as ExpressOptions, args);
};

/** `express()`: a new app; `options.engine` picks the engine `app.listen` serves on. */
export function createApplication(options: ExpressOptions = {}): App {
  if (typeof options !== "object" || options === null)
    throw new TypeError(`express(options) takes an object of options; got ${options === null ? "null" : typeof options}`);
  refuseUnknownKeys(options, EXPRESS_OPTION_KEYS, OPTION_HINTS, "express()", "option");
  const app: App = function (req: App, res: App, next?: (err?: unknown) => void) {
    app.handle(req, res, next);
  };
  copyMembers(app, EventEmitter.prototype);
  copyMembers(app, application);
  Object.defineProperty(app, SERVING, { value: options });
  // The prototypes requests and responses get in this app (see prototypes.ts).
  app.request = Object.create(request, { app: { configurable: true, enumerable: true, writable: true, value: app } });
  app.response = Object.create(response, { app: { configurable: true, enumerable: true, writable: true, value: app } });
  app.init();
  return app;
}

/** Copies `source`'s own members onto `target` (with their descriptors), leaving any `target` has. */
function copyMembers(target: object, source: object): void {
  for (const name of Object.getOwnPropertyNames(source)) {
    if (!Object.hasOwn(target, name)) Object.defineProperty(target, name, Object.getOwnPropertyDescriptor(source, name)!);
  }
}
