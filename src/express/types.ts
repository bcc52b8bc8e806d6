import type { EventEmitter } from "node:events";
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeader, Server, ServerResponse } from "node:http";
import type { ParsedQs } from "qs";
import type { CogServer, ExpressOptions } from "./server.js";

/**
 * The types of `cog-http/express`, written as `@types/express` users write them:
 * `(req: Request, res: Response, next: NextFunction) => …`, `Router()`, `express.json()`.
 */

export type { ExpressOptions, CogServer };

/** Route params: `/users/:id` gives `req.params.id`. */
export interface ParamsDictionary {
  [name: string]: string;
}

export type NextFunction = (err?: unknown) => void;

export interface Request<
  P = ParamsDictionary,
  ResBody = unknown,
  ReqBody = any,
  ReqQuery = ParsedQs,
  Locals extends Record<string, any> = Record<string, any>,
> extends IncomingMessage {
  app: Application;
  res?: Response<ResBody, Locals>;
  next?: NextFunction;
  params: P;
  query: ReqQuery;
  body: ReqBody;
  baseUrl: string;
  originalUrl: string;
  url: string;
  method: string;
  headers: IncomingHttpHeaders;
  readonly path: string;
  readonly protocol: string;
  readonly secure: boolean;
  readonly ip: string | undefined;
  readonly ips: string[];
  readonly hostname: string | undefined;
  readonly host: string | undefined;
  readonly subdomains: string[];
  readonly fresh: boolean;
  readonly stale: boolean;
  readonly xhr: boolean;

  route: any;
  cookies?: Record<string, any>;
  signedCookies?: Record<string, any>;
  secret?: string | undefined;
  get(name: "set-cookie"): string[] | undefined;
  get(name: string): string | undefined;
  header(name: "set-cookie"): string[] | undefined;
  header(name: string): string | undefined;
  accepts(): string[];
  accepts(...types: Array<string | string[]>): string | false;
  acceptsCharsets(): string[];
  acceptsCharsets(...charsets: Array<string | string[]>): string | false;
  acceptsEncodings(): string[];
  acceptsEncodings(...encodings: Array<string | string[]>): string | false;
  acceptsLanguages(): string[];
  acceptsLanguages(...languages: Array<string | string[]>): string | false;
  is(...types: Array<string | string[]>): string | false | null;
  range(size: number, options?: { combine?: boolean }): (Array<{ start: number; end: number }> & { type: string }) | -1 | -2 | undefined;
}

export interface CookieOptions {
  maxAge?: number;
  signed?: boolean;
  expires?: Date;
  httpOnly?: boolean;
  path?: string;
  domain?: string;
  secure?: boolean;
  encode?: (value: string) => string;
  sameSite?: boolean | "lax" | "strict" | "none";
  priority?: "low" | "medium" | "high";
  partitioned?: boolean;
}

export interface SendFileOptions {
  maxAge?: number | string;
  root?: string;
  lastModified?: boolean;
  headers?: Record<string, unknown>;
  dotfiles?: "allow" | "deny" | "ignore";
  acceptRanges?: boolean;
  cacheControl?: boolean;
  immutable?: boolean;
}

export type DownloadOptions = SendFileOptions;

