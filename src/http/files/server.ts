import { promises as fs } from "node:fs";
import { isAbsolute, join, resolve, sep } from "node:path";
import parseRange from "range-parser";
import { OPEN_FILE, SEND_FILE, SEND_OPENED_FILE, STAT_FILE, type FileOpening, type FileSending, type OpenedFile, type ResponseSurface } from "../../engines/contract/engine.js";
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
 * serves no file loads none of it. The stages, each in a file of its own: the path
 * (resolve-path.ts), the file (open.ts, cache.ts; or the engine's own opening, here), the variant
 * (negotiate.ts), the answer's conditions (validators.ts) and headers (content-type.ts), then the
 * answer and its body (`answerFile`, `sendFound`, `sendOnEngine`, here).
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
      return next(new HttpError(405, `Method ${req.method} is not allowed on the static files at ${req.originalUrl}; use GET or HEAD`, { headers: { allow: "GET, HEAD" } }));
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
  let variantsLookedFor = false;
  if (site.variants && namesFile(relative)) {
    const encoding = variantOnEngine(req, path, options, engine);
    if (encoding instanceof Unsure) {
      // Opened first below, as before.
    } else if (encoding === null) {
      variantsLookedFor = true;
    } else if (engine[STAT_FILE](path) === "file") {
      varyOnEncoding(res);
      return sendOnEngine(req, res, path, variantStat!, encoding, options, engine);
    }
  }
  let stat = openedOnEngine(engine, path);
  if (stat === null) return missing(req, next, site);
  if (stat.isDirectory) {
    if (namesFile(relative)) {
      if (options.redirect === false) return missing(req, next, site);
      return redirectToDirectory(req, res);
    }
    if (site.index === false) return missing(req, next, site);
    path = join(path, site.index);
    stat = openedOnEngine(engine, path);
    if (stat === null || !stat.isFile) return missing(req, next, site);
    variantsLookedFor = false;
  } else if (!stat.isFile) {
    return missing(req, next, site);
  }
  fileOnEngine(req, res, path, stat, options, engine, variantsLookedFor);
}

/** A regular file the engine opened for this response, answered with it or the variant the client prefers. */
function fileOnEngine(req: Request, res: Response, path: string, stat: OpenedFile, options: FileOptions, engine: FileOpening, variantsLookedFor: boolean): void {
  let encoding: string | null = null;
  if (options.precompressed !== undefined && options.precompressed !== false) {
    varyOnEncoding(res);
    if (!variantsLookedFor) {
      const chosen = variantOnEngine(req, path, options, engine);
      // The file itself was opened first: a variant that can't be opened is refused as it is.
      if (chosen instanceof Unsure) throw chosen.refusal;
      if (chosen !== null) {
        encoding = chosen;
        stat = variantStat!;
      }
    }
  }
  sendOnEngine(req, res, path, stat, encoding, options, engine);
}

/** What the engine opened for the variant `variantOnEngine` chose (read at once, before anything else opens one). */
let variantStat: OpenedFile | null = null;

/**
 * Opens the precompressed variant of `path` the client prefers (the engine keeps it for the
 * answer): its encoding (what was found in `variantStat`), null when the client accepts none
 * that is there, an Unsure when one could not be opened.
 */
