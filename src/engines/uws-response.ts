import { STATUS_CODES, validateHeaderName, validateHeaderValue, type OutgoingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { withResponseHelpers } from "../response.js";
import type { UwsHttpResponse } from "./uws-load.js";
import type { UwsRequest } from "./uws-request.js";

type StoredValue = number | string | readonly string[];

// uWS writes these itself (Content-Length from the body it is given, Date on every response);
// Connection is its close flag. Writing them again would duplicate them.
const ENGINE_HEADERS = new Set(["content-length", "date", "connection", "transfer-encoding"]);
/** "200 OK" and friends, built once per status. */
const STATUS_LINES = new Map<number, string>();
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (line === undefined) STATUS_LINES.set(status, (line = `${status} ${STATUS_CODES[status] ?? "Unknown"}`));
  return line;
}
/** Header names already validated: nearly always the same few literals, so each is checked once (bounded). */
const GOOD_NAMES = new Set<string>();
/** Node's rule for header values: no CR, LF, NUL or other control characters except tab. */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** Throws Node's own errors (ERR_INVALID_HTTP_TOKEN, ERR_INVALID_CHAR…) for a header Node would refuse. */
function checkHeader(name: string, value: StoredValue | undefined): void {
  if (!GOOD_NAMES.has(name)) {
    validateHeaderName(name);
    if (GOOD_NAMES.size < 1000) GOOD_NAMES.add(name);
  }
  if (typeof value === "string" ? BAD_VALUE.test(value) : typeof value !== "number") validateHeaderValue(name, value as string);
}

const NO_BODY_STATUS = (status: number) => status === 204 || status === 304 || (status >= 100 && status < 200);

/**
 * What Cog's response helpers need, over a uWebSockets.js response. It keeps
 * the rules uWS leaves to its user: header names and values are validated
 * like Node does (uWS would write a CR/LF through: uNetworking/uWebSockets.js#1299),
 * nothing touches uWS's object once the client is gone (uWS crashes on
 * that), and writes are corked into one send.
 */
class UwsResponseBase {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  destroyed = false;
  shouldKeepAlive = true;
  /** @internal Headers given to `setHeader`, by lower-case name. */
  store: Map<string, StoredValue> | null = null;
  /** @internal Headers given to `writeHead`. */
  head: OutgoingHttpHeaders | null = null;
  /** @internal */ readonly raw: UwsHttpResponse;
  /** @internal */ readonly request: UwsRequest;
  /** @internal Called once, when uWS's response may no longer be touched. */
  readonly onDone: (res: UwsResponseBase) => void;
  /** @internal Whether a piped stream has begun the body (status and headers are out). */
  streaming = false;
  /** @internal True while uWS's handler runs: uWS has corked the socket already, so writes need no cork(). */
  corked = true;
  /** @internal What to stop when the client goes away (a stream being piped). */
  onAbort: (() => void) | null = null;

  constructor(raw: UwsHttpResponse, request: UwsRequest, onDone: (res: UwsResponseBase) => void) {
    this.raw = raw;
    this.request = request;
    this.onDone = onDone;
  }

  /**
   * Called by the engine when its handler returns with this response unfinished (an async handler,
   * a body still arriving): uWS requires an abort handler then, and only then.
   * @internal
   */
  watchAbort(): void {
    this.raw.onAborted(() => {
      this.destroyed = true;
      this.onAbort?.();
      this.done();
    });
  }

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
    if (this.corked) this.flush(body);
    else this.raw.cork(() => this.flush(body));
    this.done();
    return this;
  }

  /** @internal Writes the whole response (or ends a streamed one); the socket must be corked. */
  flush(body: string | Buffer | undefined): void {
    const raw = this.raw;
    if (this.streaming) {
      // The status and headers went out with the first chunk: this ends the chunked body.
      raw.end(body ?? "", this.closing());
      return;
    }
    const length = this.writeStatusAndHeaders();
    if (this.request.method === "HEAD" || NO_BODY_STATUS(this.statusCode)) {
      // uWS would send a HEAD response's body, and its endWithoutBody(length, close) stalls the
      // connection: write the length as a header and end without a body, keeping the connection.
      const reported = length ?? (body === undefined ? undefined : typeof body === "string" ? Buffer.byteLength(body) : body.length);
      if (reported !== undefined && !NO_BODY_STATUS(this.statusCode)) raw.writeHeader("content-length", String(reported));
      raw.endWithoutBody();
    } else {
      // uWS writes Content-Length from the body itself.
      raw.end(body ?? "", this.closing());
    }
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    if (!this.request.gone) this.raw.close();
    this.done();
    return this;
  }

  /** @internal Writes the status line and headers; returns the Content-Length the app set, if any. */
  writeStatusAndHeaders(): number | undefined {
    // uWS writes "200 OK" unless told otherwise.
    if (this.statusCode !== 200) this.raw.writeStatus(statusLine(this.statusCode));
    let length: number | undefined;
    const head = this.head;
    if (this.store !== null) {
      for (const [name, value] of this.store) {
        if (head === null || head[name] === undefined) length = this.writeHeader(name, value) ?? length;
      }
    }
    if (head !== null) {
      for (const name in head) {
        const value = head[name] as StoredValue | undefined;
        if (value !== undefined) length = this.writeHeader(name.toLowerCase(), value) ?? length;
      }
    }
    return length;
  }

  /** @internal Writes one header, unless uWS writes it itself; returns its value if it is Content-Length. */
  writeHeader(name: string, value: StoredValue): number | undefined {
    if (ENGINE_HEADERS.has(name)) {
      if (name === "content-length") return Number(value);
      if (name === "connection" && String(value).toLowerCase() === "close") this.shouldKeepAlive = false;
      return undefined;
    }
    if (typeof value === "object") for (const v of value) this.raw.writeHeader(name, v);
    else this.raw.writeHeader(name, typeof value === "string" ? value : String(value));
    return undefined;
  }

  /** @internal Whether the connection ends with this response: Cog decided so, or the client asked. */
  closing(): boolean {
    return !this.shouldKeepAlive || this.request.wantsClose;
  }

  /** @internal */
  done(): void {
    if (this.request.gone) return;
    this.request.gone = true;
    this.onDone(this);
  }
}

/** A response on the uws engine: Cog's helpers over uWS's response. */
export class UwsResponse extends withResponseHelpers(UwsResponseBase) {
  /**
   * As the helpers' finish, without counting the body's bytes: uWS writes
   * Content-Length from the body it is given.
   * @internal
   */
  override finish(body: string | Buffer, type: string): this {
    if (NO_BODY_STATUS(this.statusCode)) return super.finish(body, type);
    const headers = this.pending ?? {};
    this.defaultType(headers, type);
    this.writeHeaders(this.statusCode, headers);
    this.end(body);
    return this;
  }

  /**
   * Streams `body` with backpressure: a write uWS can't take yet pauses the stream until `onWritable`.
   * @internal
   */
  pipeFrom(body: Readable): void {
    const raw = this.raw;
    this.headersSent = true;
    raw.cork(() => this.writeStatusAndHeaders());
    this.streaming = true;
    this.onAbort = () => body.destroy();
    body.on("data", (chunk: Buffer | string) => {
      if (this.destroyed) return;
      let accepted = true;
      raw.cork(() => {
        accepted = raw.write(chunk);
      });
      if (!accepted) {
        body.pause();
        raw.onWritable(() => {
          body.resume();
          return true;
        });
      }
    });
    body.on("end", () => this.end());
    // A failing stream can't be answered with an error any more: cut the connection.
    body.on("error", () => this.destroy());
  }
}
