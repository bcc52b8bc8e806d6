import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { bodyTooSlow, type FailBody } from "./client-errors.js";
import { clearTimeout, setTimeout } from "../../base/loop.js";

/**
 * A route's own `requestTimeout` over HTTP/1.1 on node:http. Node times every body against one
 * server-wide `server.requestTimeout` (its connections check), so the first request of a route
 * whose value is longer (or 0: none) raises the server's to it; from then on Node no longer holds
 * the other bodies to the app's value, and each is timed here instead, as each body of a route
 * with a value of its own is. Until a route asks, nothing is timed here: Node's check is all.
 * Past the time, the same 408 as Node's check gives (`bodyTooSlow`), naming the value.
 */
export class RequestDeadlines {
  private raised = false;

  constructor(
    private readonly server: Server,
    /** The app's `requestTimeout`. */
    private readonly appTimeout: number,
    /** How long the app has to answer the 408 before the engine does (as Node's next check). */
    private readonly checkInterval: number,
    private readonly fail: FailBody,
  ) {}

  /**
   * After the app routed a request whose body is still arriving: `own` is its route's
   * requestTimeout, undefined without one.
   */
  watch(req: IncomingMessage, own: number | undefined): void {
    if (own === undefined && !this.raised) return;
    const ms = own ?? this.appTimeout;
    const server = this.server;
    if (server.requestTimeout !== 0 && (ms === 0 || ms > server.requestTimeout)) {
      server.requestTimeout = ms;
      this.raised = true;
    }
    if (ms === 0 || req.complete) return;
    const timer = setTimeout(() => {
      const socket = req.socket as Socket & { _httpMessage?: ServerResponse | null };
      const res = socket._httpMessage;
      if (req.complete || res == null) return;
      bodyTooSlow(socket, res, ms, this.fail);
      setTimeout(() => req.complete || bodyTooSlow(socket, res, ms, this.fail), this.checkInterval).unref();
    }, ms);
    const clear = (): void => clearTimeout(timer);
    req.once("end", clear);
    req.once("close", clear);
  }
}
