import { promises as fs } from "node:fs";
import { isAbsolute, join, resolve, sep } from "node:path";
import parseRange from "range-parser";
import {
  OPEN_FILE,
  SEND_FILE,
  SEND_OPENED_FILE,
  STAT_FILE,
  type FileOpening,
  type FileSending,
  type OpenedFile,
  type ResponseSurface,
} from "../../engines/contract/engine.js";
import { HttpError } from "../../base/errors.js";
import { streamFileRange } from "../../engines/kit/range-stream.js";
import { PENDING, VALIDATES } from "../../base/symbols.js";
import { NODE_OPEN } from "./node-open.js";
import type { FileOptions, SendFileOptions, StaticOptions } from "./options.js";
import type { Request, InternalRequest, Response, InternalResponse, Next, Handler, Found } from "./types.js";
import { safePath, below, namesFile } from "./resolve-path.js";
import { MISSING, openFile, refusedOpen, findFile, isRegularFile } from "./open.js";
import { FileCache, cacheOf } from "./cache.js";
import { VARIANTS, Unsure, chooseVariant, encodingsWanted } from "./negotiate.js";
import { validatorsOf, checkPreconditions, rfcRanges, ifRangeHolds } from "./validators.js";
import { cacheControlOf, typeOf, typeByName } from "./content-type.js";

/**
 * Files from disk as responses: the part of `serveStatic`, `res.sendFile` and `res.download`
 * that is loaded on first use (with its MIME, negotiation and range libraries), so an app that
 * serves no file loads none of it. One pipeline, its stages named:
 * 1. the path (resolve-path.ts: `safePath`, `below`);
 * 2. the variant first, where the path names a file (negotiate.ts);
 * 3. the file, opened (open.ts, cache.ts; or by the engine itself on its loop, `openedOnEngine`),
 *    and what the path names (`named`: the file, its directory's index, a redirect, nothing);
 * 4. the variant, if not looked for first;
 * 5. the head (`answerHead`: validators.ts, content-type.ts): conditionals, ranges, headers;
 * 6. the body (`sendOnEngine`, or `sendFound`'s read and stream).
 * A file is opened and sent either by the engine, synchronously (no promise: most of what a file
 * answered on the loop would cost JavaScript), or through fs.promises, awaited: stages 2, 3, 4
 * and 6 have a way for each, and the decisions between them are made once (`named`,
 * `answerHead`). What a stage finds travels to the next in the request's `FileAnswer`.
 */

/** Bodies up to this size are read whole and sent as one response; larger ones are streamed (or handed to the engine). */
const WHOLE_BODY_MAX = 64 * 1024;

/**
 * How this response's files are opened and sent: by the engine itself, on its own thread
 * (`OPEN_FILE`: the native engine opens, reads and sends them on the loop, no thread pool),
 * or else through fs.promises (null). Not with the cache, which reads files into memory; not
 * when a middleware wrapped `res.write` or `res.end` (compression), which must see the bytes;
 * and not when `fs.promises.open` is no longer Node's own (an instrumentation, a test watching
 * which paths are opened): files are then opened through it, where it sees them.
 */
function engineFiles(res: Response, cache: FileCache | null): FileOpening | null {
  if (cache !== null || !(OPEN_FILE in res) || Object.hasOwn(res, "write") || Object.hasOwn(res, "end") || fs.open !== NODE_OPEN) return null;
  return res as unknown as FileOpening;
}

/** One file's answer as it goes through the stages: the file found (its variant's, with `encoding`), then what `answerHead` decided. */
class FileAnswer {
  size = 0;
  mtimeMs = 0;
  encoding: string | null = null;
  /** Where the body left to send starts, and its length (`answerHead`). */
  start = 0;
  length = 0;
  /** Cache-Control is Cog's (`answerHead` set it): an error response that follows must not carry it (a cache would keep the error). */
  cachingSet = false;

  constructor(public path: string) {}

  /** The file (or its variant, of `encoding`) this answer sends. */
  take(file: { size: number; mtimeMs: number }, encoding: string | null): void {
    this.size = file.size;
    this.mtimeMs = file.mtimeMs;
    this.encoding = encoding;
  }

