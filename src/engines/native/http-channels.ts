import { channel } from "node:diagnostics_channel";
import { ServerResponse } from "node:http";
import type { Address } from "../engine.js";

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
 * The `server` of the messages: as much of net.Server as a subscriber reads from a message
 * (`address()`, `listening`); the native engine's server is not a net.Server.
 */
export class NativeServer {
  listening = true;
  constructor(private readonly bound: Address) {}

  address(): { address: string; family: string; port: number } {
    const { host, port } = this.bound;
    return { address: host, family: host.includes(":") ? "IPv6" : "IPv4", port };
  }
}
