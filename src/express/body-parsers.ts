import * as bodyParser from "body-parser";
import bytes from "bytes";
import { parse as parseContentType } from "content-type";
import createError from "http-errors";
import iconv from "iconv-lite";
import onFinished from "on-finished";
import { parse as parseQs } from "qs";
import typeis from "type-is";
import { FOLLOWING_BODY, HELD_BODY, type BodyHolding } from "../engines/contract/engine.js";
import { remembered } from "./settings.js";
import { nextTick } from "../base/loop.js";

/**
 * Express's body parsers, `express.json()`, `urlencoded()`, `text()` and `raw()`: body-parser's
 * own, with one shortcut. On the native engine a body that came whole with its request's head is
 * in hand already (`HELD_BODY`), and body-parser would read it through the request's stream,
 * made for it with its events: about 30,000 instructions for a small JSON POST, more than the rest
 * of the request. The shortcut takes the body from the engine and goes through body-parser's
 * steps itself (src: body-parser 2.4's lib/read.js, lib/types/*.js, and raw-body 3's checks): the
 * same checks in the same order, the same errors (status, type, message and properties), `verify`,
 * charsets through iconv-lite, the same parse, and the same tick for what follows the read, so
 * that `req.body` and what the app's handlers get are Express's. On the node engine the body that
 * came in the same read as the head is taken the same way once it is whole (`FOLLOWING_BODY`, see
 * `awaitBody`). Anything else goes to body-parser itself: plain node:http requests, a body that
 * follows its head in later reads, a compressed body (inflated through the stream), or one
 * something already read. A request without a body (a GET) is passed on without building
 * `req.headers`.
 */

type Req = any;

type Res = any;
type Next = (err?: unknown) => void;
type Middleware = (req: Req, res: Res, next: Next) => void;
type Verify = (req: Req, res: Res, body: Buffer, encoding: string | null) => void;

/** A parser's options, as body-parser documents them (and as each parser adds to them). */
export interface ParserOptions {
  inflate?: boolean;
  limit?: number | string | null;
  type?: string | string[] | ((req: Req) => unknown);
  verify?: Verify | false;
  defaultCharset?: string;
  // json
  reviver?: (key: string, value: unknown) => unknown;
  strict?: boolean;
  // urlencoded
  extended?: boolean;
  parameterLimit?: number;
  depth?: number;
  charsetSentinel?: boolean;
  interpretNumericEntities?: boolean;
}

/** What one parser does with the body it read: body-parser's settings for it (`normalizeOptions`) and its parse. */
interface Reading {
  limit: number;
  verify: Verify | false;
  defaultCharset: string;
  shouldParse: (req: Req) => unknown;
  /** Charsets the parser accepts (none named: any iconv-lite decodes). */
  isValidCharset?: (charset: string) => boolean;
  /** `raw()`: the body stays bytes. */
  skipCharset: boolean;
  parse: (body: string | Buffer, encoding: string | null) => unknown;
}

/** `express.json([options])`. */
export function json(options?: ParserOptions): Middleware {
  const fallback = bodyParser.json(options as never) as Middleware;
  return withShortcut(fallback, {
    ...normalize(options, "application/json"),
    isValidCharset: (charset) => charset.slice(0, 4) === "utf-",
    skipCharset: false,
    parse: jsonParser(options),
  });
}

/** `express.urlencoded([options])`. */
export function urlencoded(options?: ParserOptions): Middleware {
  const fallback = bodyParser.urlencoded(options as never) as Middleware;
  return withShortcut(fallback, {
    ...normalize(options, "application/x-www-form-urlencoded"),
    isValidCharset: (charset) => charset === "utf-8" || charset === "iso-8859-1",
    skipCharset: false,
    parse: queryParser(options),
  });
}

/** `express.text([options])`. */
export function text(options?: ParserOptions): Middleware {
  const fallback = bodyParser.text(options as never) as Middleware;
  return withShortcut(fallback, { ...normalize(options, "text/plain"), skipCharset: false, parse: (body) => body });
}

/** `express.raw([options])`. */
export function raw(options?: ParserOptions): Middleware {
  const fallback = bodyParser.raw(options as never) as Middleware;
  return withShortcut(fallback, { ...normalize(options, "application/octet-stream"), skipCharset: true, parse: (body) => body });
}