  /** After a failure: the error response that follows must not carry the file's freshness. */
  forgetFreshness(res: Response): void {
    if (this.cachingSet && !res.headersSent) res.removeHeader("cache-control");
  }
}

/** What a path names, once opened (stage 3): its file, its directory's index, a redirect to the directory, or nothing to serve. */
const FILE = 0;
const INDEX = 1;
const REDIRECT = 2;
const NOTHING = 3;

function named(stat: OpenedFile | null, relative: string, site: Site): number {
  if (stat === null) return NOTHING;
  if (stat.isDirectory) {
    if (namesFile(relative)) return site.options.redirect === false ? NOTHING : REDIRECT;
    return site.index === false ? NOTHING : INDEX;
  }
  return stat.isFile ? FILE : NOTHING;
}

/** What `serveStatic` was given, resolved once. */
interface Site {
  base: string;
  /** `base` with a separator after it: what every path served starts with. */
  inside: string;
  index: string | false;
  fallthrough: boolean;
  cache: FileCache | null;
  options: StaticOptions;
  /** Whether precompressed variants are looked for. */
  variants: boolean;
}

/** The middleware `serveStatic(root, options)` returns, once this module is loaded. */
export function staticHandler(root: string, options: StaticOptions): Handler {
  const base = resolve(root);
  const site: Site = {
    base,
    inside: base.endsWith(sep) ? base : base + sep,
    index: options.index === undefined ? "index.html" : options.index,
    fallthrough: options.fallthrough !== false,
    cache: cacheOf(options.cache),
    options,
    variants: options.precompressed !== undefined && options.precompressed !== false,
  };
  // Not async: on the native engine the whole answer is given before this returns, and a
  // promise (with its reactions and what they keep alive until they run) is most of what a
  // file answered on the loop would cost JavaScript. The fs.promises way returns one.
  return function serveStatic(req: Request, res: Response, next: Next): Promise<void> | void {
    if (req.method !== "GET" && req.method !== "HEAD") {
      if (site.fallthrough) return next();
      return next(
        new HttpError(405, `Method ${req.method} is not allowed on the static files at ${req.originalUrl}; use GET or HEAD`, {
          headers: { allow: "GET, HEAD" },
        }),
      );
    }
    const relative = safePath(req.path, options);
    if (relative instanceof HttpError) return next(relative);
    if (relative === null) return missing(req, next, site);
    const path = below(base, relative);
    // The checks above leave nothing that could climb out; this one holds whatever they missed.
    if (path !== base && !path.startsWith(site.inside)) return next(new HttpError(403, `Refusing ${req.path}: it resolves outside the static root`));
    const engine = engineFiles(res, site.cache);
    if (engine !== null) return serveOnEngine(req, res, next, site, relative, path, engine);
    return serveFromDisk(req, res, next, site, relative, path);
  };
}

/** What is not there: the next handler's, or a 404 (`fallthrough: false`). */
function missing(req: Request, next: Next, site: Site): void {
  if (site.fallthrough) return next();
  next(new HttpError(404, `No file at ${req.path} under the static root`));
}

/** The static files on the native engine: opened, checked and sent on its thread, with no promise and no await. */
function serveOnEngine(req: Request, res: Response, next: Next, site: Site, relative: string, path: string, engine: FileOpening): void {
  const options = site.options;
  const answer = new FileAnswer(path);
  let variantsLookedFor = false;
  if (site.variants && namesFile(relative)) {
    const encoding = variantOnEngine(req, answer, options, engine);
    if (encoding === null) variantsLookedFor = true;
    // A variant, for a regular file: sent alone. (Unsure: the file is opened first below, as before.)
    else if (!(encoding instanceof Unsure) && engine[STAT_FILE](path) === "file") {
      varyOnEncoding(res);
      return sendOnEngine(req, res, answer, options, engine);
    }
  }
  let stat = openedOnEngine(engine, path);
  switch (named(stat, relative, site)) {
    case NOTHING:
      return missing(req, next, site);
    case REDIRECT:
      return redirectToDirectory(req, res);
    case INDEX:
      answer.path = join(path, site.index as string);
      stat = openedOnEngine(engine, answer.path);
      if (stat === null || !stat.isFile) return missing(req, next, site);
      variantsLookedFor = false;
  }
  answer.take(stat!, null);
  fileOnEngine(req, res, answer, options, engine, variantsLookedFor);
}

