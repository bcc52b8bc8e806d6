import { createServer as createHttpServer, IncomingMessage, ServerResponse, type Server } from "node:http";
import {
  createSecureServer as createSecureHttp2Server,
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, ListenOptions, Socket } from "node:net";
import { inspectHead } from "./head.js";
import {
  NO_BODY,
  WEBSOCKET,
  type Bound,
  type Engine,
  type EngineConfig,
  type HeadVerdict,
  type InjectOptions,
  type InjectResponse,
  type ListenAt,
  type UpgradeListener,
} from "../contract/engine.js";
import type { NodeWebSockets } from "./websocket.js";
import { acceptQueuedConnections } from "./accept.js";
import { serveByFirstBytes, type Undecided } from "./first-bytes.js";
import { bodyBytesOf } from "./body-bytes.js";
import { answerQueuedToo, idleCloser, lastAnswersClose } from "./drain.js";
import { afterPendingReads } from "../kit/pending-reads.js";
import { answerClientErrors, refusal, type FailBody } from "./client-errors.js";
import { injectInMemory } from "./inject.js";
import { serverTlsOptions, type TlsOptions } from "../../base/tls.js";
import { H2Request, H2Response, Sessions, inspectH2Head, limitRequestTime } from "./http2.js";
import { NodeRequest } from "./request.js";
import { RequestDeadlines } from "./request-time.js";
import { NodeResponse } from "./response.js";
import { queueBehind, writeInSlices } from "./writes.js";
import { closeInStages } from "./linger.js";
import { limitSendTime } from "./send-timeout.js";
import { clearInterval, clearTimeout, setInterval, setTimeout } from "../../base/loop.js";

/** Node's default backlog (511) drops SYNs when thousands of clients connect at once; the kernel caps this at net.core.somaxconn. */
const BACKLOG = 4096;

/**
 * The default engine: Node's own HTTP server, handed Cog's request and response subclasses so
 * that `req`/`res` are real IncomingMessage and ServerResponse objects. Node parses and frames;
 * this engine applies Cog's head rules (head.ts) before handing each request to the app.
 */
export class NodeEngine implements Engine {
  readonly name = "node";
  /** node:http's server; with `tls`, node:https's; with `http2`, node:http2's (see `createServer`). */
  readonly server: Server;
  private readonly listener: (req: NodeRequest | H2Request, res: NodeResponse | H2Response) => void;
  private readonly Request: typeof NodeRequest;
  private readonly Response: typeof NodeResponse;
  /** The app's WebSockets, when it has WebSocket routes (`ws` is loaded only then). */
  private webSockets: NodeWebSockets | null = null;
  /** Whether `close` has begun: answers due say Connection: close (drain.ts). */
  private draining = false;
  /** The HTTP/2 sessions to end on `close`, when serving HTTP/2. */
  private readonly sessions: Sessions | null;
  /** With `http2: "h2c"` and `allowHTTP1`, the connections whose first bytes have not said which protocol they speak. */
  private readonly undecided: Undecided | null;
  /** The listener `handUpgrades` put on the server's 'upgrade' event. */
  private upgrades: UpgradeListener | null = null;

  constructor(private readonly config: EngineConfig) {
    const { limits, strict, host } = config;
    const { dispatch, responseDone } = host;
    const http2 = config.options.http2 !== undefined && config.options.http2 !== false;
    // node:http's server serves HTTP/1.1 beside HTTP/2 (first-bytes.ts).
    const besideH2c = config.options.http2 === "h2c" && config.options.allowHTTP1 === true;
    // Answers written in slices (writes.ts): over node:http without TLS, unless turned off.
    const slicing = (!http2 || besideH2c) && config.options.tls === undefined && (config.options.sliceWrites ?? true);
    // node:http's responses emit 'close' when done or cut, whether or not anyone listens; `once`,
    // since a response handed to a WebSocket is closed by Cog and, on Node 24, by its destroy too.
    const closed =
      responseDone === null
        ? null
        : function (this: NodeResponse | H2Response): void {
            responseDone(this, !this.writableFinished, bodyBytesOf(this));
          };
    const listener = (this.listener = (req: NodeRequest | H2Request, res: NodeResponse | H2Response): void => {
      if (closed !== null) res.once("close", closed);
      // A request pipelined behind one still being answered: Node queues its answer (no socket yet).
      if ((res as NodeResponse).socket === null) {
        if (slicing) queueBehind(req.socket, res);
        if (this.draining) answerQueuedToo(req.socket as Socket);
      }
      let verdict: HeadVerdict;
      const h2 = http2 && req.httpVersionMajor === 2;
      try {
        verdict = h2 ? inspectH2Head(req as H2Request, limits) : inspectHead(req, limits, strict);
      } catch (err) {
        verdict = err as HeadVerdict;
      }
      // Timed once routed: dispatch returns the route's own requestTimeout, if it has one.
      const own = dispatch(req, res, verdict);
      if (typeof verdict === "number" && verdict !== NO_BODY) {
        if (!h2) deadlines.watch(req as NodeRequest, own);
        else if ((own ?? limits.requestTimeout) > 0)
          limitRequestTime(req as H2Request, res as H2Response, own ?? limits.requestTimeout, (err) => host.fail(err, req, res));
      }
    });
    const Request = (this.Request = host.requestClass(NodeRequest));
    const Response = (this.Response = host.responseClass(NodeResponse));
    const { server, sessions, undecided } = createServer(config, Request, Response, listener);
    const failBody: FailBody = (err, req, res) => host.fail(err, req, res);
    const deadlines = new RequestDeadlines(server, limits.requestTimeout, limits.timeoutCheckInterval, failBody);
    this.server = server;
    this.sessions = sessions;
    this.undecided = undecided;
    // Node silently drops headers past maxHeadersCount; keep one more than the limit so Cog sees the excess and answers 431.
    this.server.maxHeadersCount = limits.maxHeaders + 1;
    // Without a listener Node destroys a CONNECT request's socket unanswered; a server that is not a proxy says so.
    this.server.on("connect", refuseConnect);
    answerClientErrors(this.server, limits, failBody);
    if (slicing) writeInSlices(this.server);
    if (!http2) closeInStages(this.server);
    // With http2: true its HTTP/1.1 clients are limited too; an HTTP/2 session writes below the
    // socket's own methods, so the limit leaves its streams alone (h2c alone has no HTTP/1.1 clients).
    if ((config.options.http2 !== "h2c" || besideH2c) && limits.sendTimeout > 0)
      limitSendTime(this.server, limits.sendTimeout, limits.timeoutCheckInterval, config.options.tls !== undefined);
  }

