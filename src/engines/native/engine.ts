import { afterPendingReads } from "../kit/pending-reads.js";
import { getSystemErrorName } from "node:util";
import { HttpError } from "../../base/errors.js";
import { CHUNKED, NO_BODY, WEBSOCKET, type Bound, type Engine, type EngineConfig, type EngineHost, type HeadVerdict, type InjectOptions, type InjectResponse, type ListenAt, type UpgradeListener } from "../contract/engine.js";
import { injectOptions } from "../contract/inject.js";
import { injectOverLoopback } from "./inject.js";
import type { NativeWebSockets } from "./websocket.js";
import { EVENT_ABORT, EVENT_BODY_END, EVENT_BODY_PIECE, EVENT_BODY_TIMEOUT, EVENT_BODY_TRAILERS, EVENT_DRAIN, EVENT_OUT_OF_DESCRIPTORS, FLAG_HTTP3, FLAG_REFUSED, FLAG_UPGRADE, loadNative, methodNames, type NativeAddon } from "../kit/addon.js";
import { NativeRequest } from "./request.js";
import { NativeServer, publishesResponseCreated, requestStart, responseCreated } from "./http-channels.js";
import { nativeTlsOptions } from "./tls.js";
import type { TlsOptions } from "../../base/tls.js";
import { NativeResponse } from "./response.js";
import { NativeTunnels, TUNNEL_DATA } from "./tunnel.js";
import { ByRequestId } from "./by-request-id.js";
import { RequestContexts, serve } from "./request-context.js";
import { ABORT_LATER, ADDON, ADDRESS, APP_SERVER, BODY_TIMEOUT, ENCRYPTED, FORGET, GONE, ID, SERVER, STREAMED_BYTES, STREAMING, VERDICT } from "../../base/symbols.js";
import { tooSlow } from "../../base/limits.js";
import { clearInterval, clearTimeout, nextTick, now, setInterval, setTimeout } from "../../base/loop.js";

/**
 * Cog's native engine: an HTTP/1.1 server written in Rust (native/), run as a Node-API addon on
 * Node's own event loop. It parses and frames requests (as strictly as node:http), applies the
 * head, body and timeout limits, and writes responses in request order; this class hands its
 * requests to the app, with the same contract as the node engine.
 */
export class NativeEngine implements Engine {
  readonly name = "native";
  private readonly addon: NativeAddon;
  private serverId = -1;
  /** Where the server listens, while it does. */
  private bound: Bound | null = null;
  /** With HTTP/3: the Alt-Svc field answers over TCP carry. */
  private altSvc: string | undefined = undefined;
  /** Method names by the number the engine passes. */
  private readonly methods: string[];
  /** Responses the app has not finished, by request id: for abort and drain events, and `close` (not a Map: see by-request-id.ts). */
  private readonly inFlight = new ByRequestId<NativeResponse>();
  private idle: (() => void) | null = null;
  private readonly Request: typeof NativeRequest;
  private readonly Response: typeof NativeResponse;
  /** The app's WebSockets, when it has WebSocket routes. */
  private webSockets: NativeWebSockets | null = null;
  /** Who takes upgrade requests raw (`handUpgrades`), and the connections handed over so. */
  private upgrades: UpgradeListener | null = null;
  private tunnels: NativeTunnels | null = null;
  private readonly host: EngineHost;
  /** Each request's async context (made when the server listens, in the context it listens in). */
  private contexts = NO_CONTEXTS;

  constructor(private readonly config: EngineConfig) {
    const addon = (this.addon = loadNative());
    this.methods = methodNames(addon);
    this.host = config.host;
    this.Request = config.host.requestClass(NativeRequest);
    this.Request.prototype[ADDON] = addon;
    // The addon tells of the others on a connection the app cuts, not of the one it was cut for.
    this.Request.prototype[ABORT_LATER] = (id) => nextTick(this.onEvent, EVENT_ABORT, id);
    // A class of this engine's own (its addon and bookkeeping sit on the prototype), under the app's.
    const Own = class extends NativeResponse {};
    const Response = (this.Response = config.host.responseClass(Own));
    Response.prototype[ADDON] = addon;
    const done = config.host.responseDone;
    // The engine's own once-per-response bookkeeping tells the app a response is done (the
    // access log), so no response needs a 'close' listener; without one, forgetting is all.
    Response.prototype[FORGET] =
      done === null
        ? this.forget
        : (response, aborted) => {
            this.forget(response, aborted);
            done(response, aborted, bodyBytesOf(response));
          };
    if (config.options.tls !== undefined) this.Request.prototype[ENCRYPTED] = true;
  }

