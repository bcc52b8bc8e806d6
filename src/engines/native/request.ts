import { EventEmitter } from "node:events";
import { IncomingMessage, type IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import { BodyCollector, overStreamLimit, tooLarge } from "../kit/body-intake.js";
import { HttpError } from "../../base/errors.js";
import { joinedHeader, rawHeader } from "../kit/headers.js";
import { HELD_BODY, type HeadVerdict, type RequestSocket } from "../contract/engine.js";
import type { BodyCallback } from "../contract/engine.js";
import { FIRST_ONLY, distinctFromRaw, headersFromRaw, headersFromText, rawFromText } from "./headers.js";
import { underNodeClass } from "./node-class.js";
import { FLAG_ENCODED, FLAG_HTTP11, FLAG_HTTP2, FLAG_HTTP3, type Endpoints, type NativeAddon, type TlsPeer } from "../kit/addon.js";
import { peerCertificate } from "./peer-certificate.js";
import type { NativeServer } from "./http-channels.js";
import type { PeerCertificate } from "node:tls";
import { ABORT_LATER, ADDON, ADDRESS, APP_SERVER, BODY_ENDED, BODY_TIMEOUT, COLLECTOR, CONTENT_TYPE, ENCRYPTED, FLAGS, GONE, HEADER_TEXT, HEADERS, ID, PAUSED, RAW, RECEIVED, SERVER, SOCKET, STREAMED, STREAM_LIMIT, VERDICT } from "../../base/symbols.js";
import { nextTick } from "../../base/loop.js";

/**
 * A request's message on the native engine (Node's IncomingMessage surface). The engine has parsed and framed the
 * request and applied Cog's head rules; a body whole in what arrived with the head comes with
 * the request, a longer one follows in pieces (`bodyPiece`, `bodyEnd`), collected or streamed as
 * the route asks, with backpressure. Header lines are fetched on first read, all of them or
 * (cookies) just the one.
 *
 * It is a Readable of its body, as Node's IncomingMessage is, without paying for one: the
 * prototype chain holds Readable.prototype, and Readable's constructor runs on this object the
 * first time anything touches its stream state (`on`, `pipe`, `read`, `for await`…). Most
 * requests never do, and cost no stream at all.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface below
class NativeRequestBase {
  /** @internal */ declare [ADDON]: NativeAddon;
  /** @internal */ declare [RAW]: string[] | null;
  /** @internal */ declare [HEADERS]: IncomingHttpHeaders | null;
  /** @internal */ declare [HEADER_TEXT]: string | null;
  /** @internal */ declare [ADDRESS]: string | undefined;
  /** @internal Set on the app's request class when the server serves TLS. */ declare [ENCRYPTED]: boolean;
  /** @internal */ declare [SOCKET]: NativeSocket | null;
  /** @internal The first Content-Type, once asked for (null: not yet). */ declare [CONTENT_TYPE]: string | undefined | null;
  /** @internal */ declare [GONE]: boolean;
  /** @internal Set on the app's request class when the server listens. */ declare [SERVER]: NativeServer | null;
  /** @internal Set on the app's request class by the engine. */ declare [ABORT_LATER]: (id: number) => void;
  /** @internal Set on the app's request class by the engine (`serveAs`). */ declare [APP_SERVER]: object | null;
  /** As node:http's: true once the request was cut before it was read to its end (then 'aborted' is emitted). */ declare aborted: boolean;
  /** @internal Set only while it goes through its server's `request` event (http-channels.ts). */ declare [VERDICT]?: HeadVerdict;
  /** @internal */ declare [COLLECTOR]: BodyCollector | null;
  /** @internal */ declare [STREAM_LIMIT]: number;
  /** @internal Bytes of the body streamed so far. */ declare [STREAMED]: number;
  /** @internal */ declare [PAUSED]: boolean;
  /** @internal */ declare [BODY_ENDED]: boolean;
  /** @internal The route's own requestTimeout, for the 408's words. */ declare [BODY_TIMEOUT]: number | undefined;
  /** @internal */ [ID]: number;
  /** @internal */ [FLAGS]: number;
  /** @internal The whole body, or when it follows in pieces its declared length (-1: chunked). */ [RECEIVED]: Buffer | number | undefined;

  constructor(
    id: number,
    readonly method: string,
    public url: string,
    flags: number,
    received: Buffer | number | undefined,
  ) {
    this[ID] = id;
    this[FLAGS] = flags;
    this[RECEIVED] = received;
  }

  get httpVersionMajor(): number {
    return (this[FLAGS] & FLAG_HTTP3) !== 0 ? 3 : (this[FLAGS] & FLAG_HTTP2) !== 0 ? 2 : 1;
  }

  get httpVersionMinor(): number {
    return this[FLAGS] & FLAG_HTTP11;
  }

  /** Whether the whole body has been received. */
  get complete(): boolean {
    return typeof this[RECEIVED] !== "number" || this[BODY_ENDED];
  }

  get httpVersion(): string {
    return (this[FLAGS] & FLAG_HTTP11) !== 0 ? "1.1" : (this[FLAGS] & FLAG_HTTP3) !== 0 ? "3.0" : (this[FLAGS] & FLAG_HTTP2) !== 0 ? "2.0" : "1.0";
  }

  get rawHeaders(): string[] {
    return (this[RAW] ??= rawFromText(this.headerText()));
  }

  get headers(): IncomingHttpHeaders {
    return (this[HEADERS] ??= this[RAW] !== null ? headersFromRaw(this[RAW]) : headersFromText(this.headerText()));
  }

  /** As node:http's: every value of each header, in a list under its lower-case name. */
  get headersDistinct(): Record<string, string[]> {
    return distinctFromRaw(this.rawHeaders);
  }

  /** The header lines as the engine hands them over (one string, see headers.ts), fetched once. */
  private headerText(): string {
    return (this[HEADER_TEXT] ??= this[GONE] ? "" : this[ADDON].headers(this[ID]));
  }
  set headers(headers: IncomingHttpHeaders) {
    this[HEADERS] = headers;
  }

  /** The connection, as much of Node's Socket as the engine can stand for (made on first read). */
  get socket(): NativeSocket {
    return (this[SOCKET] ??= new NativeSocket(this as unknown as NativeRequest));
  }
  /** Node's older name for `socket`. */
  get connection(): NativeSocket {
    return this.socket;
  }

  /**
   * Readable's source: the body the engine buffered, then the end. A body Cog has read for the
   * handler (JSON, a form, text: `req.rawBody`) was consumed, as it is on the node engine, and
   * the stream is empty; others (multipart, for a parser such as multer) stream as they came.
   * Cog tells what it took by putting `TAKEN` in its place, not by `_body`: body-parser 1.x
   * sets `_body` before it reads the stream, and must find the body there.
   */
  _read(): void {
    const stream = this as unknown as Readable;
    const body = this[RECEIVED];
    if (typeof body === "number") {
      // A body that follows: the engine pushes its pieces; a full stream paused it.
      if (this[PAUSED] && !this[GONE]) {
        this[PAUSED] = false;
        this[ADDON].pauseBody(this[ID], false);
      }
      return;
    }
    if (body !== undefined && body.length > 0) stream.push(body);
    stream.push(null);
  }

  /**
   * Readable's `_destroy`, as IncomingMessage's: a request destroyed before it was read to its
   * end (`req.destroy()`, or its client left) is aborted, and its connection cut; but a body
   * refused for its size keeps it, so that the 413 reaches the client (as on the node engine).
   * An HTTP/2 request is one stream of many: destroying it ends its reading and leaves the stream
   * to its response, as node:http2's Http2ServerRequest does (Connect's handler destroys a body it
   * stops reading at an error, then answers with the error's status).
   */
  _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    if ((err instanceof HttpError && err.status === 413) || (this.httpVersionMajor === 2 && !this[GONE])) return callback(err);
    const stream = this as unknown as Readable;
    if (!stream.readableEnded || !this.complete) {
      if (!this.aborted) {
        this.aborted = true;
        stream.emit("aborted");
      }
      if (!this[GONE]) this.socket.destroy();
    }
    nextTick(callback, err);
  }

  /**
   * Readable's `readable`, false once Cog has consumed the body (what body parsers check before
   * reading). A stream nobody touched yet is as a new one, readable: answered without making it
   * (body parsers ask on every request, through on-finished's `isFinished`).
   */
  get readable(): boolean {
    if (!Object.hasOwn(this, "_readableState")) return this[RECEIVED] !== TAKEN;
    return READABLE.get!.call(this) as boolean;
  }
  set readable(value: boolean) {
    READABLE.set!.call(this, value);
  }
}
const READABLE = Object.getOwnPropertyDescriptor(Readable.prototype, "readable")!;
/**
 * A request's body once a reader of Cog's has it (`receiveBody`, `HELD_BODY(true)`): empty, so
 * the stream ends empty; a store in a field the request has already, which changes no shape.
 */