function variantOnEngine(req: Request, path: string, options: FileOptions, engine: FileOpening): string | null | Unsure {
  for (const encoding of encodingsWanted(req, options)) {
    const variant = path + VARIANTS[encoding];
    let stat: OpenedFile | null;
    try {
      stat = openedOnEngine(engine, variant);
    } catch (err) {
      return new Unsure(err);
    }
    if (stat !== null && stat.isFile) {
      variantStat = stat;
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

/** Answers with the file the engine opened last (`stat`; `encoding`, a variant's), which the engine sends from where it lies (sendfile) and closes. */
function sendOnEngine(req: Request, res: Response, path: string, stat: OpenedFile, encoding: string | null, options: FileOptions, engine: FileOpening): void {
  const length = answerFile(req, res, path, stat.size, stat.mtimeMs, encoding, options);
  if (length === -1) return;
  const setCaching = cachingSet;
  try {
    // A file that fails to read from here on cuts the connection, as one that fails mid-way does.
    res.setHeader("content-length", length);
    engine[SEND_OPENED_FILE](bodyStart, length);
  } catch (err) {
    if (setCaching && !res.headersSent) res.removeHeader("cache-control");
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

/** The static files through fs.promises (or the cache): the same answers as `serveOnEngine`'s, each step awaited. */
async function serveFromDisk(req: Request, res: Response, next: Next, site: Site, relative: string, path: string): Promise<void> {
  const { options, cache } = site;
  let variantsLookedFor = false;
  if (site.variants && namesFile(relative)) {
    const variant = await chooseVariant(req, path, options, cache);
    if (variant instanceof Unsure) {
      // Opened first below, as before.
    } else if (variant === null) {
      variantsLookedFor = true;
    } else if (await isRegularFile(path, cache)) {
      return sendFound(req, res, path, variant, options, cache, true, variant.encoding);
    } else {
      await variant.file?.close();
    }
  }
  const cached = cache?.get(path);
  if (cached) return sendFound(req, res, path, cached, options, cache, variantsLookedFor);
  const opened = await openFile(path);
  if (opened === null) return missing(req, next, site);
  if (opened.stat.isDirectory) {
    await opened.file.close();
    if (namesFile(relative)) {
      if (options.redirect === false) return missing(req, next, site);
      return redirectToDirectory(req, res);
    }
    if (site.index === false) return missing(req, next, site);
    const indexed = await findFile(join(path, site.index), cache);
    if (indexed === null) return missing(req, next, site);
    return sendFound(req, res, join(path, site.index), indexed, options, cache, false);
  }
  if (!opened.stat.isFile) {
    await opened.file.close();
    return missing(req, next, site);
  }
  const found: Found = { size: opened.stat.size, mtimeMs: opened.stat.mtimeMs, file: opened.file, bytes: null };
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
    return fileOnEngine(req, res, full, stat, options, engine, false);
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
 * the variant, of `encoding`), then `answerFile`, then the body.
 */
async function sendFound(req: Request, res: Response, path: string, found: Found, options: FileOptions, cache: FileCache | null, variantsLookedFor: boolean, encoding: string | null = null): Promise<void> {
  let { file, bytes, size, mtimeMs } = found;
  let closeLater = false;
  let setCaching = false;
  try {
    if (options.precompressed !== undefined && options.precompressed !== false) {
      varyOnEncoding(res);
      if (!variantsLookedFor) {
        const variant = await chooseVariant(req, path, options, cache);
        // The file itself was opened first: a variant that can't be opened is refused as it is.
        if (variant instanceof Unsure) throw variant.refusal;
        if (variant !== null) {
          await file?.close();
          ({ file, bytes, size, mtimeMs, encoding } = variant);
        }
      }
    }
    const length = answerFile(req, res, path, size, mtimeMs, encoding, options);
    if (length === -1) return;
    const start = bodyStart;
    setCaching = cachingSet;
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
    // The error response that follows must not carry the file's freshness (a cache would keep the error).
    if (setCaching && !res.headersSent) res.removeHeader("cache-control");
    throw err;
  } finally {
    if (!closeLater) await file?.close();
  }
}

/** Where the body `answerFile` leaves to send starts, and whether it set Cache-Control: read at once, before anything else answers. */
let bodyStart = 0;

let cachingSet = false;

/**
 * A file's answer but its body, the same whoever sends the body: validators, Cache-Control and
 * the app's headers, the conditionals (412, 304), Range (416, 206), the type and encoding, and
 * HEAD and empty bodies answered whole. Returns -1 when the answer is given; else the length of
 * the body to send from `bodyStart`, with the status set.
 * Its headers go in the engine's store (`setHeader`), where Express middleware that hooks
 * writeHead (compression, through on-headers) looks for them.
 */
function answerFile(req: Request, res: Response, path: string, size: number, mtimeMs: number, encoding: string | null, options: FileOptions): number {
  let setCaching = false;
  try {
    const validators = validatorsOf(size, mtimeMs, encoding);
    const mtime = validators.mtime;
    const etag = options.etag === false ? undefined : validators.etag;
    const lastModified = options.lastModified === false ? undefined : validators.lastModified;

    if (etag !== undefined) res.setHeader("etag", etag);
    if (lastModified !== undefined) res.setHeader("last-modified", lastModified);
    setCaching = res.get("cache-control") === undefined;
    if (setCaching) res.setHeader("cache-control", cacheControlOf(options));
    if (options.headers !== undefined) for (const name of Object.keys(options.headers)) res.setHeader(name, options.headers[name]!);

    // Most requests have none of the headers read below: asked once whether there is any.
    const conditional = (req as InternalRequest).mayBeConditional();
    const precondition = conditional ? checkPreconditions(req, etag, lastModified === undefined ? undefined : mtime) : 200;
    if (precondition === 412) {
      res.status(412).send(`The file at ${req.path} changed: its precondition failed`);
      return -1;
    }
    if (precondition === 304) {
      // The identity file's 200 may have been compressed on the way out: compress() tells the 304 the same.
      if (encoding === null) (res as InternalResponse)[VALIDATES] = { type: typeOf(res, path), length: size };
      res.status(304).send();
      return -1;
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
          return -1;
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
      return -1;
    }
    bodyStart = start;
    cachingSet = setCaching;
    return length;
  } catch (err) {
    // The error response that follows must not carry the file's freshness (a cache would keep the error).
    if (setCaching && !res.headersSent) res.removeHeader("cache-control");
    throw err;
  }
}
