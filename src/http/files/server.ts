import type { IncomingHttpHeaders } from "node:http";
import { constants, promises as fs, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { basename, isAbsolute, join, resolve, sep } from "node:path";
import { contentType } from "mime-types";
import Negotiator from "negotiator";
import parseRange from "range-parser";
import { OPEN_FILE, SEND_FILE, SEND_OPENED_FILE, STAT_FILE, type FileOpening, type FileSending, type OpenedFile, type ResponseSurface } from "../../engines/contract/engine.js";
import { HttpError } from "../../base/errors.js";
import { streamFileRange } from "../../engines/kit/range-stream.js";
import { PENDING, VALIDATES } from "../../base/symbols.js";
import { NODE_OPEN } from "./node-open.js";
import type { FileOptions, SendFileOptions, StaticOptions } from "./options.js";

/**
 * What the file server uses of a request and a response: Cog's helpers (http/request.ts,
 * http/response.ts), named here rather than imported, since the response loads this module for
 * `res.sendFile` (./load.ts) and must not be imported back.
 */
interface Request {
  readonly method?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly path: string;
  readonly originalUrl: string;
}
type InternalRequest = Request & {
  headerValue(name: string): string | undefined;
  mayBeConditional(): boolean;
};
interface Response extends ResponseSurface {
  status(code: number): this;
  set(name: string, value: string | number | readonly string[]): this;
  get(name: string): string | number | readonly string[] | undefined;
  send(body?: unknown): this;
  redirect(status: number, url: string): this;
}
type InternalResponse = Response & {
  [PENDING]: Record<string, string | number | readonly string[]> | null;
  [VALIDATES]: { type: string; length: number } | null;
};
type Next = (err?: unknown) => void;
type Handler = (req: Request, res: Response, next: Next) => unknown;

/**
 * Files from disk as responses: the part of `serveStatic`, `res.sendFile` and `res.download`
 * that is loaded on first use (with its MIME, negotiation and range libraries), so an app that
 * serves no file loads none of it.
 */

/** Bodies up to this size are read whole and sent as one response; larger ones are streamed (or handed to the engine). */
const WHOLE_BODY_MAX = 64 * 1024;
/** The precompressed variants, in the order preferred when the client likes several equally. */
const VARIANTS: Record<string, string> = { br: ".br", zstd: ".zst", gzip: ".gz" };
const NEGOTIATED = [...Object.keys(VARIANTS), "identity"];
/** Codes of a path that names nothing servable: the file is simply not there. */
const MISSING = new Set(["ENOENT", "ENOTDIR", "ENAMETOOLONG", "ELOOP", "EISDIR"]);

/** What is at a path, opened through fs.promises. */
interface Opened {
  file: FileHandle;
  stat: OpenedFile;
}

/**
 * A file to send: open through fs.promises (`file`: read as it is sent; the sender closes it),
 * or its bytes from the cache. (A file the engine opens is sent by `sendOnEngine`.)
 */
interface Found {
  size: number;
  mtimeMs: number;
  file: FileHandle | null;
  bytes: Buffer | null;
}

/**
 * `serveStatic`'s optional in-memory cache: small files' bytes and metadata, kept from their
 * first request on and never read again (so only for files that don't change while the app
 * runs), which precompressed variants are missing, and which files served by a variant are
 * regular files (see `Unsure`). Bounded in total bytes and entries.
 */
class FileCache {
  private readonly files = new Map<string, Found>();
  private readonly missing = new Set<string>();
  private readonly regular = new Set<string>();
  private bytes = 0;
  constructor(
    private readonly maxFileBytes: number,
    private readonly maxBytes: number,
  ) {}

  get(path: string): Found | null | undefined {
    return this.files.get(path) ?? (this.missing.has(path) ? null : undefined);
  }

  noteMissing(path: string): void {
    if (this.missing.size < 10_000) this.missing.add(path);
  }

  isRegular(path: string): boolean {
    return this.regular.has(path);
  }

  noteRegular(path: string): void {
    if (this.regular.size < 10_000) this.regular.add(path);
  }

  /** Keeps an opened regular file that fits (read whole, then closed); else returns it as it is. */
  async keep(path: string, found: Found): Promise<Found> {
    if (found.file === null || found.size > this.maxFileBytes || this.bytes + found.size > this.maxBytes) return found;
    const bytes = Buffer.alloc(found.size);
    try {
      const { bytesRead } = await found.file.read(bytes, 0, found.size, 0);
      if (bytesRead < found.size) return found; // changed meanwhile: sent from disk this time (and reported there)
    } catch {
      return found;
    }
    await found.file.close();
    const kept: Found = { size: found.size, mtimeMs: found.mtimeMs, file: null, bytes };
    // Two first requests at once both read the file: count it once.
    if (!this.files.has(path)) this.bytes += found.size;
    this.files.set(path, kept);
    return kept;
  }
}

function cacheOf(option: StaticOptions["cache"]): FileCache | null {
  if (option === undefined || option === false) return null;
  const limits = option === true ? {} : option;
  return new FileCache(limits.maxFileBytes ?? 256 * 1024, limits.maxBytes ?? 64 * 1024 * 1024);
}

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

/** A regular file at `path` (from the cache if there is one), or null if there is none. */
async function findFile(path: string, cache: FileCache | null): Promise<Found | null> {
  const cached = cache?.get(path);
  if (cached !== undefined) return cached;
  const opened = await openFile(path);
  if (opened === null) return null;
  if (!opened.stat.isFile) {
    await opened.file.close();
    return null;
  }
  const found: Found = { size: opened.stat.size, mtimeMs: opened.stat.mtimeMs, file: opened.file, bytes: null };
  return cache === null ? found : cache.keep(path, found);
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

/**
 * `join(base, relative)` for a decoded request path (it starts with "/"): the two put together
 * when there is nothing to normalize (no "//", and no segment starting with "." once safePath
 * has let it through), as almost every request's path is; else join's.
 */
function below(base: string, relative: string): string {
  if (sep !== "/" || relative.charCodeAt(0) !== 47 /* / */ || relative.includes("//") || relative.includes("/.")) return join(base, relative);
  return base.length === 1 ? relative : base + relative;
}

/** Whether the path names a file rather than a directory (which ends in "/"): the only kind with precompressed variants of its own. */
function namesFile(relative: string): boolean {
  return relative !== "" && relative.charCodeAt(relative.length - 1) !== 47; /* / */
}

/**
 * A request for a file whose variants are looked for is answered, where it can be, from the
 * variant alone: the variant is opened first, and the file itself only checked to be a regular
 * file (a stat: no open, no read, no close), where opening the file and then its variant cost
 * twice the system calls. What is served is what opening the file first would serve: a
 * variant is only sent for a regular file (not for a directory, which is redirected, nor for
 * a file that is gone). `Unsure`: a variant could not be opened for another reason than its
 * absence; the file is then opened first after all, as before, and the error follows there.
 */
class Unsure {
  constructor(readonly refusal: unknown) {}
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

/** Whether `path` is a regular file, by its stat (or the cache's word), without opening it. */
async function isRegularFile(path: string, cache: FileCache | null): Promise<boolean> {
  const cached = cache?.get(path);
  if (cached) return true;
  if (cache?.isRegular(path)) return true;
  try {
    const regular = (await fs.stat(path)).isFile();
    if (regular) cache?.noteRegular(path);
    return regular;
  } catch {
    return false;
  }
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

/**
 * The path of the request below the static root, decoded once: null for a dotfile that is
 * ignored (so the request falls through), an HttpError for one that is refused, or for a
 * spelling that could name something outside the root: `..` segments (written `..`, `%2e%2e`,
 * `%2e.` or across an encoded `%2f`), a backslash (a separator on Windows, raw or `%5c`), NUL,
 * or a malformed or overlong UTF-8 sequence (`%c0%ae`, which decodeURIComponent refuses).
 * Decoding once means `%252e%252e` names the literal file `%2e%2e` inside the root.
 */
function safePath(raw: string, options: FileOptions, urlEncoded = true): string | null | HttpError {
  let path = raw;
  if (urlEncoded && raw.includes("%")) {
    try {
      path = decodeURIComponent(raw);
    } catch {
      return new HttpError(400, `Malformed percent-encoding in the path ${raw}`);
    }
  }
  if (path.includes("\0")) return new HttpError(400, `A NUL byte in the path ${JSON.stringify(raw)}`);
  if (path.includes("\\")) return new HttpError(400, `A backslash in the path ${raw}: use "/"`);
  // No segment starts with "." (no "..", no dotfile) unless one follows a "/" or begins the path: most paths are looked at no further.
  if (!path.includes("/.") && path.charCodeAt(0) !== 46 /* . */) return path;
  const segments = path.split("/");
  if (segments.includes("..")) return new HttpError(403, `Refusing the path ${raw}: ".." would leave the root`);
  if (segments.some((segment) => segment.startsWith(".") && segment !== ".")) {
    const dotfiles = options.dotfiles ?? "ignore";
    if (dotfiles === "deny") return new HttpError(403, `Refusing the path ${raw}: dotfiles are not served (the dotfiles option is "deny")`);
    if (dotfiles === "ignore") return null;
  }
  return path;
}

/**
 * Opens a file through fs.promises and reads its metadata from the descriptor, so what is sent
 * is what was looked at, however the path changes meanwhile; null when nothing is there.
 * Non-blocking, so a FIFO under the root can't hold the open (and a thread of libuv's pool)
 * until a writer comes; it is then refused as not a regular file. (The engine's OPEN_FILE
 * opens the same way: see `openedOnEngine`.)
 */
async function openFile(path: string): Promise<Opened | null> {
  let file: FileHandle;
  try {
    file = await fs.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return refusedOpen(err as NodeJS.ErrnoException, path);
  }
  try {
    return { file, stat: statOf(await file.stat()) };
  } catch (err) {
    await file.close();
    throw err;
  }
}

/** A path that didn't open: null when nothing is there, a 403 when it may not be read, else the error. */
function refusedOpen(err: NodeJS.ErrnoException, path: string): null {
  const code = err.code;
  if (code !== undefined && MISSING.has(code)) return null;
  if (code === "EACCES" || code === "EPERM") throw new HttpError(403, `The file ${path} can't be read (${code}): check its permissions`, { cause: err });
  throw err;
}

function statOf(stat: Stats): OpenedFile {
  return { isFile: stat.isFile(), isDirectory: stat.isDirectory(), size: stat.size, mtimeMs: stat.mtimeMs };
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
 * Opens the precompressed variant of `path` the client prefers, with its encoding: null when
 * the client accepts none that is there, an Unsure when one could not be opened (the error is
 * then the file's to meet again, once it is opened first).
 */
async function chooseVariant(req: Request, path: string, options: FileOptions, cache: FileCache | null): Promise<(Found & { encoding: string }) | null | Unsure> {
  for (const encoding of encodingsWanted(req, options)) {
    const variantPath = path + VARIANTS[encoding];
    let variant: Found | null;
    try {
      variant = await findFile(variantPath, cache);
    } catch (err) {
      return new Unsure(err);
    }
    if (variant !== null) return { ...variant, encoding };
    cache?.noteMissing(variantPath);
  }
  return null;
}

/**
 * The precompressed variants to look for, best first: the encodings the client prefers to the
 * file itself, among those `options.precompressed` lists. None acceptable but the file itself
 * (even after "identity;q=0"): it is sent as it is, as @fastify/static and nginx's gzip_static
 * do, rather than a 406 the client can do nothing with.
 */
function encodingsWanted(req: Request, options: FileOptions): readonly string[] {
  const accept = (req as InternalRequest).headerValue("accept-encoding");
  if (accept === undefined) return NONE;
  const encodings = encodingsFor(accept);
  return options.precompressed === true ? encodings : encodings.filter((encoding) => (options.precompressed as readonly string[]).includes(encoding));
}
const NONE: readonly string[] = [];

/**
 * The encodings the client prefers to none (identity), best first, as negotiator orders them
 * (ties: br, zstd, gzip, identity). Clients send few distinct Accept-Encoding values, and
 * negotiating one costs more than the rest of choosing a variant: each is negotiated once, the
 * answers kept (so many, so a client varying its header can't grow them).
 */
const ENCODINGS = new Map<string, readonly string[]>();
function encodingsFor(accept: string): readonly string[] {
  let encodings = ENCODINGS.get(accept);
  if (encodings === undefined) {
    const negotiator = new Negotiator({ headers: { "accept-encoding": accept } }) as Negotiator & { encodings(available: string[], options: { preferred: string[] }): string[] };
    const all = negotiator.encodings(NEGOTIATED, { preferred: NEGOTIATED });
    const identity = all.indexOf("identity");
    encodings = identity === -1 ? all : all.slice(0, identity);
    if (ENCODINGS.size < 1000) ENCODINGS.set(accept, encodings);
  }
  return encodings;
}

/** A file's ETag (strong: `"size-mtime"` in hex, and the encoding of a variant) and Last-Modified (its time in whole seconds). */
interface Validators {
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
const VALIDATORS = new Map<number, Validators>();
function validatorsOf(size: number, mtimeMs: number, encoding: string | null): Validators {
  const key = (Math.imul(size, 0x9e3779b1) ^ (mtimeMs * 1000) ^ (encoding === null ? 0 : Math.imul(encoding.charCodeAt(0), 0x85ebca6b))) & 0x3fffffff;
  const kept = VALIDATORS.get(key);
  if (kept !== undefined && kept.size === size && kept.mtimeMs === mtimeMs && kept.encoding === encoding) return kept;
  const mtime = Math.floor(mtimeMs / 1000) * 1000;
  const made: Validators = { size, mtimeMs, encoding, etag: `"${size.toString(16)}-${Math.floor(mtimeMs).toString(16)}${encoding === null ? "" : "-" + encoding}"`, lastModified: new Date(mtime).toUTCString(), mtime };
  if (kept !== undefined || VALIDATORS.size < 1000) VALIDATORS.set(key, made);
  return made;
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

/** Cache-Control for the files sent with `options` (the default's string made once: a string made per response is hashed again wherever it is looked up). */
const DEFAULT_CACHING = "public, max-age=0";
function cacheControlOf(options: FileOptions): string {
  if (options.maxAge === undefined && options.immutable !== true) return DEFAULT_CACHING;
  return `public, max-age=${Math.max(0, Math.floor(options.maxAge ?? 0))}${options.immutable === true ? ", immutable" : ""}`;
}

/** The file's Content-Type: the one the app set, else its extension's. */
function typeOf(res: Response, path: string): string {
  const set = res.get("content-type");
  return set !== undefined ? String(set) : typeByName(path);
}

/**
 * The Content-Type of a file: mime-types' for its name's extension (with the charset), kept by
 * extension (so many), as mime-types finds it: the name's last "." onward, or the whole name
 * without one.
 */
const TYPES = new Map<string, string>();
function typeByName(path: string): string {
  // The last "." of the name, found from the end (lastIndexOf is a call into V8's runtime, twice the whole of this).
  let dot = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    const code = path.charCodeAt(i);
    if (code === 46 /* . */) {
      dot = i;
      break;
    }
    if (code === 47 /* / */ || (code === 92 /* \ */ && sep === "\\")) break;
  }
  const extension = dot !== -1 ? path.slice(dot + 1) : basename(path);
  let type = TYPES.get(extension);
  if (type === undefined) {
    type = contentType(basename(path)) || "application/octet-stream";
    if (TYPES.size < 1000) TYPES.set(extension, type);
  }
  return type;
}

/**
 * RFC 9110 13.2.2's order: If-Match, else If-Unmodified-Since (412 when they fail); then, for
 * GET and HEAD, If-None-Match, else If-Modified-Since (304 when the client's copy is current).
 * If-None-Match compares weakly, If-Match strongly; dates at one-second precision.
 */
function checkPreconditions(req: Request, etag: string | undefined, mtime: number | undefined): 200 | 304 | 412 {
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
function listHas(list: string, etag: string, weak: boolean): boolean {
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
function rfcRanges(header: string, size: number): string {
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
function ifRangeHolds(ifRange: string | undefined, etag: string | undefined, mtime: number): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith("W/")) return etag !== undefined && value === etag;
  const date = Date.parse(value);
  return !Number.isNaN(date) && date === mtime;
}