export interface Response<ResBody = unknown, Locals extends Record<string, any> = Record<string, any>> extends ServerResponse {
  app: Application;
  req: Request;
  locals: Locals;
  status(code: number): this;
  sendStatus(code: number): this;
  links(links: Record<string, string | string[]>): this;
  send(body?: ResBody | string | Buffer | Uint8Array | boolean | number | object | null): this;
  json(body?: ResBody | unknown): this;
  jsonp(body?: ResBody | unknown): this;
  sendFile(path: string, callback?: (err?: Error) => void): void;
  sendFile(path: string, options: SendFileOptions, callback?: (err?: Error) => void): void;
  download(path: string, callback?: (err?: Error) => void): void;
  download(path: string, filename: string, callback?: (err?: Error) => void): void;
  download(path: string, filename: string, options: DownloadOptions, callback?: (err?: Error) => void): void;
  download(path: string, options: DownloadOptions, callback?: (err?: Error) => void): void;
  contentType(type: string): this;
  type(type: string): this;
  format(handlers: Record<string, (req: Request, res: Response, next: NextFunction) => void>): this;
  attachment(filename?: string): this;
  set(field: string, value?: string | number | readonly string[]): this;
  set(fields: Record<string, string | number | readonly string[]>): this;
  header(field: string, value?: string | number | readonly string[]): this;
  header(fields: Record<string, string | number | readonly string[]>): this;
  get(field: string): OutgoingHttpHeader | undefined;
  append(field: string, value?: string | string[]): this;
  clearCookie(name: string, options?: CookieOptions): this;
  cookie(name: string, value: unknown, options?: CookieOptions): this;
  location(url: string): this;
  redirect(url: string): void;
  redirect(status: number, url: string): void;
  render(view: string, options?: object, callback?: (err: Error | null, html?: string) => void): void;
  render(view: string, callback?: (err: Error | null, html?: string) => void): void;
  vary(field: string | string[]): this;
}

/** A middleware or handler. */
export type RequestHandler<
  P = ParamsDictionary,
  ResBody = unknown,
  ReqBody = any,
  ReqQuery = ParsedQs,
  Locals extends Record<string, any> = Record<string, any>,
> = (req: Request<P, ResBody, ReqBody, ReqQuery, Locals>, res: Response<ResBody, Locals>, next: NextFunction) => unknown;

/** Error middleware: four arguments. */
export type ErrorRequestHandler<
  P = ParamsDictionary,
  ResBody = unknown,
  ReqBody = any,
  ReqQuery = ParsedQs,
  Locals extends Record<string, any> = Record<string, any>,
> = (err: any, req: Request<P, ResBody, ReqBody, ReqQuery, Locals>, res: Response<ResBody, Locals>, next: NextFunction) => unknown;

export type Handler = RequestHandler | ErrorRequestHandler | Router | Application;
export type PathParams = string | RegExp | Array<string | RegExp>;
export type HandlerArgument = Handler | HandlerArgument[];

/**
 * What registers routes: `app.get(path, ...handlers)`… Handlers written inline get their
 * parameters' types from the first signature (as with @types/express); error middleware,
 * routers, apps and lists of them take the second.
 */
export interface RouteMatcher<This> {
  <P = ParamsDictionary, ResBody = any, ReqBody = any, ReqQuery = ParsedQs, Locals extends Record<string, any> = Record<string, any>>(
    path: PathParams,
    ...handlers: Array<RequestHandler<P, ResBody, ReqBody, ReqQuery, Locals>>
  ): This;
  (path: PathParams, ...handlers: HandlerArgument[]): This;
}

/** A route's method: `route.get(...handlers)`, typed as `RouteMatcher` without the path. */
export interface RouteHandlers<This> {
  <P = ParamsDictionary, ResBody = any, ReqBody = any, ReqQuery = ParsedQs, Locals extends Record<string, any> = Record<string, any>>(
    ...handlers: Array<RequestHandler<P, ResBody, ReqBody, ReqQuery, Locals>>
  ): This;
  (...handlers: HandlerArgument[]): This;
}

export interface IRoute {
  path: string;
  all: RouteHandlers<this>;
  get: RouteHandlers<this>;
  post: RouteHandlers<this>;
  put: RouteHandlers<this>;
  delete: RouteHandlers<this>;
  patch: RouteHandlers<this>;
  options: RouteHandlers<this>;
  head: RouteHandlers<this>;
  /** QUERY (RFC 10008): there where Node's `http.METHODS` has it (Node 20.19.2+, 22.2+), as in Express. */
  query: RouteHandlers<this>;
}

export type ParamHandler = (req: Request, res: Response, next: NextFunction, value: any, name: string) => unknown;

