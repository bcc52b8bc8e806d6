import { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { BodyCollector, overStreamLimit, type StreamCount } from "../../body.js";
import { HttpError } from "../../errors.js";
import { withRequestHelpers } from "../../request.js";
import type { BodyCallback } from "../../body.js";
import { BODY_TIMEOUT, STREAMED, STREAM_LIMIT } from "../../symbols.js";

/** A route's own requestTimeout, set by the app as it routes the request (see `limitBodyTime`). */
export interface TimedBody {
  [BODY_TIMEOUT]: number | undefined;
}

/**
 * The body side of a request on the node engine, over the Readable that Node feeds (node:http's
 * IncomingMessage, node:http2's Http2ServerRequest): buffered for Cog's parsers, or streamed to
 * the handler with the route's limit counted as Node pushes each piece.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function withNodeBody<Base extends abstract new (...args: any[]) => Readable & { socket?: unknown }>(Base: Base) {
  abstract class NodeBody extends Base {
    get remoteAddress(): string | undefined {
      return (this.socket as { remoteAddress?: string } | null | undefined)?.remoteAddress;
    }

    get encrypted(): boolean {
      return (this.socket as { encrypted?: boolean } | null | undefined)?.encrypted === true;
    }

    /** @internal */
    receiveBody(length: number, limit: number, done: BodyCallback): void {
      readBody(this as never, length, limit, done);
    }

    /** @internal The body flows through the stream as Node pushes it; past `limit` bytes the stream fails with a 413. */
    streamBody(_length: number, limit: number): void {
      const counted = this as unknown as StreamCount;
      counted[STREAM_LIMIT] = limit;
      counted[STREAMED] = 0;
    }

    /** @internal Kept for the engine, which times the body once the app has routed it (see request-time.ts). */
    limitBodyTime(ms: number): void {
      (this as unknown as TimedBody)[BODY_TIMEOUT] = ms;
    }

    /** Node pushes each piece of the body here: counted against a streamed body's limit. */
    override push(chunk: unknown, encoding?: BufferEncoding): boolean {
      const counted = this as unknown as StreamCount;
      if (counted[STREAM_LIMIT] !== Infinity && chunk !== null && !this.destroyed && overStreamLimit(this as never, (chunk as Buffer).length)) return false;
      return super.push(chunk, encoding);
    }

    /**
     * Node destroys the connection (or stream) of a request whose body is unread; a body refused
     * for its size keeps it, so that the 413 reaches the client (the response then closes it).
     */
    override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
      if (err instanceof HttpError && err.status === 413) return callback(err);
      super._destroy(err, callback);
    }
  }
  (NodeBody.prototype as unknown as StreamCount)[STREAM_LIMIT] = Infinity;
  (NodeBody.prototype as unknown as TimedBody)[BODY_TIMEOUT] = undefined;
  return NodeBody;
}

/** The node engine's body reader: Node's request stream into a BodyCollector. */
function readBody(req: IncomingMessage, length: number, limit: number, done: BodyCallback): void {
  const body = new BodyCollector(length, limit, done);
  if (body.finished) return;
  req.on("data", (chunk: Buffer) => {
    body.add(chunk);
    // Over the limit: stop reading; the connection is closed after the 413.
    if (body.finished) req.pause();
  });
  // A client that vanishes mid-body destroys the stream: "end" never comes, so neither does `done`.
  // No "error" listener is needed for that, nor to keep the error from being thrown: Node emits
  // a request's "aborted" error only to listeners.
  req.on("end", () => body.end());
}

/**
 * A request on the node engine: Node's own IncomingMessage (the class handed to
 * `http.createServer`) with Cog's helpers, so Express-style middleware works unchanged and no
 * wrapper is allocated.
 */
export class NodeRequest extends withNodeBody(withRequestHelpers(IncomingMessage)) {}

