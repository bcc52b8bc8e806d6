import { IncomingMessage } from "node:http";
import { readBody, tooLarge } from "../../body.js";
import { HttpError } from "../../errors.js";
import { withRequestHelpers } from "../../request.js";
import type { BodyCallback } from "../engine.js";

/** The most body bytes a streamed request may push (Infinity: no count kept). */
const STREAM_LIMIT: unique symbol = Symbol("cog.node.streamLimit");
const STREAMED: unique symbol = Symbol("cog.node.streamed");

/**
 * A request on the node engine: Node's own IncomingMessage (the class handed to
 * `http.createServer`) with Cog's helpers, so Express-style middleware works unchanged and no
 * wrapper is allocated.
 */
export class NodeRequest extends withRequestHelpers(IncomingMessage) {
  /** @internal */ declare [STREAM_LIMIT]: number;
  /** @internal */ declare [STREAMED]: number;

  get remoteAddress(): string | undefined {
    return this.socket?.remoteAddress;
  }

  /** @internal */
  receiveBody(length: number, limit: number, done: BodyCallback): void {
    readBody(this, length, limit, done);
  }

  /** @internal The body flows through the stream as Node's parser pushes it; past `limit` bytes the stream fails with a 413. */
  streamBody(_length: number, limit: number): void {
    this[STREAM_LIMIT] = limit;
    this[STREAMED] = 0;
  }

  /** Node's parser pushes each piece of the body here: counted against a streamed body's limit. */
  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    const limit = this[STREAM_LIMIT];
    if (limit !== Infinity && chunk !== null && !this.destroyed) {
      this[STREAMED] += (chunk as Buffer).length;
      if (this[STREAMED] > limit) {
        this.destroy(tooLarge(limit));
        return false;
      }
    }
    return super.push(chunk, encoding);
  }

  /**
   * Node destroys the connection with a request whose body is unread; a body refused for its
   * size keeps it, so that the 413 reaches the client (the response then closes it).
   */
  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    if (err instanceof HttpError && err.status === 413) return callback(err);
    super._destroy(err, callback);
  }
}
NodeRequest.prototype[STREAM_LIMIT] = Infinity;