/** A regular file the engine opened for this response (`answer`), answered with it or the variant the client prefers (stage 4). */
function fileOnEngine(req: Request, res: Response, answer: FileAnswer, options: FileOptions, engine: FileOpening, variantsLookedFor: boolean): void {
  if (options.precompressed !== undefined && options.precompressed !== false) {
    varyOnEncoding(res);
    if (!variantsLookedFor) {
      // The file itself was opened first: a variant that can't be opened is refused as it is.
      const chosen = variantOnEngine(req, answer, options, engine);
      if (chosen instanceof Unsure) throw chosen.refusal;
    }
  }
  sendOnEngine(req, res, answer, options, engine);
}

/**
 * Opens the precompressed variant of the answer's file the client prefers (the engine keeps it
 * for the answer, which takes it): its encoding, null when the client accepts none that is
 * there, an Unsure when one could not be opened.
 */
function variantOnEngine(req: Request, answer: FileAnswer, options: FileOptions, engine: FileOpening): string | null | Unsure {
  for (const encoding of encodingsWanted(req, options)) {
    let stat: OpenedFile | null;
    try {
      stat = openedOnEngine(engine, answer.path + VARIANTS[encoding]);
    } catch (err) {
      return new Unsure(err);
    }
    if (stat !== null && stat.isFile) {
      answer.take(stat, encoding);
      return encoding;
    }
  }
  return null;
}

/** What the engine found at `path` (a regular file is kept for the answer), or null when nothing is there. */
function openedOnEngine(engine: FileOpening, path: string): OpenedFile | null {
  const stat = engine[OPEN_FILE](path);
  if (typeof stat !== "string") return stat;
  // Nothing there is an everyday answer (a missing precompressed variant): no error is made for it.
  if (MISSING.has(stat)) return null;
  return refusedOpen(Object.assign(new Error(`${stat}: the file can't be opened, open '${path}'`), { code: stat, syscall: "open", path }), path);
}

/** Answers with the file the engine opened last (the answer's), which the engine sends from where it lies (sendfile) and closes. */
function sendOnEngine(req: Request, res: Response, answer: FileAnswer, options: FileOptions, engine: FileOpening): void {
  try {
    if (!answerHead(req, res, answer, options)) return;
    // A file that fails to read from here on cuts the connection, as one that fails mid-way does.
    res.setHeader("content-length", answer.length);
    engine[SEND_OPENED_FILE](answer.start, answer.length);
  } catch (err) {
    answer.forgetFreshness(res);
    throw err;
  }
}

/** Adds Accept-Encoding to Vary: the answer depends on it once variants are looked for. */
function varyOnEncoding(res: Response): void {
  const vary = res.get("vary");
  const value = vary === undefined ? "Accept-Encoding" : `${String(vary)}, Accept-Encoding`;
  res.setHeader("vary", value);
  // The app's own, set with res.set, goes out over setHeader's (as writeHead's headers do): it is extended where it is.
  if ((res as InternalResponse)[PENDING]?.["vary"] !== undefined) res.set("vary", value);
}

/** The static files through fs.promises (or the cache): the same stages as `serveOnEngine`'s, each awaited. */
async function serveFromDisk(req: Request, res: Response, next: Next, site: Site, relative: string, path: string): Promise<void> {
  const { options, cache } = site;
  let variantsLookedFor = false;
  if (site.variants && namesFile(relative)) {
    const variant = await chooseVariant(req, path, options, cache);
    if (variant === null) variantsLookedFor = true;
    // A variant, for a regular file: sent alone. (Unsure: the file is opened first below, as before.)
    else if (!(variant instanceof Unsure)) {
      if (await isRegularFile(path, cache)) return sendFound(req, res, path, variant, options, cache, true, variant.encoding);
      await variant.file?.close();
    }
  }
  const cached = cache?.get(path);
  if (cached) return sendFound(req, res, path, cached, options, cache, variantsLookedFor);
  const opened = await openFile(path);
  const what = named(opened?.stat ?? null, relative, site);
  if (what !== FILE) await opened?.file.close();
  switch (what) {
    case NOTHING:
      return missing(req, next, site);
    case REDIRECT:
      return redirectToDirectory(req, res);
    case INDEX: {
      const index = join(path, site.index as string);
      const indexed = await findFile(index, cache);
      if (indexed === null) return missing(req, next, site);
      return sendFound(req, res, index, indexed, options, cache, false);
    }
  }
  const found: Found = { size: opened!.stat.size, mtimeMs: opened!.stat.mtimeMs, file: opened!.file, bytes: null };
  return sendFound(req, res, path, cache === null ? found : await cache.keep(path, found), options, cache, variantsLookedFor);
}

