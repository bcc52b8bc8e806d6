import { STATUS_CODES, validateHeaderName, validateHeaderValue, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import type { FileHandle } from "node:fs/promises";
import { Stream } from "node:stream";
import { ECHO_REQUEST_ID, SEND_FILE, type ResponseSurface } from "../engine.js";
import { streamFileRange } from "../../file-stream.js";
import { lowerCase, WHOLE_BODY } from "../../response.js";
import { responseFinish } from "./http-channels.js";

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

/** Node's errors for a call that comes too late or with a bad status, with Node's codes. */
function nodeError(code: string, message: string, Kind: ErrorConstructor | RangeErrorConstructor | TypeErrorConstructor = Error): Error {
  return Object.assign(new Kind(message), { code });
}
const headersSentError = (what: string) => nodeError("ERR_HTTP_HEADERS_SENT", `Cannot ${what} headers after they are sent to the client`);

// An outgoing response's own state, under symbols (middleware sets `res.flush`, `res.locals`…).
/** Headers given to `setHeader`, by lower-case name. */
export const STORE: unique symbol = Symbol("cog.native.store");
/** Headers given to `writeHead`. */
export const HEAD: unique symbol = Symbol("cog.native.head");
/** Whether every name in HEAD is in lower case already (Cog's own headers are). */
export const HEAD_LOWER: unique symbol = Symbol("cog.native.headLower");
/** The status and reason phrase as writeHead took them: node:http writes its status line then, so changing either afterwards changes nothing. */
export const HEAD_STATUS: unique symbol = Symbol("cog.native.headStatus");
export const HEAD_REASON: unique symbol = Symbol("cog.native.headReason");
/** Whether the body is being streamed (status and headers are out). */
export const STREAMING: unique symbol = Symbol("cog.native.streaming");
/** The request id to echo in X-Request-Id (see `ECHO_REQUEST_ID`), kept apart from the store: the engine appends it to the header block. */
export const REQUEST_ID: unique symbol = Symbol("cog.native.requestId");
/** Bytes of a streamed body handed to the engine so far: the access log's count when no Content-Length was declared. */
export const STREAMED_BYTES: unique symbol = Symbol("cog.native.streamedBytes");
/** A write returned false: emit 'drain' when the engine has sent what it holds. */
const NEED_DRAIN: unique symbol = Symbol("cog.native.needDrain");

/**
 * Node's ServerResponse, for an engine that takes a whole response in one call or a streamed one
 * chunk by chunk: the header store and its checks (as Node validates, so no CR/LF can split a
 * response), `writeHead`, `write`/`end` with backpressure, `flushHeaders`, and the events
 * (`finish`, `close`, `drain`) that middleware such as on-finished, compression or morgan
 * listen to. Subclasses say how bytes reach the engine: `sendWhole`, `startStream`,
 * `sendChunk`, `endStream`, `cut`, `release`.
 *
 * It is an EventEmitter (Node's legacy Stream, as ServerResponse is) whose listener table is
 * made on first `on`: a response nobody listens to emits nothing and costs nothing for it.
 */
export abstract class OutgoingResponse {
  // Every field's default is on the prototype (below), so no constructor runs for this level of
  // the engine's response class: each one that runs costs every response ~150 instructions.
  declare statusCode: number;
  declare statusMessage: string;
  declare headersSent: boolean;
  declare writableEnded: boolean;
  declare writableFinished: boolean;
  declare destroyed: boolean;
  declare shouldKeepAlive: boolean;
  declare sendDate: boolean;
  /** @internal */ declare [STORE]: Map<string, StoredValue> | null;
  /** @internal */ declare [HEAD]: OutgoingHttpHeaders | null;
  /** @internal */ declare [HEAD_LOWER]: boolean;
  /** @internal */ declare [HEAD_STATUS]: number;
  /** @internal */ declare [HEAD_REASON]: string | undefined;
  /** @internal */ declare [STREAMING]: boolean;
  /** @internal */ declare [REQUEST_ID]: string | undefined;
  /** @internal */ declare [NEED_DRAIN]: boolean;
  /** @internal */ declare [STREAMED_BYTES]: number;
  /** @internal The body `send` is writing (response.ts). */
  declare [WHOLE_BODY]: string | Buffer | undefined;

  setHeader(name: string, value: StoredValue): this {
    if (this.headersSent) throw headersSentError("set");
    checkHeader(name, value);
    (this[STORE] ??= new Map()).set(name.toLowerCase(), value);
    return this;
  }

  appendHeader(name: string, value: string | readonly string[]): this {
    const current = this.getHeader(name);
    const values = Array.isArray(value) ? value : [value as string];
    return this.setHeader(name, current === undefined ? value : [...(Array.isArray(current) ? current : [String(current)]), ...values]);
  }

  /** The engine contract's request id echo: the id is sent after the other headers unless the app sets its own X-Request-Id. */
  [ECHO_REQUEST_ID](id: string): void {
    this[REQUEST_ID] = id;
  }

  /**
   * The request id to send after the other headers: the echoed one, unless the app set
   * X-Request-Id itself (it is then in the store) or there is none.
   * @internal
   */
  echoedRequestId(): string | undefined {
    const id = this[REQUEST_ID];
    return id === undefined || this[STORE]?.has("x-request-id") === true ? undefined : id;
  }

  /** A header set so far; Content-Length, which the engine writes itself, is answered from the body `send` is writing. */
  getHeader(name: string): number | string | string[] | undefined {
    const lower = name.toLowerCase();
    const value = this[STORE]?.get(lower) as number | string | string[] | undefined;
    if (value !== undefined) return value;
    if (lower === "x-request-id") return this[REQUEST_ID];
    if (lower === "content-length") return this.bodyLength();
    return this.listsHead() ? (headValue(this[HEAD]!, lower) as number | string | string[] | undefined) : undefined;
  }

  /**
   * Whether `writeHead`'s headers are part of the response's header list (getHeader, getHeaders):
   * as on node:http, once written, when the response had a header list already (a header set
   * before, or the echoed request id, which node:http sets). Without one, node:http writes them
   * straight out and its getHeaders() stays empty; so does this.
   */
  private listsHead(): boolean {
    return this[HEAD] !== null && (this[STORE] !== null || this[REQUEST_ID] !== undefined);
  }

  /**
   * The Content-Length sent or to be sent: one the app set, or the length of the whole body
   * `send` is writing. Apart from getHeader for the access log, which asks on every response.
   * @internal
   */
  bodyLength(): number | string | undefined {
    const set = this[STORE]?.get("content-length") ?? this[HEAD]?.["content-length"] ?? this[HEAD]?.["Content-Length"];
    if (set !== undefined) return set as number | string;
    const body = this[WHOLE_BODY];
    return body === undefined ? undefined : typeof body === "string" ? Buffer.byteLength(body) : body.length;
  }

  getHeaders(): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = Object.create(null);
    if (this[REQUEST_ID] !== undefined) headers["x-request-id"] = this[REQUEST_ID];
    if (this[STORE] !== null) for (const [name, value] of this[STORE]) headers[name] = value as OutgoingHttpHeader;
    if (this.listsHead()) {
      const head = this[HEAD]!;
      for (const name in head) if (head[name] !== undefined) headers[this[HEAD_LOWER] ? name : name.toLowerCase()] = head[name];
      // The engine frames the body itself: its Content-Length is the body's (node:http lists the one it sent).
      if (headers["content-length"] === undefined) {
        const length = this.bodyLength();
        if (length !== undefined) headers["content-length"] = length;
      }
    }
    return headers;
  }

  getHeaderNames(): string[] {
    return Object.keys(this.getHeaders());
  }

  hasHeader(name: string): boolean {
    const lower = name.toLowerCase();
    return (this[STORE]?.has(lower) ?? false) || (lower === "x-request-id" && this[REQUEST_ID] !== undefined) || (this.listsHead() && headValue(this[HEAD]!, lower) !== undefined);
  }

  removeHeader(name: string): void {
    if (this.headersSent) throw headersSentError("remove");
    const lower = name.toLowerCase();
    if (lower === "x-request-id") this[REQUEST_ID] = undefined;
    this[STORE]?.delete(lower);
  }

  /**
   * Node's writeHead: validates the status (an integer from 100 to 999), the reason phrase and
   * every header, and keeps them until the body is written. Headers may be an object or a list
   * (`[name, value, …]` or `[[name, value], …]`).
   */
  writeHead(status: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    if (this.headersSent) throw headersSentError("write");
    if (typeof reason === "string") this.statusMessage = reason;
    else headers ??= reason;
    const code = status | 0;
    if (typeof status !== "number" || code !== status || code < 100 || code > 999) {
      throw nodeError("ERR_HTTP_INVALID_STATUS_CODE", `Invalid status code: ${String(status)}`, RangeError);
    }
    const message = this.statusMessage;
    if (message !== undefined && BAD_VALUE_CHAR.test(message)) throw nodeError("ERR_INVALID_CHAR", 'Invalid character in statusMessage', TypeError);
    const object = Array.isArray(headers) ? headersFromList(headers) : headers ?? null;
    let lower = true;
    if (object !== null) {
      for (const name in object) if (checkHeader(name, object[name] as StoredValue | undefined) !== name) lower = false;
    }
    this.statusCode = code;
    this[HEAD_STATUS] = code;
    this[HEAD_REASON] = message;
    this[HEAD] = object;
    this[HEAD_LOWER] = lower;
    this.headersSent = true;
    return this;
  }

  /** Node's internal name for writing the head the response has so far (compression and express-session call it). */
  _implicitHeader(): void {
    this.writeHead(this.statusCode);
  }

  /**
   * The head a `write` or `end` sends first when none was written; false if it could not be (a
   * bad status or header): the app then answers with its error response, since the call may
   * come from a piped stream, where a throw would reach no handler.
   */
  private implicitHead(): boolean {
    try {
      this._implicitHeader();
      return true;
    } catch (err) {
      this.failed(err);
      return false;
    }
  }

  /** Node's status line once the head is written, or null: middleware tests it to ask whether the head is out. */
  get _header(): string | null {
    return this.headersSent ? `HTTP/1.1 ${this.statusCode} ${this.statusMessage ?? STATUS_CODES[this.statusCode] ?? "unknown"}\r\n\r\n` : null;
  }

  /** Sends the status and headers now, before any of the body (the body is then streamed). */
  flushHeaders(): void {
    if (!this.headersSent) this._implicitHeader();
    if (!this[STREAMING] && !this.writableEnded && !this.destroyed) this.openStream();
  }

  get finished(): boolean {
    return this.writableEnded;
  }
  get writable(): boolean {
    return !this.writableEnded && !this.destroyed;
  }
  get writableNeedDrain(): boolean {
    return this[NEED_DRAIN];
  }

  /**
   * Streams a chunk of the body (the first write sends the head, and the body goes chunked).
   * Returns false when the engine holds more than its high-water mark: wait for 'drain'.
   */
  write(chunk: unknown, encoding?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void): boolean {
    if (typeof encoding === "function") {
      callback = encoding;
      encoding = undefined;
    }
    if (this.writableEnded || this.destroyed) {
      this.misuse(`res.write() after the response ${this.writableEnded ? "ended" : "was cut"}: the chunk was dropped`);
      return false;
    }
    const bytes = toBody(chunk, encoding);
    if (!this.headersSent && !this.implicitHead()) return false;
    if (!this[STREAMING]) this.openStream();
    let ready = true;
    this[STREAMED_BYTES] += bytes.length;
    if (bytes.length > 0 && !this.sendChunk(bytes)) {
      this[NEED_DRAIN] = true;
      ready = false;
    }
    if (callback !== undefined) process.nextTick(callback);
    return ready;
  }

  /** Ends the response: the whole of it in one call when nothing was streamed, else the last chunk. */
  end(chunk?: unknown, encoding?: BufferEncoding | (() => void), callback?: () => void): this {
    if (typeof chunk === "function") {
      callback = chunk as () => void;
      chunk = undefined;
    } else if (typeof encoding === "function") {
      callback = encoding;
      encoding = undefined;
    }
    if (this.writableEnded) {
      if (chunk !== undefined && chunk !== null) this.misuse("res.end() with a body after the response ended: the body was dropped");
      if (callback !== undefined) process.nextTick(callback);
      return this;
    }
    const charset = encoding as BufferEncoding | undefined;
    const body = chunk === undefined || chunk === null ? undefined : typeof chunk === "string" && (charset === undefined || charset === "utf8" || charset === "utf-8") ? chunk : toBody(chunk, charset);
    if (!this.headersSent) {
      if (!this.implicitHead()) return this;
      // A whole body that came without `send` (`res.end(body)`): its length, for the access log.
      if (body !== undefined) this[WHOLE_BODY] = body;
    }
    if (callback !== undefined) this.once("finish", callback);
    this.writableEnded = true;
    if (this.destroyed) return this;
    if (this[STREAMING]) {
      if (body !== undefined && body.length > 0) {
        const bytes = typeof body === "string" ? Buffer.from(body) : body;
        this[STREAMED_BYTES] += bytes.length;
        this.sendChunk(bytes);
      }
      this.endStream();
    } else {
      try {
        this.sendWhole(body);
      } catch (err) {
        // The engine refused the head (the checks here let through what it won't write): the
        // head counts as sent, so no error answer can follow. Cut, rather than leave the client waiting.
        this.destroy();
        throw err;
      }
    }
    this.release(false);
    this.writableFinished = true;
    // Only a response someone listens to (or a subscriber of http.server.response.finish) pays for its events.
    if (this._events !== undefined || responseFinish.hasSubscribers) process.nextTick(emitFinish, this);
    return this;
  }

  /**
   * The engine contract's file body (see `SEND_FILE`): after the head and the bytes read
   * already, the engine sends the file's range itself, and the response ends.
   */
  [SEND_FILE](read: Buffer, file: FileHandle, position: number, length: number, done: (err: Error | null) => void): void {
    if (this.writableEnded || this.destroyed) return done(new Error(`The response ${this.writableEnded ? "ended" : "was cut"} before the file was sent`));
    if (!this.headersSent && !this.implicitHead()) return done(null);
    // A body that isn't framed by a Content-Length (chunked) goes through `write` instead.
    if (length > 0 && this.getHeader("content-length") === undefined) return streamFileRange(this as unknown as ResponseSurface, read, file, position, length, done);
    this.write(read);
    if (length > 0 && !this.sendFileBody(file.fd, position, length)) {
      done(new Error("The connection closed before the file was sent"));
      return void this.destroy();
    }
    done(null);
    this.end();
  }

  /** Cuts the connection: what a response does when it fails half-way. */
  destroy(_error?: Error): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.cut();
    this.release(true);
    if (this._events !== undefined) process.nextTick(emitClose, this);
    return this;
  }

  /** Timeouts are the engine's (the app's limits); a middleware's own is accepted and ignored. */
  setTimeout(_ms: number, _callback?: () => void): this {
    return this;
  }
  cork(): void {}
  uncork(): void {}
  addTrailers(): void {}

  /** The client went away: nothing may be written any more. @internal */
  aborted(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.release(true);
    if (this._events !== undefined) this.emit("close");
  }

  /** The engine sent what it held: a waiting writer may go on. @internal */
  drained(): void {
    if (!this[NEED_DRAIN]) return;
    this[NEED_DRAIN] = false;
    this.emit("drain");
  }

  private openStream(): void {
    this[STREAMING] = true;
    this.startStream();
  }

  /** @internal Writes the whole response (head and body). */
  protected abstract sendWhole(body: string | Buffer | undefined): void;
  /** @internal Writes the head of a streamed response (node:http writes it apart from the chunks: latin1). */
  protected abstract startStream(): void;
  /** @internal One chunk of a streamed body; false when the engine holds more than its high-water mark. */
  protected abstract sendChunk(chunk: Buffer): boolean;
  /** @internal A range of an open file as the next piece of a streamed body (the engine keeps its own descriptor); false if the engine can't take it. */
  protected abstract sendFileBody(fd: number, position: number, length: number): boolean;
  /** @internal Ends a streamed body. */
  protected abstract endStream(): void;
  /** @internal Drops the connection. */
  protected abstract cut(): void;
  /** @internal Called once, when the engine's request may no longer be touched; `aborted` when it ended without an answer. */
  protected abstract release(aborted: boolean): void;
  /** @internal The message of `http.server.response.finish` for this response: `{ request, response, socket, server }`. */
  abstract finishMessage(): object;
  /** @internal A call the app should not make, made anyway: report it (with the route) and go on. */
  protected abstract misuse(message: string): void;
  /** @internal Writing the head failed outside the app's code: the app answers with its error response. */
  protected abstract failed(err: unknown): void;

  /**
   * Calls `write(to, name, value)` for each header to send: `setHeader`'s unless `writeHead` gave
   * the same name, then `writeHead`'s; lower-case names, one call per value of a list. (A plain
   * function and its target rather than a closure: this runs for every response.)
   * @internal
   */
  eachHeader<T>(write: (to: T, name: string, value: string) => void, to: T): void {
    const head = this[HEAD];
    const store = this[STORE];
    if (store !== null) {
      for (const [name, value] of store) if (head === null || head[name] === undefined) eachValue(to, name, value, write);
    }
    if (head !== null) {
      const lower = this[HEAD_LOWER];
      for (const name in head) {
        const value = head[name] as StoredValue | undefined;
        if (value !== undefined) eachValue(to, lower ? name : lowerCase(name), value, write);
      }
    }
  }
}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface OutgoingResponse extends Stream {
  /** EventEmitter's listener table, undefined until the first listener (EventEmitter makes it then). */
  _events: Record<string, unknown> | undefined;
}
// Node's ServerResponse is a legacy Stream (an EventEmitter); so is this, without running its constructor.
Object.setPrototypeOf(OutgoingResponse.prototype, Stream.prototype);

