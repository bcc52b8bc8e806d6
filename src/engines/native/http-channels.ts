import { channel } from "node:diagnostics_channel";
import { EventEmitter } from "node:events";
import { ServerResponse } from "node:http";

/**
 * Node's own HTTP server channels (https://nodejs.org/api/diagnostics_channel.html, "HTTP"),
 * published for the native engine's requests with the objects node:http publishes, so that a
 * tool built on them sees both engines. On the node engine node:http publishes them itself.
 * Each is published only when it has subscribers: a request nobody observes pays two property
 * reads for them.
 */
export const requestStart = channel("http.server.request.start");
export const responseCreated = channel("http.server.response.created");
export const responseFinish = channel("http.server.response.finish");

/**
 * Whether this Node's http server publishes `http.server.response.created` (Node 22.12 and 23.2
 * on; earlier ones never do): the native engine publishes it where node:http does, so that both
 * engines publish the same. Read from ServerResponse's source, where node:http publishes it.
 */
export const publishesResponseCreated = /ResponseCreated|response\.created/.test(ServerResponse.toString());

/**
 * The `server` of the messages: as much of http.Server as a subscriber uses (`address()`,
 * `listening`, and its `request` event); the native engine's server is not a net.Server. While
 * `http.server.request.start` has subscribers, each request reaches the app as node:http hands
 * it over, from the server's `request` event, right after the channel's message: so a tool that
 * wraps the server's `emit` from there (Sentry's HTTP integration does, to run each request in
 * a scope of its own) wraps the native engine's requests too. Unobserved, requests skip it.
 */
export class NativeServer extends EventEmitter {
  listening = true;
  constructor(
    private readonly bound: { readonly host: string; readonly port: number } | { readonly path: string },
    onRequest: (request: never, response: never) => void,
  ) {
    super();
    this.on("request", onRequest as (...args: unknown[]) => void);
  }

  /** As node:http's: the address, or a Unix domain socket's path. */
  address(): { address: string; family: string; port: number } | string {
    const bound = this.bound;
    if ("path" in bound) return bound.path;
    const { host, port } = bound;
    return { address: host, family: host.includes(":") ? "IPv6" : "IPv4", port };
  }
}
