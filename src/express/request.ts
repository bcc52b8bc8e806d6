import { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import accepts from "accepts";
import fresh from "fresh";
import parseurl from "parseurl";
import proxyaddr from "proxy-addr";
import parseRange from "range-parser";
import typeis from "type-is";
import type { TrustFn } from "./settings.js";
import { NO_QUERY, NOT_PLAIN_URL, plainQueryIndex } from "./url.js";

/**
 * Express 5's request prototype (`express.request`): what Express adds to Node's
 * IncomingMessage, each member computed from the request's head and the app's settings when
 * read, as Express computes it. Every app's `app.request` inherits from it; on Cog's engines the
 * members are laid over the engine's own request class (see prototypes.ts).
 */

type Req = any;

export const request: Record<string | symbol, unknown> = Object.create(IncomingMessage.prototype);

function define(name: string, get: (this: Req) => unknown): void {
  Object.defineProperty(request, name, { configurable: true, enumerable: true, get });
}

function header(this: Req, name: string): string | string[] | undefined {
  if (!name) throw new TypeError("name argument is required to req.get");
  if (typeof name !== "string") throw new TypeError("name must be a string to req.get");
  const lower = name.toLowerCase();
  // Either spelling of the referrer answers for both.
  if (lower === "referer" || lower === "referrer") return this.headers.referrer || this.headers.referer;
  return this.headers[lower];
}
request.get = header;
request.header = header;

request.accepts = function (this: Req, ...types: unknown[]) {
  const accept = accepts(this);
  return accept.types(...types);
};
request.acceptsEncodings = function (this: Req, ...encodings: unknown[]) {
  const accept = accepts(this);
  return accept.encodings(...encodings);
};
request.acceptsCharsets = function (this: Req, ...charsets: unknown[]) {
  return accepts(this).charsets(...charsets);
};
request.acceptsLanguages = function (this: Req, ...languages: unknown[]) {
  return accepts(this).languages(...languages);
};

request.range = function (this: Req, size: number, options?: { combine?: boolean }) {
  const range = this.get("Range");
  if (!range) return undefined;
  return parseRange(size, range, options);
};

request.is = function (this: Req, ...types: Array<string | string[]>) {
  return typeis(this, (Array.isArray(types[0]) ? types[0] : types) as string[]);
};

define("query", function () {
  const parse = this.app.get("query parser fn") as ((query: string | null) => unknown) | undefined;
  if (!parse) return Object.create(null);
  // parseurl's answer (null without a `?`), read without its Url object where it can be.
  const url = this.url;
  const query = plainQueryIndex(url);
  if (query === NOT_PLAIN_URL) return parse(parseurl(this)!.query);
  return parse(query === NO_QUERY ? null : url.substring(query + 1));
});

/** The first of a comma-separated header's values, trimmed. */
function firstOf(value: string): string {
  const comma = value.indexOf(",");
  return (comma === -1 ? value : value.slice(0, comma)).trim();
}

define("protocol", function () {
  const own = this.socket.encrypted ? "https" : "http";
  const trust = this.app.get("trust proxy fn") as TrustFn;
  if (!trust(this.socket.remoteAddress, 0)) return own;
  return firstOf(this.get("X-Forwarded-Proto") || own);
});

define("secure", function () {
  return this.protocol === "https";
});

define("ip", function () {
  return proxyaddr(this, this.app.get("trust proxy fn"));
});

define("ips", function () {
  const addresses = proxyaddr.all(this, this.app.get("trust proxy fn"));
  // Nearest proxy last, then the socket's own address left out: the client first.
  addresses.reverse().pop();
  return addresses;
});

define("subdomains", function () {
  const hostname: string | undefined = this.hostname;
  if (!hostname) return [];
  const offset = this.app.get("subdomain offset") as number;
  const labels = isIP(hostname) ? [hostname] : hostname.split(".").reverse();
  return labels.slice(offset);
});

define("path", function () {
  return parseurl(this)!.pathname;
});

define("host", function () {
  const trust = this.app.get("trust proxy fn") as TrustFn;
  let value: string | undefined = this.get("X-Forwarded-Host");
  if (!value || !trust(this.socket.remoteAddress, 0)) value = this.get("Host");
  else if (value.includes(",")) value = value.slice(0, value.indexOf(",")).trimEnd();
  return value || undefined;
});

define("hostname", function () {
  const host: string | undefined = this.host;
  if (!host) return undefined;
  // An IPv6 literal is bracketed: the port's colon comes after the bracket.
  const from = host[0] === "[" ? host.indexOf("]") + 1 : 0;
  const colon = host.indexOf(":", from);
  return colon === -1 ? host : host.slice(0, colon);
});

define("fresh", function () {
  const method = this.method;
  const res = this.res;
  const status = res.statusCode;
  if (method !== "GET" && method !== "HEAD" && method !== "QUERY") return false;
  if ((status >= 200 && status < 300) || status === 304) {
    // Without either validator fresh() answers false. Asked one header at a time where the
    // request can (Cog's engines; the native engine builds `req.headers` only when asked, which
    // costs more than the rest of `res.send`); plain node:http requests go to fresh() directly.
    const one = this.headerValue as ((name: string) => string | undefined) | undefined;
    if (one !== undefined && !one.call(this, "if-none-match") && !one.call(this, "if-modified-since")) return false;
    return fresh(this.headers, { etag: res.get("ETag"), "last-modified": res.get("Last-Modified") });
  }
  return false;
});

define("stale", function () {
  return !this.fresh;
});

define("xhr", function () {
  const value: string = this.get("X-Requested-With") || "";
  return value.toLowerCase() === "xmlhttprequest";
});