const TAKEN = Buffer.alloc(0);
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the class's prototype chain holds Readable's (set below): the interface tells TypeScript what it has
interface NativeRequestBase extends Readable {}
Object.setPrototypeOf(NativeRequestBase.prototype, Readable.prototype);
Object.defineProperty(NativeRequestBase.prototype, "_readableState", {
  configurable: true,
  get(this: Readable) {
    // Node's own IncomingMessage runs Readable's constructor the same way (`Readable.call`); its
    // assignment of `_readableState` lands in the setter below, as an own property.
    (Readable as unknown as (this: Readable, options: object) => void).call(this, {});
    return (this as unknown as { _readableState: unknown })._readableState;
  },
  set(this: Readable, state: unknown) {
    Object.defineProperty(this, "_readableState", { value: state, writable: true, configurable: true, enumerable: false });
  },
});
Object.assign(NativeRequestBase.prototype, {
  [RAW]: null,
  [HEADERS]: null,
  [HEADER_TEXT]: null,
  [ADDRESS]: undefined,
  [ENCRYPTED]: false,
  [SOCKET]: null,
  [CONTENT_TYPE]: null,
  [GONE]: false,
  [SERVER]: null,
  [APP_SERVER]: null,
  [COLLECTOR]: null,
  [STREAM_LIMIT]: Infinity,
  [STREAMED]: 0,
  [PAUSED]: false,
  [BODY_ENDED]: false,
  [BODY_TIMEOUT]: undefined,
  aborted: false,
});

