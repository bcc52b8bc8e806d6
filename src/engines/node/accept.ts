import cluster from "node:cluster";
import { Socket } from "node:net";
import type { Server, ServerOptions } from "node:http";
import { loadNative, nativeUnavailable } from "../kit/addon.js";

/**
 * Accepting every connection that waits, not one per wakeup.
 *
 * Why: the libuv of Node 20 and later (libuv/libuv#3696) accepts one connection per readiness
 * event of the listening socket. Under load one loop iteration walks about a thousand ready
 * sockets, so a burst of new clients (the seeds' 2500 at once) waits seconds in the kernel's
 * queue and times out while the server is busy with the others (Node 20, 2500 x 4: thousands of
 * client timeouts). So on each connection Node accepts, Cog's addon accepts the rest of the queue
 * too and hands each socket to the server as if Node had accepted it.
 *
 * Measured against the alternative, several SO_REUSEPORT listeners on the port: those spread a
 * burst as well, but every connection that came through an extra listener then cost 5-7% more
 * CPU per request, for its whole life (the same server measured side by side, sharing a core;
 * the cause lies below JavaScript, and JS-identical sockets showed it too). Draining the one
 * queue costs nothing per request.
 *
 * Only where the addon loads (Linux, prebuilt or built from source), and not in cluster workers,
 * whose primary accepts for them. Elsewhere Node's own accepting is all there is.
 */
// At most this many per drain, so that a flood can't hold the loop in one go; the next
// connection Node accepts drains again.
const MAX_PER_DRAIN = 1024;

/** What of Node's net.Server bookkeeping an adopted socket joins, as one Node accepted would. */
interface ServerInternals {
  _handle: { fd?: number } | null;
  _connections: number;
}

/** Starts draining the accept queue of `server`, which is listening; `options` are the server's. */
export function acceptQueuedConnections(server: Server, options: ServerOptions): void {
  if (process.platform !== "linux" || cluster.isWorker || nativeUnavailable() !== null) return;
  const internals = server as unknown as ServerInternals;
  const fd = internals._handle?.fd;
  if (typeof fd !== "number" || fd < 0) return;
  const addon = loadNative();
  let draining = false;
  // First among the listeners, so the queue is emptied before Node sets up the socket that woke it.
  server.prependListener("connection", () => {
    // The sockets handed over below come back through this event.
    if (draining || !server.listening) return;
    draining = true;
    try {
      for (const queued of addon.acceptQueued(fd, MAX_PER_DRAIN)) adopt(server, internals, options, queued);
    } finally {
      draining = false;
    }
  });
}

/** Hands an accepted descriptor to the server with the settings and counting Node gives the connections it accepts. */
function adopt(server: Server, internals: ServerInternals, options: ServerOptions, fd: number): void {
  const socket = new Socket({ fd, readable: true, writable: true, allowHalfOpen: true });
  if (server.maxConnections !== undefined && server.maxConnections !== null && internals._connections >= server.maxConnections) {
    server.emit("drop", {
      localAddress: socket.localAddress,
      localPort: socket.localPort,
      remoteAddress: socket.remoteAddress,
      remotePort: socket.remotePort,
      remoteFamily: socket.remoteFamily,
    });
    socket.destroy();
    return;
  }
  if (options.noDelay ?? true) socket.setNoDelay(true);
  if (options.keepAlive === true) socket.setKeepAlive(true, options.keepAliveInitialDelay);
  // Counted on the server, so that close() waits for it and maxConnections sees it; Node's
  // socket uncounts itself from `_server` when it is destroyed.
  internals._connections++;
  (socket as unknown as { _server: Server })._server = server;
  server.emit("connection", socket);
}
