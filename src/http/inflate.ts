import { brotliDecompress, gunzip, inflate, type InputType, type ZlibOptions } from "node:zlib";
import type { BodyCallback } from "../engines/contract/engine.js";
import { HttpError } from "../base/errors.js";

type Decoder = (buffer: InputType, options: ZlibOptions, callback: (error: Error | null, result: Buffer) => void) => void;

/** The request Content-Encodings Cog inflates (`x-gzip` is gzip's old name, RFC 9110 8.4.1.3). */
const DECODERS: Record<string, Decoder> = { gzip: gunzip, "x-gzip": gunzip, deflate: inflate, br: brotliDecompress as Decoder };

/**
 * Inflates a request body sent with a Content-Encoding, off the JavaScript thread (zlib's
 * thread pool), the limit applying to the inflated size: zlib stops at `limit` bytes of output,
 * so a small body that inflates to gigabytes (a zip bomb) costs no more than the limit, and gets
 * a 413. An encoding Cog can't read is a 415, a body that isn't what its encoding says a 400.
 */
export function inflateBody(raw: Buffer, header: string, limit: number, done: BodyCallback): void {
  const encoding = header.trim().toLowerCase();
  if (encoding === "identity") return done(null, raw);
  const decode = DECODERS[encoding];
  if (decode === undefined) {
    return done(
      new HttpError(415, `Unsupported Content-Encoding "${header}": send the body as gzip, deflate, br or identity`, {
        headers: { "accept-encoding": "gzip, deflate, br" },
      }),
      null,
    );
  }
  decode(raw, { maxOutputLength: Math.max(limit, 1) }, (err, inflated) => {
    if (err === null) {
      if (inflated.length > limit) return done(inflatedTooLarge(limit), null);
      return done(null, inflated);
    }
    if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") return done(inflatedTooLarge(limit), null);
    done(new HttpError(400, `The body is not valid ${encoding} (${err.message}); send it encoded as its Content-Encoding says`, { cause: err }), null);
  });
}

function inflatedTooLarge(limit: number): HttpError {
  return new HttpError(413, `Request body inflates to more than the limit of ${limit} bytes; raise the bodyLimit option to accept it`);
}
