// The file server's fourth stage, the answer's conditions: ETag and Last-Modified, the If-
// preconditions (304, 412) and ranges (206, 416).
import type { Request, InternalRequest } from "./types.js";

/** A file's ETag (strong: `"size-mtime"` in hex, and the encoding of a variant) and Last-Modified (its time in whole seconds). */
export interface Validators {
  size: number;
  mtimeMs: number;
  encoding: string | null;
  etag: string;
  lastModified: string;
  /** The time Last-Modified says, in ms. */
  mtime: number;
}

/**
 * The validators of the files sent: the same files are sent again and again, and writing their
 * hex and date strings cost more than opening them. A pure function of (size, mtimeMs,
 * encoding), kept under a number mixed from the three and used only for exactly them: files
 * written together share a modification time (timestamps are as coarse as the kernel's clock
 * tick, 4 ms on ext4), so the time alone would have them replace each other request after
 * request. Two that mix to one number replace each other; so many entries at most.
 */
export const VALIDATORS = new Map<number, Validators>();

export function validatorsOf(size: number, mtimeMs: number, encoding: string | null): Validators {
  const key = (Math.imul(size, 0x9e3779b1) ^ (mtimeMs * 1000) ^ (encoding === null ? 0 : Math.imul(encoding.charCodeAt(0), 0x85ebca6b))) & 0x3fffffff;
  const kept = VALIDATORS.get(key);
  if (kept !== undefined && kept.size === size && kept.mtimeMs === mtimeMs && kept.encoding === encoding) return kept;
  const mtime = Math.floor(mtimeMs / 1000) * 1000;
  const made: Validators = {
    size,
    mtimeMs,
    encoding,
    etag: `"${size.toString(16)}-${Math.floor(mtimeMs).toString(16)}${encoding === null ? "" : "-" + encoding}"`,
    lastModified: new Date(mtime).toUTCString(),
    mtime,
  };
  if (kept !== undefined || VALIDATORS.size < 1000) VALIDATORS.set(key, made);
  return made;
}

/**
 * RFC 9110 13.2.2's order: If-Match, else If-Unmodified-Since (412 when they fail); then, for
 * GET and HEAD, If-None-Match, else If-Modified-Since (304 when the client's copy is current).
 * If-None-Match compares weakly, If-Match strongly; dates at one-second precision.
 */
export function checkPreconditions(req: Request, etag: string | undefined, mtime: number | undefined): 200 | 304 | 412 {
  // One header at a time: the native engine builds `req.headers` only when asked.
  const r = req as InternalRequest;
  const ifMatch = r.headerValue("if-match");
  if (ifMatch !== undefined) {
    if (ifMatch.trim() !== "*" && (etag === undefined || !listHas(ifMatch, etag, false))) return 412;
  } else if (mtime !== undefined) {
    const ifUnmodifiedSince = r.headerValue("if-unmodified-since");
    const since = ifUnmodifiedSince === undefined ? NaN : Date.parse(ifUnmodifiedSince);
    if (!Number.isNaN(since) && mtime > since) return 412;
  }
  const ifNoneMatch = r.headerValue("if-none-match");
  if (ifNoneMatch !== undefined) {
    return ifNoneMatch.trim() === "*" || (etag !== undefined && listHas(ifNoneMatch, etag, true)) ? 304 : 200;
  }
  const ifModifiedSince = mtime === undefined ? undefined : r.headerValue("if-modified-since");
  if (ifModifiedSince !== undefined) {
    const since = Date.parse(ifModifiedSince);
    if (!Number.isNaN(since) && mtime! <= since) return 304;
  }
  return 200;
}

/** Whether a list of entity tags holds `etag`: weakly (W/ ignored on both sides) or strongly (a weak tag never matches). */
export function listHas(list: string, etag: string, weak: boolean): boolean {
  for (let tag of list.split(",")) {
    tag = tag.trim();
    if (tag.startsWith("W/")) {
      if (!weak) continue;
      tag = tag.slice(2);
    }
    if (tag === etag) return true;
  }
  return false;
}

/**
 * The Range header as range-parser should read it under RFC 9110 14.1.1: a suffix longer than
 * the file means the whole file (range-parser finds it unsatisfiable), and a range whose last
 * byte comes before its first makes the header invalid, so it is ignored (range-parser answers
 * 416). Either way the rest is range-parser's.
 */
export function rfcRanges(header: string, size: number): string {
  const equals = header.indexOf("=");
  if (equals === -1) return header;
  const specs = header.slice(equals + 1).split(",");
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i]!.trim();
    const both = /^(\d+)-(\d+)$/.exec(spec);
    if (both !== null && Number(both[2]) < Number(both[1])) return "invalid";
    if (/^-\d+$/.test(spec) && Number(spec.slice(1)) > size) specs[i] = `-${size}`;
  }
  return `${header.slice(0, equals)}=${specs.join(",")}`;
}

/** If-Range (RFC 9110 13.1.5): the range applies only if the client's validator is current, a strong ETag or the exact date. */
export function ifRangeHolds(ifRange: string | undefined, etag: string | undefined, mtime: number): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith("W/")) return etag !== undefined && value === etag;
  const date = Date.parse(value);
  return !Number.isNaN(date) && date === mtime;
}
