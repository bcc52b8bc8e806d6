import type { FileHandle } from "node:fs/promises";
import { pipeline } from "node:stream";
import type { ResponseSurface } from "./engines/engine.js";

/**
 * Streams `length` bytes of `file` from `position` into `res` and ends it: a read stream piped
 * with backpressure (the response's `write` returning false pauses the reads). A read that fails
 * or a client that leaves destroys both sides, so the connection is cut rather than left hanging;
 * `done` then has the error. The file stays open: the caller closes it in `done`.
 */
export function streamFileRange(res: ResponseSurface, file: FileHandle, position: number, length: number, done: (err: Error | null) => void): void {
  const body = file.createReadStream({ start: position, end: position + length - 1, autoClose: false, highWaterMark: 64 * 1024 });
  pipeline(body, res as unknown as NodeJS.WritableStream, (err) => done(err ?? null));
}
