import { constants, Http2ServerRequest, Http2ServerResponse, type Http2Session, type OutgoingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { Socket } from "node:net";
import type { OutgoingHttpHeader } from "node:http";
import { HttpError } from "../../base/errors.js";
import { CHUNKED, NO_BODY, type ResponseSurface } from "../contract/engine.js";
import { tooSlow, type Limits } from "../../base/limits.js";
import { withNodeRequestMethods } from "./request.js";
import { chunkBytes } from "../kit/compat.js";
import { BODY_CUT, IN_FLIGHT, REFUSED_LISTS, WRITTEN } from "../../base/symbols.js";
import { clearInterval, clearTimeout, setImmediate, setInterval, setTimeout } from "../../base/loop.js";

/**
 * HTTP/2 on the node engine, through Node's compatibility API: its Http2ServerRequest and
 * Http2ServerResponse, given Cog's helpers by the host as node:http's classes are, so that the same
 * handlers serve h2 streams. HTTP/2 frames its own messages (no Host, Content-Length optional,
 * no Connection headers), so the head rules differ from HTTP/1.1's: see `inspectH2Head`.
 */

export class H2Request extends withNodeRequestMethods(Http2ServerRequest) {
  /** @internal The body was cut short (see `push`). */ declare [BODY_CUT]: boolean;

  /**
   * Node's compatibility request ends its body whenever its stream closes, even when the body
   * was cut short: by the client's reset, or by Cog's once it answered before the body was
   * whole (see `H2Response.end`). Such a body is cut, never complete, as on node:http: the rest
   * is dropped, and whoever reads it gets an 'aborted' error (a handler must not run on half a
   * body).
   */
  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (this[BODY_CUT] || this.aborted) {
      if (chunk === null) this.cutShort();
      return true;
    }
    return super.push(chunk, encoding);
  }

  private cutShort(): void {
    if (!this.destroyed) this.destroy(this.listenerCount("error") === 0 ? undefined : Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
  }
}
H2Request.prototype[BODY_CUT] = false;

/** Whether a response has trailers to send (see `H2Response.addTrailers`). */
const TRAILERS_DUE = Symbol("cog.trailersDue");

/** Headers HTTP/2 forbids (RFC 9113 §8.2.2): Node throws on them; on h2 they mean nothing, so they are dropped. */
const CONNECTION_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

/** Node's Http2ServerResponse as the contract sees it: the response surface, over its stream. */
const H2ResponseBase = Http2ServerResponse as unknown as abstract new (
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a base class for `extends`: TypeScript takes only `any[]` constructor arguments there (TS2545)
  ...args: any[]
) => ResponseSurface & { readonly req: unknown; readonly stream: ServerHttp2Stream };

export class H2Response extends H2ResponseBase {
  /** @internal Body bytes written so far: node:http2 keeps no count (see body-bytes.ts). */ declare [WRITTEN]: number;
  /** @internal `addTrailers` was called. */ declare [TRAILERS_DUE]: boolean;

  /** Node's write, counted (its `end` writes a last chunk through here too). */
  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (!this.writableEnded && !this.destroyed) this[WRITTEN] += chunkBytes(chunk, encoding);
    return super.write(chunk, encoding as BufferEncoding, callback as () => void);
  }

  override writeHead(status: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    const given = typeof reason === "string" ? headers : reason;
    const kept = given === undefined || Array.isArray(given) ? given : withoutConnectionHeaders(given);
    // HTTP/2 has no reason phrase.
    return super.writeHead(status, kept as OutgoingHttpHeaders);
  }

  override setHeader(name: string, value: number | string | readonly string[]): this {
    if (CONNECTION_HEADERS.has(name.toLowerCase())) return this;
    return super.setHeader(name, value);
  }

  /**
   * Node's end; and when the request's body is still coming (a 413, a 408, a handler that
   * answered without reading it), the client is asked to stop sending once the response is out
   * (RST_STREAM NO_ERROR, RFC 9113 §8.1): otherwise the unread body fills the stream's window
   * and the client's stream waits forever. What did arrive is discarded, so that the stream
   * can close. On HTTP/1.1, Cog closes the connection instead.
   */
  override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
    super.end(chunk, encoding as BufferEncoding, callback as () => void);
    const stream = this.stream;
    if (!stream.endAfterHeaders && !stream.destroyed && stream.state.remoteClose !== 1 && !bodyEnded(stream)) {
      const req = this.req as unknown as H2Request;
      req[BODY_CUT] = true;
      // Node sends the RST_STREAM after the response's last DATA frame ('finish'), but trailers
      // come after that: with trailers to send (a gRPC answer's status), the stream is closed
      // once node:http2 has sent them (its own 'wantTrailers' listener sends them on the next
      // turn of the loop, in a setImmediate: this one comes after it), else they would never leave.
      if (this[TRAILERS_DUE]) stream.once("wantTrailers", () => setImmediate(closeStream, stream));
      else closeOnceEnded(stream, 0);
      req.resume();
    }
    return this;
  }

  /** node:http2's trailers, noted: they change how `end` closes a stream whose request is still coming. */
  override addTrailers(headers: OutgoingHttpHeaders): void {
    super.addTrailers(headers);
    this[TRAILERS_DUE] = true;
  }

  /** A stream's response: whether its connection may be reused is HTTP/2's own business. */
  override get shouldKeepAlive(): boolean {
    return true;
  }
  override set shouldKeepAlive(_keep: boolean) {}

  /** HTTP/2 has no reason phrase: one set by the app (or Cog's error path) is ignored, without Node's warning. */
  override get statusMessage(): string {
    return "";
  }
  override set statusMessage(_message: string) {}

  override get destroyed(): boolean {
    return this.stream.destroyed;
  }

  /**
   * Whether the whole response went out: ended, and its stream closed without a reset. (Node's
   * says so of any closed stream, one the client reset before the answer too, which the access
   * log would take for answered.)
   */
  override get writableFinished(): boolean {
    const stream = this.stream;
    return this.writableEnded && stream.closed && stream.rstCode === constants.NGHTTP2_NO_ERROR;
  }
}

