import { AsyncResource } from "node:async_hooks";
import { IncomingMessage, type IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { BodyCollector, overStreamLimit, type StreamCount } from "../kit/body-intake.js";
import { HttpError } from "../../base/errors.js";
import { joinedHeader, rawHeader } from "../kit/headers.js";
import type { BodyCallback } from "../contract/engine.js";
import { STREAMED, STREAM_LIMIT } from "../../base/symbols.js";
import { FOLLOWING_BODY } from "../contract/engine.js";
import { nextTick } from "../../base/loop.js";

/**
 * What the contract's `EngineRequestMethods` asks of a request on the node engine, over the
 * Readable that Node feeds (node:http's IncomingMessage, node:http2's Http2ServerRequest): its
 * body buffered for Cog's parsers, or streamed to the handler with the route's limit counted as
 * Node pushes each piece; its headers read from Node's own stores.
 */
export function withNodeRequestMethods<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a base class for `extends`: TypeScript takes only `any[]` constructor arguments there (TS2545)
  Base extends abstract new (...args: any[]) => Readable & { socket?: unknown; headers: IncomingHttpHeaders; rawHeaders: string[] },
>(Base: Base) {
  abstract class NodeRequestMethods extends Base {
    get remoteAddress(): string | undefined {
      return (this.socket as { remoteAddress?: string } | null | undefined)?.remoteAddress;
    }

    get encrypted(): boolean {
      return (this.socket as { encrypted?: boolean } | null | undefined)?.encrypted === true;
    }

    /** @internal The contract's `headerValue`: read from Node's `headers`. */
    headerValue(name: string): string | undefined {
      return joinedHeader(this.headers, name);
    }

    /** @internal The contract's `firstHeader`: scanned from Node's `rawHeaders`. */
    firstHeader(name: string): string | undefined {
      return rawHeader(this, name);
    }

    /** @internal The contract's `mayBeConditional`: Node's parser can't tell cheaply, so maybe. */
    mayBeConditional(): boolean {
      return true;
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
  (NodeRequestMethods.prototype as unknown as StreamCount)[STREAM_LIMIT] = Infinity;
  return NodeRequestMethods;
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

const FOLLOWING = Symbol("following body");

/**
 * A request on the node engine: Node's own IncomingMessage with what the contract asks of it. The
 * host makes its class from this one with Cog's helpers (`EngineHost.requestClass`), and that is
 * the class handed to `http.createServer`: Express-style middleware works unchanged and no
 * wrapper is allocated.
 */
export class NodeRequest extends withNodeRequestMethods(IncomingMessage) {
  /** @internal The body being kept from the stream for FOLLOWING_BODY, until it is whole or known not to be. */
  declare [FOLLOWING]: Following | undefined;

  /** The engine contract's body that follows the head (see `FOLLOWING_BODY`). */
  [FOLLOWING_BODY](length: number, done: (body: Buffer | undefined) => void): boolean {
    const state = (this as unknown as Streamed)._readableState;
    if (this[FOLLOWING] !== undefined || this.complete || this.destroyed || state.flowing !== null || state.length !== 0 || state.ended) return false;
    const following: Following = { length, pieces: [], received: 0, ended: false, ticked: false, context: null, done };
    this[FOLLOWING] = following;
    // node:http parses the body that came in the same read as the head once the app's turn with
    // the head is over, and before this tick; the message's end comes after it
    // (test/engines/node/following-body.test.ts holds the order).
    nextTick(checkWhole, this, following);
    return true;
  }

  /** Node pushes each piece of the body here, and null at its end: kept while a FOLLOWING_BODY waits for them. */
  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    const following = this[FOLLOWING];
    if (following === undefined) return super.push(chunk, encoding);
    if (chunk !== null) {
      following.pieces.push(chunk as Buffer);
      following.received += (chunk as Buffer).length;
    } else {
      following.ended = true;
      // Whole at the tick after the head (else it was given back then): taken now.
      if (following.ticked) take(this, following);
    }
    return true;
  }
}
NodeRequest.prototype[FOLLOWING] = undefined;

interface Streamed {
  _readableState: { flowing: boolean | null; length: number; ended: boolean };
  _consuming: boolean;
}

interface Following {
  length: number;
  pieces: Buffer[];
  received: number;
  /** Node ended the stream (the message is complete). */
  ended: boolean;
  /** The tick after the head has passed, and the body was whole then. */
  ticked: boolean;
  /** The asker's async context, for `done` called from node:http's end of the message. */
  context: AsyncResource | null;
  done: (body: Buffer | undefined) => void;
}

/** On the tick after the head: a body not whole by now is given back to the stream (and to the taker, nothing); a whole one is taken at its end. */
function checkWhole(req: NodeRequest, following: Following): void {
  if (following.received !== following.length || req.destroyed) {
    req[FOLLOWING] = undefined;
    if (!req.destroyed) {
      for (const piece of following.pieces) req.push(piece);
      if (following.ended) req.push(null);
    }
    following.done(undefined);
  } else if (following.ended) {
    take(req, following);
  } else {
    following.ticked = true;
    // `done` then runs from node:http's parser: in the asker's async context (AsyncLocalStorage's
    // store, as raw-body keeps it for body-parser), taken here, on a tick of the asker's.
    following.context = new AsyncResource("COG_FOLLOWING_BODY");
  }
}

/**
 * The whole body to its taker (who sets `_body`), and the stream left as a reader leaves it: ended
 * empty, its 'end' emitted before the taker goes on, consumed (so node:http does not dump it
 * after the response).
 */
function take(req: NodeRequest, following: Following): void {
  req[FOLLOWING] = undefined;
  req.push(null);
  (req as unknown as Streamed)._consuming = true;
  req.read(0);
  const { pieces, received } = following;
  const body = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, received);
  if (following.context === null) following.done(body);
  else following.context.runInAsyncScope(following.done, null, body);
}
