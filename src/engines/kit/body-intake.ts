// How both engines take a request's body in: buffered whole, or counted as it streams, within
// the route's limit (413 past it). The contract's `receiveBody`/`streamBody` (engines/contract/).
import { HttpError } from "../../base/errors.js";
import { STREAMED, STREAM_LIMIT } from "../../base/symbols.js";
import type { BodyCallback } from "../contract/engine.js";

/**
 * Collects a request body's chunks, refusing more than `limit` bytes: a
 * declared Content-Length over the limit is refused before anything is read,
 * and a chunked body that grows past it stops being collected at that point
 * (the caller answers 413 and closes the connection rather than draining the
 * rest). `done` is called at most once; never if the client goes away
 * (its reader then stops feeding it). Every engine's body reader feeds one of these.
 */
export class BodyCollector {
  private readonly chunks: Buffer[] = [];
  private received = 0;
  /** Set once `done` was called or the client went away: later chunks are ignored. */
  finished = false;

  constructor(
    length: number,
    private readonly limit: number,
    private readonly done: BodyCallback,
  ) {
    if (length > limit) this.refuse();
  }

  /** Takes a chunk the caller may keep (engines whose buffers are reused must copy first). */
  add(chunk: Buffer): void {
    if (this.finished) return;
    if (this.received + chunk.length > this.limit) return this.refuse();
    if (chunk.length > 0) this.chunks.push(chunk);
    this.received += chunk.length;
  }

  /** The body is complete. */
  end(): void {
    if (this.finished) return;
    this.finished = true;
    const chunks = this.chunks;
    this.done(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.received));
  }

  private refuse(): void {
    this.finished = true;
    this.done(tooLarge(this.limit), null);
  }
}

export interface StreamCount {
  /** The most body bytes a streamed request may push (Infinity: no count kept). */
  [STREAM_LIMIT]: number;
  /** Bytes of the body streamed so far. */
  [STREAMED]: number;
}

/** Counts a piece of a streamed body; past the limit the request fails with a 413, and true says to drop the piece. */
export function overStreamLimit(req: StreamCount & { destroy(error: Error): unknown }, bytes: number): boolean {
  req[STREAMED] += bytes;
  const limit = req[STREAM_LIMIT];
  if (req[STREAMED] <= limit) return false;
  req.destroy(tooLarge(limit));
  return true;
}

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, `Request body is larger than the limit of ${limit} bytes; raise the bodyLimit option to accept it`);
}