  /** Replaces the TLS certificate and key (or any secure-context option) for new connections, without a restart. */
  setSecureContext(tls: TlsOptions): void {
    (this.server as unknown as TlsServer).setSecureContext(serverTlsOptions(tls));
  }

  /** node:http's own 'upgrade' event does it (it takes upgrades from the 'request' event while it has a listener). */
  handUpgrades(listener: UpgradeListener | null): void {
    if (this.upgrades !== null) this.server.removeListener("upgrade", this.upgrades);
    this.upgrades = listener;
    if (listener !== null) this.server.on("upgrade", listener);
  }

  async listen(at: ListenAt): Promise<Bound> {
    if ("port" in at && at.http3 === true) {
      throw new Error(
        'listen({ http3: true }): HTTP/3 is served by the native engine only (Node has no QUIC), and this app runs on the node engine: make it with new Cog({ engine: "native", tls })',
      );
    }
    if (this.config.host.servesWebSockets && this.webSockets === null) {
      const { NodeWebSockets } = await import("./websocket.js");
      this.webSockets = new NodeWebSockets(this.server, this.listener as never, this.Response as never);
      (this.Request.prototype as unknown as { [WEBSOCKET]: NodeWebSockets })[WEBSOCKET] = this.webSockets;
    }
    if ("path" in at) {
      // Node makes the socket file, refuses one that is there (EADDRINUSE), and removes it on close.
      await listenOn(this.server, { path: at.path, backlog: BACKLOG });
      return { path: at.path };
    }
    await listenOn(this.server, { port: at.port, host: at.host, backlog: BACKLOG });
    if ((this.sessions === null || this.undecided !== null) && this.config.options.tls === undefined && (this.config.options.drainAcceptQueue ?? true))
      acceptQueuedConnections(this.server, this.config.options.server ?? {});
    const address = this.server.address() as AddressInfo;
    return { host: address.address, port: address.port };
  }

  address(): Bound | null {
    const address = this.server.address();
    if (address === null) return null;
    return typeof address === "string" ? { path: address } : { host: address.address, port: address.port };
  }

  inject(options: InjectOptions | string): Promise<InjectResponse> {
    return injectInMemory(this.listener as never, this.Request as never, this.Response as never, options);
  }

  async close(drainMs: number): Promise<void> {
    const server = this.server;
    if (!server.listening) return;
    const sessions = this.sessions;
    // In-flight requests finish, their answers saying Connection: close; their connections are
    // closed as they go idle, and HTTP/2 sessions get GOAWAY (each closes once its open streams
    // are done). See drain.ts.
    this.draining = true;
    lastAnswersClose(server);
    sessions?.closeGracefully();
    const deadline = setTimeout(() => {
      server.closeAllConnections?.();
      sessions?.destroyAll();
    }, drainMs);
    // What clients sent before the drain began (on idle connections, or on connections the
    // kernel completed but Node has not accepted) is read first and answered (503 while the app
    // drains): closing over it would reset those connections, requests unanswered.
    await afterPendingReads();
    this.undecided?.closeAll();
    // Stops accepting; calls back once every connection is gone. Idle connections are closed by
    // drain.ts's closer, which node:http's close calls in place of its own (see idleCloser).
    const closeIdle = idleCloser(server);
    server.closeIdleConnections = closeIdle;
    const closed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    const idleSweep = setInterval(closeIdle, 50);
    try {
      await this.webSockets?.closeAll(drainMs);
      await closed;
    } finally {
      clearInterval(idleSweep);
      clearTimeout(deadline);
    }
  }
}

