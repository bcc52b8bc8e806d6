import type { Handler } from "./chain.js";
import { joinPaths, normalizePattern } from "./router.js";
import type { RouteOptions, RouteSchema, SchemaRequest, SchemaResponse } from "./schema/types.js";

/**
 * A route-registering method: `(path, ...handlers)`, or `(path, { schema }, ...handlers)`
 * whose handlers see `req.body`, `req.query`, `req.params` and `res.json` typed from the schema.
 */
export interface AddRoute<This> {
  <const S extends RouteSchema>(path: string, options: RouteOptions<S>, ...handlers: Array<Handler<SchemaRequest<S>, SchemaResponse<S>>>): This;
  (path: string, ...handlers: Handler[]): This;
}

type RouteArgs = Array<Handler | RouteOptions>;

/** A middleware registered with `use`, and the path prefix it is limited to ("/" for all). */
export interface Layer {
  readonly prefix: string;
  readonly handler: Handler;
  /** Registration order across all scopes, so 404/405 chains keep it too. */
  readonly order: number;
}

/** Where a scope sends what it registers: the app. */
export interface Registry {
  addRoute(scope: Scope, method: string, path: string, handlers: Handler[], options: RouteOptions | undefined): void;
  nextOrder(): number;
  layersChanged(): void;
}

/**
 * Route registration shared by the app and its groups. A group is a Scope
 * with a path prefix and middleware of its own, which apply to the routes
 * registered inside it (and to its nested groups) after the `use` call.
 */
export class Scope {
  readonly layers: Layer[] = [];
  /** Nested groups, so middleware of theirs can also run for unmatched paths under their prefix. */
  readonly children: Scope[] = [];

  constructor(
    protected readonly registry: Registry,
    readonly prefix: string,
    readonly parent: Scope | null,
  ) {}

  /**
   * Adds middleware. `use(mw)` and `use("*", mw)` run it for every request of
   * this scope; `use("/prefix", mw)` only for paths under that prefix (a whole
   * segment: `/admin` covers `/admin/x`, never `/adminx`).
   */
  use(pathOrHandler: string | Handler, ...handlers: Handler[]): this {
    let path = "/";
    if (typeof pathOrHandler === "string") path = pathOrHandler === "*" || pathOrHandler === "/*" ? "/" : normalizePattern(pathOrHandler);
    else handlers.unshift(pathOrHandler);
    if (handlers.length === 0) throw new TypeError("use() needs at least one middleware function");
    for (const handler of handlers) {
      assertHandler(handler, `use(${JSON.stringify(path)})`);
      this.layers.push({ prefix: joinPaths(this.prefix, path), handler, order: this.registry.nextOrder() });
    }
    this.registry.layersChanged();
    return this;
  }

  readonly get: AddRoute<this> = (path: string, ...args: RouteArgs) => this.route("GET", path, args);
  readonly post: AddRoute<this> = (path: string, ...args: RouteArgs) => this.route("POST", path, args);
  readonly put: AddRoute<this> = (path: string, ...args: RouteArgs) => this.route("PUT", path, args);
  readonly patch: AddRoute<this> = (path: string, ...args: RouteArgs) => this.route("PATCH", path, args);
  readonly delete: AddRoute<this> = (path: string, ...args: RouteArgs) => this.route("DELETE", path, args);
  readonly head: AddRoute<this> = (path: string, ...args: RouteArgs) => this.route("HEAD", path, args);
  readonly options: AddRoute<this> = (path: string, ...args: RouteArgs) => this.route("OPTIONS", path, args);
  /** Every method on this path. */
  readonly all: AddRoute<this> = (path: string, ...args: RouteArgs) => this.route("*", path, args);

  /** Routes under a common prefix with middleware of their own: `app.group("/admin", (admin) => …)`. */
  group(prefix: string, define: (group: Scope) => void): this {
    const child = new Scope(this.registry, joinPaths(this.prefix, prefix), this);
    this.children.push(child);
    define(child);
    return this;
  }

  protected route(method: string, path: string, args: RouteArgs): this {
    const first = args[0];
    const options = typeof first === "object" && first !== null ? (first as RouteOptions) : undefined;
    const handlers = (options === undefined ? args : args.slice(1)) as Handler[];
    if (handlers.length === 0) throw new TypeError(`Route ${method} ${path} needs at least one handler`);
    for (const handler of handlers) assertHandler(handler, `${method} ${path}`);
    this.registry.addRoute(this, method, path, handlers, options);
    return this;
  }
}

function assertHandler(handler: unknown, where: string): asserts handler is Handler {
  if (typeof handler !== "function") throw new TypeError(`${where}: expected a function, got ${handler === null ? "null" : typeof handler}`);
}