/** body-parser's `normalizeOptions` (its own call, made first, has refused bad options already). */
function normalize(options: ParserOptions | undefined, defaultType: string) {
  const limit = options?.limit === undefined || options.limit === null ? 102400 : (bytes.parse(options.limit) as number);
  const type = options?.type || defaultType;
  return {
    limit,
    verify: (options?.verify || false) as Verify | false,
    defaultCharset: options?.defaultCharset || "utf-8",
    shouldParse: typeof type === "function" ? type : typeChecker(type as string | string[]),
  };
}

function withShortcut(fallback: Middleware, reading: Reading): Middleware {
  const parser = function (req: Req, res: Res, next: Next) {
    // A plain node:http request (an app handed to `http.createServer`) goes to body-parser.
    if (typeof req.headerValue !== "function") return fallback(req, res, next);
    // type-is's hasBody, asked header by header: on the native engine that builds no `req.headers`.
    // Without a body, body-parser only passes the request on, on either engine (a request of
    // Cog's engines always has `body`, undefined until a parser sets it); on the node engine its
    // steps to find that out (on-finished's, type-is's, through the request's stream) cost ~1,000
    // instructions a request.
    if (req.headerValue("transfer-encoding") === undefined && Number.isNaN(Number(req.headerValue("content-length") ?? NaN))) return next();
    if ((req as BodyHolding)[HELD_BODY] === undefined) {
      if ((req as BodyHolding)[FOLLOWING_BODY] === undefined || !awaitBody(req, res, next, reading, fallback)) fallback(req, res, next);
      return;
    }
    if (onFinished.isFinished(req)) return next();
    const body = (req as Required<BodyHolding>)[HELD_BODY]();
    const encoded = req.headers["content-encoding"];
    if (body === undefined || (encoded !== undefined && encoded.toLowerCase() !== "identity")) return fallback(req, res, next);
    read(req, res, next, body, reading);
  };
  // The middleware's name, as body-parser names it (jsonParser, urlencodedParser…): the router reports it.
  Object.defineProperty(parser, "name", { value: fallback.name });
  return parser;
}

/**
 * On the node engine: the body that follows the head, taken from the engine (FOLLOWING_BODY) when
 * it comes whole in the same turn of the loop, then read as a body in hand; when it does not
 * (a slow or cut body), body-parser reads it from the stream as ever. Only where body-parser would
 * read the body whole before anything else: a declared length within the limit, not compressed,
 * a type the parser takes, a charset it knows (else body-parser answers at once, as it does).
 */
function awaitBody(req: Req, res: Res, next: Next, reading: Reading, fallback: Middleware): boolean {
  if (req._body || onFinished.isFinished(req)) return false;
  const headers = req.headers;
  const encoded = headers["content-encoding"];
  if ((encoded !== undefined && encoded.toLowerCase() !== "identity") || headers["transfer-encoding"] !== undefined) return false;
  const declared = headers["content-length"];
  const length = typeof declared === "string" && DIGITS.test(declared) ? Number(declared) : NaN;
  if (!(length <= reading.limit) || !reading.shouldParse(req)) return false;
  if (!reading.skipCharset) {
    const encoding = charsetOf(req) || reading.defaultCharset;
    if ((reading.isValidCharset !== undefined && !reading.isValidCharset(encoding)) || (reading.verify && !iconv.encodingExists(encoding))) return false;
  }
  return (req as Required<BodyHolding>)[FOLLOWING_BODY](length, (body) =>
    body === undefined ? fallback(req, res, next) : read(req, res, next, body, reading),
  );
}

const DIGITS = /^[0-9]{1,15}$/;

