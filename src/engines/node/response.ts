import { ServerResponse, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import { withResponseHelpers, WATCH, type InternalResponse } from "../../response.js";
import type { Request } from "../../request.js";
import { REPORT } from "../../log.js";

/**
 * A response on the node engine: Node's own ServerResponse with Cog's helpers, so
 * Express-style middleware that calls `setHeader` or `write` works unchanged.
 */
export class NodeResponse extends withResponseHelpers(ServerResponse) {
  /** The response begins here, whoever writes it (Node's `end` and `write` call it too): the handler timeout no longer applies. */
  override writeHead(status: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    const own = this as unknown as InternalResponse;
    const watch = own[WATCH];
    if (watch !== null) {
      watch.delete(this);
      own[WATCH] = null;
    }
    return super.writeHead(status, reason as string, headers);
  }

  /**
   * Node's write, except after the response ended or the connection died: Node then emits an
   * 'error' that nothing listens to, which throws and ends the process. Cog logs the mistake
   * (with the route) and drops the chunk.
   */
  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (this.writableEnded || this.destroyed) {
      const req = this.req as unknown as Request;
      req.app[REPORT](new Error(`res.write() after the response ${this.writableEnded ? "ended" : "was cut"}: the chunk was dropped`), req);
      return false;
    }
    return super.write(chunk, encoding as BufferEncoding, callback as () => void);
  }

  /** Node's end, except that a second end with a body is a logged no-op rather than an 'error' that ends the process (as `write`). */
  override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
    if (this.writableEnded && chunk !== undefined && chunk !== null && typeof chunk !== "function") {
      const req = this.req as unknown as Request;
      req.app[REPORT](new Error("res.end() with a body after the response ended: the body was dropped"), req);
      return this;
    }
    return super.end(chunk, encoding as BufferEncoding, callback as () => void);
  }
}