H2Response.prototype[WRITTEN] = 0;
H2Response.prototype[TRAILERS_DUE] = false;

/**
 * Whether the request's END_STREAM has reached the stream (its readable side ended, read or not).
 * `state.remoteClose` says so too, but late: node:http2 hands the end of the body to JavaScript
 * (and runs the microtasks it sets off, such as a handler's `for await` over the body and the
 * response it then ends) from nghttp2's frame callback, before nghttp2 marks the stream
 * half-closed. A response ended there would reset a stream whose request is whole, and a
 * client still reading the response (Go's) drops what it had not read.
 */
function bodyEnded(stream: ServerHttp2Stream): boolean {
  return stream.readableEnded || (stream as unknown as { _readableState: { ended: boolean } })._readableState.ended;
}

function closeStream(stream: ServerHttp2Stream): void {
  if (!stream.destroyed) stream.close(constants.NGHTTP2_NO_ERROR);
}

/**
 * Resets a stream whose response is ended (NO_ERROR) once that response's END_STREAM has left:
 * node:http2's `close` submits the RST_STREAM at once, and nghttp2 then drops the END_STREAM
 * still queued behind the body, leaving the response unfinished for the client (Go's client
 * reports the stream reset and drops the response). The END_STREAM goes out when nghttp2 next
 * writes, or once the client's window lets the body through: polled on the next turns of the
 * loop, then every 10 ms, for a second at most (a client that reads nothing gets the reset anyway).
 */
function closeOnceEnded(stream: ServerHttp2Stream, tries: number): void {
  if (stream.destroyed) return;
  if (stream.state.localClose === 1 || tries >= 110) return void stream.close(constants.NGHTTP2_NO_ERROR);
  if (tries < 10) setImmediate(closeOnceEnded, stream, tries + 1);
  else setTimeout(closeOnceEnded, 10, stream, tries + 1);
}

function withoutConnectionHeaders(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  let copy: OutgoingHttpHeaders | null = null;
  for (const name in headers) {
    if (CONNECTION_HEADERS.has(name.toLowerCase())) {
      copy ??= { ...headers };
      delete copy[name];
    }
  }
  return copy ?? headers;
}

/**
 * The head rules of HTTP/2 requests, before routing: the header count and URL length limits,
 * then the body announced. Node's HTTP/2 layer has already refused what RFC 9113 forbids
 * (malformed pseudo-headers, connection headers, a Content-Length that disagrees with the DATA).
 * Without a Content-Length, a stream that did not end with its headers has a body of unknown
 * length, read as a chunked one would be.
 */
