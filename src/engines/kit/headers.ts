// A request's headers read from Node's own stores (`headers`, `rawHeaders`): the contract's
// `headerValue` and `firstHeader` for an engine that keeps them (node:http, node:http2), and the
// native engine's once it has fetched them all.
import type { IncomingHttpHeaders } from "node:http";

/** One header's value by lower-case name from `headers`, repeats joined as Node joins them. */
export function joinedHeader(headers: IncomingHttpHeaders, lowerName: string): string | undefined {
  const value = headers[lowerName];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The first value of a request header, by lower-case name, scanned from `rawHeaders` without building `req.headers`. */
export function rawHeader(req: { rawHeaders: readonly string[] }, lowerName: string): string | undefined {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === lowerName.length && (name === lowerName || name.toLowerCase() === lowerName)) return raw[i + 1];
  }
  return undefined;
}
