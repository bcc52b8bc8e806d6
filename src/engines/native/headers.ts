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
  for (let i = 0; i < raw.length; i += 2) addHeader(headers, lowerName(raw[i]!), raw[i + 1]!);
  return headers;
}

/** Node's `req.headersDistinct` shape from `rawHeaders`: lower-case names, every value kept in a list, on an object without a prototype. */
export function distinctFromRaw(raw: readonly string[]): Record<string, string[]> {
  const headers: Record<string, string[]> = Object.create(null);
  for (let i = 0; i < raw.length; i += 2) (headers[lowerName(raw[i]!)] ??= []).push(raw[i + 1]!);
  return headers;
}

/**
 * The same from the engine's text of the header lines (see `rawFromText`), without making
 * `rawHeaders` on the way: what Express's middleware reads on every request (cookie-parser,
 * body-parser, `req.fresh`).
 */
export function headersFromText(text: string): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  eachLine(text, headers, addLine);
  return headers;
}

function addLine(headers: Record<string, string | string[]>, name: string, value: string): void {
  addHeader(headers, lowerName(name), value);
}

function addHeader(headers: Record<string, string | string[]>, name: string, value: string): void {
  const seen = headers[name];
  if (name === "__proto__") return;
  if (seen === undefined) headers[name] = name === "set-cookie" ? [value] : value;
  else if (Array.isArray(seen)) seen.push(value);
  else if (!FIRST_ONLY.has(name)) headers[name] = `${seen}${name === "cookie" ? "; " : ", "}${value}`;
}

/**
 * A header name in lower case: the usual names in their usual spellings answered with a
 * literal, as Node's own IncomingMessage does (`matchKnownFields`), rather than lowered anew (a
 * new string, which then has to be looked up to become a property name: about a third of building
 * `req.headers`).
 */
function lowerName(name: string): string {
  switch (name.length) {
    case 4:
      if (name === "Host" || name === "host") return "host";
      if (name === "Date" || name === "date") return "date";
      break;
    case 6:
      if (name === "Cookie" || name === "cookie") return "cookie";
      if (name === "Accept" || name === "accept") return "accept";
      if (name === "Origin" || name === "origin") return "origin";
      if (name === "Pragma" || name === "pragma") return "pragma";
      break;
    case 7:
      if (name === "Referer" || name === "referer") return "referer";
      if (name === "Upgrade" || name === "upgrade") return "upgrade";
      break;
    case 10:
      if (name === "User-Agent" || name === "user-agent") return "user-agent";
      if (name === "Connection" || name === "connection") return "connection";
      break;
    case 12:
      if (name === "Content-Type" || name === "content-type") return "content-type";
      break;
    case 13:
      if (name === "Authorization" || name === "authorization") return "authorization";
      if (name === "Cache-Control" || name === "cache-control") return "cache-control";
      if (name === "If-None-Match" || name === "if-none-match") return "if-none-match";
      break;
    case 14:
      if (name === "Content-Length" || name === "content-length") return "content-length";
      break;
    case 15:
      if (name === "Accept-Encoding" || name === "accept-encoding") return "accept-encoding";
      if (name === "Accept-Language" || name === "accept-language") return "accept-language";
      if (name === "X-Forwarded-For" || name === "x-forwarded-for") return "x-forwarded-for";
      break;
    case 17:
      if (name === "If-Modified-Since" || name === "if-modified-since") return "if-modified-since";
      if (name === "Transfer-Encoding" || name === "transfer-encoding") return "transfer-encoding";
      break;
  }
  return name.toLowerCase();
}

/** `rawHeaders` from the engine's text of them (see `eachLine`). */
export function rawFromText(text: string): string[] {
  const raw: string[] = [];
  eachLine(text, raw, pushLine);
  return raw;
}

function pushLine(raw: string[], name: string, value: string): void {
  raw.push(name, value);
}

/**
 * Calls `take(to, name, value)` for each header line of the engine's text of them,
 * `name\0value\0name\0value` (one string from the engine costs far less than a list of them).
 * Every name is followed by its NUL; a value may be empty, the last one too.
 */
function eachLine<T>(text: string, to: T, take: (to: T, name: string, value: string) => void): void {
  let at = 0;
  while (at < text.length) {
    const nameEnd = text.indexOf("\0", at);
    let valueEnd = text.indexOf("\0", nameEnd + 1);
    if (valueEnd === -1) valueEnd = text.length;
    take(to, text.slice(at, nameEnd), text.slice(nameEnd + 1, valueEnd));
    at = valueEnd + 1;
  }
}