Object.assign(NativeRequestBase.prototype, { trailers: Object.freeze({}), rawTrailers: Object.freeze([]) });

/**
 * A request on the native engine: its message, and what the contract's `EngineRequestMethods`
 * asks of it. The host makes its class from this one with Cog's helpers
 * (`EngineHost.requestClass`).
 */
export class NativeRequest extends NativeRequestBase {
  /**
   * The trailer fields that came after the body (HTTP/2's, or a chunked HTTP/1.1 body's), as
   * node:http has them: names lower-case, repeats joined as headers' are; filled by the time
   * the body has ended (`{}` and `[]` until then, and for a request without).
   */
  declare trailers: IncomingHttpHeaders;
  declare rawTrailers: string[];
  /** Set by a body parser that has read the body (Express's convention, and Cog's helpers'). */
  declare _body: boolean | undefined;

  /** As node:http's: every value of each trailer field, in a list under its lower-case name. */
  get trailersDistinct(): Record<string, string[]> {
    return distinctFromRaw(this.rawTrailers);
  }

  get remoteAddress(): string | undefined {
    if (this[ADDRESS] === undefined && !this[GONE]) this[ADDRESS] = this[ADDON].remoteAddress(this[ID]) ?? undefined;
    return this[ADDRESS];
  }

  /** Whether the request came over TLS (the engine's server was made with `tls`). */
  get encrypted(): boolean {
    return this[ENCRYPTED];
  }

  /**
   * The engine contract's authority (see `RequestSurface.authority`): HTTP/2's `:authority`, as
   * node:http2's `req.authority`; on HTTP/1.1 (and an HTTP/2 request without one) the Host header.
   */
  get authority(): string | undefined {
    return (this.httpVersionMajor >= 2 ? this.headerValue(":authority") : undefined) ?? this.headerValue("host");
  }

  /** The engine contract's scheme (see `RequestSurface.scheme`): HTTP/2's `:scheme`, else the connection's. */
  get scheme(): string {
    return (this.httpVersionMajor >= 2 ? this.headerValue(":scheme") : undefined) ?? (this[ENCRYPTED] ? "https" : "http");
  }

  /** @internal One header from the engine (as `req.headers` would hold it), unless they were all fetched already. */
  headerValue(name: string): string | undefined {
    if (this[HEADERS] !== null || this[GONE]) return joinedHeader(this.headers, name);
    return this[ADDON].header(this[ID], name, FIRST_ONLY.has(name)) ?? undefined;
  }

  /** @internal Asked of the engine in one call, unless the headers were fetched (and maybe changed) already. */
  mayBeConditional(): boolean {
    if (this[HEADERS] !== null || this[GONE]) return true;
    return this[ADDON].mayBeConditional(this[ID]);
  }

