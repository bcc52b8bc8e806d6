import { validateHeaderName, validateHeaderValue } from "node:http";
import { HOST, type HostedRequest, type ResponseSurface } from "../contract/engine.js";

/**
 * Node's ServerResponse rules, written once for every engine's response and for Cog's helpers:
 * what a status may be, which header names and values are refused (with Node's own errors), the
 * lower case of header names, a chunk's bytes, and what a response does with a call that comes
 * too late (a write after the end) or a head that can't be written. node:http applies most of
 * them itself; the native engine's ServerResponse (src/engines/native/server-response.ts) and
 * the node engine's guards (src/engines/node/response.ts) take them from here.
 */

/** Whether `code` is a status a response can carry: an integer from 100 to 999 (Node's and Express's rule). */
export function isStatus(code: unknown): code is number {
  return typeof code === "number" && code >= 100 && code <= 999 && (code | 0) === code;
}

/** Node's errors for a call that comes too late or with a bad argument, with Node's codes. */
export function nodeError(code: string, message: string, Kind: ErrorConstructor | RangeErrorConstructor | TypeErrorConstructor = Error): Error {
  return Object.assign(new Kind(message), { code });
}

export const headersSentError = (what: string): Error => nodeError("ERR_HTTP_HEADERS_SENT", `Cannot ${what} headers after they are sent to the client`);

/**
 * Header names to their lower case: nearly always the same few literals, so each is lowered
 * once rather than allocating a new string per response. Only valid names are kept (so a name
 * found here needs no check again), and only so many, so arbitrary names can't grow it.
 */
const LOWER_CASE = new Map<string, string>();

/** A header name in lower case (remembered for valid names). */
export function lowerCase(name: string): string {
  let lower = LOWER_CASE.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (LOWER_CASE.size < 1000 && isToken(name)) LOWER_CASE.set(name, lower);
  }
  return lower;
}

/** RFC 9110's token, Node's rule for a header name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
function isToken(name: string): boolean {
  return TOKEN.test(name);
}

/**
 * Short header values already validated ("application/json; charset=utf-8", "no-cache"…): most
 * responses repeat the same literals, and a Set lookup of a literal costs a tenth of scanning it.
 * Bounded in count and length, so varying values (cookies, ETags) can't grow it past ~100 KiB.
 */
const GOOD_VALUES = new Set<string>();
/**
 * Node's rule for header values (and the reason phrase): no CR, LF, NUL or other control
 * characters except tab, nothing past latin1. A regular expression rather than a charCodeAt loop:
 * measured 2-3x faster from ~10 characters up (the loop paid ~5 ns a character), on Node 20 and 24 alike.
 */
export const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

function isFieldValue(value: string): boolean {
  if (GOOD_VALUES.has(value)) return true;
  if (BAD_VALUE_CHAR.test(value)) return false;
  if (value.length <= 100 && GOOD_VALUES.size < 1000) GOOD_VALUES.add(value);
  return true;
}

export type HeaderInput = number | string | readonly string[];

/**
 * Throws Node's own errors (ERR_INVALID_HTTP_TOKEN, ERR_INVALID_CHAR…) for a header Node would
 * refuse; returns the name in lower case.
 */
export function checkHeader(name: string, value: HeaderInput | undefined): string {
  let lower = LOWER_CASE.get(name);
  if (lower === undefined) {
    validateHeaderName(name);
    lower = name.toLowerCase();
    if (LOWER_CASE.size < 1000) LOWER_CASE.set(name, lower);
  }
  if (typeof value === "string" ? !isFieldValue(value) : typeof value !== "number") validateHeaderValue(name, value as string);
  return lower;
}

/** Whether Node would send this header (see `checkHeader`). */
export function isValidHeader(name: string, value: HeaderInput | undefined): boolean {
  try {
    checkHeader(name, value);
    return true;
  } catch {
    return false;
  }
}

/** A chunk given to `write` or `end` as bytes: strings in their encoding (UTF-8 unless told), Buffers and byte views as they are. */
export function toBytes(chunk: unknown, encoding: BufferEncoding | undefined): Buffer {
  if (typeof chunk === "string") return Buffer.from(chunk, encoding ?? "utf8");
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk === undefined || chunk === null) return Buffer.alloc(0);
  throw nodeError("ERR_INVALID_ARG_TYPE", `The "chunk" argument must be a string, Buffer or Uint8Array; got ${typeof chunk}`, TypeError);
}

/** The bytes a chunk given to `write` or `end` adds to the body, without converting it. */
export function chunkBytes(chunk: unknown, encoding: unknown): number {
  if (typeof chunk === "string") return Buffer.byteLength(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
  return chunk instanceof Uint8Array ? chunk.byteLength : 0;
}

/** A response as these guards see it: its request, served by a host. */
type HostedResponse = ResponseSurface & { readonly req: unknown };

/**
 * A `write` after the response ended or was cut: Node emits an 'error' that nothing listens to,
 * which throws and ends the process. Cog reports the mistake (with the route) and drops the chunk.
 */
export function writeAfterEnd(res: HostedResponse): void {
  misuse(res, `res.write() after the response ${res.writableEnded ? "ended" : "was cut"}: the chunk was dropped`);
}

/** An `end` with a body after the response ended: a reported no-op rather than an 'error' that ends the process (as `writeAfterEnd`). */
export function endAfterEnd(res: HostedResponse): void {
  misuse(res, "res.end() with a body after the response ended: the body was dropped");
}

/**
 * `res.destroy(err)`: the app, or a stream piped into the response with `pipeline` (as
 * `res.send(stream)` pipes one), cut the response because of `err`. Node hands that error to
 * nothing but the socket, and so the connection is cut in silence: Cog reports it, as it reports
 * an error it can no longer answer. Not for a response already cut (by the client leaving).
 */
export function destroyedWith(res: HostedResponse, err: Error): void {
  const req = res.req as HostedRequest;
  req[HOST].report(err, req, "it destroyed the response: the connection was cut");
}

function misuse(res: HostedResponse, message: string): void {
  const req = res.req as HostedRequest;
  req[HOST].report(new Error(message), req);
}

/**
 * The head a `write` or `end` sends first when none was written; false if it could not be (a
 * bad status or header): the app then answers with its error response, since the call may come
 * from a piped stream, where a throw would reach no handler and end the process.
 */
export function implicitHead(res: HostedResponse & { _implicitHeader(): void }): boolean {
  try {
    res._implicitHeader();
    return true;
  } catch (err) {
    const req = res.req as HostedRequest;
    req[HOST].fail(err, req, res);
    return false;
  }
}
