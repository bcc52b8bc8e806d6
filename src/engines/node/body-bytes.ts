/**
 * The access log's byte count on the node engine (`ResponseDone`'s `bytes`). node:http knows a body's
 * length when the body is whole or declared (`_contentLength`); a body streamed without a
 * Content-Length is counted here (under WRITTEN) as it is written. node:http2 keeps no count at
 * all, so every HTTP/2 body is counted. A response that never streams pays one comparison, in `end`.
 */
import type { ResponseSurface } from "../contract/engine.js";
import { WRITTEN } from "../../base/symbols.js";

/** Set on a response class's prototype: -1 (count nothing until the body streams) or 0 (count every chunk). */
export interface BodyCount {
  [WRITTEN]: number;
}

/** The body's length: whole or declared (node:http's own count), else what was written; null if neither is known. */
export function bodyBytesOf(res: ResponseSurface): number | null {
  const length = (res as unknown as { _contentLength?: number | null })._contentLength;
  if (typeof length === "number") return length;
  const written = (res as unknown as BodyCount)[WRITTEN];
  return written >= 0 ? written : null;
}