interface Routing<This> {
  all: RouteMatcher<This>;
  get: RouteMatcher<This>;
  post: RouteMatcher<This>;
  put: RouteMatcher<This>;
  delete: RouteMatcher<This>;
  patch: RouteMatcher<This>;
  options: RouteMatcher<This>;
  head: RouteMatcher<This>;
  /** QUERY (RFC 10008): there where Node's `http.METHODS` has it (Node 20.19.2+, 22.2+), as in Express. */
  query: RouteMatcher<This>;
  use<P = ParamsDictionary, ResBody = any, ReqBody = any, ReqQuery = ParsedQs, Locals extends Record<string, any> = Record<string, any>>(
    ...handlers: Array<RequestHandler<P, ResBody, ReqBody, ReqQuery, Locals>>
  ): This;
  use<P = ParamsDictionary, ResBody = any, ReqBody = any, ReqQuery = ParsedQs, Locals extends Record<string, any> = Record<string, any>>(
    path: PathParams,
    ...handlers: Array<RequestHandler<P, ResBody, ReqBody, ReqQuery, Locals>>
  ): This;
  use(...handlers: HandlerArgument[]): This;
  use(path: PathParams, ...handlers: HandlerArgument[]): This;
  route(path: PathParams): IRoute;
  param(name: string | string[], handler: ParamHandler): This;
}

export interface Router extends Routing<Router>, RequestHandler {}

export interface RouterOptions {
  caseSensitive?: boolean;
  mergeParams?: boolean;
  strict?: boolean;
}

export interface Application extends Routing<Application>, EventEmitter {
  (req: IncomingMessage | Request, res: ServerResponse | Response, next?: NextFunction): void;
  // The setting's overload first: with one argument, `app.get(name)` reads a setting.
  get: ((setting: string) => any) & RouteMatcher<Application>;
  set(setting: string, value?: any): this;
  enabled(setting: string): boolean;
  disabled(setting: string): boolean;
  enable(setting: string): this;
  disable(setting: string): this;
  engine(ext: string, fn: (path: string, options: object, callback: (err: Error | null, html?: string) => void) => void): this;
  render(name: string, options?: object, callback?: (err: Error | null, html?: string) => void): void;
  render(name: string, callback: (err: Error | null, html?: string) => void): void;
  path(): string;
  listen(port?: number, hostname?: string, backlog?: number, callback?: (err?: Error) => void): Server | CogServer;
  listen(port?: number, hostname?: string, callback?: (err?: Error) => void): Server | CogServer;
  listen(port?: number, callback?: (err?: Error) => void): Server | CogServer;
  listen(callback?: (err?: Error) => void): Server | CogServer;
  /** On a Unix domain socket at `path` (the file made as it listens, removed on close). */
  listen(path: string, callback?: (err?: Error) => void): Server | CogServer;
  listen(options: import("node:net").ListenOptions, callback?: (err?: Error) => void): Server | CogServer;
  locals: Record<string, any>;
  settings: Record<string, any>;
  mountpath: string | string[];
  request: Request;
  response: Response;
  router: Router;
}

export type Express = Application;

/** The options the body parsers and `static` take are those of body-parser and serve-static. */
type BodyParser = (options?: Record<string, unknown>) => RequestHandler;

/** The `express` export: the app factory, with Express's members on it. */
export interface ExpressFactory {
  (options?: ExpressOptions): Express;
  application: object;
  request: Request;
  response: Response;
  Router: { (options?: RouterOptions): Router; new (options?: RouterOptions): Router };
  Route: new (path: string) => IRoute;
  json: BodyParser;
  raw: BodyParser;
  text: BodyParser;
  urlencoded: BodyParser;
  static: (root: string, options?: Record<string, unknown>) => RequestHandler;
  /** Like `http.createServer(app)`, on the engine `options.engine` names, by default the app's own (not yet listening). */
  createServer(app: Application, options?: ExpressOptions): Server | CogServer;
}
