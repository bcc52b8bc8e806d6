import { ServerResponse } from "node:http";
import { basename, extname, isAbsolute, resolve } from "node:path";
import { create as contentDisposition } from "content-disposition";
import { stringifySetCookie } from "cookie";
import { sign } from "cookie-signature";
import encodeUrl from "encodeurl";
import escapeHtml from "escape-html";
import createError from "http-errors";
import onFinished from "on-finished";
import send from "send";
import statuses from "statuses";
import vary from "vary";
import { cookieOf, type CookieOptions } from "../http/response.js";
import { contentTypeOf, normalizeType, withUtf8, type ETagFn } from "./settings.js";
import { setImmediate } from "../base/loop.js";

/**
 * Express 5's response prototype (`express.response`): what Express adds to Node's
 * ServerResponse, with Express's answers (headers, bodies, status rules). Every app's
 * `app.response` inherits from it; on Cog's engines the members are laid over the engine's own
 * response class (see prototypes.ts).
 */

type Res = any;
type Callback = (err?: Error & { code?: string; syscall?: string; status?: number }) => void;

export const response: Record<string | symbol, unknown> = Object.create(ServerResponse.prototype);

response.status = function (this: Res, code: number) {
  if (!Number.isInteger(code)) throw new TypeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be an integer.`);
  if (code < 100 || code > 999) throw new RangeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be greater than 99 and less than 1000.`);
  this.statusCode = code;
  return this;
};

response.links = function (this: Res, links: Record<string, string | string[]>) {
  const previous: string = this.get("Link") || "";
  const added = Object.keys(links)
    .map((rel) =>
      ([] as string[])
        .concat(links[rel]!)
        .map((url) => `<${url}>; rel="${rel}"`)
        .join(", "),
    )
    .join(", ");
  return this.set("Link", previous ? `${previous}, ${added}` : added);
};

response.send = function (this: Res, body?: unknown) {
  let chunk = body as string | Buffer | undefined;
  let encoding: BufferEncoding | undefined;
  const req = this.req;
  // Express's steps, with the headers asked of the response itself (getHeader/setHeader, which
  // its `get` and `set` call) and set only when they change.
  switch (typeof body) {
    case "string": {
      encoding = "utf8";
      const type = this.getHeader("content-type");
      if (typeof type === "string") {
        const typed = withUtf8(type);
        if (typed !== type) this.setHeader("Content-Type", typed);
      } else this.type("html");
      break;
    }
    case "boolean":
    case "number":
    case "object":
      if (body === null) chunk = "";
      else if (ArrayBuffer.isView(body)) {
        if (!this.getHeader("content-type")) this.type("bin");
      } else return this.json(body);
      break;
  }
  const etagFn = this.app.get("etag fn") as ETagFn | undefined;
  const generateETag = typeof etagFn === "function" && !this.getHeader("etag");
  let length: number | undefined;
  // Content-Length and Transfer-Encoding exclude each other: a chunked answer keeps its framing.
  if (chunk !== undefined && !this.getHeader("transfer-encoding")) {
    if (Buffer.isBuffer(chunk)) length = chunk.length;
    else if (!generateETag && (chunk as string).length < 1000) length = Buffer.byteLength(chunk as string, encoding);
    else {
      // Hashed for the ETag, and written, as bytes: convert once.
      chunk = Buffer.from(chunk as string, encoding);
      encoding = undefined;
      length = chunk.length;
    }
    this.setHeader("Content-Length", String(length));
  }
  if (generateETag && length !== undefined) {
    const tag = etagFn!(chunk as Buffer | string, encoding);
    if (tag) this.setHeader("ETag", tag);
  }
  if (req.fresh) this.status(304);
  const status = this.statusCode;
  if (status === 204 || status === 304) {
    this.removeHeader("Content-Type");
    this.removeHeader("Content-Length");
    this.removeHeader("Transfer-Encoding");
    chunk = "";
  } else if (status === 205) {
    this.setHeader("Content-Length", "0");
    this.removeHeader("Transfer-Encoding");
    chunk = "";
  }
  if (req.method === "HEAD") this.end();
  else this.end(chunk, encoding);
  return this;
};

