import { BodyCollector } from "../body.js";
import { withRequestHelpers, type BodyCallback } from "../request.js";
import { DetachedHeaders } from "./raw-headers.js";
import type { UwsHttpRequest, UwsHttpResponse } from "./uws-load.js";

/**
 * What Cog's request helpers need, read off a uWebSockets.js request. uWS's
 * request object dies when its handler returns, so the method, URL and
 * headers are copied while it lives (async handlers read them later).
 */
/** The request whose headers `collect` is copying (one module-level function: no closure per request). */
let collecting: UwsRequestBase;
function collect(key: string, value: string): void {
  const req = collecting;
  req.rawHeaders.push(key, value);
  // "name: value\r\n"
  req.headBytes += key.length + value.length + 4;
  // uWS keeps the connection open even when the client asked to close it.
  if (key === "connection" && value.toLowerCase() === "close") req.wantsClose = true;
}

class UwsRequestBase extends DetachedHeaders {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: string[] = [];
  // uWS serves HTTP/1.1 only (this build drops HTTP/1.0 requests unanswered).
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  /** The request head's size (uWS's own limit is a build setting, so Cog checks maxHeaderSize). */
  headBytes = 0;
  /** @internal The client sent `Connection: close`. */
  wantsClose = false;

  constructor(req: UwsHttpRequest, method: string | undefined) {
    super();
    this.method = method ?? req.getCaseSensitiveMethod?.() ?? req.getMethod().toUpperCase();
    const query = req.getQuery();
    this.url = query === undefined ? req.getUrl() : `${req.getUrl()}?${query}`;
    collecting = this;
    req.forEach(collect);
    // Request line ("GET " + url + " HTTP/1.1\r\n") plus what collect counted.
    this.headBytes += this.method.length + this.url.length + 12;
  }

}

/** A request on the uws engine: Cog's helpers over uWS's request and response. */
export class UwsRequest extends withRequestHelpers(UwsRequestBase) {
  /** @internal */ readonly res: UwsHttpResponse;
  /** @internal */ address: string | undefined = undefined;
  /** @internal Set by the response once uWS's response object may no longer be touched. */
  gone = false;

  constructor(req: UwsHttpRequest, res: UwsHttpResponse, method: string | undefined) {
    super(req, method);
    this.res = res;
  }

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
