import { validateHeaderName, validateHeaderValue, type OutgoingHttpHeaders } from "node:http";
import { lowerCase } from "../../response.js";

export type StoredValue = number | string | readonly string[];

/** Header names already validated, to their lower case: nearly always the same few literals, so each is checked once (bounded). */
const GOOD_NAMES = new Map<string, string>();
/**
 * Short header values already validated ("application/json; charset=utf-8", "no-cache"…): most
 * responses repeat the same literals, and a Set lookup of a literal costs a tenth of scanning it.
 * Bounded in count and length, so varying values (cookies, ETags) can't grow it past ~100 KiB.
 */
const GOOD_VALUES = new Set<string>();
/**
 * Node's rule for header values: no CR, LF, NUL or other control characters except tab, nothing
 * past latin1. A regular expression rather than a charCodeAt loop: measured 2-3x faster from ~10
 * characters up (the loop paid ~5 ns a character), on Node 20 and 24 alike.
 */
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

function isFieldValue(value: string): boolean {
  if (GOOD_VALUES.has(value)) return true;
  if (BAD_VALUE_CHAR.test(value)) return false;
  if (value.length <= 100 && GOOD_VALUES.size < 1000) GOOD_VALUES.add(value);
  return true;
}

/**
 * Throws Node's own errors (ERR_INVALID_HTTP_TOKEN, ERR_INVALID_CHAR…) for a header Node would
 * refuse; returns the name in lower case.
 */
function checkHeader(name: string, value: StoredValue | undefined): string {
  let lower = GOOD_NAMES.get(name);
  if (lower === undefined) {
    validateHeaderName(name);
    lower = name.toLowerCase();
    if (GOOD_NAMES.size < 1000) GOOD_NAMES.set(name, lower);
  }
  if (typeof value === "string" ? !isFieldValue(value) : typeof value !== "number") validateHeaderValue(name, value as string);
  return lower;
}

export const NO_BODY_STATUS = (status: number) => status === 204 || status === 304 || (status >= 100 && status < 200);

/**
 * The response side that engines other than node:http share: Node's header
 * API (`setHeader`, `writeHead`…, validated as Node validates, so no CR/LF
 * can split a response), kept in memory until the whole response is handed
 * to the engine in one call. Subclasses say how: `flush` writes the
 * response, `cut` drops the connection, `release` forgets the engine's
 * object.
 */
export abstract class BufferedResponse {
  // Every field's default is on the prototype (below), so no constructor runs for this level of
  // an engine's response class: each one that runs costs every response ~150 instructions.
  declare statusCode: number;
  declare headersSent: boolean;
  declare writableEnded: boolean;
  declare destroyed: boolean;
  declare shouldKeepAlive: boolean;
  /** The engine writes Content-Length from the body it is given: the helpers needn't count it. */
  declare readonly framesBody: boolean;
  /** @internal Headers given to `setHeader`, by lower-case name. */
  declare store: Map<string, StoredValue> | null;
  /** @internal Headers given to `writeHead`. */
  declare head: OutgoingHttpHeaders | null;
  /** @internal Whether every name in `head` is in lower case already (Cog's own headers are). */
  declare headLower: boolean;
  /** @internal Whether a piped stream has begun the body (status and headers are out). */
  declare streaming: boolean;
  /** @internal What to stop when the client goes away (a stream being piped). */
  declare onAbort: (() => void) | null;

  setHeader(name: string, value: StoredValue): this {
    checkHeader(name, value);
    (this.store ??= new Map()).set(name.toLowerCase(), value);
    return this;
  }

  getHeader(name: string): number | string | string[] | undefined {
    return this.store?.get(name.toLowerCase()) as number | string | string[] | undefined;
  }

  hasHeader(name: string): boolean {
    return this.store?.has(name.toLowerCase()) ?? false;
  }

  removeHeader(name: string): void {
    this.store?.delete(name.toLowerCase());
  }

  /** Validates every header, as Node's writeHead does, and keeps them until the body is written. */
  writeHead(status: number, headers: OutgoingHttpHeaders): this {
    if (this.headersSent) throw new Error("Cannot write headers after they are sent to the client");
    let lower = true;
    for (const name in headers) if (checkHeader(name, headers[name] as StoredValue | undefined) !== name) lower = false;
    this.statusCode = status;
    this.head = headers;
    this.headLower = lower;
    this.headersSent = true;
    return this;
  }

  end(body?: string | Buffer): this {
    if (this.writableEnded) return this;
    this.writableEnded = true;
    this.headersSent = true;
    if (this.destroyed) return this;
    this.flush(body);
    this.release();
    return this;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.cut();
    this.release();
    return this;
  }

  /** The client went away: nothing may be written any more; a piped stream is stopped. @internal */
  aborted(): void {
    this.destroyed = true;
    this.onAbort?.();
    this.release();
  }

  /**
   * Calls `write(to, name, value)` for each header to send: `setHeader`'s unless `writeHead` gave
   * the same name, then `writeHead`'s; lower-case names, one call per value of a list. (A plain
   * function and its target rather than a closure: this runs for every response.)
   * @internal
   */
  eachHeader<T>(write: (to: T, name: string, value: string) => void, to: T): void {
    const head = this.head;
    if (this.store !== null) {
      for (const [name, value] of this.store) if (head === null || head[name] === undefined) eachValue(to, name, value, write);
    }
    if (head !== null) {
      const lower = this.headLower;
      for (const name in head) {
        const value = head[name] as StoredValue | undefined;
        if (value !== undefined) eachValue(to, lower ? name : lowerCase(name), value, write);
      }
    }
  }

  /** @internal Writes the whole response, or ends a streamed one. */
  abstract flush(body: string | Buffer | undefined): void;
  /** @internal Drops the connection. */
  abstract cut(): void;
  /** @internal Called once, when the engine's object may no longer be touched. */
  abstract release(): void;
}

Object.assign(BufferedResponse.prototype, {
  statusCode: 200,
  headersSent: false,
  writableEnded: false,
  destroyed: false,
  shouldKeepAlive: true,
  framesBody: true,
  store: null,
  head: null,
  headLower: true,
  streaming: false,
  onAbort: null,
});

function eachValue<T>(to: T, name: string, value: StoredValue, write: (to: T, name: string, value: string) => void): void {
  if (typeof value === "object") for (const v of value) write(to, name, v);
  else write(to, name, typeof value === "string" ? value : String(value));
}
