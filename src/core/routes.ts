import { compress } from "../http/compress.js";
import { compileSerializers, compileValidation, type Serializer } from "../schema/compile.js";
import { buildOpenApi, type OpenApiOptions, type RouteInfo } from "../schema/openapi.js";
import type { OpenApiDocument, OpenApiVersion } from "../schema/openapi-document.js";
import type { RouteOptions } from "../schema/types.js";
import { Topics, type Broker } from "../websocket/topics.js";
import type { Handler } from "./chain.js";
import type { Group, Layer, Registry } from "./group.js";
import { checkRouteOptions } from "./route-options.js";
import { Router, joinPaths, prefixCoverage, prefixMatcher } from "./router.js";

/** One registered route, compiled: its whole middleware + handler chain, decided at registration. */
export interface Route {
  readonly handlers: Handler[];
  /** The largest body it accepts (its `bodyLimit` option, else the app's). */
  readonly bodyLimit: number;
  /** Its own `requestTimeout` option (ms for the whole body, 0: none); undefined: the app's. */
  readonly requestTimeout: number | undefined;
  /** Its handlers read the body as a stream (`body: "stream"`). */
  readonly streamsBody: boolean;
  readonly paramNames: string[];
  readonly serializers: Map<number, Serializer> | null;
  /** `GET /users/:id`, for log lines. */
  readonly where: string;
  /** `/users/:id`: `req.route`. */
  readonly path: string;
}

/**
 * The first stage: what the app's groups register, compiled once. Each route's chain (the
 * middleware that applies to it, then its handlers) is built when the route is registered, so a
 * request costs one router lookup and the calls themselves. `use` applies to the routes
 * registered after it, as in Express; it also runs for requests that match no route (before the
 * 404/405): the fallback chain.
 */
export class Routes implements Registry {
  readonly router = new Router<Route>();
  private readonly described: RouteInfo[] = [];
  private order = 0;
  /** Middleware for requests that match no route, rebuilt when `use` adds some. */
  private fallbackLayers: Handler[] | null = null;
  /** The app's WebSocket topics, made when a WebSocket route is registered. */
  topics: Topics | null = null;
  /** The app's outermost group, whose middleware (and its groups') runs for unmatched requests: set by the face. */
  root: Group<string> | null = null;

  constructor(
    /** The app's `bodyLimit`, for routes without their own. */
    private readonly bodyLimit: number,
    private readonly broker: Broker | null,
  ) {}

  nextOrder(): number {
    return this.order++;
  }

  webSockets(): Topics {
    return (this.topics ??= new Topics(this.broker));
  }

  layersChanged(): void {
    this.fallbackLayers = null;
  }

  addRoute(group: Group, method: string, path: string, handlers: Handler[], options: RouteOptions | undefined, webSocket = false): void {
    const pattern = joinPaths(group.prefix, path);
    const where = `${method === "*" ? "ALL" : method} ${pattern}`;
    if (options !== undefined) checkRouteOptions(options, where);
    const chain: Handler[] = [];
    const groups: Group<string>[] = [];
    for (let g: Group<string> | null = group; g !== null; g = g.parent) groups.unshift(g);
    for (const g of groups) {
      for (const layer of g.layers) {
        const coverage = prefixCoverage(layer.prefix, pattern);
        if (coverage === "all") chain.push(layer.handler);
        else if (coverage === "some") chain.push(guard(layer, prefixMatcher(layer.prefix)));
      }
    }
    const schema = options?.schema;
    const compression = options?.compress;
    if (compression !== undefined && compression !== false) chain.unshift(compress(compression === true ? {} : compression));
    const validate = schema === undefined ? null : compileValidation(schema, where);
    if (validate !== null) chain.push(validate);
    chain.push(...handlers);
    const bodyLimit = options?.bodyLimit ?? this.bodyLimit;
    if (!Number.isInteger(bodyLimit) || bodyLimit < 0) throw new RangeError(`Route ${where}: bodyLimit must be a whole number >= 0, got ${String(bodyLimit)}`);
    const requestTimeout = options?.requestTimeout;
    if (requestTimeout !== undefined && (!Number.isInteger(requestTimeout) || requestTimeout < 0))
      throw new RangeError(`Route ${where}: requestTimeout must be a whole number of ms >= 0 (0: no limit), got ${String(requestTimeout)}`);
    const bodyMode = options?.body ?? "buffer";
    if (bodyMode !== "buffer" && bodyMode !== "stream") {
      const hint = typeof bodyMode === "object" ? " (a body schema belongs in schema: { schema: { body } })" : "";
      throw new RangeError(
        `Route ${where}: body must be "buffer" or "stream", got ${typeof bodyMode === "object" ? "an object" : JSON.stringify(bodyMode)}${hint}`,
      );
    }
    const route: Route = {
      handlers: chain,
      bodyLimit,
      requestTimeout,
      streamsBody: bodyMode === "stream",
      paramNames: [],
      serializers: schema === undefined ? null : compileSerializers(schema.response, where),
      where,
      path: pattern,
    };
    route.paramNames.push(...this.router.add(method, pattern, route));
    this.described.push({ method, pattern, paramNames: route.paramNames, schema, webSocket, where });
  }

  /** Every `use` middleware, each limited at run time to its prefix, in registration order. */
  fallbackChain(): Handler[] {
    if (this.fallbackLayers === null) {
      const layers: Layer[] = [];
      if (this.root !== null) collectLayers(this.root, layers);
      layers.sort((a, b) => a.order - b.order);
      this.fallbackLayers = layers.map((layer) => guard(layer, prefixMatcher(layer.prefix)));
    }
    return this.fallbackLayers;
  }

  /** An OpenAPI 3.1 (or 3.2) document describing every route. */
  openapi(options: OpenApiOptions): OpenApiDocument<OpenApiVersion> {
    return buildOpenApi(this.described, options);
  }
}

function collectLayers(group: Group<string>, into: Layer[]): void {
  into.push(...group.layers);
  for (const child of group.children) collectLayers(child, into);
}

function guard(layer: Layer, applies: (path: string) => boolean): Handler {
  const handler = layer.handler;
  return (req, res, next) => (applies(req.path) ? handler(req, res, next) : next());
}