Object.assign(OutgoingResponse.prototype, {
  statusCode: 200,
  statusMessage: undefined,
  headersSent: false,
  writableEnded: false,
  writableFinished: false,
  destroyed: false,
  shouldKeepAlive: true,
  sendDate: true,
  writableCorked: 0,
  writableHighWaterMark: 16 * 1024,
  writableLength: 0,
  writableObjectMode: false,
  chunkedEncoding: false,
  [STORE]: null,
  [HEAD]: null,
  [HEAD_LOWER]: true,
  [HEAD_STATUS]: 200,
  [HEAD_REASON]: undefined,
  [STREAMING]: false,
  [REQUEST_ID]: undefined,
  [NEED_DRAIN]: false,
  [STREAMED_BYTES]: 0,
  [WHOLE_BODY]: undefined,
});

function emitFinish(res: OutgoingResponse): void {
  // As node:http publishes it: when the response finishes, before its 'finish' listeners run.
  if (responseFinish.hasSubscribers) responseFinish.publish(res.finishMessage());
  res.emit("finish");
  res.emit("close");
}

function emitClose(res: OutgoingResponse): void {
  res.emit("close");
}

/** A chunk as bytes: strings in their encoding (UTF-8 unless told), Buffers and byte views as they are. */
function toBody(chunk: unknown, encoding: BufferEncoding | undefined): Buffer {
  if (typeof chunk === "string") return Buffer.from(chunk, encoding ?? "utf8");
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk === undefined || chunk === null) return Buffer.alloc(0);
  throw nodeError("ERR_INVALID_ARG_TYPE", `The "chunk" argument must be a string, Buffer or Uint8Array; got ${typeof chunk}`, TypeError);
}