  /** Replaces the certificate: connections made from now on use it (open ones keep theirs). */
  setSecureContext(tls: TlsOptions): void {
    this.addon.setTls(this.serverId, nativeTlsOptions(tls));
  }

  /**
   * Upgrade requests without a body go to `listener` with their connection as a tunnel (the
   * addon then pauses them for JavaScript, as it does for WebSocket routes), unless the app has
   * WebSocket routes of its own.
   */
  handUpgrades(listener: UpgradeListener | null): void {
    this.upgrades = listener;
    if (listener !== null) this.tunnels ??= new NativeTunnels(this.addon);
    if (this.serverId !== -1) this.addon.setUpgrades(this.serverId, this.webSockets !== null || listener !== null);
  }

  serveAs(server: object): void {
    this.Request.prototype[APP_SERVER] = server;
  }

  async listen(at: ListenAt, shared: boolean): Promise<Bound> {
    if (this.host.servesWebSockets && this.webSockets === null) {
      const { NativeWebSockets } = await import("./websocket.js");
      this.webSockets = new NativeWebSockets(this.addon, (req) => ({
        id: (req as unknown as NativeRequest)[ID],
        remoteAddress: (req as unknown as NativeRequest).remoteAddress,
        retire: (res) => (res as unknown as NativeResponse).aborted(),
      }));
      (this.Request.prototype as unknown as { [WEBSOCKET]: NativeWebSockets })[WEBSOCKET] = this.webSockets;
    }
    return this.open(at, shared);
  }

  private open(at: ListenAt, shared: boolean): Promise<Bound> {
    try {
      const { limits, strict } = this.config;
      const path = "path" in at ? at.path : undefined;
      const bind = "path" in at ? "" : (at.host ?? "::");
      const contexts = (this.contexts = new RequestContexts());
      const [server, port] = this.addon.listen(
        {
          host: bind,
          port: "path" in at ? 0 : at.port,
          path,
          maxHeaderSize: limits.maxHeaderSize,
          maxHeaders: limits.maxHeaders,
          maxUrlLength: limits.maxUrlLength,
          strict,
          headersTimeout: limits.headersTimeout,
          requestTimeout: limits.requestTimeout,
          keepAliveTimeout: limits.keepAliveTimeout,
          sendTimeout: limits.sendTimeout,
          timeoutCheckInterval: limits.timeoutCheckInterval,
          webSockets: this.webSockets !== null || this.upgrades !== null,
          reusePort: shared,
          tls: this.config.options.tls === undefined ? undefined : nativeTlsOptions(this.config.options.tls),
          http2: this.config.options.http2 !== undefined && this.config.options.http2 !== false,
          allowHttp1: this.config.options.allowHTTP1 === true,
          http3: "path" in at ? undefined : at.http3,
        },
        this.onRequest,
        this.onEvent,
        this.onSocket,
        contexts.resource,
      );
      this.serverId = server;
      // Answers over TCP say where HTTP/3 is (RFC 7838), so that browsers and curl switch to it.
      this.altSvc = "path" in at || at.http3 !== true ? undefined : `h3=":${port}"; ma=86400`;
      const bound = (this.bound = path === undefined ? { host: bind, port } : { path });
      this.Request.prototype[SERVER] = new NativeServer(bound, this.emitted);
      return Promise.resolve(bound);
    } catch (err) {
      return Promise.reject(withErrorCode(err as Error));
    }
  }

  address(): Bound | null {
    return this.bound;
  }