/** JSON as the app's settings ask: `json replacer`, `json spaces`, and `json escape` (<, > and & as \u escapes). */
function stringify(value: unknown, replacer: unknown, spaces: unknown, escape: unknown): string | undefined {
  let json = replacer || spaces ? JSON.stringify(value, replacer as never, spaces as never) : JSON.stringify(value);
  if (escape && typeof json === "string") {
    json = json.replace(/[<>&]/g, (c) => (c === "<" ? "\\u003c" : c === ">" ? "\\u003e" : "\\u0026"));
  }
  return json;
}

function jsonOf(res: Res, value: unknown): string | undefined {
  const app = res.app;
  return stringify(value, app.get("json replacer"), app.get("json spaces"), app.get("json escape"));
}

response.json = function (this: Res, value: unknown) {
  const body = jsonOf(this, value);
  if (!this.get("Content-Type")) this.set("Content-Type", "application/json");
  return this.send(body);
};

response.jsonp = function (this: Res, value: unknown) {
  let body = jsonOf(this, value);
  let callback = this.req.query[this.app.get("jsonp callback name")];
  if (!this.get("Content-Type")) {
    this.set("X-Content-Type-Options", "nosniff");
    this.set("Content-Type", "application/json");
  }
  if (Array.isArray(callback)) callback = callback[0];
  if (typeof callback === "string" && callback.length !== 0) {
    this.set("X-Content-Type-Options", "nosniff");
    this.set("Content-Type", "text/javascript");
    // Only what a JavaScript identifier path can hold.
    const name = callback.replace(/[^[\]\w$.]/g, "");
    // U+2028 and U+2029 end lines in older JavaScript: escaped, the body stays one expression.
    const script = body === undefined ? "" : body.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
    body = `/**/ typeof ${name} === 'function' && ${name}(${script});`;
  }
  return this.send(body);
};

response.sendStatus = function (this: Res, code: number) {
  const body = statuses.message[code] || String(code);
  this.status(code);
  this.type("txt");
  return this.send(body);
};

response.sendFile = function (this: Res, path: string, options?: Record<string, unknown> | Callback, callback?: Callback) {
  let done = callback;
  let opts = (options || {}) as Record<string, unknown>;
  const req = this.req;
  const next = req.next;
  if (!path) throw new TypeError("path argument is required to res.sendFile");
  if (typeof path !== "string") throw new TypeError("path must be a string to res.sendFile");
  if (typeof options === "function") {
    done = options;
    opts = {};
  }
  if (!opts.root && !isAbsolute(path)) throw new TypeError("path must be absolute or specify root to res.sendFile");
  opts.etag = this.app.enabled("etag");
  const file = send(req, encodeURI(path), opts);
  pipeFile(this, file, opts, (err) => {
    if (done) return done(err);
    if (err && err.code === "EISDIR") return next();
    // A client that left, or a failed write, is nothing the app can answer any more.
    if (err && err.code !== "ECONNABORTED" && err.syscall !== "write") next(err);
  });
};

response.download = function (this: Res, path: string, filename?: unknown, options?: unknown, callback?: Callback) {
  let done = callback;
  let name = filename as string | null | undefined;
  let opts = (options || null) as Record<string, unknown> | null;
  if (typeof filename === "function") {
    done = filename as Callback;
    name = null;
    opts = null;
  } else if (typeof options === "function") {
    done = options as Callback;
    opts = null;
  }
  // download(path, options[, callback])
  if (typeof filename === "object" && (typeof options === "function" || options === undefined)) {
    name = null;
    opts = filename as Record<string, unknown> | null;
  }
  const headers: Record<string, unknown> = { "Content-Disposition": contentDisposition(basename(name || path)) };
  const given = opts?.headers as Record<string, unknown> | undefined;
  if (given) {
    for (const key of Object.keys(given)) if (key.toLowerCase() !== "content-disposition") headers[key] = given[key];
  }
  const sendOptions = Object.create(opts) as Record<string, unknown>;
  sendOptions.headers = headers;
  return this.sendFile(sendOptions.root ? path : resolve(path), sendOptions, done);
};

