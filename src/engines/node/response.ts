import { ServerResponse, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import type { FileHandle } from "node:fs/promises";
import { SEND_FILE } from "../contract/engine.js";
import { chunkBytes, destroyedWith, endAfterEnd, implicitHead, writeAfterEnd } from "../kit/compat.js";
import { streamFileRange } from "../kit/range-stream.js";
import { ENDING, WRITTEN } from "../../base/symbols.js";

/**
 * A response on the node engine: Node's own ServerResponse, kept to the contract (and alive
 * through mistakes Node would throw on), so Express-style middleware that calls `setHeader` or
 * `write` works unchanged. The host makes its class from this one with Cog's helpers
 * (`EngineHost.responseClass`).
 */
export class NodeResponse extends ServerResponse {
  /** @internal */ declare [ENDING]: boolean;
  /** @internal Bytes of a streamed body written so far; -1 until the first `write` (see body-bytes.ts). */ declare [WRITTEN]: number;

  override writeHead(status: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    try {
      return super.writeHead(status, reason as string, headers);
    } catch (err) {
      // Node marks a 204 or 304 bodiless before it checks the headers: the error response that
      // replaces this one has a body.
      (this as unknown as { _hasBody: boolean })._hasBody = true;
      throw err;
    }
  }

  /** The engine contract's file body (see `SEND_FILE`): node:http has no zero-copy path, so the range is streamed through `write`. */
  [SEND_FILE](read: Buffer, file: FileHandle, position: number, length: number, done: (err: Error | null) => void): void {
    streamFileRange(this, read, file, position, length, done);
  }

  /**
   * Node's write, except after the response ended or the connection died: Node then emits an
   * 'error' that nothing listens to, which throws and ends the process. Cog logs the mistake
   * (with the route) and drops the chunk.
   */
  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (this.writableEnded || this.destroyed) {
      writeAfterEnd(this);
      return false;
    }
    if (!this.headersSent && !implicitHead(this as never)) return false;
    const ready = super.write(chunk, encoding as BufferEncoding, callback as () => void);
    this[WRITTEN] = Math.max(this[WRITTEN], 0) + chunkBytes(chunk, encoding);
    return ready;
  }

  /** Node's end, except that a second end with a body is a logged no-op rather than an 'error' that ends the process (as `write`). */
  override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
    if (this.writableEnded && chunk !== undefined && chunk !== null && typeof chunk !== "function") {
      endAfterEnd(this);
      return this;
    }
    if (!this.headersSent) {
      // As Node's end() does before it writes the head: a body ended whole is framed by its length
      // (Content-Length: 0 for none), as the native engine frames it, rather than chunked.
      const whole =
        chunk === undefined || chunk === null || typeof chunk === "function"
          ? 0
          : typeof chunk === "string"
            ? Buffer.byteLength(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
            : (chunk as Uint8Array).byteLength;
      (this as unknown as { _contentLength: number | null })._contentLength = whole;
      if (!implicitHead(this as never)) return this;
    }
    // A streamed body's last chunk, or a whole body without a Content-Length (Cog's `send` declares
    // one, which is node:http's `_contentLength`; the head this end sent first declared none).
    if (
      chunk !== undefined &&
      chunk !== null &&
      typeof chunk !== "function" &&
      (this[WRITTEN] >= 0 || (this as unknown as { _contentLength: number | null })._contentLength === null)
    ) {
      this[WRITTEN] = Math.max(this[WRITTEN], 0) + chunkBytes(chunk, encoding);
    }
    // The socket's uncork inside Node's end() writes the whole answer: sliced writes may hold it.
    this[ENDING] = true;
    return super.end(chunk, encoding as BufferEncoding, callback as () => void);
  }

  /** Node's destroy; the error it is given (by `pipeline`, for one) is reported, which Node hands only to the socket. */
  override destroy(error?: Error): this {
    if (error !== undefined && error !== null && !this.destroyed) destroyedWith(this, error);
    return super.destroy(error);
  }
}
NodeResponse.prototype[ENDING] = false;
NodeResponse.prototype[WRITTEN] = -1;