/** body-parser's `read` (and raw-body's checks) for a body in hand; see the file's comment. */
function read(req: Req, res: Res, next: Next, body: Buffer, reading: Reading): void {
  if (!reading.shouldParse(req)) return next();
  let encoding: string | null = null;
  if (!reading.skipCharset) {
    encoding = charsetOf(req) || reading.defaultCharset;
    if (reading.isValidCharset !== undefined && !reading.isValidCharset(encoding)) {
      return next(createError(415, `unsupported charset "${encoding.toUpperCase()}"`, { charset: encoding, type: "charset.unsupported" }));
    }
  }
  const verify = reading.verify;
  if (verify && encoding !== null && !iconv.encodingExists(encoding)) {
    const charset: string = encoding;
    return next(createError(415, `unsupported charset "${charset.toUpperCase()}"`, { charset: charset.toLowerCase(), type: "charset.unsupported" }));
  }
  // Taken: the stream ends empty, as after body-parser's read of it (the engine is told so
  // itself: `_body` alone is no sign, body-parser 1.x sets it before it reads the stream).
  (req as BodyHolding)[HELD_BODY]?.(true);
  req._body = true;
  const declared = req.headers["content-length"];
  const length = declared != null && !Number.isNaN(Number(declared)) ? parseInt(declared, 10) : null;
  // raw-body hands its answer over on a later tick, from the stream's events: so does this.
  nextTick(received, req, res, next, body, reading, encoding, length);
}

function received(req: Req, res: Res, next: Next, body: Buffer, reading: Reading, encoding: string | null, length: number | null): void {
  const verify = reading.verify;
  const limit = reading.limit;
  // raw-body's checks, in its order: the declared length, the charset, then what was received.
  let failure: (Error & { type?: string }) | null = null;
  let decoded: string | Buffer = body;
  if (length !== null && length > limit) {
    failure = createError(413, "request entity too large", { expected: length, length, limit, type: "entity.too.large" });
  } else {
    const decoder = !verify && encoding !== null ? decoderOf(encoding) : null;
    if (decoder instanceof Error) failure = decoder;
    else if (body.length > limit) failure = createError(413, "request entity too large", { limit, received: body.length, type: "entity.too.large" });
    else if (length !== null && body.length !== length) {
      failure = createError(400, "request size did not match content length", {
        expected: length,
        length,
        received: body.length,
        type: "request.size.invalid",
      });
    } else if (decoder !== null) decoded = decoder(body);
  }
  if (failure !== null) {
    const error =
      failure.type === "encoding.unsupported"
        ? createError(415, `unsupported charset "${encoding!.toUpperCase()}"`, { charset: encoding!.toLowerCase(), type: "charset.unsupported" })
        : createError(400, failure);
    return next(createError(400, error));
  }
  if (verify) {
    try {
      verify(req, res, body, encoding);
    } catch (err) {
      return next(createError(403, err as Error, { body, type: (err as { type?: string }).type || "entity.verify.failed" }));
    }
  }
  let input: string | Buffer = decoded;
  try {
    if (typeof input !== "string" && encoding !== null) input = isUtf8(encoding) ? utf8(input) : iconv.decode(input, encoding);
    req.body = reading.parse(input, encoding);
  } catch (err) {
    return next(createError(400, err as Error, { body: input, type: (err as { type?: string }).type || "entity.parse.failed" }));
  }
  next();
}

/** A decoder for a charset as raw-body makes it (iconv-lite's), or raw-body's error: a 415 for a charset iconv-lite does not know. */
function decoderOf(encoding: string): ((body: Buffer) => string) | Error {
  if (isUtf8(encoding)) return utf8;
  let decoder: ReturnType<typeof iconv.getDecoder>;
  try {
    decoder = iconv.getDecoder(encoding);
  } catch (err) {
    if (!/^Encoding not recognized: /.test((err as Error).message)) return err as Error;
    return createError(415, "specified encoding unsupported", { encoding, type: "encoding.unsupported" });
  }
  return (body) => {
    const text = decoder.write(body);
    const rest = decoder.end();
    return rest ? text + rest : text;
  };
}

function isUtf8(encoding: string): boolean {
  return encoding === "utf-8" || encoding === "utf8";
}

/**
 * UTF-8 as iconv-lite decodes a whole body (Node's StringDecoder, then a byte-order mark
 * dropped), without making a StringDecoder: its buffer is an ArrayBuffer of its own, and one a
 * request kept the garbage collector busy (a small JSON POST cost ~50,000 instructions more).
 * test/unit/express-body-decoding.test.ts holds the two to the same answers.
 */