  /** WebSocket events, and tunnels' (their kinds follow WebSockets'). */
  private readonly onSocket = (kind: number, id: number, data?: string | Buffer | number, code?: number): void => {
    if (kind >= TUNNEL_DATA) this.tunnels?.event(kind, id, data as Buffer | number | undefined);
    else this.webSockets?.onSocket(kind, id, data as string | Buffer | undefined, code);
  };

  /** A request the engine has parsed and framed, with its body if it has one (or a refusal); a longer body follows in pieces. */
  private readonly onRequest = (id: number, method: number, url: string, body: Buffer | number | undefined, flags: number, problem: string | undefined): void => {
    const request = new this.Request(id, this.methods[method]!, url, flags, body);
    // Asked to change protocols: an 'upgrade' listener takes it raw, as node:http hands it over.
    if ((flags & FLAG_UPGRADE) !== 0 && this.upgrades !== null && this.webSockets === null && body === undefined) return this.upgrade(request);
    const response = new this.Response(request);
    if (this.altSvc !== undefined && (flags & FLAG_HTTP3) === 0) response.setHeader("alt-svc", this.altSvc);
    // Asked to change protocols: unless a WebSocket route accepts, the connection closes after the answer.
    if ((flags & FLAG_UPGRADE) !== 0) response.shouldKeepAlive = false;
    const verdict =
      (flags & FLAG_REFUSED) !== 0
        ? new HttpError(flags >>> 16, problem ?? "Bad request")
        : body === undefined
          ? NO_BODY
          : typeof body === "number"
            ? body < 0
              ? CHUNKED
              : body
            : body.length; // a chunked body may be empty, and still be a body
    // The addon calls in once for a batch of requests: each runs in an async context of its own.
    serve(this.contexts, response, this.dispatchOne, this, request, response, verdict);
    // Only unanswered responses are tracked: nothing else can run while this handler does.
    if (!request[GONE]) this.inFlight.set(id, response);
  };

  /**
   * An upgrade request to the 'upgrade' listener, with its connection as a tunnel and the bytes
   * after its head. What the listener reads of the request is read first: the engine forgets the
   * request as its connection leaves HTTP.
   */
  private upgrade(request: NativeRequest): void {
    void request.rawHeaders;
    void request.headers;
    const socket = request.socket;
    socket.keep();
    const ends = { remoteAddress: socket.remoteAddress, remotePort: socket.remotePort, localAddress: socket.localAddress, localPort: socket.localPort, encrypted: request.encrypted };
    const taken = this.tunnels!.take(request[ID], ends);
    request.forget(false);
    // Null: the client is gone (nothing to answer).
    if (taken === null) return;
    try {
      this.upgrades!(request, taken.socket, taken.head);
    } catch (err) {
      this.host.report(err, request, "in an 'upgrade' listener: its connection was cut");
      taken.socket.destroy();
    }
  }

  private dispatchOne(request: NativeRequest, response: NativeResponse, verdict: HeadVerdict): void {
    if (requestStart.hasSubscribers || (publishesResponseCreated && responseCreated.hasSubscribers)) return this.dispatchObserved(request, response, verdict);
    this.dispatchRequest(request, response, verdict);
  }

  /**
   * A request while Node's HTTP channels have subscribers: published as node:http publishes it,
   * the response made, then the request started. (Apart from `dispatchOne`, so that what every
   * request runs stays small enough for the optimizing compiler to inline.)
   */
  private dispatchObserved(request: NativeRequest, response: NativeResponse, verdict: HeadVerdict): void {
    if (publishesResponseCreated && responseCreated.hasSubscribers) responseCreated.publish({ request, response });
    if (!requestStart.hasSubscribers) return this.dispatchRequest(request, response, verdict);
    const server = request[SERVER]!;
    requestStart.publish({ request, response, socket: request.socket, server });
    // Then, as node:http, through the server's 'request' event, whose emit a subscriber may wrap.
    request[VERDICT] = verdict;
    server.emit("request", request, response);
  }

  /** The server's 'request' listener: a request that went through its event (only while observed). */
  private readonly emitted = (request: NativeRequest, response: NativeResponse): void => {
    const verdict = request[VERDICT]!;
    request[VERDICT] = undefined;
    this.dispatchRequest(request, response, verdict);
  };

