import { createServer, IncomingMessage, ServerResponse, type Server } from "node:http";
import type { AddressInfo, ListenOptions, Socket } from "node:net";
import { inspectHead } from "../../head.js";
import { forApp } from "../../request.js";
import { WEBSOCKET, type Address, type Engine, type EngineConfig, type HeadVerdict } from "../engine.js";
import type { NodeWebSockets } from "../../websocket/node.js";
import type { InjectOptions, InjectResponse } from "../../testing.js";
import { acceptQueuedConnections } from "./accept.js";
import { injectInMemory } from "./inject.js";
import { NodeRequest } from "./request.js";
import { NodeResponse } from "./response.js";
import { writeInSlices } from "./writes.js";

/** Node's default backlog (511) drops SYNs when thousands of clients connect at once; the kernel caps this at net.core.somaxconn. */
const BACKLOG = 4096;

/**
 * The default engine: Node's own HTTP server, handed Cog's request and response subclasses so
 * that `req`/`res` are real IncomingMessage and ServerResponse objects. Node parses and frames;
 * this engine applies Cog's head rules (src/head.ts) before handing each request to the app.
 */
export class NodeEngine implements Engine {
  readonly name = "node";
  readonly server: Server;
  private readonly listener: (req: NodeRequest, res: NodeResponse) => void;
  private readonly Request: typeof NodeRequest;
  /** The app's WebSockets, when it has WebSocket routes (`ws` is loaded only then). */
  private webSockets: NodeWebSockets | null = null;

  constructor(private readonly config: EngineConfig) {
    const { dispatch, limits, strict } = config;
    const options = config.options.server ?? {};
    const listener = (this.listener = (req: NodeRequest, res: NodeResponse): void => {
      let verdict: HeadVerdict;
      try {
        verdict = inspectHead(req, limits, strict);
      } catch (err) {
        verdict = err as HeadVerdict;
      }
      dispatch(req, res, verdict);
    });
    const Request = (this.Request = forApp(NodeRequest, config.app, config.settings));
    this.server = createServer<typeof IncomingMessage, typeof ServerResponse>(
      {
        headersTimeout: limits.headersTimeout,
        requestTimeout: limits.requestTimeout,
        keepAliveTimeout: limits.keepAliveTimeout,
        connectionsCheckingInterval: limits.timeoutCheckInterval,
        maxHeaderSize: limits.maxHeaderSize,
        requireHostHeader: true,
        ...options,
        IncomingMessage: Request as unknown as typeof IncomingMessage,
        ServerResponse: NodeResponse as unknown as typeof ServerResponse,
      },
      listener as unknown as (req: IncomingMessage, res: ServerResponse) => void,
    );
    // Node silently drops headers past maxHeadersCount; keep one more than the limit so Cog sees the excess and answers 431.
    this.server.maxHeadersCount = limits.maxHeaders + 1;
    // Without a listener Node destroys a CONNECT request's socket unanswered; a server that is not a proxy says so.
    this.server.on("connect", refuseConnect);
    if (config.options.sliceWrites ?? true) writeInSlices(this.server);
  }

  async listen(port: number, host: string | undefined): Promise<Address> {
    if (this.config.app.servesWebSockets && this.webSockets === null) {
      const { NodeWebSockets } = await import("../../websocket/node.js");
      this.webSockets = new NodeWebSockets(this.server, this.listener as never, NodeResponse as never);
      (this.Request.prototype as unknown as { [WEBSOCKET]: NodeWebSockets })[WEBSOCKET] = this.webSockets;
    }
    await listenOn(this.server, { port, host, backlog: BACKLOG });
    if (this.config.options.drainAcceptQueue ?? true) acceptQueuedConnections(this.server, this.config.options.server ?? {});
    const address = this.server.address() as AddressInfo;
    return { host: address.address, port: address.port };
  }

  inject(options: InjectOptions | string): Promise<InjectResponse> {
    return injectInMemory(this.listener as never, this.Request as never, NodeResponse as never, options);
  }

  async close(drainMs: number): Promise<void> {
    const server = this.server;
    if (!server.listening) return;
    // In-flight requests finish; their keep-alive connections are closed as they go idle.
    const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => server.closeAllConnections(), drainMs);
    // Calls back once every connection is gone.
    const closed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    server.closeIdleConnections();
    try {
      await this.webSockets?.closeAll(drainMs);
      await closed;
    } finally {
      clearInterval(idleSweep);
      clearTimeout(deadline);
    }
  }
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
  const body = "CONNECT is not supported: this server is not a proxy";
  socket.on("error", () => socket.destroy());
  socket.end(`HTTP/1.1 501 Not Implemented\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
}