export function utf8(body: Buffer): string {
  const text = body.toString("utf8");
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function charsetOf(req: Req): string | undefined {
  const header = req.headers["content-type"];
  if (!header) return undefined;
  return charsetOfType(header) ?? undefined;
}

/** A Content-Type's charset, lower-cased, or null (content-type's parse, which throws for a malformed one). */
const charsetOfType = remembered((header) => parseContentType(header).parameters.charset?.toLowerCase() ?? null);

/**
 * body-parser's `typeChecker`: type-is's answer for the request, which (the request having a
 * body, as it has here) depends on its Content-Type alone, remembered per parser for the last
 * few hundred Content-Types: type-is's parse and match cost ~5,600 instructions a request.
 */
function typeChecker(type: string | string[]): (req: Req) => boolean {
  const matches = remembered((header) => Boolean(typeis.is(header, type as string[])));
  return (req) => {
    const header = req.headers["content-type"];
    return typeof header === "string" ? matches(header) : Boolean(typeis(req, type as string[]));
  };
}

// body-parser 2.4's parsers (lib/types/json.js, urlencoded.js), which it does not export.

const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/;
const JSON_SYNTAX_CHAR = "#";
const JSON_SYNTAX_RUN = /#+/g;

function jsonParser(options: ParserOptions | undefined): (body: string | Buffer) => unknown {
  const reviver = options?.reviver;
  const strict = options?.strict !== false;
  return function parse(input) {
    const body = input as string;
    // An empty body is an empty object: a common client mistake, forgiven.
    if (body.length === 0) return {};
    if (strict && body[0] !== "{" && body[0] !== "[") {
      const first = FIRST_NON_WHITESPACE.exec(body)?.[1] || undefined;
      if (first !== "{" && first !== "[") throw strictSyntaxError(body, first!);
    }
    try {
      return JSON.parse(body, reviver);
    } catch (e) {
      const error = e as Error;
      throw normalizeJsonSyntaxError(error, { message: error.message, stack: error.stack! });
    }
  };
}

/** The SyntaxError JSON.parse gives at the first character strict mode refuses, with that character in its message. */
function strictSyntaxError(text: string, char: string): Error {
  const index = text.indexOf(char);
  const partial = index !== -1 ? text.substring(0, index) + JSON_SYNTAX_CHAR.repeat(text.length - index) : "";
  try {
    JSON.parse(partial);
    throw new SyntaxError("strict violation");
  } catch (e) {
    const error = e as Error;
    return normalizeJsonSyntaxError(error, {
      message: error.message.replace(JSON_SYNTAX_RUN, (placeholder) => text.substring(index, index + placeholder.length)),
      stack: error.stack!,
    });
  }
}

function normalizeJsonSyntaxError(error: Error, obj: { message: string; stack: string }): Error {
  for (const key of Object.getOwnPropertyNames(error)) {
    if (key !== "stack" && key !== "message") delete (error as unknown as Record<string, unknown>)[key];
  }
  error.stack = obj.stack.replace(error.message, obj.message);
  error.message = obj.message;
  return error;
}

function queryParser(options: ParserOptions | undefined): (body: string | Buffer, encoding: string | null) => unknown {
  const extended = Boolean(options?.extended);
  let parameterLimit = options?.parameterLimit !== undefined ? options.parameterLimit : 1000;
  const depth = extended ? (options?.depth !== undefined ? options.depth : 32) : 0;
  // The global isFinite, as body-parser's: a limit given as a string counts as its number.
  if (isFinite(parameterLimit)) parameterLimit = parameterLimit | 0;
  return function parse(input, encoding) {
    const body = input as string;
    if (!body.length) return {};
    const count = parameterCount(body, parameterLimit);
    if (count === undefined) throw createError(413, "too many parameters", { type: "parameters.too.many" });
    const arrayLimit = extended ? Math.max(100, count) : count;
    try {
      return parseQs(body, {
        allowPrototypes: true,
        arrayLimit,
        depth,
        charsetSentinel: options?.charsetSentinel,
        interpretNumericEntities: options?.interpretNumericEntities,
        charset: encoding as "utf-8",
        parameterLimit,
        strictDepth: true,
      });
    } catch (err) {
      if (err instanceof RangeError) throw createError(400, "The input exceeded the depth", { type: "querystring.parse.rangeError" });
      throw err;
    }
  };
}

/** The number of `&`-separated parameters, or undefined past `limit`. */
function parameterCount(body: string, limit: number): number | undefined {
  let count = 0;
  let index = -1;
  do {
    count++;
    if (count > limit) return undefined;
    index = body.indexOf("&", index + 1);
  } while (index !== -1);
  return count;
}
