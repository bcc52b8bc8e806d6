import cluster from "node:cluster";
import { createServer as createNetServer, type ListenOptions, type Server as NetServer } from "node:net";
import type { Server, ServerOptions } from "node:http";
import { nativeUnavailable, loadNative } from "./native-load.js";

/**
 * Several listening sockets on the server's port, so that accepting keeps pace with a busy loop.
 *
 * Why: in the libuv of Node 20 and later (libuv/libuv#3696) a listening socket accepts one connection per
 * readiness event. Under load one loop iteration walks about a thousand ready sockets, so a
 * burst of new clients (the seeds' 2500 connections) waits seconds in the kernel's queue and
 * times out while the server is busy with the others. With SO_REUSEPORT the kernel spreads new
 * connections over several listening sockets, each accepting one per iteration.
 *
 * Node offers `reusePort` on Linux from 22.12 and 23.1. On an older Node (20) Cog's native addon,
 * where it is built, opens the sockets and Node listens on their descriptors. Elsewhere, and in
 * cluster workers (whose primary owns the port), one listener is all there is. The kernel admits
 * only the same user into a reuse-port group, and `ensurePortFree` keeps a second Cog from
 * silently joining the group of a first one.
 */
// Measured on one core with the seeds' 2500 x 4 burst (client timeouts): Node 24, 1 listener ~1k, 8 none;
// Node 20, whose loop iterations are longer, 8 600-2,500, 16 8, 32 none. Whether connections handed over
// from 31 extra listeners cost anything per request is not settled: a Node 24 A/B (1 vs 32) was inside the noise.
const ACCEPTORS = 32;
/** Node's default backlog (511) drops SYNs when thousands of clients connect at once; the kernel caps this at net.core.somaxconn. */
const BACKLOG = 4096;

/** Where reuse-port listeners come from here: Node itself, Cog's addon, or nowhere. */
type ReusePort = "node" | "addon" | null;
let source: ReusePort | undefined;

/** Whether this Node's `listen` takes `reusePort` (added in 22.12 and 23.1; honoured on Linux). */
export function nodeHasReusePort(): boolean {
  const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

function reusePortSource(): ReusePort {
  if (source !== undefined) return source;
  if (process.platform !== "linux" || cluster.isWorker) source = null;
  else if (nodeHasReusePort()) source = "node";
  else source = nativeUnavailable() === null ? "addon" : null;
  return source;
}

/**
 * Makes `server` listen on `port`, plus the extra acceptors that hand their connections to it,
 * with the socket settings http.Server gives its own (`options` are the server's). Returns the
 * acceptors, which the caller closes with the server. `server.maxConnections` counts only the
 * server's own listener.
 */
export async function listenWithAcceptors(server: Server, options: ServerOptions, port: number, host: string | undefined): Promise<NetServer[]> {
  const reusePort = reusePortSource();
  if (reusePort !== null) await ensurePortFree(port, host);
  await listenOn(server, listenOptions(reusePort, port, host));
  if (reusePort === null) return [];
  const bound = (server.address() as { port: number }).port;
  const acceptors: NetServer[] = [];
  const sockets = { allowHalfOpen: true, noDelay: options.noDelay ?? true, keepAlive: options.keepAlive, keepAliveInitialDelay: options.keepAliveInitialDelay };
  try {
    for (let i = 1; i < ACCEPTORS; i++) {
      const acceptor = createNetServer(sockets, (socket) => server.emit("connection", socket));
      acceptors.push(acceptor);
      await listenOn(acceptor, listenOptions(reusePort, bound, host));
      // An accept that fails later (out of descriptors) is the server's error, as on its own listener.
      acceptor.on("error", (err) => server.emit("error", err));
    }
  } catch (err) {
    server.close();
    for (const acceptor of acceptors) acceptor.close();
    throw err;
  }
  return acceptors;
}

/** Where a listener listens: an address, or the descriptor of a socket the addon opened. */
type Listening = ListenOptions | { fd: number; backlog: number };

function listenOptions(reusePort: ReusePort, port: number, host: string | undefined): Listening {
  if (reusePort === "addon") return { fd: addonListener(port, host), backlog: BACKLOG };
  return { port, host, backlog: BACKLOG, ...(reusePort === "node" && { reusePort: true }) };
}

/** A reuse-port socket from Cog's addon; like Node, no host means "::" (IPv4 too), or 0.0.0.0 where there is no IPv6. */
function addonListener(port: number, host: string | undefined): number {
  const addon = loadNative();
  if (host !== undefined) return addon.reusePortListener(host, port);
  try {
    return addon.reusePortListener("::", port);
  } catch {
    return addon.reusePortListener("0.0.0.0", port);
  }
}

function listenOn(server: NetServer, options: Listening): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options as ListenOptions, () => {
      server.removeListener("error", reject);
      resolve();
    });
  });
}

/**
 * Binds `port` once without reusePort and lets it go: a busy port (another server, or another Cog's
 * reuse-port group) fails here with EADDRINUSE, as it would without acceptors, instead of the
 * kernel quietly sharing the port between two apps.
 */
function ensurePortFree(port: number, host: string | undefined): Promise<void> {
  if (port === 0) return Promise.resolve(); // the kernel picks a free one
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", reject);
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
