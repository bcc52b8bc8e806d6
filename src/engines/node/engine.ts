import { createServer, ServerResponse, type RequestListener, type Server, type ServerOptions } from "node:http";
import type { AddressInfo, ListenOptions, Socket } from "node:net";
import type { Limits } from "../../limits.js";
import { CogRequest, withSettings, type RequestSettings } from "../../request.js";
import { CogResponse } from "../../response.js";
import type { Address, Dispatch, Engine } from "../engine.js";
import { acceptQueuedConnections } from "./accept.js";
import { writeInSlices } from "./writes.js";

/** The node engine's mechanisms that rely on Node's internals, each of which can be turned off (see `CogOptions`). */
export interface NodeEngineSwitches {
  /** Hold answers and write them a slice at a time (./writes.ts). Default true. */
  sliceWrites?: boolean;
  /** On Linux with the addon, accept every queued connection when Node accepts one (./accept.ts). Default true. */
  drainAcceptQueue?: boolean;
}

/** Node's default backlog (511) drops SYNs when thousands of clients connect at once; the kernel caps this at net.core.somaxconn. */
const BACKLOG = 4096;

/**
 * The default engine: Node's own HTTP server, handed Cog's request and
 * response subclasses so that `req`/`res` are real IncomingMessage and
 * ServerResponse objects.
 */
export class NodeEngine implements Engine {
  readonly server: Server;
  private readonly options: ServerOptions;
  private readonly drainAcceptQueue: boolean;

  constructor(dispatch: Dispatch, limits: Limits, settings: RequestSettings, options: ServerOptions = {}, switches: NodeEngineSwitches = {}) {
    this.options = options;
    this.drainAcceptQueue = switches.drainAcceptQueue ?? true;
    this.server = createServer(
      {
        headersTimeout: limits.headersTimeout,
        requestTimeout: limits.requestTimeout,
        keepAliveTimeout: limits.keepAliveTimeout,
        connectionsCheckingInterval: limits.timeoutCheckInterval,
        maxHeaderSize: limits.maxHeaderSize,
        requireHostHeader: true,
        ...options,
        IncomingMessage: withSettings(CogRequest, settings),
        // Node's typings want a ServerResponse class exactly; CogResponse is one, with more.
        ServerResponse: CogResponse as unknown as typeof ServerResponse,
      },
      dispatch as unknown as RequestListener,
    );
    // Node silently drops headers past maxHeadersCount; keep one more than the limit so Cog sees the excess and answers 431.
    this.server.maxHeadersCount = limits.maxHeaders + 1;
    // Without a listener Node destroys a CONNECT request's socket unanswered; a server that is not a proxy says so.
    this.server.on("connect", refuseConnect);
    if (switches.sliceWrites ?? true) writeInSlices(this.server);
  }

  async listen(port: number, host: string | undefined): Promise<Address> {
    await listenOn(this.server, { port, host, backlog: BACKLOG });
    if (this.drainAcceptQueue) acceptQueuedConnections(this.server, this.options);
    const address = this.server.address() as AddressInfo;
    return { host: address.address, port: address.port };
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
