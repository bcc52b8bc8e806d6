import { OutgoingMessage, ServerResponse, STATUS_CODES, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import type { FileHandle } from "node:fs/promises";
import { Stream } from "node:stream";
import { BAD_VALUE_CHAR, checkHeader, destroyedWith, endAfterEnd, headersSentError, implicitHead, isStatus, lowerCase, nodeError, toBytes, writeAfterEnd, type HeaderInput } from "../kit/compat.js";
import { ECHO_REQUEST_ID, FRAME_BODY, SEND_FILE, SEND_OPENED_FILE, type ResponseSurface } from "../contract/engine.js";
import { streamFileRange } from "../kit/range-stream.js";
import { ENDED_BODY, HEAD, HEAD_LOWER, HEAD_REASON, HEAD_STATUS, NEED_DRAIN, REQUEST_ID, STORE, STREAMED_BYTES, STREAMING, WHOLE_BODY } from "../../base/symbols.js";
import { responseFinish } from "./http-channels.js";
import { trailerBlock } from "./trailers.js";
import { nextTick } from "../../base/loop.js";

/** The trailer fields `addTrailers` gave, as header lines (see trailers.ts). */
const TRAILERS = Symbol("cog.trailers");

export type StoredValue = HeaderInput;

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
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface below
export abstract class NativeServerResponse {
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
  /** @internal */ declare [WHOLE_BODY]: string | Buffer | undefined;
  /** @internal */ declare [ENDED_BODY]: string | Buffer | undefined;
  /** @internal */ declare [TRAILERS]: string | null;

  /** The engine contract's whole body (see `FRAME_BODY`): the engine frames it, and until it is written getHeader("content-length") answers its length. */
  [FRAME_BODY](body: string | Buffer | undefined): void {
    this[WHOLE_BODY] = body;
  }

  setHeader(name: string, value: StoredValue): this {
    if (this.headersSent) throw headersSentError("set");
    (this[STORE] ??= new Map()).set(checkHeader(name, value), value);
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
    const lower = lowerCase(name);
    const value = this[STORE]?.get(lower) as number | string | string[] | undefined;
    if (value !== undefined) return value;
    if (lower === "x-request-id") return this[REQUEST_ID];
    if (lower === "content-length") return this.bodyLength(false);
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
   * `send` is writing; with `ended`, also of a body `end(body)` wrote, as the access log counts
   * it. Not `getHeader`'s: node:http works that one out as it writes the head, and lists it
   * nowhere. Apart from getHeader for the access log, which asks on every response.
   * @internal
   */
  bodyLength(ended: boolean): number | string | undefined {
    const set = this[STORE]?.get("content-length") ?? this[HEAD]?.["content-length"] ?? this[HEAD]?.["Content-Length"];
    if (set !== undefined) return set as number | string;
    const body = this[WHOLE_BODY] ?? (ended ? this[ENDED_BODY] : undefined);
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
        const length = this.bodyLength(false);
        if (length !== undefined) headers["content-length"] = length;
      }
    }
    return headers;
  }

  getHeaderNames(): string[] {
    return Object.keys(this.getHeaders());
  }

  hasHeader(name: string): boolean {
    const lower = lowerCase(name);
    return (this[STORE]?.has(lower) ?? false) || (lower === "x-request-id" && this[REQUEST_ID] !== undefined) || (this.listsHead() && headValue(this[HEAD]!, lower) !== undefined);
  }

  removeHeader(name: string): void {
    if (this.headersSent) throw headersSentError("remove");
    const lower = lowerCase(name);
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
    if (!isStatus(status)) throw nodeError("ERR_HTTP_INVALID_STATUS_CODE", `Invalid status code: ${String(status)}`, RangeError);
    const code = status;
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

  /** Node's older name for `writeHead` (where this Node's node:http still has it: Node 26 has not). */
  writeHeader(status: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    return this.writeHead(status, reason, headers);
  }

  /** Node's internal name for writing the head the response has so far (compression and express-session call it). */
  _implicitHeader(): void {
    this.writeHead(this.statusCode);
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
      writeAfterEnd(this as unknown as ResponseSurface & { req: unknown });
      return false;
    }
    const bytes = toBytes(chunk, encoding);
    if (!this.headersSent && !implicitHead(this as never)) return false;
    if (!this[STREAMING]) this.openStream();
    let ready = true;
    this[STREAMED_BYTES] += bytes.length;
    if (bytes.length > 0 && !this.sendChunk(bytes)) {
      this[NEED_DRAIN] = true;
      ready = false;
    }
    if (callback !== undefined) nextTick(callback);
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
      if (chunk !== undefined && chunk !== null) endAfterEnd(this as unknown as ResponseSurface & { req: unknown });
      if (callback !== undefined) nextTick(callback);
      return this;
    }
    const charset = encoding as BufferEncoding | undefined;
    const body = chunk === undefined || chunk === null ? undefined : typeof chunk === "string" && (charset === undefined || charset === "utf8" || charset === "utf-8") ? chunk : toBytes(chunk, charset);
    if (!this.headersSent) {
      if (!implicitHead(this as never)) return this;
      // A whole body that came without `send` (`res.end(body)`): its length, for the access log.
      if (body !== undefined) this[ENDED_BODY] = body;
    }
    if (callback !== undefined) this.once("finish", callback);
    this.writableEnded = true;
    if (this.destroyed) return this;
    // A body whose Transfer-Encoding the app set goes chunked, as node:http sends it, never with a
    // Content-Length; so does one with trailers to send after it (see `addTrailers`).
    if (!this[STREAMING] && (this[STORE]?.has("transfer-encoding") === true || (this[TRAILERS] !== null && this.sendsTrailers()))) this.openStream();
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
    this.finish();
    return this;
  }

  /** After the whole response went to the engine: the request is let go, and 'finish' follows. */
  private finish(): void {
    this.release(false);
    this.writableFinished = true;
    // Only a response someone listens to (or a subscriber of http.server.response.finish) pays for its events.
    if (this._events !== undefined || responseFinish.hasSubscribers) nextTick(emitFinish, this);
  }

  /**
   * The engine contract's file body (see `SEND_FILE`): after the head and the bytes read
   * already, the engine sends the file's range itself, and the response ends.
   */
  [SEND_FILE](read: Buffer, file: FileHandle, position: number, length: number, done: (err: Error | null) => void): void {
    if (this.writableEnded || this.destroyed) return done(new Error(`The response ${this.writableEnded ? "ended" : "was cut"} before the file was sent`));
    if (!this.headersSent && !implicitHead(this as never)) return done(null);
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

  /**
   * The engine contract's opened file (see `SEND_OPENED_FILE`): the whole response in one call,
   * as `end` sends one, its body `length` bytes of the file opened for it from `position`.
   */
  [SEND_OPENED_FILE](position: number, length: number): void {
    if (this.writableEnded || this.destroyed) return;
    if (!this.headersSent && !implicitHead(this as never)) return;
    this.writableEnded = true;
    try {
      this.sendOpenedFile(position, length);
    } catch (err) {
      this.destroy();
      throw err;
    }
    this.finish();
  }

  /** Cuts the connection: what a response does when it fails half-way (`error`: why, which is reported). */
  destroy(error?: Error): this {
    if (this.destroyed) return this;
    if (error !== undefined && error !== null) destroyedWith(this as unknown as ResponseSurface & { req: unknown }, error);
    this.destroyed = true;
    this.cut();
    this.release(true);
    if (this._events !== undefined) nextTick(emitClose, this);
    return this;
  }

  /** Timeouts are the engine's (the app's limits); a middleware's own is accepted and ignored. */
  setTimeout(_ms: number, _callback?: () => void): this {
    return this;
  }
  cork(): void {}
  uncork(): void {}

  /**
   * Trailer fields to send after the body, as node:http and node:http2 send them: on HTTP/2 in a
   * last HEADERS frame, always; on HTTP/1.1 after the last chunk of a chunked body (a streamed
   * body without a Content-Length, or one whose head declared a `Trailer` header, which node:http
   * then sends chunked), and nowhere on a body framed by its length or on HTTP/1.0.
   */
  addTrailers(headers: OutgoingHttpHeaders | ReadonlyArray<readonly [string, unknown]>): void {
    this[TRAILERS] = trailerBlock(headers);
  }

  /** The trailer lines `addTrailers` gave, or null. @internal */
  trailers(): string | null {
    return this[TRAILERS];
  }

  /** Whether a whole body is sent chunked so that its trailers can follow: on HTTP/2, or when the head declares a `Trailer` header (node:http's rule). @internal */
  protected sendsTrailers(): boolean {
    return this.hasHeader("trailer");
  }

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
  /** @internal Writes the whole response, its body `length` bytes of the file opened for it (`OPEN_FILE`) from `position`. */
  protected abstract sendOpenedFile(position: number, length: number): void;
  /** @internal Ends a streamed body. */
  protected abstract endStream(): void;
  /** @internal Drops the connection. */
  protected abstract cut(): void;
  /** @internal Called once, when the engine's request may no longer be touched; `aborted` when it ended without an answer. */
  protected abstract release(aborted: boolean): void;
  /** @internal The message of `http.server.response.finish` for this response: `{ request, response, socket, server }`. */
  abstract finishMessage(): object;

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
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the class's prototype chain holds Stream's (set below): the interface tells TypeScript what it has
export interface NativeServerResponse extends Stream {
  /** EventEmitter's listener table, undefined until the first listener (EventEmitter makes it then). */
  _events: Record<string, unknown> | undefined;
}
// Node's ServerResponse is a legacy Stream (an EventEmitter); so is this, without running its constructor.
Object.setPrototypeOf(NativeServerResponse.prototype, Stream.prototype);

Object.assign(NativeServerResponse.prototype, {
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
  [ENDED_BODY]: undefined,
  [TRAILERS]: null,
});

/**
 * Node's private header table (OutgoingMessage's `kOutHeaders`), for middleware that calls
 * `http.OutgoingMessage.prototype.setHeader` on a response directly rather than `res.setHeader`
 * (the `cookies` package does, under cookie-session and Koa, when the response has Express's
 * `res.set`): read, that method finds a table whose entries are this response's headers. Made
 * only when asked for.
 */
const OUT_HEADERS = Object.getOwnPropertySymbols(new OutgoingMessage()).find((symbol) => symbol.description === "kOutHeaders");
if (OUT_HEADERS !== undefined) {
  Object.defineProperty(NativeServerResponse.prototype, OUT_HEADERS, {
    configurable: true,
    get(this: NativeServerResponse) {
      // eslint-disable-next-line @typescript-eslint/no-this-alias -- the Proxy's traps are functions of their own, with their own `this`
      const res = this;
      // Node's table maps a lower-case name to [name as given, value].
      return new Proxy(Object.create(null) as Record<string, unknown>, {
        get: (_table, name) => (typeof name === "string" && res.hasHeader(name) ? [name, res.getHeader(name)] : undefined),
        set: (_table, _name, entry: [string, StoredValue]) => (res.setHeader(entry[0], entry[1]), true),
        has: (_table, name) => typeof name === "string" && res.hasHeader(name),
        deleteProperty: (_table, name) => (typeof name === "string" && res.removeHeader(name), true),
        ownKeys: () => res.getHeaderNames(),
        getOwnPropertyDescriptor: (_table, name) => (typeof name === "string" && res.hasHeader(name) ? { value: [name, res.getHeader(name)], writable: true, enumerable: true, configurable: true } : undefined),
      });
    },
  });
}

function emitFinish(res: NativeServerResponse): void {
  // As node:http publishes it: when the response finishes, before its 'finish' listeners run.
  if (responseFinish.hasSubscribers) responseFinish.publish(res.finishMessage());
  res.emit("finish");
  res.emit("close");
}

function emitClose(res: NativeServerResponse): void {
  res.emit("close");
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

// Node 26 dropped `writeHeader` from node:http: the native engine's responses follow the Node they run on.
if (!("writeHeader" in ServerResponse.prototype)) delete (NativeServerResponse.prototype as { writeHeader?: unknown }).writeHeader;
