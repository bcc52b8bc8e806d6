import { BodyCollector } from "../body.js";
import { withRequestHelpers, type BodyCallback } from "../request.js";
import { DetachedHeaders } from "./raw-headers.js";
import type { UwsHttpRequest, UwsHttpResponse } from "./uws-load.js";

/** The request whose headers `collect` is copying (one module-level function: no closure per request). */
let collecting: UwsRequestBase;
function collect(key: string, value: string): void {
  const req = collecting;
  req.rawHeaders.push(key, value);
  // "name: value\r\n"
  req.headBytes += key.length + value.length + 4;
  // uWS keeps the connection open even when the client asked to close it. (uWS hands names in
  // lower case; the length test spares every other header a string comparison.)
  if (key.length === 10 && key === "connection" && value.length === 5 && value.toLowerCase() === "close") req.wantsClose = true;
}

/**
 * What Cog's request helpers need, read off a uWebSockets.js request. uWS's
 * request object dies when its handler returns, so the method, URL and
 * headers are copied while it lives (async handlers read them later).
 *
 * The only constructor in the request's class chain: every other level
 * (DetachedHeaders, the helpers, UwsRequest, the app's subclass) keeps its
 * defaults on the prototype, so V8 skips their constructors. Each constructor
 * that runs costs every request ~150 instructions.
 */
class UwsRequestBase extends DetachedHeaders {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: string[] = [];
  /** The request head's size (uWS's own limit is a build setting, so Cog checks maxHeaderSize). */
  headBytes: number;
  /** @internal */ readonly res: UwsHttpResponse;
  // Prototype defaults (below):
  // uWS serves HTTP/1.1 only (this build drops HTTP/1.0 requests unanswered).
  declare readonly httpVersionMajor: number;
  declare readonly httpVersionMinor: number;
  /** @internal The client sent `Connection: close`. */
  declare wantsClose: boolean;
  /** @internal Set by the response once uWS's response object may no longer be touched. */
  declare gone: boolean;
  /** @internal */ declare address: string | undefined;
  /** @internal The path without the query (request.ts); known here from the start. */
  declare cachedPath: string | undefined;

  constructor(req: UwsHttpRequest, res: UwsHttpResponse, method: string | undefined) {
    super();
    this.res = res;
    this.method = method ?? req.getCaseSensitiveMethod?.() ?? req.getMethod().toUpperCase();
    const path = req.getUrl();
    const query = req.getQuery();
    this.url = query === undefined ? path : `${path}?${query}`;
    // uWS hands the path apart from the query: routing needn't split them again. (Only an
    // origin-form target is its own path; an absolute-form one is reduced to its path later.)
    if (path.charCodeAt(0) === 47 /* "/" */) this.cachedPath = path;
    // Request line ("GET " + url + " HTTP/1.1\r\n"); collect adds the header lines.
    this.headBytes = this.method.length + this.url.length + 12;
    collecting = this;
    req.forEach(collect);
  }
}
Object.assign(UwsRequestBase.prototype, { httpVersionMajor: 1, httpVersionMinor: 1, wantsClose: false, gone: false, address: undefined });

/** A request on the uws engine: Cog's helpers over uWS's request and response. */
export class UwsRequest extends withRequestHelpers(UwsRequestBase) {
  get remoteAddress(): string | undefined {
    if (this.address === undefined && !this.gone) this.address = Buffer.from(this.res.getRemoteAddressAsText()).toString();
    return this.address;
  }

  /** @internal */
  receiveBody(length: number, limit: number, done: BodyCallback): void {
    const body = new BodyCollector(length, limit, done);
    if (body.finished) return;
    this.res.onData((chunk, isLast) => {
      // uWS reuses the chunk's memory once this callback returns: copy what is kept.
      body.add(Buffer.from(new Uint8Array(chunk)));
      if (isLast) body.end();
    });
  }
}