/** `res.sendFile`: a missing file becomes a 404, any other failure the app's error response. */
export async function sendFile(req: Request, res: Response, path: string, options: SendFileOptions): Promise<void> {
  let full: string;
  if (options.root !== undefined) {
    const base = resolve(options.root);
    const relative = safePath("/" + path, options, false);
    if (relative instanceof HttpError) throw relative;
    if (relative === null) throw new HttpError(404, `res.sendFile: ${path} is a dotfile, which is not served (see the dotfiles option)`);
    full = join(base, relative);
    if (full !== base && !full.startsWith(base.endsWith(sep) ? base : base + sep)) throw new HttpError(403, `res.sendFile: ${path} resolves outside its root`);
  } else {
    if (!isAbsolute(path)) {
      throw new TypeError(`res.sendFile needs an absolute path or the root option; got "${path}" (use path.join(import.meta.dirname, "${path}"))`);
    }
    full = path;
  }
  const engine = engineFiles(res, null);
  if (engine !== null) {
    const stat = openedOnEngine(engine, full);
    if (stat === null || !stat.isFile) throw new HttpError(404, `res.sendFile: no file at ${path}`);
    const answer = new FileAnswer(full);
    answer.take(stat, null);
    return fileOnEngine(req, res, answer, options, engine, false);
  }
  const found = await findFile(full, null);
  if (found === null) throw new HttpError(404, `res.sendFile: no file at ${path}`);
  await sendFound(req, res, full, found, options, null, false);
}

/** A directory asked for without its trailing slash: send the client to it (as serve-static does, 301). */
function redirectToDirectory(req: Request, res: Response): void {
  const url = req.originalUrl;
  const query = url.indexOf("?");
  // Leading slashes collapsed: "//evil.example/" would be another site's URL.
  const path = (query === -1 ? url : url.slice(0, query)).replace(/^\/+/, "/");
  res.redirect(301, path + "/" + (query === -1 ? "" : url.slice(query)));
}

/**
 * Answers with a file through fs.promises or from the cache (closing it when done): the variant
 * the client prefers unless they were looked for already (`variantsLookedFor`; `found` is then
 * the variant, of `encoding`), then `answerHead`, then the body.
 */
async function sendFound(
  req: Request,
  res: Response,
  path: string,
  found: Found,
  options: FileOptions,
  cache: FileCache | null,
  variantsLookedFor: boolean,
  encoding: string | null = null,
): Promise<void> {
  let { file, bytes } = found;
  const answer = new FileAnswer(path);
  answer.take(found, encoding);
  let closeLater = false;
  try {
    if (options.precompressed !== undefined && options.precompressed !== false) {
      varyOnEncoding(res);
      if (!variantsLookedFor) {
        const variant = await chooseVariant(req, path, options, cache);
        // The file itself was opened first: a variant that can't be opened is refused as it is.
        if (variant instanceof Unsure) throw variant.refusal;
        if (variant !== null) {
          await file?.close();
          ({ file, bytes } = variant);
          answer.take(variant, variant.encoding);
        }
      }
    }
    if (!answerHead(req, res, answer, options)) return;
    const { start, length } = answer;
    if (bytes !== null) {
      res.send(bytes.subarray(start, start + length));
      return;
    }
    // Read before the head is written: a file that fails here gets an error response, not a cut one.
    const first = Buffer.allocUnsafe(Math.min(length, WHOLE_BODY_MAX));
    const { bytesRead } = await file!.read(first, 0, first.length, start);
    if (bytesRead < first.length) throw new Error(`The file ${path} shrank while it was being sent (${bytesRead} of ${first.length} bytes read at ${start})`);
    // The client left while the file was read: nothing to send it to (the file is closed below).
    if (res.destroyed) return;
    if (length <= WHOLE_BODY_MAX) {
      res.send(first);
      return;
    }
    res.setHeader("content-length", length);
    res.writeHead(res.statusCode);
    closeLater = true;
    const open = file!;
    const done = () => void open.close().catch(() => {});
    const rest = [first, open, start + first.length, length - first.length, done] as const;
    // The engine's own file path unless a middleware wrapped write or end (compression, say): then theirs must see the bytes.
    if (!Object.hasOwn(res, "write") && !Object.hasOwn(res, "end") && SEND_FILE in res) (res as unknown as FileSending)[SEND_FILE](...rest);
    else streamFileRange(res as unknown as ResponseSurface, ...rest);
  } catch (err) {
    answer.forgetFreshness(res);
    throw err;
  } finally {
    if (!closeLater) await file?.close();
  }
}