function contentType(this: Res, type: string) {
  return this.set("Content-Type", type.includes("/") ? type : contentTypeOf(type) || "application/octet-stream");
}
response.type = contentType;
response.contentType = contentType;

response.format = function (this: Res, handlers: Record<string, (req: unknown, res: unknown, next: unknown) => void>) {
  const req = this.req;
  const next = req.next;
  const keys = Object.keys(handlers).filter((key) => key !== "default");
  const key = keys.length > 0 ? req.accepts(keys) : false;
  this.vary("Accept");
  if (key) {
    this.set("Content-Type", normalizeType(key).value);
    handlers[key]!(req, this, next);
  } else if (handlers.default) {
    handlers.default(req, this, next);
  } else {
    next(createError(406, { types: keys.map((type) => normalizeType(type).value) }));
  }
  return this;
};

response.attachment = function (this: Res, filename?: string) {
  const name = filename !== undefined ? basename(filename) : undefined;
  if (name) this.type(extname(name));
  this.set("Content-Disposition", contentDisposition(name));
  return this;
};

response.append = function (this: Res, field: string, value: string | string[]) {
  const previous = this.get(field);
  let next: unknown = value;
  if (previous) next = Array.isArray(previous) ? previous.concat(value) : Array.isArray(value) ? [previous].concat(value) : [previous, value];
  return this.set(field, next);
};

function setHeader(this: Res, field: string | Record<string, unknown>, value?: unknown) {
  if (arguments.length === 2) {
    let text: string | string[] = typeof value === "string" ? value : Array.isArray(value) ? value.map(String) : String(value);
    if (field === "Content-Type" || ((field as string).length === 12 && (field as string).toLowerCase() === "content-type")) {
      if (Array.isArray(text)) throw new TypeError("Content-Type cannot be set to an Array");
      // A bare type gets its charset (text/html -> text/html; charset=utf-8), as mime-types gives it.
      text = contentTypeOf(text) as string;
    }
    this.setHeader(field, text);
  } else {
    for (const key in field as Record<string, unknown>) this.set(key, (field as Record<string, unknown>)[key]);
  }
  return this;
}
response.set = setHeader;
response.header = setHeader;

response.get = function (this: Res, field: string) {
  return this.getHeader(field);
};

response.clearCookie = function (this: Res, name: string, options?: ExpressCookieOptions) {
  if (options === undefined && typeof name === "string") {
    // Without options the line is the same every time for a name: serializing it again (its
    // date formatted anew) cost ~8,000 instructions a request.
    let line = CLEARED.get(name);
    if (line === undefined) {
      line = stringifySetCookie(cookieOf(name, "", undefined, EXPIRED, undefined));
      if (CLEARED.size < 100) CLEARED.set(name, line);
    }
    return this.append("Set-Cookie", line);
  }
  // Expired, whatever maxAge or expires the options carry.
  return writeCookie(this, name, "", options, EXPIRED, undefined);
};

/** `res.clearCookie(name)`'s Set-Cookie line, by name (bounded). */
const CLEARED = new Map<string, string>();

response.cookie = function (this: Res, name: string, value: unknown, options?: ExpressCookieOptions) {
  let expires = options?.expires;
  let maxAge: unknown;
  if (options?.maxAge != null) {
    // Milliseconds here; seconds in the header, with Expires beside it. One that is no number
    // goes to the serializer as it is, which refuses it.
    maxAge = options.maxAge;
    const ms = Number(options.maxAge);
    if (!Number.isNaN(ms)) {
      expires = new Date(Date.now() + ms);
      maxAge = Math.floor(ms / 1000);
    }
  }
  return writeCookie(this, name, value, options, expires, maxAge);
};