export function inspectH2Head(req: H2Request, limits: Limits): number {
  // rawHeaders holds the pseudo-headers too (:method, :path, :scheme, :authority).
  let count = 0;
  let size = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.charCodeAt(0) !== 58 /* ":" */) count++;
    size += raw[i]!.length + raw[i + 1]!.length + 32;
  }
  if (count > limits.maxHeaders) {
    refusedLists(req.stream.session, 1);
    throw new HttpError(431, `Too many headers (the limit is ${limits.maxHeaders}); raise the maxHeaders option to accept more`);
  }
  // The size SETTINGS_MAX_HEADER_LIST_SIZE announces (RFC 9113 §6.5.2: each field's name and
  // value, plus 32): Node resets a stream past it once the client has acknowledged it, and
  // leaves one that came before to the application.
  if (size > limits.maxHeaderSize) {
    refusedLists(req.stream.session, 1);
    throw new HttpError(431, `Request headers are larger than the limit of ${limits.maxHeaderSize} bytes; raise the maxHeaderSize option to accept them`);
  }
  const url = req.url;
  if (url.length > limits.maxUrlLength)
    throw new HttpError(414, `URL is longer than the limit of ${limits.maxUrlLength} characters; raise the maxUrlLength option to accept it`);
  const declared = req.headers["content-length"];
  if (declared !== undefined) {
    const length = Number(declared);
    return length > 0 ? length : NO_BODY;
  }
  return req.stream.endAfterHeaders ? NO_BODY : CHUNKED;
}

/**
 * HTTP/1.1's `requestTimeout`, per stream: a request whose body has not all arrived `ms` after
 * it began gets 408 (by `fail`, the app's error response), as node:http answers a slow request,
 * and its stream closes; or, if its response has begun, its stream is reset. The session's other
 * streams go on. Only streams with a body are timed (a HEADERS block arrives whole).
 */
export function limitRequestTime(req: H2Request, res: H2Response, ms: number, fail: (err: HttpError) => void): void {
  const stream = req.stream;
  const timer = setTimeout(() => {
    if (stream.destroyed || stream.state.remoteClose === 1) return;
    if (res.headersSent) return void stream.close(constants.NGHTTP2_CANCEL);
    fail(tooSlow("requestTimeout", ms));
  }, ms);
  stream.once("close", () => clearTimeout(timer));
}

interface Counted {
  [IN_FLIGHT]: number;
  [REFUSED_LISTS]: RefusedLists;
}

/**
 * Header lists a client may have refused (a 431, or a reset by node:http2 past
 * maxHeaderListPairs or the list size it acknowledged) before its session is ended with GOAWAY
 * (ENHANCE_YOUR_CALM): 100 at once, 10 a second more, as the native engine's
 * `refused_header_lists` (native/http2/src/config.rs). Each such stream costs the server the
 * decoding of its whole block, which HPACK references to a large field make far larger than
 * the bytes the client sent.
 */
const REFUSED_BURST = 100;
const REFUSED_PER_SECOND = 10;

/** A session's refused header lists: a token bucket, and the streams that surfaced. */
interface RefusedLists {
  /** Streams node:http2 handed to the server ('stream' events). */
  surfaced: number;
  /** Streams it refused before they surfaced, counted so far (see `unsurfaced`). */
  counted: number;
  tokens: number;
  at: number;
}

const newRefusedLists = (): RefusedLists => ({ surfaced: 0, counted: 0, tokens: REFUSED_BURST, at: 0 });

/** Takes `n` tokens of the session's refused lists; past the rate, the session ends (GOAWAY, ENHANCE_YOUR_CALM). */
function refusedLists(session: Http2Session | undefined, n: number): void {
  const refused = (session as unknown as Counted | undefined)?.[REFUSED_LISTS];
  if (refused === undefined) return;
  const now = performance.now();
  refused.tokens = Math.min(REFUSED_BURST, refused.tokens + ((now - refused.at) * REFUSED_PER_SECOND) / 1000) - n;
  refused.at = now;
  if (refused.tokens < 0 && !session!.destroyed)
    session!.destroy(new Error("The client sent too many header lists the server refused"), constants.NGHTTP2_ENHANCE_YOUR_CALM);
}

/**
 * Counts the streams node:http2 refused before they surfaced (a header list past its limits,
 * a malformed head, one stream too many: it tells JavaScript nothing of them), from the highest
 * stream id it has read: a client opens its streams in order, on odd ids, and a well-behaved
 * one skips none, so every id up to it that did not surface was refused.
 */
function unsurfaced(session: Http2Session, lastStream: number): void {
  const refused = (session as unknown as Counted)[REFUSED_LISTS];
  const now = ((lastStream + 1) >> 1) - refused.surfaced;
  if (now <= refused.counted) return;
  const n = now - refused.counted;
  refused.counted = now;
  refusedLists(session, n);
}

/** Node's own key for a session's idle timer (`setTimeout`), found on the first session that has one. */
let timerKey: symbol | null = null;