/**
 * A file's answer but its body (stage 5), the same whoever sends the body: validators,
 * Cache-Control and the app's headers, the conditionals (412, 304), Range (416, 206), the type
 * and encoding, and HEAD and empty bodies answered whole. Returns false when the answer is
 * given; else true, with the status set and the body to send in `answer` (`start`, `length`).
 * Its headers go in the engine's store (`setHeader`), where Express middleware that hooks
 * writeHead (compression, through on-headers) looks for them. Its caller takes Cache-Control
 * back if it fails (`forgetFreshness`).
 */
function answerHead(req: Request, res: Response, answer: FileAnswer, options: FileOptions): boolean {
  const { path, size, mtimeMs, encoding } = answer;
  const validators = validatorsOf(size, mtimeMs, encoding);
  const mtime = validators.mtime;
  const etag = options.etag === false ? undefined : validators.etag;
  const lastModified = options.lastModified === false ? undefined : validators.lastModified;

  if (etag !== undefined) res.setHeader("etag", etag);
  if (lastModified !== undefined) res.setHeader("last-modified", lastModified);
  answer.cachingSet = res.get("cache-control") === undefined;
  if (answer.cachingSet) res.setHeader("cache-control", cacheControlOf(options));
  if (options.headers !== undefined) for (const name of Object.keys(options.headers)) res.setHeader(name, options.headers[name]!);

  // Most requests have none of the headers read below: asked once whether there is any.
  const conditional = (req as InternalRequest).mayBeConditional();
  const precondition = conditional ? checkPreconditions(req, etag, lastModified === undefined ? undefined : mtime) : 200;
  if (precondition === 412) {
    res.status(412).send(`The file at ${req.path} changed: its precondition failed`);
    return false;
  }
  if (precondition === 304) {
    // The identity file's 200 may have been compressed on the way out: compress() tells the 304 the same.
    if (encoding === null) (res as InternalResponse)[VALIDATES] = { type: typeOf(res, path), length: size };
    res.status(304).send();
    return false;
  }

  let start = 0;
  let length = size;
  let status = 200;
  if (options.acceptRanges !== false) {
    res.setHeader("accept-ranges", "bytes");
    const range = conditional ? (req as InternalRequest).headerValue("range") : undefined;
    if (range !== undefined && ifRangeHolds((req as InternalRequest).headerValue("if-range"), etag, mtime)) {
      const ranges = parseRange(size, rfcRanges(range, size), { combine: true });
      if (ranges === -1) {
        res.setHeader("content-range", `bytes */${size}`);
        res.status(416).send(`The range "${range}" is not satisfiable: the file has ${size} bytes`);
        return false;
      }
      // A malformed header (-2) or another unit is ignored, and several ranges get the whole
      // file (as send/serve-static do): one response, no multipart/byteranges to assemble.
      if (ranges !== -2 && ranges.type === "bytes" && ranges.length === 1) {
        start = ranges[0]!.start;
        length = ranges[0]!.end - start + 1;
        status = 206;
        res.setHeader("content-range", `bytes ${start}-${start + length - 1}/${size}`);
      }
    }
  }
  if (res.get("content-type") === undefined) res.setHeader("content-type", typeByName(path));
  if (encoding !== null) res.setHeader("content-encoding", encoding);
  res.status(status);

  if (req.method === "HEAD" || length === 0) {
    res.setHeader("content-length", length);
    res.writeHead(status);
    res.end();
    return false;
  }
  answer.start = start;
  answer.length = length;
  return true;
}
