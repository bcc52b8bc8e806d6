import { createServer, ServerResponse, type RequestListener, type Server, type ServerOptions } from "node:http";
import type { AddressInfo, Server as NetServer, Socket } from "node:net";
import type { Limits } from "../limits.js";
import { CogRequest } from "../request.js";
import { CogResponse } from "../response.js";
import type { Address, Dispatch, Engine } from "./engine.js";
import { listenWithAcceptors } from "./node-acceptors.js";

/**
 * The default engine: Node's own HTTP server, handed Cog's request and
 * response subclasses so that `req`/`res` are real IncomingMessage and
 * ServerResponse objects.
 */
export class NodeEngine implements Engine {
  readonly server: Server;
  private readonly options: ServerOptions;
  /** More listening sockets on the same port (see node-acceptors.ts); closed with the server. */
  private acceptors: NetServer[] = [];

  constructor(dispatch: Dispatch, limits: Limits, options: ServerOptions = {}) {
    this.options = options;
    this.server = createServer(
      {
        headersTimeout: limits.headersTimeout,
        requestTimeout: limits.requestTimeout,
        keepAliveTimeout: limits.keepAliveTimeout,
        connectionsCheckingInterval: limits.timeoutCheckInterval,
        maxHeaderSize: limits.maxHeaderSize,
        requireHostHeader: true,
        ...options,
        IncomingMessage: CogRequest,
        // Node's typings want a ServerResponse class exactly; CogResponse is one, with more.
        ServerResponse: CogResponse as unknown as typeof ServerResponse,
      },
      dispatch as unknown as RequestListener,
    );
    // Node silently drops headers past maxHeadersCount; keep one more than the limit so Cog sees the excess and answers 431.
    this.server.maxHeadersCount = limits.maxHeaders + 1;
    // Without a listener Node destroys a CONNECT request's socket unanswered; a server that is not a proxy says so.
    this.server.on("connect", refuseConnect);
  }

  async listen(port: number, host: string | undefined): Promise<Address> {
    this.acceptors = await listenWithAcceptors(this.server, this.options, port, host);
    const address = this.server.address() as AddressInfo;
    return { host: address.address, port: address.port };
  }

  async close(drainMs: number): Promise<void> {
    const server = this.server;
    if (!server.listening) return;
    // Each listener calls back once the connections it accepted are gone.
    const listeners: NetServer[] = [server, ...this.acceptors];
    this.acceptors = [];
    // In-flight requests finish; their keep-alive connections are closed as they go idle.
    const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => server.closeAllConnections(), drainMs);
    const closed = listeners.map((l) => new Promise<void>((resolve, reject) => l.close((err) => (err ? reject(err) : resolve()))));
    server.closeIdleConnections();
    try {
      await Promise.all(closed);
    } finally {
      clearInterval(idleSweep);
      clearTimeout(deadline);
    }
  }
}

/** RFC 9110 §15.6.2: a method the server does not implement gets 501. The socket is ours now, errors included. */
function refuseConnect(_req: unknown, socket: Socket): void {
  const body = "CONNECT is not supported: this server is not a proxy";
  socket.on("error", () => socket.destroy());
  socket.end(`HTTP/1.1 501 Not Implemented\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
}
