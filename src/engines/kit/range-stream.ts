import type { FileHandle } from "node:fs/promises";
import { pipeline, Transform } from "node:stream";
import type { ResponseSurface } from "../contract/engine.js";

/**
 * Writes `read` (the range's first bytes, read already), then streams the `length` bytes of
 * `file` from `position` that follow, into `res`, and ends it: a read stream piped
 * with backpressure (the response's `write` returning false pauses the reads). A read that fails,
 * a file that turns out shorter than announced (truncated meanwhile) or a client that leaves
 * destroys both sides, so the connection is cut rather than left waiting for bytes that won't
 * come; `done` then has the error. The file stays open: the caller closes it in `done`.
 */
export function streamFileRange(
  res: ResponseSurface,
  read: Buffer,
  file: FileHandle,
  position: number,
  length: number,
  done: (err: Error | null) => void,
): void {
  const body = file.createReadStream({ start: position, end: position + length - 1, autoClose: false, highWaterMark: 64 * 1024 });
  let got = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      got += chunk.length;
      callback(null, chunk);
    },
    // An error here, before the response's end, makes pipeline destroy it instead of ending it.
    flush(callback) {
      callback(got < length ? new Error(`The file ended after ${got} of the ${length} bytes announced: it was truncated while being sent`) : null);
    },
  });
  // The bytes read already go through the pipe too (not a write of their own, whose backpressure
  // the pipe would then wait on before it starts).
  counted.push(read);
  pipeline(body, counted, res as unknown as NodeJS.WritableStream, (err) => done(err ?? null));
}
