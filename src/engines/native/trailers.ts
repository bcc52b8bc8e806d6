import { validateHeaderName, type OutgoingHttpHeaders } from "node:http";
import { BAD_VALUE_CHAR, nodeError } from "../kit/compat.js";

/**
 * `res.addTrailers(headers)` as node:http takes it: an object, or a list of `[name, value]`
 * pairs; names checked as header names, values as header values (Node's errors,
 * ERR_INVALID_HTTP_TOKEN and ERR_INVALID_CHAR); a list value sent as one line per value. Returns
 * the trailer fields as the engine takes them: `name: value\r\n` lines (each call replaces the
 * last one's, as on node:http).
 */
export function trailerBlock(headers: OutgoingHttpHeaders | ReadonlyArray<readonly [string, unknown]>): string {
  let block = "";
  const pairs: ReadonlyArray<readonly [string, unknown]> = Array.isArray(headers) ? (headers as ReadonlyArray<readonly [string, unknown]>) : Object.entries(headers as OutgoingHttpHeaders);
  for (const [name, value] of pairs) {
    validateHeaderName(name);
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? (value as unknown[]) : [value]) {
      const text = String(one);
      if (BAD_VALUE_CHAR.test(text)) throw nodeError("ERR_INVALID_CHAR", `Invalid character in trailer content ["${name}"]`, TypeError);
      block += `${name}: ${text}\r\n`;
    }
  }
  return block;
}
