import { createServer, type Server, type ServerOptions } from "node:http";
import type { AddressInfo } from "node:net";
import { CogRequest } from "../request.js";
import { CogResponse } from "../response.js";
import type { Address, Dispatch, Engine } from "./engine.js";

/**
 * The default engine: Node's own HTTP server, handed Cog's request and
 * response subclasses so that `req`/`res` are real IncomingMessage and
 * ServerResponse objects.
 */
export class NodeEngine implements Engine {
  readonly server: Server<typeof CogRequest, typeof CogResponse>;

  constructor(dispatch: Dispatch, options: ServerOptions = {}) {
    this.server = createServer({ ...options, IncomingMessage: CogRequest, ServerResponse: CogResponse }, dispatch);
  }

  listen(port: number, host: string | undefined): Promise<Address> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once("error", onError);
      this.server.listen(port, host, () => {
        this.server.removeListener("error", onError);
        const address = this.server.address() as AddressInfo;
        resolve({ host: address.address, port: address.port });
      });
    });
  }

  close(drainMs: number): Promise<void> {
    const server = this.server;
    if (!server.listening) return Promise.resolve();
    return new Promise((resolve, reject) => {
      // In-flight requests finish; their keep-alive connections are closed as they go idle.
      const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
      const deadline = setTimeout(() => server.closeAllConnections(), drainMs);
      server.close((err) => {
        clearInterval(idleSweep);
        clearTimeout(deadline);
        if (err) reject(err);
        else resolve();
      });
      server.closeIdleConnections();
    });
  }
}