type Listener = (req: NodeRequest | H2Request, res: NodeResponse | H2Response) => void;
interface TlsServer {
  setSecureContext(options: TlsOptions): void;
}

/**
 * The server for the app's options: node:http; with `tls`, node:https (TLS 1.2+); with
 * `http2: true`, node:http2 over TLS, negotiating h2 or HTTP/1.1 by ALPN (HTTP/1.1 clients are
 * served by node:http's classes, h2 streams by Cog's HTTP/2 ones); with `http2: "h2c"`,
 * cleartext HTTP/2 with prior knowledge, and with `allowHTTP1` node:http beside it, each
 * connection going to one or the other by its first bytes (first-bytes.ts). Every one gets the
 * app's limits and timeouts.
 */
function createServer(
  config: EngineConfig,
  Request: typeof NodeRequest,
  Response: typeof NodeResponse,
  listener: Listener,
): { server: Server; sessions: Sessions | null; undecided: Undecided | null } {
  const { limits, options } = config;
  const http1 = {
    headersTimeout: limits.headersTimeout,
    requestTimeout: limits.requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeout,
    connectionsCheckingInterval: limits.timeoutCheckInterval,
    maxHeaderSize: limits.maxHeaderSize,
    // Cog's head rules refuse it (head.ts), with the JSON body Node's bare 400 lacks.
    requireHostHeader: false,
    ...(options.server ?? {}),
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  };
  const tls = options.tls === undefined ? undefined : serverTlsOptions(options.tls);
  const handle = listener as unknown as (req: IncomingMessage, res: ServerResponse) => void;
  if (options.http2 === undefined || options.http2 === false) {
    const server =
      tls === undefined ? createHttpServer(http1, handle) : createHttpsServer({ handshakeTimeout: limits.headersTimeout, ...http1, ...tls }, handle);
    return { server, sessions: null, undecided: null };
  }
  const h2 = {
    Http2ServerRequest: config.host.requestClass(H2Request) as unknown as typeof Http2ServerRequest,
    Http2ServerResponse: config.host.responseClass(H2Response) as unknown as typeof Http2ServerResponse,
    // Past this many fields Node resets the stream (ENHANCE_YOUR_CALM) before Cog sees it: room
    // for every list within maxHeaderSize (32 bytes a field at least), so Cog answers 431 as on HTTP/1.1.
    maxHeaderListPairs: Math.max(limits.maxHeaders + 5, Math.ceil(limits.maxHeaderSize / 32) + 1),
    settings: { maxHeaderListSize: limits.maxHeaderSize },
  };
  let server: Server;
  // The server whose sessions are HTTP/2's: the one that serves, or beside HTTP/1.1, node:http2's that it hands them.
  let h2Server: Server;
  let undecided: Undecided | null = null;
  if (options.http2 === "h2c") {
    server = h2Server = createHttp2Server(h2, handle as never) as unknown as Server;
    if (options.allowHTTP1 === true) {
      server = createHttpServer(http1, handle);
      undecided = serveByFirstBytes(server, h2Server, limits.headersTimeout);
    }
  } else {
    server = createSecureHttp2Server(
      {
        handshakeTimeout: limits.headersTimeout,
        ...h2,
        ...tls!,
        allowHTTP1: true,
        Http1IncomingMessage: http1.IncomingMessage,
        Http1ServerResponse: http1.ServerResponse,
      },
      handle as never,
    ) as unknown as Server;
    // Its HTTP/1.1 clients are served by node:http's connection handling, which reads its limits
    // and timeouts from the server object, where node:http2 puts its own (60 s for the headers,
    // 5 min for a request): the app's replace them.
    const { IncomingMessage: _request, ServerResponse: _response, ...limitsOfHttp1 } = http1;
    Object.assign(server, limitsOfHttp1);
    h2Server = server;
  }
  // A session idle this long is closed, as node:http closes an idle keep-alive connection.
  h2Server.setTimeout(limits.keepAliveTimeout);
  const sessions = new Sessions(limits.keepAliveTimeout, limits.timeoutCheckInterval);
  h2Server.on("connection", sessions.connection);
  h2Server.on("session", (session: Http2Session) => sessions.track(session));
  h2Server.on("stream", sessions.stream);
  h2Server.on("timeout", sessions.idle);
  return { server, sessions, undecided };
}

function listenOn(server: Server, options: ListenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options, () => {
      server.removeListener("error", reject);
      resolve();
    });
  });
}

/** RFC 9110 §15.6.2: a method the server does not implement gets 501. The socket is ours now, errors included. */
function refuseConnect(_req: unknown, socket: Socket): void {
  socket.on("error", () => socket.destroy());
  socket.end(refusal({ status: 501, message: "CONNECT is not supported by this server" }));
}