/** Node's list forms of writeHead's headers: `[name, value, name, value]` or `[[name, value], …]`. */
function headersFromList(list: readonly OutgoingHttpHeader[] | readonly unknown[]): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  const add = (name: string, value: unknown) => {
    const seen = headers[name];
    headers[name] = seen === undefined ? (value as OutgoingHttpHeader) : ([...(Array.isArray(seen) ? seen : [String(seen)]), String(value)] as string[]);
  };
  if (Array.isArray(list[0])) for (const pair of list as unknown as [string, unknown][]) add(pair[0], pair[1]);
  else for (let i = 0; i + 1 < list.length; i += 2) add(String(list[i]), list[i + 1]);
  return headers;
}

/** A header of writeHead's object by its lower-case name, whatever case it was given in. */
function headValue(head: OutgoingHttpHeaders, lower: string): OutgoingHttpHeader | undefined {
  const value = head[lower];
  if (value !== undefined) return value;
  for (const name in head) if (name.toLowerCase() === lower) return head[name];
  return undefined;
}

function eachValue<T>(to: T, name: string, value: StoredValue, write: (to: T, name: string, value: string) => void): void {
  if (typeof value === "object") for (const v of value) write(to, name, v);
  else write(to, name, typeof value === "string" ? value : String(value));
}
