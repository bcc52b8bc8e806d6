import { IncomingMessage } from "node:http";
import { readBody } from "../../body.js";
import { withRequestHelpers } from "../../request.js";
import type { BodyCallback } from "../engine.js";

/**
 * A request on the node engine: Node's own IncomingMessage (the class handed to
 * `http.createServer`) with Cog's helpers, so Express-style middleware works unchanged and no
 * wrapper is allocated.
 */
export class NodeRequest extends withRequestHelpers(IncomingMessage) {
  get remoteAddress(): string | undefined {
    return this.socket?.remoteAddress;
  }

  get encrypted(): boolean {
    return (this.socket as { encrypted?: boolean } | null)?.encrypted === true;
  }

  /** @internal */
  receiveBody(length: number, limit: number, done: BodyCallback): void {
    readBody(this, length, limit, done);
  }
}