  private dispatchRequest(request: NativeRequest, response: NativeResponse, verdict: HeadVerdict): void {
    try {
      // A route's own requestTimeout, returned: the addon times the body against it instead.
      const bodyTime = this.host.dispatch(request, response, verdict);
      if (bodyTime !== undefined) request.limitBodyTime(bodyTime);
    } catch (err) {
      // dispatch answers its own errors; anything escaping it is a bug: don't leave the client hanging.
      this.host.report(err, request, "escaped Cog's dispatch, a bug in Cog: the connection was cut");
      response.destroy();
    }
  }

  private readonly onEvent = (kind: number, id: number, piece?: Buffer): void => {
    if (kind === EVENT_OUT_OF_DESCRIPTORS) return this.outOfDescriptors();
    const response = this.inFlight.get(id);
    if (response === undefined) return;
    // In the request's own context, as node:http emits a request's events in its connection's.
    serve(this.contexts, response, this.deliver, this, kind, response, piece);
  };

  private deliver(kind: number, response: NativeResponse, piece: Buffer | undefined): void {
    try {
      if (kind === EVENT_ABORT) response.aborted();
      else if (kind === EVENT_DRAIN) response.drained();
      else if (kind === EVENT_BODY_PIECE) response.req.bodyPiece(piece!);
      else if (kind === EVENT_BODY_END) response.req.bodyEnd();
      else if (kind === EVENT_BODY_TRAILERS) response.req.bodyTrailers(piece!);
      else if (kind === EVENT_BODY_TIMEOUT) this.bodyTooSlow(response);
    } catch (err) {
      // A listener threw ('close', 'drain', or the body stream's): report it with the route, as an error in a handler is.
      this.host.report(err, response.req, kind === EVENT_ABORT ? "in a 'close' listener" : kind === EVENT_DRAIN ? "in a 'drain' listener" : "in a listener of the request body");
    }
  }

  /**
   * The server ran out of file descriptors (told once): node:http says nothing (libuv closes
   * the connections it cannot take, as the addon now does), but a server turning clients away
   * is worth one line.
   */
  private outOfDescriptors(): void {
    const at = this.bound === null ? "" : "path" in this.bound ? ` on ${this.bound.path}` : ` on port ${this.bound.port}`;
    process.emitWarning(
      `the server${at} ran out of file descriptors (EMFILE, the process's open-file limit): connections arriving while none is free are closed unanswered. Raise the limit (ulimit -n, LimitNOFILE= in a systemd unit), or run more processes.`,
      { code: "COG_OUT_OF_DESCRIPTORS" },
    );
  }

  /**
   * A body the app is receiving did not arrive within its requestTimeout (the addon's sweep
   * tells): the app answers the 408 through its error handler, and the connection closes after it.
   */
  private bodyTooSlow(response: NativeResponse): void {
    const req = response.req;
    response.shouldKeepAlive = false;
    this.host.fail(tooSlow("requestTimeout", req[BODY_TIMEOUT] ?? this.config.limits.requestTimeout), req, response);
  }

  /** A response is done with (answered, cut or aborted): the engine has forgotten its request. */
  private readonly forget = (response: NativeResponse, aborted: boolean): void => {
    const request = response.req;
    request.forget(aborted);
    const inFlight = this.inFlight;
    if (inFlight.size !== 0 && inFlight.delete(request[ID]) && inFlight.size === 0) this.idle?.();
  };

  /** Answers one request for a test over a loopback connection to a server of its own, so the test exercises this engine. */
  inject(options: InjectOptions | string): Promise<InjectResponse> {
    const o = injectOptions(options);
    // Over HTTP/1.1, whatever the app serves (an h2c server takes no HTTP/1.1 client).
    const engine = new NativeEngine(this.config.options.http2 === "h2c" ? { ...this.config, options: { ...this.config.options, http2: undefined } } : this.config);
    // The connection comes from 127.0.0.1; a test may say where its request comes from, as on the node engine.
    if (o.remoteAddress !== undefined) engine.Request.prototype[ADDRESS] = o.remoteAddress;
    return injectOverLoopback(engine, o);
  }

