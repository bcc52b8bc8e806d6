import type { EventEmitter } from "node:events";
import type { IncomingHttpHeaders, OutgoingHttpHeader, OutgoingHttpHeaders, ServerOptions } from "node:http";
import type { Duplex, Readable } from "node:stream";
import type { PeerCertificate } from "node:tls";
import type { InjectOptions as LightOptions } from "light-my-request";
import type { HttpError } from "../../base/errors.js";
import type { Limits } from "../../base/limits.js";
import type { TlsOptions } from "../../base/tls.js";

/**
 * The engine contract: what every engine (node:http, Cog's native engine) gives the app, and
 * what the app gives an engine. Handlers see only `Request` and `Response`, the same on every
 * engine: Cog's helpers over the part of Node's IncomingMessage and ServerResponse that
 * Express-style middleware uses (a readable request, a writable response with its events).
 *
 * Data flows one way: an engine turns bytes into request and response objects and hands them to
 * its `EngineHost`; it never reaches into the app. This file imports no module of the app's
 * (only the leaf vocabularies errors, limits and tls): the engines depend on it, and so does the
 * core, never the other way round.
 */

/**
 * What an engine found in a request's head before the app routes it: the body it announces
 * (`NO_BODY`, `CHUNKED` or a Content-Length), or the HttpError that refuses the request (a
 * broken rule of HTTP or a limit; the app answers it, then the connection closes).
 */
export type HeadVerdict = number | HttpError;

/** The `HeadVerdict` of a request without a body, and of a chunked one. */
export const NO_BODY = -1;
export const CHUNKED = -2;

/**
 * What an engine talks to: the app behind it, as far as an engine needs to know it. An engine is
 * built with one (`EngineConfig.host`) and calls nothing else of the app.
 */