/**
 * Stops a closed session's idle timer (the server's `setTimeout`, here `keepAliveTimeout`).
 *
 * Why: node:http2 leaves it armed when the session is destroyed (Node 20-24: its `setTimeout(0)`
 * does nothing on a destroyed session, and its destroy does not clear it), so the timer list
 * holds every closed session, with its socket and streams, until the timeout fires. Under
 * connection churn that keeps `keepAliveTimeout` worth of closed sessions alive and promotes them
 * all to the old generation (node:http2 alone with a 5 s `setTimeout`: 135 MB over 40,000
 * connections, against 20 MB without; docs/decisions/deferred-answers.md). A net.Socket clears
 * its own on destroy.
 */
function stopIdleTimer(session: Http2Session): void {
  timerKey ??=
    Object.getOwnPropertySymbols(session).find((key) => key.description === "timeout" && isTimer((session as unknown as Record<symbol, unknown>)[key])) ?? null;
  if (timerKey === null) return;
  const timer = (session as unknown as Record<symbol, unknown>)[timerKey];
  if (isTimer(timer)) clearTimeout(timer);
}

function isTimer(value: unknown): value is NodeJS.Timeout {
  return typeof value === "object" && value !== null && typeof (value as NodeJS.Timeout).refresh === "function";
}

/**
 * The HTTP/2 sessions of a server, so that `close` can end them (GOAWAY lets their open
 * streams finish and refuses new ones; what is left at the deadline is destroyed), and so that
 * `keepAliveTimeout` closes a session only when it is idle, as node:http closes a keep-alive
 * connection between requests and never during one.
 */
export class Sessions {
  private readonly open = new Set<Http2Session>();
  /** Every connection, so that what `close` finds left at its deadline is cut (a gracefully closed session waits for its peer to hang up). */
  private readonly connections = new Set<Socket>();
  /** Reads each open session's highest stream id every `checkInterval` (see `checkRefused`). */
  private sweep: NodeJS.Timeout | null = null;

  constructor(
    private readonly keepAliveTimeout: number,
    private readonly checkInterval: number,
  ) {}

  track(session: Http2Session): void {
    this.open.add(session);
    (session as unknown as Counted)[IN_FLIGHT] = 0;
    (session as unknown as Counted)[REFUSED_LISTS] = newRefusedLists();
    this.sweep ??= setInterval(this.checkRefused, this.checkInterval).unref();
    session.once("close", () => {
      this.open.delete(session);
      stopIdleTimer(session);
      if (this.open.size === 0 && this.sweep !== null) {
        clearInterval(this.sweep);
        this.sweep = null;
      }
    });
  }

  /**
   * Streams node:http2 refused on a session that surfaced none since: a client that sends only
   * header lists it refuses is seen here, once per `checkInterval` (a `session.state` read,
   * under a microsecond a session).
   */
  private readonly checkRefused = (): void => {
    for (const session of this.open) {
      if (session.destroyed) continue;
      const last = session.state.lastProcStreamID;
      if (last !== undefined && last > 0) unsurfaced(session, last);
    }
  };

  /** A connection the server accepted (TCP, before any TLS handshake). */
  readonly connection = (socket: Socket): void => {
    this.connections.add(socket);
    socket.once("close", () => this.connections.delete(socket));
  };

  /** A stream began on a tracked session: counted until it closes. */
  readonly stream = (stream: ServerHttp2Stream): void => {
    const session = stream.session as unknown as Counted | undefined;
    if (session === undefined) return;
    session[IN_FLIGHT]++;
    stream.once("close", () => session[IN_FLIGHT]--);
    // Ids it skipped are streams node:http2 refused (see `unsurfaced`).
    session[REFUSED_LISTS].surfaced++;
    if (stream.id !== undefined) unsurfaced(stream.session!, stream.id);
  };

  /**
   * The server's idle timeout (`keepAliveTimeout`) fired on a connection: a session (or, on
   * `http2: true`, an HTTP/1.1 connection) with nothing in flight is closed (GOAWAY, then the
   * connection: a graceful close would wait for the peer to hang up); a busy one is left to its
   * requests' own limits, and timed again (Node listens to a session's timeout once). Node's
   * default would close it busy or not, cutting a slow response.
   */
  readonly idle = (connection: Http2Session | Socket): void => {
    if (IN_FLIGHT in connection) {
      const session = connection as Http2Session;
      if ((connection as unknown as Counted)[IN_FLIGHT] === 0) session.destroy();
      else session.setTimeout(this.keepAliveTimeout, () => this.idle(session));
    } else if ((connection as unknown as { _httpMessage?: unknown })._httpMessage == null) {
      connection.destroy();
    }
  };

  /** Sends GOAWAY on every session (each closes once its streams are done). */
  closeGracefully(): void {
    for (const session of this.open) session.close();
  }

  destroyAll(): void {
    for (const session of this.open) session.destroy();
    for (const socket of this.connections) socket.destroy();
  }
}
