import { tooLarge } from "../../body.js";
import { HttpError } from "../../errors.js";
import { NO_BODY } from "../../head.js";
import { withRequestHelpers, type BodyCallback } from "../../request.js";
import { FLAG_HTTP11, FLAG_REFUSED, FLAG_TOO_LARGE, type NativeAddon } from "./load.js";
import { DetachedHeaders } from "./headers.js";

/**
 * What Cog's request helpers need, from the native engine. The engine has
 * parsed and framed the request, applied Cog's head rules, and buffered its
 * body (within the limit) before JavaScript sees it; header lines are
 * fetched on first read, all of them or (cookies) just the one.
 */
class NativeRequestBase extends DetachedHeaders {
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor: number;
  /** @internal */ cachedRaw: string[] | null = null;

  constructor(
    /** @internal */ readonly addon: NativeAddon,
    /** @internal */ readonly id: number,
    readonly method: string,
    public url: string,
    /** @internal */ readonly flags: number,
    /** @internal */ readonly received: Buffer | undefined,
    /** @internal Why the engine refused the request (FLAG_REFUSED). */
    readonly problem: string | undefined,
  ) {
    super();
    this.httpVersionMinor = flags & FLAG_HTTP11;
  }

  /**
   * The engine applied Cog's head rules already: what it found is thrown from here, and the
   * body (if any) is in hand.
   * @internal
   */
  checkedHead(): number {
    const flags = this.flags;
    if ((flags & FLAG_REFUSED) !== 0) throw new HttpError(flags >>> 16, this.problem ?? "Bad request");
    return this.received !== undefined || (flags & FLAG_TOO_LARGE) !== 0 ? 1 : NO_BODY;
  }

  get rawHeaders(): string[] {
    return (this.cachedRaw ??= this.addon.headers(this.id));
  }

}

/** A request on the native engine. */
export class NativeRequest extends withRequestHelpers(NativeRequestBase) {
  // Prototype defaults (below): NativeRequestBase's is the one constructor that runs per request.
  /** @internal Set by the response once the engine has forgotten the request. */
  declare gone: boolean;
  /** @internal */ declare address: string | undefined;

  get remoteAddress(): string | undefined {
    if (this.address === undefined && !this.gone) this.address = this.addon.remoteAddress(this.id) ?? undefined;
    return this.address;
  }

  /** @internal One header from the engine, unless they were all fetched already. */
  override headerValue(name: string): string | undefined {
    if (this.cachedHeaders !== null || this.gone) return super.headerValue(name);
    return this.addon.header(this.id, name) ?? undefined;
  }

  /** @internal One header's first value from the engine, unless they were all fetched already. */
  override firstHeader(name: string): string | undefined {
    if (this.cachedRaw !== null || this.gone) return super.firstHeader(name);
    return this.addon.header(this.id, name, true) ?? undefined;
  }

  /** @internal The body arrived with the request; the engine stopped reading past the limit. */
  receiveBody(_length: number, limit: number, done: BodyCallback): void {
    if ((this.flags & FLAG_TOO_LARGE) !== 0) done(tooLarge(limit), null);
    else done(null, this.received ?? Buffer.alloc(0));
  }
}
Object.assign(NativeRequest.prototype, { gone: false, address: undefined });
