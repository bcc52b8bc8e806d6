import type { EventEmitter } from "node:events";
import type { IncomingHttpHeaders, OutgoingHttpHeader, OutgoingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import type { PeerCertificate } from "node:tls";
import type { HttpError } from "../errors.js";
import type { Cog, CogOptions } from "../cog.js";
import type { Limits } from "../limits.js";
import type { InjectOptions, InjectResponse } from "../testing.js";
import type { Request, RequestSettings } from "../request.js";
import type { Response } from "../response.js";
import type { SendResult, WebSocketSettings } from "../websocket/types.js";
import type { TlsOptions } from "../tls.js";

/**
 * The engine contract: what every engine (node:http, Cog's native engine) gives the app, and
 * what the app's helpers may rely on. Handlers see only `Request` and `Response`, the same on
 * every engine: Cog's helpers over the part of Node's IncomingMessage and ServerResponse that
 * Express-style middleware uses (a readable request, a writable response with its events).
 */

/**
 * What an engine found in a request's head before the app routes it: the body it announces
 * (`NO_BODY`, `CHUNKED` or a Content-Length), or the HttpError that refuses the request (a
 * broken rule of HTTP or a limit; the app answers it, then the connection closes).
 */
export type HeadVerdict = number | HttpError;

/** The app's entry point for one request, called by an engine. */
export type Dispatch = (req: Request, res: Response, verdict: HeadVerdict) => void;

/**
 * Called once the body is buffered, or with the error (413) that refused it. An engine hands a
 * request's body over in one of two ways, as the app's route asks: buffered whole
 * (`receiveBody(length, limit, done)`), or streamed through the request's readable side as it
 * arrives, with backpressure (`streamBody(length, limit)`); see `withRequestHelpers`. Size limits
 * are the app's, per route, applied by both.
 */
export type BodyCallback = (err: HttpError | null, body: Buffer | null) => void;

/** Where a server listens, once it does. */
export interface Address {
  readonly host: string;
  readonly port: number;
}

/** Accepting connections, turning bytes into requests for `Dispatch`, and stopping gracefully. */
export interface Engine {
  readonly name: "node" | "native";
  /** `shared`: other processes (Cog's workers) listen on this port too (native: SO_REUSEPORT; node: node:cluster, which needs nothing). */
  listen(port: number, host: string | undefined, shared: boolean): Promise<Address>;
  /** Stops accepting, lets in-flight requests finish, and force-closes what is left after `drainMs`. */
  close(drainMs: number): Promise<void>;
  /** Answers one request for a test, through this engine's own request and response (see `Cog.inject`). */
  inject(options: InjectOptions | string): Promise<InjectResponse>;
  /**
   * How many body bytes a finished response carried, for the access log: its whole body's length
   * or its Content-Length, else the bytes written to a stream without one; null when the engine
   * can't tell.
   */
  bodyBytes(res: Response): number | null;
  /** Engines that serve TLS: new connections get these secure-context options (certificate reload). */
  setSecureContext?(tls: TlsOptions): void;
}

/** The connection a request came on, as far as every engine can tell (on node:http, Node's Socket). */
export interface RequestSocket extends EventEmitter {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  readonly localAddress?: string | undefined;
  readonly localPort?: number | undefined;
  readonly remoteFamily?: string | undefined;
  readonly readable: boolean;
  readonly writable: boolean;
  readonly destroyed: boolean;
  destroy(error?: Error): this;
  setTimeout(ms: number, callback?: () => void): this;
  /**
   * TLS, as node:tls's sockets report it (node: Node's TLSSocket; native: from rustls). Whether
   * the connection is TLS; with `tls.requestCert`, whether the client's certificate verified
   * against `tls.ca` and why not (OpenSSL's words: `UNABLE_TO_GET_ISSUER_CERT` for none,
   * `UNABLE_TO_VERIFY_LEAF_SIGNATURE` for an unknown issuer…), and the certificate (`{}` for none).
   */
  readonly encrypted?: boolean;
  readonly authorized?: boolean;
  readonly authorizationError?: Error | string | null;
  getPeerCertificate?(): PeerCertificate | Record<string, never>;
}

/**
 * The request side of the contract: Node's IncomingMessage as middleware uses it. It is a
 * readable stream of the body (Cog reads JSON, form and text bodies before the chain runs;
 * the stream then replays them), with the head as Node gives it.
 */
export interface RequestSurface extends Readable {
  method?: string | undefined;
  url?: string | undefined;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  httpVersion: string;
  httpVersionMajor: number;
  httpVersionMinor: number;
  /** Whether the whole body has been received. */
  complete: boolean;
  readonly socket: RequestSocket;
}

/**
 * The response side of the contract: Node's ServerResponse as middleware uses it. Headers are
 * validated as Node validates them; `write` streams the body (chunked unless a length is known)
 * with backpressure (`false`, then `drain`); `finish` and `close` are emitted as Node does.
 */
export interface ResponseSurface extends EventEmitter {
  statusCode: number;
  statusMessage: string;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  /** Whether writing is still possible (not ended, not destroyed). */
  readonly writable: boolean;
  readonly destroyed: boolean;
  shouldKeepAlive: boolean;
  setHeader(name: string, value: number | string | readonly string[]): this;
  getHeader(name: string): number | string | string[] | undefined;
  getHeaders(): OutgoingHttpHeaders;
  getHeaderNames(): string[];
  hasHeader(name: string): boolean;
  removeHeader(name: string): void;
  writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  writeHead(statusCode: number, statusMessage?: string, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  flushHeaders(): void;
  write(chunk: unknown, callback?: (error?: Error | null) => void): boolean;
  write(chunk: unknown, encoding: BufferEncoding, callback?: (error?: Error | null) => void): boolean;
  end(callback?: () => void): this;
  end(chunk: unknown, callback?: () => void): this;
  end(chunk: unknown, encoding: BufferEncoding, callback?: () => void): this;
  destroy(error?: Error): this;
}

/** What Cog's request helpers need from an engine's request class, beyond the surface. */
export interface EngineRequest {
  url?: string | undefined;
  method?: string | undefined;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  httpVersionMajor: number;
  httpVersionMinor: number;
}

/** What an engine is built with: the app it serves and the app's settings. */
export interface EngineConfig {
  readonly app: Cog;
  readonly dispatch: Dispatch;
  readonly limits: Limits;
  readonly settings: RequestSettings;
  /** Refuse what a correct origin server must (see `CogOptions.strict`). */
  readonly strict: boolean;
  readonly options: CogOptions;
  /**
   * Called once for every response, when it is done: handed whole to the engine, cut, or
   * abandoned by the client (`aborted`: it did not complete). Null when the app does not ask
   * (only the access log does), and then nothing is called. Each engine calls it from what it
   * already learns once per response rather than through an event listener: the native engine
   * as it forgets the request (a 'close' listener there made every response emit events, which
   * otherwise only a response with listeners does); node:http from the 'close' event its
   * ServerResponse emits anyway.
   */
  readonly responseDone: ResponseDone | null;
}

/** See `EngineConfig.responseDone`. */
export type ResponseDone = (res: Response, aborted: boolean) => void;

/**
 * Echoing the request id (`req.id`, the access log's) in the response's X-Request-Id header, an
 * optional method of an engine's response: the app calls it, before any handler runs, where the
 * response has it, and sets the header with `setHeader` where it has not (node:http's responses).
 * Either way `getHeader("x-request-id")` answers the id and a handler's own `setHeader` replaces
 * it. The native engine appends the line to the header block it sends: set as a header, the id
 * (different on every response) made its cache of header blocks miss every time.
 */
export const ECHO_REQUEST_ID: unique symbol = Symbol("cog.echoRequestId");

export interface RequestIdEcho {
  [ECHO_REQUEST_ID]?(id: string): void;
}

/**
 * WebSockets (src/websocket/). An engine that serves an app with WebSocket routes puts its
 * `WebSocketEngine` on its request class's prototype under `WEBSOCKET`; a WebSocket route's
 * handler, having checked the handshake and run the route's `upgrade` hook, hands the request
 * to it. From then on the connection is the engine's transport, and its events go to the
 * route's socket. Each engine enforces the route's limits itself (`maxPayload`, `idleTimeout`,
 * `maxBackpressure`); topics are Cog's, and hand a publication to each engine once.
 */
export const WEBSOCKET: unique symbol = Symbol("cog.websocket");

export interface WebSocketEngine {
  /**
   * Completes the handshake (101) on the connection of `req`, a valid version-13 upgrade, and
   * takes the connection over; `res` is done with (the engine retires it, so nothing answers it
   * later): accepted, with `res.statusCode` 101 and `responseDone` called as for an answered
   * response (the access log's line); refused, as a response the client abandoned. Returns null
   * when the client is gone.
   */
  accept(req: Request, res: Response, settings: WebSocketSettings, events: WebSocketEvents): WebSocketTransport | null;
  /** Sends one message to many of this engine's sockets (as `send` each), framed once where the engine can. */
  sendMany(transports: readonly WebSocketTransport[], data: string | Buffer, binary: boolean): void;
}

/** One WebSocket connection, as an engine frames and writes it. */
export interface WebSocketTransport {
  readonly engine: WebSocketEngine;
  readonly remoteAddress: string | undefined;
  /** Bytes sent but not written to the connection yet. */
  readonly bufferedAmount: number;
  /**
   * Sends one message: "sent", "queued" behind bytes the client has not read (a drain event
   * follows), or "dropped" (the socket is closing, or the message would take its unsent bytes
   * past maxBackpressure: then, with onBackpressure "close", the socket is also cut).
   */
  send(data: string | Buffer, binary: boolean): SendResult;
  /** Sends a Close frame (no code when undefined) and closes once the peer answers (or after a few seconds). */
  close(code: number | undefined, reason: string): void;
  /** Cuts the connection. */
  terminate(): void;
}

/** What an engine reports of a socket it accepted; `close` comes once, last. */
export interface WebSocketEvents {
  message(data: string | Buffer, binary: boolean): void;
  /** Everything queued was written. */
  drain(): void;
  /** The connection is closed: the peer's close code (1005 if none; 1006 if cut) and reason. */
  close(code: number, reason: string): void;
}

/**
 * Sending a file as a response's body: the one thing about files an engine may do its own way.
 * After the head, an engine response with this method writes `read` (the range's first bytes,
 * which Cog reads before the head so that a file failing to read gets an error response), then
 * the `length` bytes of `file` from `position`, and ends the response; it calls `done` once it no
 * longer needs `file` (the caller closes it then), with the error that cut the response short if
 * one did. node:http streams the file through `res.write` with backpressure; the native engine
 * hands the descriptor to Rust, which sends it with sendfile(2), in order with the connection's
 * other responses. Cog's file helpers call it only when the response's `write` and `end` are the
 * engine's own (a middleware that wraps them, such as compression, gets the stream).
 */
export const SEND_FILE: unique symbol = Symbol("cog.sendFile");

export interface FileSending {
  [SEND_FILE](read: Buffer, file: import("node:fs/promises").FileHandle, position: number, length: number, done: (err: Error | null) => void): void;
}
