import { createServer as createNetServer, type Server as NetServer } from "node:net";
import type { Server, ServerOptions } from "node:http";

/**
 * Extra listening sockets on the server's port, so that accepting keeps pace with a busy loop.
 *
 * Why: in the libuv of Node 20 and later (libuv/libuv#3696) a listening socket accepts one connection per
 * readiness event. Under load one loop iteration walks about a thousand ready sockets, so a
 * burst of new clients (the seeds' 2500 connections) waits seconds in the kernel's queue and
 * times out while the server is busy with the others. With SO_REUSEPORT the kernel spreads new
 * connections over several listening sockets, each accepting one per iteration.
 *
 * Only where Node offers `reusePort` (Linux, Node 22.12+ and 23.1+); elsewhere a single
 * listener is all there is. The kernel admits only the same user into a reuse-port group, and
 * `ensurePortFree` keeps a second Cog from silently joining the group of a first one.
 */
// Measured on one core with the seeds' 2500 x 4 burst: 1 listener left ~1k client timeouts, 8 and 16 none.
export const ACCEPTORS = reusePortSupported() ? 8 : 1;

function reusePortSupported(): boolean {
  if (process.platform !== "linux") return false;
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/**
 * Opens `count - 1` more listeners on `port` that hand their connections to `server`, with the
 * socket settings http.Server gives its own (`options` are the server's). `server.maxConnections`
 * counts only the server's own listener.
 */
export async function openAcceptors(server: Server, options: ServerOptions, port: number, host: string | undefined, count: number): Promise<NetServer[]> {
  const acceptors: NetServer[] = [];
  const sockets = { allowHalfOpen: true, noDelay: options.noDelay ?? true, keepAlive: options.keepAlive, keepAliveInitialDelay: options.keepAliveInitialDelay };
  try {
    for (let i = 1; i < count; i++) {
      const acceptor = createNetServer(sockets, (socket) => server.emit("connection", socket));
      acceptors.push(acceptor);
      await new Promise<void>((resolve, reject) => {
        acceptor.once("error", reject);
        acceptor.listen({ port, host, backlog: 4096, reusePort: true } as Parameters<NetServer["listen"]>[0], () => {
          acceptor.removeListener("error", reject);
          // An accept that fails later (out of descriptors) is the server's error, as on its own listener.
          acceptor.on("error", (err) => server.emit("error", err));
          resolve();
        });
      });
    }
  } catch (err) {
    for (const acceptor of acceptors) acceptor.close();
    throw err;
  }
  return acceptors;
}

/**
 * Binds `port` once without reusePort and lets it go: a busy port (another server, or another Cog's
 * reuse-port group) fails here with EADDRINUSE, as it would without acceptors, instead of the
 * kernel quietly sharing the port between two apps.
 */
export function ensurePortFree(port: number, host: string | undefined): Promise<void> {
  if (port === 0) return Promise.resolve(); // the kernel picks a free one
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", reject);
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