/** `res.cookie`'s options, as Express documents them (maxAge in milliseconds). */
type ExpressCookieOptions = CookieOptions & { maxAge?: unknown; signed?: boolean; encode?: (value: string) => string };

const EXPIRED = new Date(1);

/**
 * Appends the Set-Cookie line for `name` (signed with `req.secret` when asked), through cookie's
 * serializer with an options object of one shape (src/http/response.ts's `cookieOf`): Express's own
 * `{ ...options }` and `delete` made each call's object a hidden class of its own and cost ~30k
 * instructions a cookie.
 */
function writeCookie(res: Res, name: string, value: unknown, options: ExpressCookieOptions | undefined, expires: Date | undefined, maxAge: unknown) {
  let text = typeof value === "object" ? `j:${JSON.stringify(value)}` : String(value);
  if (options?.signed) {
    const secret = res.req.secret;
    if (!secret) throw new Error('cookieParser("secret") required for signed cookies');
    text = `s:${sign(text, secret)}`;
  }
  const line = stringifySetCookie(cookieOf(name, text, options, expires, maxAge as number | undefined), options?.encode ? options : undefined);
  return res.append("Set-Cookie", line);
}

response.location = function (this: Res, url: string) {
  return this.set("Location", encodeUrl(url));
};

response.redirect = function (this: Res, ...args: unknown[]) {
  let status = 302;
  let address = args[0] as string;
  if (args.length === 2) {
    status = args[0] as number;
    address = args[1] as string;
  }
  address = this.location(address).get("Location");
  let body = "";
  const message = statuses.message[status];
  this.format({
    text: () => {
      body = `${message}. Redirecting to ${address}`;
    },
    html: () => {
      body = `<!DOCTYPE html><head><title>${message}</title></head><body><p>${message}. Redirecting to ${escapeHtml(address)}</p></body>`;
    },
    default: () => {
      body = "";
    },
  });
  this.status(status);
  this.set("Content-Length", Buffer.byteLength(body));
  if (this.req.method === "HEAD") this.end();
  else this.end(body);
};

response.vary = function (this: Res, field: string | string[]) {
  vary(this, field);
  return this;
};

response.render = function (this: Res, view: string, options?: Record<string, unknown> | Callback, callback?: (err: Error | null, html?: string) => void) {
  const req = this.req;
  let done = callback;
  let opts = (options || {}) as Record<string, unknown>;
  if (typeof options === "function") {
    done = options as never;
    opts = {};
  }
  opts._locals = this.locals;
  done ||= (err, html) => (err ? req.next(err) : this.send(html));
  req.app.render(view, opts, done);
};

/**
 * Pipes a `send` stream into the response and calls back once: when it ended, failed, found a
 * directory, or the client left before the file was written (ECONNABORTED).
 */

function pipeFile(res: Res, file: any, options: Record<string, unknown>, callback: Callback): void {
  let finished = false;
  let streaming: boolean | undefined;
  const once = (err?: Error & { code?: string }) => {
    if (finished) return;
    finished = true;
    callback(err);
  };
  const failure = (message: string, code: string) => once(Object.assign(new Error(message), { code }));
  file.on("directory", () => failure("EISDIR, read", "EISDIR"));
  file.on("end", () => once());
  file.on("error", (err: Error) => once(err));
  file.on("file", () => {
    streaming = false;
  });
  file.on("stream", () => {
    streaming = true;
  });
  onFinished(res, (err: (Error & { code?: string }) | null) => {
    if (err && err.code === "ECONNRESET") return failure("Request aborted", "ECONNABORTED");
    if (err) return once(err);
    if (finished) return;
    // The response finished: the file's own 'end' may still be on its way.
    setImmediate(() => {
      if (streaming !== false && !finished) return failure("Request aborted", "ECONNABORTED");
      once();
    });
  });
  const headers = options.headers as Record<string, unknown> | undefined;
  if (headers) {
    file.on("headers", (target: Res) => {
      for (const key of Object.keys(headers)) target.setHeader(key, headers[key]);
    });
  }
  file.pipe(res);
}
