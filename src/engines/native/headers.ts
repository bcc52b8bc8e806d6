import type { IncomingHttpHeaders } from "node:http";

/** Headers of which Node keeps the first line and drops repeats (its IncomingMessage rules). */
export const FIRST_ONLY = new Set([
  "age", "authorization", "content-length", "content-type", "etag", "expires", "from", "host", "if-modified-since",
  "if-unmodified-since", "last-modified", "location", "max-forwards", "proxy-authorization", "referer", "retry-after", "server", "user-agent",
]);

/**
 * Node's `req.headers` shape from `rawHeaders` (engines other than node:http
 * build it on first read): lower-case names, repeats joined with ", "
 * (cookies with "; ") except those Node keeps one of, Set-Cookie always a list.
 */
export function headersFromRaw(raw: readonly string[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const seen = headers[name];
    if (name === "__proto__") continue;
    if (seen === undefined) headers[name] = name === "set-cookie" ? [value] : value;
    else if (Array.isArray(seen)) seen.push(value);
    else if (!FIRST_ONLY.has(name)) headers[name] = `${seen}${name === "cookie" ? "; " : ", "}${value}`;
  }
  return headers;
}

/**
 * `rawHeaders` from the engine's text of them, `name\0value\0name\0value` (one string from the
 * engine costs far less than a list of them). Every name is followed by its NUL; a value may be
 * empty, the last one too.
 */
export function rawFromText(text: string): string[] {
  const raw: string[] = [];
  let at = 0;
  while (at < text.length) {
    const nameEnd = text.indexOf("\0", at);
    let valueEnd = text.indexOf("\0", nameEnd + 1);
    if (valueEnd === -1) valueEnd = text.length;
    raw.push(text.slice(at, nameEnd), text.slice(nameEnd + 1, valueEnd));
    at = valueEnd + 1;
  }
  return raw;
}
