import type { IncomingHttpHeaders } from "node:http";
import { tooLarge } from "../body.js";
import { withRequestHelpers, type BodyCallback } from "../request.js";
import { FLAG_HTTP11, FLAG_TOO_LARGE, type NativeAddon } from "./native-load.js";
import { headersFromRaw } from "./raw-headers.js";

/**
 * What Cog's request helpers need, from the native engine. The engine has
 * parsed and framed the request (and buffered its body, within the limit)
 * before JavaScript sees it; header lines are fetched on first read.
 */
class NativeRequestBase {
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor: number;
  /** @internal */ cachedRaw: string[] | null = null;
  /** @internal */ cachedHeaders: IncomingHttpHeaders | null = null;

  constructor(
    /** @internal */ readonly addon: NativeAddon,
    /** @internal */ readonly id: number,
    readonly method: string,
    public url: string,
    /** @internal */ readonly flags: number,
    /** @internal */ readonly received: Buffer | undefined,
  ) {
    this.httpVersionMinor = flags & FLAG_HTTP11;
  }

  get rawHeaders(): string[] {
    return (this.cachedRaw ??= this.addon.headers(this.id));
  }

  get headers(): IncomingHttpHeaders {
    return (this.cachedHeaders ??= headersFromRaw(this.rawHeaders));
  }
  set headers(headers: IncomingHttpHeaders) {
    this.cachedHeaders = headers;
  }
}

/** A request on the native engine. */
export class NativeRequest extends withRequestHelpers(NativeRequestBase) {
  /** @internal Set by the response once the engine has forgotten the request. */
  gone = false;
  /** @internal */ address: string | undefined = undefined;

  get remoteAddress(): string | undefined {
    if (this.address === undefined && !this.gone) this.address = this.addon.remoteAddress(this.id) ?? undefined;
    return this.address;
  }

  /** @internal The body arrived with the request; the engine stopped reading past the limit. */
  receiveBody(_length: number, limit: number, done: BodyCallback): void {
    if ((this.flags & FLAG_TOO_LARGE) !== 0) done(tooLarge(limit), null);
    else done(null, this.received ?? Buffer.alloc(0));
  }
}