  /**
   * Stops accepting (idle connections close at once, busy ones after their response; requests
   * arriving meanwhile get the app's 503), waits for in-flight responses, and cuts what is still
   * busy after `drainMs`.
   */
  async close(drainMs: number): Promise<void> {
    const addon = this.addon;
    if (this.serverId === -1) return;
    const server = this.serverId;
    const deadline = now() + drainMs;
    this.serverId = -1;
    this.bound = null;
    addon.stopListening(server);
    const listening = this.Request.prototype[SERVER];
    if (listening !== null) listening.listening = false;
    // Upgraded connections are their listener's to close, as node:http's close waits for them.
    const tunnels = this.tunnels?.closeAll(drainMs);
    // WebSockets and requests drain together, under one deadline (as on the node engine). The
    // sockets' deadline is set first, so that it fires first: they are cut (and their closes
    // reported) before the requests' deadline cuts every connection left.
    const sockets = this.webSockets?.closeAll(drainMs);
    // Requests clients sent before the drain began, on connections that were idle, are read
    // (the engine took them for busy) and answered before what is in flight is counted.
    await afterPendingReads();
    const requests =
      this.inFlight.size === 0
        ? undefined
        : new Promise<void>((resolve) => {
            const deadline = setTimeout(() => {
              for (const id of addon.destroyConnections(server)) {
                const response = this.inFlight.get(id);
                if (response !== undefined) serve(this.contexts, response, this.deliver, this, EVENT_ABORT, response, undefined);
              }
              resolve();
            }, drainMs);
            this.idle = () => {
              clearTimeout(deadline);
              resolve();
            };
          });
    await Promise.all([sockets, requests, tunnels]);
    // HTTP/3 connections close on their own once their answers are acknowledged (GOAWAY went
    // out with stopListening): the drain waits for that, within its deadline.
    if (this.altSvc !== undefined) await noneLeft(() => addon.quicConnections(server), deadline - now());
    this.idle = null;
    // The responses are done by now, but a connection may still be reading the body of a request
    // answered before it was read: the engine reads and drops the rest, as node:http dumps it,
    // and closes the connection once it has come. Cut before, the bytes left unread would reset
    // it and the client, still sending, would fail with ECONNRESET or EPIPE rather than read its
    // answer (a 405 to an upload, then `server.close()` as supertest calls it).
    await noneLeft(() => addon.openConnections(server), deadline - now());
    addon.destroyConnections(server);
    addon.dispose(server);
  }
}

/**
 * Resolves once `open()` (a stopping server's connections, as the engine counts them) is 0, or
 * after `ms`. The engine tells no JavaScript when a connection closes, so this asks it on a
 * sweep, as the node engine's drain sweeps its idle ones.
 */
function noneLeft(open: () => number, ms: number): Promise<void> | undefined {
  if (ms <= 0 || open() === 0) return undefined;
  return new Promise((resolve) => {
    const done = () => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve();
    };
    const sweep = setInterval(() => open() === 0 && done(), CONNECTION_SWEEP_MS);
    const deadline = setTimeout(done, ms);
  });
}
/** How often a stopping server's drain asks whether its connections are closed (the node engine's sweeps its idle ones as often). */
const CONNECTION_SWEEP_MS = 50;

/**
 * A system error the addon reports ("… (os error 98)") with its code as Node's errors carry it
 * (`EADDRINUSE`), so that code that checks `err.code` after a failed listen works on both engines.
 */
function withErrorCode(err: Error): Error {
  const errno = /\(os error (\d+)\)$/.exec(err.message)?.[1];
  if (errno !== undefined) Object.assign(err, { code: getSystemErrorName(-Number(errno)) });
  return err;
}

/** Before the server listens: no request can arrive. */
const NO_CONTEXTS = null as unknown as RequestContexts;

/** The access log's count of a response's body bytes (`ResponseDone`'s `bytes`): the length of the body `send` wrote, or the Content-Length the app declared; else the bytes streamed. */
function bodyBytesOf(response: NativeResponse): number | null {
  const length = Number(response.bodyLength(true) ?? Number.NaN);
  if (!Number.isNaN(length)) return length;
  return response[STREAMING] ? response[STREAMED_BYTES] : null;
}