  /**
   * @internal One header's first value from the engine, unless they were all fetched already.
   * Content-Type is asked for twice for a body (is it multipart? how to parse it?): kept after the first.
   */
  firstHeader(name: string): string | undefined {
    if (this[RAW] !== null || this[GONE]) return rawHeader(this, name);
    // Asked for every request with a body: the engine flagged the few bodies that have one.
    if (name === "content-encoding" && this[RECEIVED] !== undefined && (this[FLAGS] & FLAG_ENCODED) === 0) return undefined;
    if (name !== "content-type") return this[ADDON].header(this[ID], name, true) ?? undefined;
    if (this[CONTENT_TYPE] === null) this[CONTENT_TYPE] = this[ADDON].header(this[ID], name, true) ?? undefined;
    return this[CONTENT_TYPE];
  }

  /** The engine contract's body in hand (see `HELD_BODY`): the one that came whole with the head, unless something read it; `take`: the caller's from now on. */
  [HELD_BODY](take?: boolean): Buffer | undefined {
    const body = this[RECEIVED];
    if (typeof body === "number" || body === undefined || body === TAKEN || this._body || Object.hasOwn(this, "_readableState")) return undefined;
    if (take === true) this[RECEIVED] = TAKEN;
    return body;
  }

  /** @internal The body that arrived with the request, or its pieces collected as they follow it. */
  receiveBody(length: number, limit: number, done: BodyCallback): void {
    const body = this[RECEIVED];
    if (typeof body === "number") {
      const collector = new BodyCollector(length, limit, done);
      if (!collector.finished) this[COLLECTOR] = collector;
    } else if (body !== undefined && body.length > limit) {
      done(tooLarge(limit), null);
    } else {
      if (body !== undefined) this[RECEIVED] = TAKEN;
      done(null, body ?? Buffer.alloc(0));
    }
  }

  /**
   * @internal The body flows through the readable side as it arrives; past `limit` bytes the
   * stream fails with a 413. (A body that came whole with the request is within the limit: the
   * app compared its length.)
   */
  streamBody(_length: number, limit: number): void {
    this[STREAM_LIMIT] = limit;
  }

  /** @internal The route's own requestTimeout (`Dispatch` returned it): the addon's timeout sweep times the body against `ms` rather than the server's. */
  limitBodyTime(ms: number): void {
    this[BODY_TIMEOUT] = ms;
    this[ADDON].setBodyTimeout(this[ID], ms);
  }

  /** @internal A piece of a body that follows its request. */
  bodyPiece(piece: Buffer): void {
    const collector = this[COLLECTOR];
    if (collector !== null) return collector.add(piece);
    if (this.destroyed) return;
    if (overStreamLimit(this, piece.length)) return;
    if (!this.push(piece) && !this[PAUSED]) {
      this[PAUSED] = true;
      this[ADDON].pauseBody(this[ID], true);
    }
  }

  /**
   * @internal The trailer fields that came after the body (`name\0value\0…`, latin1): read
   * from `rawTrailers` and `trailers` (as node:http and node:http2 fill them, by the body's end).
   */
  bodyTrailers(fields: Buffer): void {
    const raw = rawFromText(fields.toString("latin1", 0, fields.length - 1));
    this.rawTrailers = raw;
    this.trailers = headersFromRaw(raw);
  }

  /** @internal The body that followed its request is whole. */
  bodyEnd(): void {
    this[BODY_ENDED] = true;
    const collector = this[COLLECTOR];
    if (collector !== null) {
      this[RECEIVED] = TAKEN;
      collector.end();
    }
    else if (!this.destroyed) this.push(null);
  }