export interface EngineHost {
  /**
   * The entry point for every request (bound: engines call it detached). The engine has read
   * the head and says what body follows, or why the request is refused. `req` is an instance of
   * the class `requestClass` made, `res` of the one `responseClass` made.
   */
  readonly dispatch: Dispatch;
  /** Turns an error into the app's error response, whatever state the response is in. */
  fail(err: unknown, req: RequestSurface, res: ResponseSurface): void;
  /** Logs an error nothing can answer with any more, with where it happened (`when`: what was going on). */
  report(err: unknown, req: RequestSurface, when?: string): void;
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
  /** Whether the app has WebSocket routes: an engine then serves upgrades (it asks as it starts listening). */
  readonly servesWebSockets: boolean;
  /**
   * The class of the app's requests, made once as the engine starts from the engine's bare
   * request class (one that provides `EngineRequestMethods`): the host lays its request helpers,
   * the app (`req.app`), its settings and itself (`HOST`) on the prototypes, so requests carry
   * them without a store per request, and the engine knows nothing of them.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a base class for `extends`: TypeScript takes only `any[]` constructor arguments there (TS2545)
  requestClass<Class extends abstract new (...args: any[]) => EngineRequest & EngineRequestMethods>(Base: Class): Class;
  /**
   * The class of the app's responses, made once as the engine starts from the engine's bare
   * response class (one that provides `ResponseSurface`): the host lays its response helpers, and
   * whatever the app adds to its responses, on the prototypes once, rather than on each response
   * (a `setPrototypeOf` per response, as Express does, costs V8 a new hidden class and cold
   * property lookups on every response).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a base class for `extends`: TypeScript takes only `any[]` constructor arguments there (TS2545)
  responseClass<Class extends abstract new (...args: any[]) => ResponseSurface & { req?: unknown }>(Base: Class): Class;
}

/** The host serving a request, on its class's prototype (put there by `EngineHost.requestClass`). */
export const HOST: unique symbol = Symbol("cog.host");

/** A request of a class made by `EngineHost.requestClass`. */
export interface HostedRequest extends RequestSurface {
  readonly [HOST]: EngineHost;
}

/**
 * The app's entry point for one request (see `EngineHost.dispatch`). For a request with a body,
 * it returns the route's own `requestTimeout` (ms; 0: no limit), which the engine times the body
 * against in place of the app's (a 408 naming requestTimeout and that time past it); undefined:
 * the app's.
 */
export type Dispatch = (req: RequestSurface, res: ResponseSurface, verdict: HeadVerdict) => number | undefined;

/** See `EngineHost.responseDone`. */
/**
 * See `EngineHost.responseDone`. `bytes`: how many body bytes the response carried, as the engine
 * knows it (its whole body's length or its Content-Length, else the bytes written to a stream
 * without one; null when the engine can't tell): the access log's count travels with it.
 */
export type ResponseDone = (res: ResponseSurface, aborted: boolean, bytes: number | null) => void;

/** The app's options an engine reads (part of `CogOptions`). */
export interface EngineOptions {
  /**
   * Serve HTTPS: the certificate and key (PEM), and any other of Node's secure-context options;
   * TLS 1.2 and 1.3 only. Replace the certificate later with `app.setSecureContext`. The native
   * engine serves it with rustls (HTTP/1.1, ALPN "http/1.1"): `key`, `cert`, `passphrase`, `ca`,
   * `requestCert`, `rejectUnauthorized`, `minVersion`/`maxVersion`; it refuses OpenSSL-only options
   * such as `pfx` or `ciphers` (see docs/guide/deployment.md).
   */
  tls?: TlsOptions;
  /**
   * `true`: HTTP/2 over TLS (needs `tls`), with HTTP/1.1 for clients that don't offer h2 by ALPN;
   * `"h2c"`: cleartext HTTP/2 with prior knowledge, as behind a proxy that speaks h2c or for gRPC
   * clients (HTTP/1.1 clients are closed, unless `allowHTTP1`). The same handlers serve every protocol.
   */
  http2?: boolean | "h2c";
  /**
   * With `http2: "h2c"`: serve HTTP/1.1 on the same port too. A client whose first bytes are
   * HTTP/2's connection preface (`PRI * HTTP/2.0…`) speaks h2c, any other HTTP/1.1, as Go's h2c
   * handler and node:http2's `allowHTTP1` (on TLS) do. Default false (h2c only). `http2: true`
   * serves HTTP/1.1 by ALPN already.
   */
  allowHTTP1?: boolean;
  /** Further options for `http.createServer` (node engine only); they override those Cog derives from its limits. */
  server?: ServerOptions;
  /**
   * Node engine only. Hold each answer once `res.end()` has buffered it and write the held ones
   * together, 16 at a time or at the end of the event loop's round, so that a client on the same
   * host (a proxy, a load generator) is woken once per slice rather than once per answer.
   * Relies on Node's socket internals (src/engines/node/writes.ts, checked by
   * test/engines/node/node-internals.test.ts): turn it off if a Node release breaks them, or to have every
   * answer written the moment it ends. Default true.
   */
  sliceWrites?: boolean;
  /**
   * Node engine only, on Linux where Cog's native addon is built (not in cluster workers). Each
   * time Node accepts a connection, accept the others waiting in the kernel's queue too (up to
   * 1024), so that a burst of clients is let in at once rather than one per turn of the event loop.
   * Relies on Node's net.Server internals (src/engines/node/accept.ts, checked by
   * test/engines/node/node-internals.test.ts): turn it off if a Node release breaks them, or to accept
   * exactly as Node does. Default true.
   */
  drainAcceptQueue?: boolean;
}

/** What an engine is built with: the host it serves, the app's limits and options. */
export interface EngineConfig {
  readonly host: EngineHost;
  readonly limits: Limits;
  /** Refuse what a correct origin server must (see `CogOptions.strict`). */
  readonly strict: boolean;
  readonly options: EngineOptions;
}

/** A request for `app.inject` (light-my-request's options; `url` may carry a query). */
export type InjectOptions = Pick<LightOptions, "url" | "path" | "method" | "headers" | "query" | "payload" | "body" | "cookies" | "remoteAddress">;

/** What `app.inject` answers, on every engine. */
export interface InjectResponse {
  statusCode: number;
  statusMessage: string;
  headers: OutgoingHttpHeaders;
  rawPayload: Buffer;
  /** The body as text (UTF-8). */
  payload: string;
  body: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as fetch's and light-my-request's `json()`: the caller names what it expects
  json<T = any>(): T;
  /** Each Set-Cookie parsed by `cookie`'s parseSetCookie (`sameSite: "lax"`, as `setCookie` takes it). */
  cookies: Array<{ name: string; value: string; [attribute: string]: unknown }>;
}

/**
 * Where an engine listens: a TCP port (0: a free one) on a host (every interface when none), or
 * a Unix domain socket at `path` (the file is made as it listens, which fails if one is there,
 * and removed when it stops, as node:http does).
 */
/** `http3`: serve HTTP/3 on UDP beside TLS on TCP, on the same port number (the native engine only). */
export type ListenAt = { readonly port: number; readonly host?: string | undefined; readonly http3?: boolean | undefined } | { readonly path: string };

/** Where an engine listens, once it does: the host and the port it got, or the socket's path. */
export type Bound = { readonly host: string; readonly port: number } | { readonly path: string };

/**
 * node:http's 'upgrade' listener: a request that asks to change protocols (a WebSocket
 * handshake), its connection raw (node: the net.Socket; native: a Duplex with a Socket's
 * members, src/engines/native/tunnel.ts), and the bytes that came after the request's head.
 */
export type UpgradeListener = (req: RequestSurface, socket: Duplex, head: Buffer) => void;

/** Accepting connections, turning bytes into requests for `Dispatch`, and stopping gracefully. */
export interface Engine {
  readonly name: "node" | "native";
  /** `shared`: other processes (Cog's workers) listen on this port too (native: SO_REUSEPORT; node: node:cluster, which needs nothing). */
  listen(at: ListenAt, shared: boolean): Promise<Bound>;
  /** Where it listens, or null when it does not. Both engines bind as `listen` is called, so this answers before its promise settles. */
  address(): Bound | null;
  /**
   * Hands the requests that ask to change protocols (an Upgrade header, no body) to `listener`
   * rather than to the app, with their connections, as node:http's 'upgrade' event does while it
   * has a listener; null: they are the app's again. Nothing changes for other requests. (An app
   * with WebSocket routes takes its upgrades itself: the native engine then keeps them for it.)
   */
  handUpgrades(listener: UpgradeListener | null): void;
  /**
   * Engines whose server is not Node's: `server` is what the app knows as its server (the one
   * `cog-http/express`'s `createServer` returned), and `req.socket.server` is it from then on,
   * as a node:http socket's `server` is the http.Server (http-proxy-middleware listens for
   * 'upgrade' on it). On the node engine that server is the engine's own.
   */
  serveAs?(server: object): void;
  /** Stops accepting, lets in-flight requests finish, and force-closes what is left after `drainMs`. */
  close(drainMs: number): Promise<void>;
  /** Answers one request for a test, through this engine's own request and response (see `Cog.inject`). */
  inject(options: InjectOptions | string): Promise<InjectResponse>;
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
  /**
   * HTTP/2's `:authority` and `:scheme`, as node:http2's requests have them (Connect's Node
   * handler, `connectNodeAdapter`, reads `authority` where a request has one, else the Host
   * header). The native engine has both on every protocol (on HTTP/1.1: the Host header, and
   * the connection's scheme); the node engine on HTTP/2 (node:http2's), not on node:http's.
   */
  readonly authority?: string | undefined;
  readonly scheme?: string | undefined;
}

/**
 * Trailers, on every engine and protocol, with node:http's API: `res.addTrailers(fields)` (an
 * object, or node:http's list of `[name, value]` pairs, on HTTP/1.1) sends them after the body: on
 * HTTP/2 in a last HEADERS frame (END_STREAM), on HTTP/1.1 after the last chunk of a chunked body
 * (a streamed one without a Content-Length, or one whose head declared a `Trailer` header, which
 * then goes chunked): node:http's rule, whatever the request's TE said. A body framed by its
 * length, HTTP/1.0's, and a HEAD answer have none. Names and values are checked as headers'
 * are (Node's errors); each call replaces the last one's on HTTP/1.1, as node:http does
 * (node:http2 adds them up).
 */
export interface ResponseTrailers {
  addTrailers(fields: OutgoingHttpHeaders | ReadonlyArray<readonly [string, string]>): void;
}

/**
 * The response side of the contract: Node's ServerResponse as middleware uses it. Headers are
 * validated as Node validates them; `write` streams the body (chunked unless a length is known)
 * with backpressure (`false`, then `drain`); `finish` and `close` are emitted as Node does.
 */
export interface ResponseSurface extends EventEmitter, ResponseTrailers {
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

/**
 * Called once the body is buffered, or with the error (413) that refused it. An engine hands a
 * request's body over in one of two ways, as the app's route asks: buffered whole
 * (`receiveBody(length, limit, done)`), or streamed through the request's readable side as it
 * arrives, with backpressure (`streamBody(length, limit)`); see `EngineRequestMethods`. Size limits
 * are the app's, per route, applied by both.
 */
export type BodyCallback = (err: HttpError | null, body: Buffer | null) => void;

/** What an engine's request class has of Node's IncomingMessage, which Cog's request helpers read. */
export interface EngineRequest {
  url?: string | undefined;
  method?: string | undefined;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  httpVersionMajor: number;
  httpVersionMinor: number;
}

/**
 * What an engine's request class must provide, beyond the surface (`EngineRequest`): how its
 * body comes in, where it came from, and its headers read without building `headers`. The host's
 * request helpers (http/request.ts) are written over these; `EngineHost.requestClass` takes only
 * a class that has them.
 */
export interface EngineRequestMethods {
  /** The client's address as the engine sees it (the peer of the TCP connection). */
  readonly remoteAddress: string | undefined;
  /** Whether the connection is TLS, as the engine sees it. */
  readonly encrypted: boolean;
  /**
   * Buffers the body the request announced (`length` bytes, or CHUNKED), refusing more than
   * `limit`; `done` is called at most once, and never if the client goes away mid-body.
   */
  receiveBody(length: number, limit: number, done: BodyCallback): void;
  /**
   * Lets the body the request announced flow through the request's readable side as it
   * arrives, without holding it whole, and with backpressure (while the stream's buffer is
   * full, the engine stops reading the connection). Past `limit` bytes the stream is destroyed
   * with a 413 HttpError, and the connection stays up for the answer. A client that goes away
   * mid-body destroys it with an ECONNRESET error, as node:http does. (A route's own time limit
   * for the body is what `Dispatch` returns.)
   */
  streamBody(length: number, limit: number): void;
  /**
   * One header's value by lower-case name, repeats joined as Node joins them. Engines that keep
   * headers natively answer it without building `headers` (node:http's reads `headers`).
   */
  headerValue(name: string): string | undefined;
  /**
   * The first value of a header by lower-case name (Node keeps only the first Content-Type),
   * without building `headers` (node:http's scans `rawHeaders`).
   */
  firstHeader(name: string): string | undefined;
  /**
   * Whether the request may have a header that makes a file's answer conditional or partial
   * (Range, or an "If-" header): false only when it surely has none, so that the file server
   * reads them one by one only then (node:http's says true).
   */
  mayBeConditional(): boolean;
}

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
  accept(req: RequestSurface, res: ResponseSurface, settings: WebSocketSettings, events: WebSocketEvents): WebSocketTransport | null;
  /** Sends one message to many of this engine's sockets (as `send` each), framed once where the engine can. */
  sendMany(transports: readonly WebSocketTransport[], data: string | Buffer, binary: boolean): void;
}

/** What `send` did with a message: written to the connection, queued behind unsent bytes (backpressure), or dropped. */
export type SendResult = "sent" | "queued" | "dropped";

/** A WebSocket route's options with every default applied (see `WebSocketOptions`). */
export interface WebSocketSettings {
  readonly maxPayload: number;
  readonly maxFragments: number;
  readonly idleTimeout: number;
  readonly maxBackpressure: number;
  readonly onBackpressure: "drop" | "close";
  readonly perMessageDeflate: boolean;
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
 * A whole body the engine frames itself, an optional method of an engine's response. Cog's
 * `send` hands it the body it is about to write (with `writeHead`, then `end(body)`) instead of
 * setting Content-Length; a middleware that replaces the body (compression) hands it `undefined`.
 * Until the body is written, `getHeader("content-length")` answers its length. The native engine
 * writes the Content-Length from the body it is given; node:http's responses have no such method
 * (the helpers set the header).
 */
export const FRAME_BODY: unique symbol = Symbol("cog.frameBody");

export interface BodyFraming {
  [FRAME_BODY]?(body: string | Buffer | undefined): void;
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

/**
 * Files the engine opens and sends itself, an optional pair of methods of an engine's response,
 * for the file helpers (`serveStatic`, `res.sendFile`) to use in place of fs.promises when the
 * response has them. `[OPEN_FILE](path)` opens a file for this response synchronously, on the
 * engine's own thread (the native engine: open(2) and fstat(2) on the loop, where each
 * fs.promises call is a round trip through libuv's thread pool), and answers what is there,
 * `{ isFile, isDirectory, size, mtimeMs }` (as Node's `Stats` has them), or the code of the
 * error that kept it from opening ("ENOENT", "EACCES"…, as Node's errors have it), returned
 * rather than thrown: a missing precompressed variant is an everyday answer, and an exception
 * costs more than the open. The engine keeps a regular file for the response,
 * in place of one kept before (the response sends the last one opened: a precompressed
 * variant found after the file itself), and closes it when the response ends, whatever its
 * answer. `[SEND_OPENED_FILE](position, length)` answers with the head as it stands (its
 * Content-Length set to `length` by the caller) and `length` bytes of that file from
 * `position`, and ends the response. `[STAT_FILE](path)` says what is at a path without
 * opening it or keeping anything (stat(2), following links as the open does): "file",
 * "directory", "other", or the error's code (a file served by its precompressed variant is
 * only checked to be there). JavaScript never holds the descriptor; the bytes never pass
 * through it. Node's engine has none of the three.
 */
export const OPEN_FILE: unique symbol = Symbol("cog.openFile");
export const SEND_OPENED_FILE: unique symbol = Symbol("cog.sendOpenedFile");
export const STAT_FILE: unique symbol = Symbol("cog.statFile");

/** What `OPEN_FILE` found at a path. */
export interface OpenedFile {
  isFile: boolean;
  isDirectory: boolean;
  size: number;
  mtimeMs: number;
}

export interface FileOpening {
  [OPEN_FILE](path: string): OpenedFile | string;
  [SEND_OPENED_FILE](position: number, length: number): void;
  [STAT_FILE](path: string): "file" | "directory" | "other" | string;
}

/**
 * A body the engine holds whole, an optional method of an engine's request: the body, when it
 * came whole with the request's head and nothing has read it yet (neither the request's stream,
 * nor a reader that set `_body`); undefined otherwise, and the body is read from the stream.
 * Whoever takes it sets `_body` to true and calls it again with `take` true: the stream then
 * ends empty and `readable` is false, as after a reader. (`_body` alone says nothing of the
 * stream: body-parser 1.x sets it, then reads the stream.) The native engine has it (its request's stream is made only when something
 * reads it, and costs more than the rest of a small request); node:http's requests, which are
 * Node's streams already, have not. Express's body parsers use it (src/express/body-parsers.ts).
 */
// A registered symbol: the face finds the method even where the engine's modules are a copy of
// their own (Express's app.listen requires the engine, and a TypeScript loader gives require and
// import a copy each).
export const HELD_BODY: unique symbol = Symbol.for("cog.heldBody") as never;

/**
 * A body that follows its request's head in the same read from the socket, an optional method of
 * an engine's request: node:http hands the app a request at its head, before the body that came
 * with it, and reading that body through the request's stream (its events, flowing mode) costs
 * more than the rest of a small request. Asked before anything has read the stream, with the
 * body's declared length: the engine keeps the body's pieces from the stream as they arrive. When
 * all `length` bytes came with the head, `done` gets the body at the message's end (a later tick,
 * in the asker's async context), and the stream is left as a reader leaves it: ended, its 'end'
 * emitted before the next tick.
 * Otherwise (a slow or cut body) `done` gets undefined on the next tick, the pieces given back to
 * the stream as if nothing had been asked. Answers false, and asks nothing, when the stream was
 * read or ended already. Whoever takes a body sets `_body` to true, as for HELD_BODY. The node
 * engine's HTTP/1.1 requests have it; Express's body parsers use it (src/express/body-parsers.ts).
 */
export const FOLLOWING_BODY: unique symbol = Symbol.for("cog.followingBody") as never;

export interface BodyHolding {
  [HELD_BODY]?(take?: boolean): Buffer | undefined;
  [FOLLOWING_BODY]?(length: number, done: (body: Buffer | undefined) => void): boolean;
}
