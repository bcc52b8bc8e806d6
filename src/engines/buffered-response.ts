import { validateHeaderName, validateHeaderValue, type OutgoingHttpHeaders } from "node:http";
import { lowerCase } from "../response.js";

export type StoredValue = number | string | readonly string[];

/** Header names already validated: nearly always the same few literals, so each is checked once (bounded). */
const GOOD_NAMES = new Set<string>();
/**
 * Node's rule for header values: no CR, LF, NUL or other control characters except tab, nothing
 * past latin1. A loop rather than a regular expression: this runs for every header of every
 * response, and the loop costs a third of the regular expression's call.
 */
function isFieldValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 ? c !== 0x09 : c === 0x7f || c > 0xff) return false;
  }
  return true;
}

/** Throws Node's own errors (ERR_INVALID_HTTP_TOKEN, ERR_INVALID_CHAR…) for a header Node would refuse. */
function checkHeader(name: string, value: StoredValue | undefined): void {
  if (!GOOD_NAMES.has(name)) {
    validateHeaderName(name);
    if (GOOD_NAMES.size < 1000) GOOD_NAMES.add(name);
  }
  if (typeof value === "string" ? !isFieldValue(value) : typeof value !== "number") validateHeaderValue(name, value as string);
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
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  destroyed = false;
  shouldKeepAlive = true;
  /** The engine writes Content-Length from the body it is given: the helpers needn't count it. */
  readonly framesBody = true;
  /** @internal Headers given to `setHeader`, by lower-case name. */
  store: Map<string, StoredValue> | null = null;
  /** @internal Headers given to `writeHead`. */
  head: OutgoingHttpHeaders | null = null;
  /** @internal Whether a piped stream has begun the body (status and headers are out). */
  streaming = false;
  /** @internal What to stop when the client goes away (a stream being piped). */
  onAbort: (() => void) | null = null;

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
    for (const name in headers) checkHeader(name, headers[name] as StoredValue | undefined);
    this.statusCode = status;
    this.head = headers;
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
      for (const name in head) {
        const value = head[name] as StoredValue | undefined;
        if (value !== undefined) eachValue(to, lowerCase(name), value, write);
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

function eachValue<T>(to: T, name: string, value: StoredValue, write: (to: T, name: string, value: string) => void): void {
  if (typeof value === "object") for (const v of value) write(to, name, v);
  else write(to, name, typeof value === "string" ? value : String(value));
}