  /** @internal The engine has forgotten the request: it can't be asked anything more. */
  forget(aborted: boolean): void {
    this[GONE] = true;
    const socket = this[SOCKET];
    if (aborted) {
      // As Node's request does when its client goes away; only streams someone touched hear it.
      if (Object.hasOwn(this, "_readableState")) {
        if (!this.aborted) {
          this.aborted = true;
          this.emit("aborted");
        }
        // A body cut short fails its stream, as on node:http (unheard if nobody listens for errors).
        this.destroy(this.complete || this.listenerCount("error") === 0 ? undefined : Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
      }
      socket?.closed();
    }
  }
}

// An IncomingMessage, as node:http's requests are; of Node's members only `setTimeout` works
// here (it calls the socket's, which the engine's timeouts make a no-op).
underNodeClass(NativeRequest.prototype, NativeRequestBase.prototype, IncomingMessage.prototype, new Set(["setTimeout"]));

/**
 * The request's connection as middleware sees it (`req.socket.remoteAddress`, `destroy()`,
 * `on("close")`): an EventEmitter that stands for the engine's connection, which JavaScript
 * never holds itself.
 */
export class NativeSocket extends EventEmitter implements RequestSocket {
  private open = true;
  /** On TLS: what the client proved, fetched from the engine on first use (see `peer`). */
  private tls: TlsPeer | null = null;
  /** The ports and local address, fetched from the engine on first use (see `ends`). */
  private endpoints: Endpoints | null = null;

  constructor(private readonly request: NativeRequest) {
    super();
  }

  get remoteAddress(): string | undefined {
    return this.request.remoteAddress;
  }
  get remotePort(): number | undefined {
    return this.ends()?.remotePort;
  }
  get localAddress(): string | undefined {
    return this.ends()?.localAddress;
  }
  get localPort(): number | undefined {
    return this.ends()?.localPort;
  }

  private ends(): Endpoints | undefined {
    const request = this.request;
    if (this.endpoints === null && !request[GONE]) this.endpoints = request[ADDON].endpoints(request[ID]);
    return this.endpoints ?? undefined;
  }

  /** @internal What the connection was, kept for listeners that read it after the engine forgot the request ('finish', 'close'). */
  keep(): void {
    void this.request.remoteAddress;
    this.ends();
  }

  /**
   * The server the connection came to, as a node:http socket's: the one the app's `listen` (or
   * `createServer`) returned, else the engine's (the `server` of Node's HTTP channels' messages).
   */
  get server(): object | null {
    return this.request[APP_SERVER] ?? this.request[SERVER];
  }

  /** Whether the connection is TLS (node:tls's sockets say true). */
  get encrypted(): boolean {
    return this.request.encrypted;
  }
  /** Assignable, as on a Node socket (where it is a plain property): the value set is what it says from then on. */
  set encrypted(value: boolean) {
    Object.defineProperty(this, "encrypted", { value, writable: true, configurable: true, enumerable: true });
  }

  /** On TLS: whether the client's certificate verified against `tls.ca` (see `TlsOptions.requestCert`). */
  get authorized(): boolean {
    return this.peer().authorized;
  }

  /** On TLS: why the client's certificate did not verify, in OpenSSL's words as node:tls gives them, or null. */
  get authorizationError(): string | null {
    return this.peer().authorizationError ?? null;
  }

  /** On TLS: the client's certificate as node:tls describes it (see peer-certificate.ts); `{}` when it gave none. */
  getPeerCertificate(): PeerCertificate | Record<string, never> {
    const der = this.peer().certificate;
    return der === null || der === undefined ? {} : peerCertificate(der);
  }

  private peer(): TlsPeer {
    if (this.tls === null) {
      const request = this.request;
      this.tls = (request.encrypted && !request[GONE] ? request[ADDON].tlsPeer(request[ID]) : null) ?? NO_PEER;
    }
    return this.tls;
  }

  get remoteFamily(): string | undefined {
    const address = this.remoteAddress;
    return address === undefined ? undefined : address.includes(":") ? "IPv6" : "IPv4";
  }
  get readable(): boolean {
    return this.open;
  }
  get writable(): boolean {
    return this.open;
  }
  get destroyed(): boolean {
    return !this.open;
  }

  /**
   * Cuts the connection, as node:http's socket does: the request's response is aborted (its
   * 'close' follows), and so are the others on the connection.
   */
  destroy(): this {
    const request = this.request;
    if (this.open && !request[GONE]) {
      request[ADDON].destroy(request[ID]);
      request[ABORT_LATER](request[ID]);
    }
    this.closed();
    return this;
  }

  /** Timeouts are the engine's (the app's limits); a middleware's own is accepted and ignored. */
  setTimeout(_ms: number, _callback?: () => void): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }

  /** @internal */
  closed(): void {
    if (!this.open) return;
    this.open = false;
    this.emit("close", false);
  }
}

/** A connection's peer when the engine can't tell of one (not TLS, or the request is gone): as node:tls's socket without a client certificate. */
const NO_PEER: TlsPeer = { authorized: false, authorizationError: null, certificate: null };
