import type { OutgoingHttpHeaders } from "node:http";
import { availableParallelism } from "node:os";
import * as zlib from "node:zlib";
import type { Transform } from "node:stream";
import type { Handler } from "./handler.js";
import type { Request } from "./request.js";
import { FRAME_BODY, type BodyFraming } from "../engines/contract/engine.js";
import type { InternalResponse, Response } from "./response.js";
import { PENDING, VALIDATES } from "../base/symbols.js";

/** A content coding Cog compresses with. */
export type Encoding = "br" | "zstd" | "gzip" | "deflate";

export interface CompressOptions {
  /** Smallest body compressed, in bytes (default 1024). A streamed body of unknown length is compressed whatever its size. */
  threshold?: number;
  /**
   * Whole bodies up to this many bytes are compressed on the JavaScript thread; larger ones, and
   * streams, on libuv's thread pool (default 8192, or 65536 when the process may run on one CPU
   * only; 0: always on the thread pool). A small body takes less time to compress than its round
   * trip through the pool costs, and on one CPU the pool cannot compress beside the JavaScript
   * thread anyway.
   */
  syncLimit?: number;
  /**
   * The codings offered, best first: the client's q-values decide, this order breaks ties.
   * Default `["br", "zstd", "gzip", "deflate"]`; zstd only where Node has it (22.15+).
   */
  encodings?: readonly Encoding[];
  /** zlib level for gzip and deflate, 0-9 (default 6, zlib's own). */
  level?: number;
  /** Brotli quality, 0-11 (default 4: near gzip's speed, smaller output; 11 costs ~20x the CPU). */
  brotliQuality?: number;
  /** zstd level, 1-22 (default 3, zstd's own). */
  zstdLevel?: number;
}

/** Whether the running Node compresses zstd (node:zlib has it from Node 22.15 and 23.8). */
export const ZSTD = typeof (zlib as { createZstdCompress?: unknown }).createZstdCompress === "function";

/** A zlib compressing stream (each has `flush`). */
type Compressor = Transform & { flush(callback?: () => void): void };
type Codec = { stream(): Compressor; whole(body: Buffer, done: (err: Error | null, out: Buffer) => void): void; wholeSync(body: Buffer): Buffer };
interface Settings {
  readonly threshold: number;
  readonly syncLimit: number;
  readonly offered: string[];
  readonly codecs: Record<string, Codec>;
}
/** negotiator and compressible, loaded on the first `compress()` (an app that never compresses never loads them). */
interface Deps {
  readonly Negotiator: typeof import("negotiator");
  readonly compressible: typeof import("compressible");
}
let deps: Deps | null = null;
let loading: Promise<Deps> | null = null;
function loadDeps(): Promise<Deps> {
  return (loading ??= Promise.all([import("negotiator"), import("compressible")]).then(
    ([n, c]) => (deps = { Negotiator: n.default, compressible: c.default }),
  ));
}

/**
 * Compresses responses (`app.use(compress())`, or a route's `{ compress: true }`): `send`,
 * `json`, piped streams, `res.write` streams and SSE, with the coding the client's
 * Accept-Encoding prefers (q-values, `*`, `identity;q=0`). Skipped: bodies under the threshold,
 * types mime-db does not call compressible (images, archives…), `Cache-Control: no-transform`,
 * HEAD, 1xx/204/206/304, and responses that have a Content-Encoding already. Adds
 * `Vary: Accept-Encoding` to every response whose type it would compress, whatever its status. A
 * strong ETag becomes weak (`W/"…"`), as nginx does: the compressed bytes are not the ones the
 * tag named; a file's 304 gets the form its 200 had (RFC 9110 §15.4.5).
 *
 * When no coding is acceptable (`identity;q=0` and nothing else), the response goes out
 * uncompressed, as RFC 9110 12.5.3 recommends (rather than a 406).
 *
 * A whole body is compressed in one call: on the JavaScript thread up to `syncLimit` bytes,
 * where that costs less than a round trip through libuv's thread pool, and on the pool beyond
 * (zlib's asynchronous API), so a large body never stalls the loop. A stream is compressed
 * chunk by chunk on the pool, with backpressure; each write of a `text/event-stream` is
 * flushed at once, so every event reaches the client.
 */
export function compress(options: CompressOptions = {}): Handler {
  const settings = resolve(options);
  void loadDeps();
  return (req, res, next) => {
    if (deps === null) {
      loadDeps().then(() => {
        wrap(req, res, settings);
        next();
      }, next);
      return;
    }
    wrap(req, res, settings);
    next();
  };
}

/**
 * 8 KiB, or 64 KiB when the process may run on one CPU only (its affinity, and from Node 22.12 a
 * cgroup quota: `os.availableParallelism()`). There the thread pool's threads share the JavaScript
 * thread's CPU, so a body handed to them is not compressed beside the loop's work, only later,
 * after two round trips (a write, then the finish) that cost more than compressing an 8-64 KiB
 * body does: docs/decisions/compression.md.
 */
function defaultSyncLimit(): number {
  return availableParallelism() === 1 ? 64 * 1024 : 8192;
}

function resolve(options: CompressOptions): Settings {
  const threshold = options.threshold ?? 1024;
  if (!Number.isInteger(threshold) || threshold < 0) throw new RangeError(`compress: threshold must be a whole number >= 0, got ${String(threshold)}`);
  const syncLimit = options.syncLimit ?? defaultSyncLimit();
  if (!Number.isInteger(syncLimit) || syncLimit < 0) throw new RangeError(`compress: syncLimit must be a whole number >= 0, got ${String(syncLimit)}`);
  const level = options.level ?? zlib.constants.Z_DEFAULT_COMPRESSION;
  const quality = options.brotliQuality ?? 4;
  const zstdLevel = options.zstdLevel ?? 3;
  const brotli = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality } };
  const codecs: Record<string, Codec> = {
    gzip: {
      stream: () => zlib.createGzip({ level }),
      whole: (body, done) => zlib.gzip(body, { level }, done),
      wholeSync: (body) => zlib.gzipSync(body, { level }),
    },
    deflate: {
      stream: () => zlib.createDeflate({ level }),
      whole: (body, done) => zlib.deflate(body, { level }, done),
      wholeSync: (body) => zlib.deflateSync(body, { level }),
    },
    br: {
      stream: () => zlib.createBrotliCompress(brotli),
      whole: (body, done) => zlib.brotliCompress(body, brotli, done),
      wholeSync: (body) => zlib.brotliCompressSync(body, brotli),
    },
  };
  if (ZSTD) {
    const z = zlib as unknown as {
      createZstdCompress(o: object): Compressor;
      zstdCompress(b: Buffer, o: object, cb: (e: Error | null, r: Buffer) => void): void;
      zstdCompressSync(b: Buffer, o: object): Buffer;
      constants: Record<string, number>;
    };
    const zstd = { params: { [z.constants.ZSTD_c_compressionLevel!]: zstdLevel } };
    codecs.zstd = {
      stream: () => z.createZstdCompress(zstd),
      whole: (body, done) => z.zstdCompress(body, zstd, done),
      wholeSync: (body) => z.zstdCompressSync(body, zstd),
    };
  }
  const wanted = options.encodings ?? ["br", "zstd", "gzip", "deflate"];
  for (const name of wanted) {
    if (!["br", "zstd", "gzip", "deflate"].includes(name))
      throw new RangeError(`compress: unknown encoding ${JSON.stringify(name)}; use br, zstd, gzip or deflate`);
  }
  const offered = wanted.filter((name) => codecs[name] !== undefined);
  return { threshold, syncLimit, offered: [...offered, "identity"], codecs };
}

/** The methods `wrap` takes over, in the reverse of the order it assigns them (see `restore`). */
const UNWRAP_ORDER = ["end", "write", "flushHeaders", "writeHead"] as const;

/** What the response does once its head is decided. */
const enum Mode {
  Undecided,
  /** Sent as it is: the wrapper has stepped aside. */
  Identity,
  /** Compressed; the head waits for the first write (a stream) or `end` (a whole body, then with its compressed length). */
  Compressing,
}

/**
 * Takes over the response's writeHead, write, end and flushHeaders for this response only:
 * the head is decided when it would be written, and held until the body tells whether it is
 * whole (compressed in one call, with its Content-Length) or a stream.
 */
function wrap(req: Request, res: Response, settings: Settings): void {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- stands for any of the response's write methods, whatever their signature
  type Method = (this: Response, ...args: any[]) => any;
  const original: Record<"writeHead" | "write" | "end" | "flushHeaders", Method> = {
    writeHead: res.writeHead,
    write: res.write,
    end: res.end,
    flushHeaders: res.flushHeaders,
  };
  let mode = Mode.Undecided;
  let status = 200;
  let head: OutgoingHttpHeaders = {};
  let codec: Codec | null = null;
  let stream: Compressor | null = null;
  let eventStream = false;
  let etag: OutgoingHttpHeaders["etag"];
  /** The length of the body `end` is about to send, when `end` is what writes the head. */
  let ending = -1;

  // Which methods were the response's own before (another middleware's wrapper) rather than its class's.
  const wrapped = (Object.keys(original) as (keyof typeof original)[]).filter((name) => Object.hasOwn(res, name));
  /**
   * Steps aside: the methods are the class's again (not copies of them), so that Cog's file
   * helpers see an unwrapped response and send an incompressible file the engine's own way.
   * Deleted last-added first: V8 then takes each delete back to the response's previous hidden
   * class, where deleting any other property first turns the response into a dictionary of
   * properties, which every later read of its fields (Node's own `end`, `_send`, 'finish'
   * handling) pays for.
   */
  const restore = () => {
    for (const name of UNWRAP_ORDER) {
      if (wrapped.includes(name)) res[name] = original[name] as never;
      else delete (res as unknown as Record<string, unknown>)[name];
    }
  };
  const realHead = (length: number) => {
    if (length >= 0) head["content-length"] = length;
    original.writeHead.call(res, status, head);
  };

  res.writeHead = function (this: Response, code: number, reason?: unknown, headers?: unknown): Response {
    if (typeof reason === "string") this.statusMessage = reason;
    else headers = reason;
    if (mode !== Mode.Undecided || (headers !== undefined && (typeof headers !== "object" || Array.isArray(headers)))) {
      // A second head (an error), or headers as a list: left to the engine as they are.
      restore();
      return original.writeHead.call(this, code, headers as OutgoingHttpHeaders);
    }
    const decided = decide(req, this, code, (headers ?? {}) as OutgoingHttpHeaders, settings, ending);
    if (decided === null || decided.encoding === null) {
      mode = Mode.Identity;
      restore();
      // Set once the methods are gone (see `restore`): the first `res.set` adds a property.
      if (decided !== null) this.set("vary", decided.vary as string);
      return original.writeHead.call(this, code, headers as OutgoingHttpHeaders);
    }
    mode = Mode.Compressing;
    status = code;
    head = decided.head;
    codec = settings.codecs[decided.encoding]!;
    eventStream = decided.eventStream;
    etag = decided.etag;
    return this;
  } as Response["writeHead"];

  res.flushHeaders = function (this: Response): void {
    if (mode === Mode.Undecided) this.writeHead(this.statusCode);
    if (mode === Mode.Compressing) startStream(this);
    original.flushHeaders.call(this);
  };

  res.write = function (this: Response, chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (mode === Mode.Undecided && !this.headersSent) this.writeHead(this.statusCode);
    if (mode !== Mode.Compressing || this.writableEnded || this.destroyed)
      return original.write.call(this, chunk, encoding as BufferEncoding, callback as () => void);
    const compressor = startStream(this);
    const ready =
      typeof encoding === "function" || encoding === undefined
        ? compressor.write(chunk, encoding as () => void)
        : compressor.write(chunk, encoding as BufferEncoding, callback as () => void);
    // Each event of an event stream goes out now, not when zlib's window fills.
    if (eventStream) compressor.flush();
    return ready;
  } as Response["write"];

  res.end = function (this: Response, chunk?: unknown, encoding?: unknown, callback?: unknown): Response {
    if (typeof chunk === "function") [chunk, callback] = [undefined, chunk];
    else if (typeof encoding === "function") [encoding, callback] = [undefined, encoding];
    if (this.writableEnded) return original.end.call(this, chunk, encoding as BufferEncoding, callback as () => void);
    const body = chunk === undefined || chunk === null ? Buffer.alloc(0) : toBuffer(chunk, encoding as BufferEncoding | undefined);
    if (mode === Mode.Undecided && !this.headersSent) {
      ending = body.length;
      this.writeHead(this.statusCode);
    }
    if (mode !== Mode.Compressing) return original.end.call(this, chunk, encoding as BufferEncoding, callback as () => void);
    if (stream !== null) {
      stream.end(body.length > 0 ? body : undefined);
      if (typeof callback === "function") this.once("finish", callback as () => void);
      return this;
    }
    // A whole body: compressed in one call, sent with its length; one too small to gain goes
    // out as it is. Up to syncLimit here (docs/decisions/compression.md), beyond on the pool.
    restore();
    const asItIs = () => {
      delete head["content-encoding"];
      if (etag !== undefined) head.etag = etag;
    };
    if (body.length < settings.threshold) {
      asItIs();
      realHead(body.length);
      return original.end.call(this, body, callback as () => void);
    }
    const send = (err: Error | null, compressed: Buffer) => {
      if (err !== null) {
        // zlib failing on a buffer is a bug of zlib's: the body goes out as it is rather than not at all.
        asItIs();
        compressed = body;
      }
      realHead(compressed.length);
      return original.end.call(this, compressed, callback as () => void);
    };
    if (body.length <= settings.syncLimit) {
      let compressed: Buffer;
      try {
        compressed = codec!.wholeSync(body);
      } catch (err) {
        return send(err as Error, body);
      }
      return send(null, compressed);
    }
    codec!.whole(body, (err, compressed) => {
      if (!this.destroyed) send(err, compressed);
    });
    return this;
  } as Response["end"];

  /** The compressing stream, made (and the head sent, chunked) on the first write. */
  function startStream(res: Response): Compressor {
    if (stream !== null) return stream;
    realHead(-1);
    const compressor = (stream = codec!.stream());
    compressor.on("data", (data: Buffer) => {
      // The connection is full: hold zlib's output (and so, soon, its input) until it drains.
      if (!original.write.call(res, data)) {
        compressor.pause();
        res.once("drain", () => compressor.resume());
      }
    });
    compressor.on("drain", () => res.emit("drain"));
    compressor.on("end", () => original.end.call(res));
    compressor.on("error", (err) => res.destroy(err));
    res.once("close", () => compressor.destroy());
    return compressor;
  }
}

interface Decision {
  readonly encoding: string;
  readonly head: OutgoingHttpHeaders;
  readonly eventStream: boolean;
  /** The ETag as the app set it (before it was weakened). */
  readonly etag: OutgoingHttpHeaders["etag"];
}

/** Sent as it is, with the Vary header `addVary` made: its compression depended on the request. */
interface AsItIs {
  readonly encoding: null;
  readonly vary: OutgoingHttpHeaders["vary"];
}

/**
 * Whether and how to compress, from the head about to be written: null (or AsItIs) to send it as it is.
 * `given`: the headers passed to writeHead; `ending`: the body's length when known.
 */
function decide(req: Request, res: Response, status: number, given: OutgoingHttpHeaders, settings: Settings, ending: number): Decision | AsItIs | null {
  const pending = (res as InternalResponse)[PENDING];
  // Every header the response has, lower-cased, writeHead's over res.set's over setHeader's.
  const head: OutgoingHttpHeaders = { ...res.getHeaders(), ...(pending as OutgoingHttpHeaders | null) };
  for (const name of Object.keys(given)) head[name.toLowerCase()] = given[name];
  // A 304 has no body, but the 200 it stands for may have had one: it is decided as that 200 was.
  const validated = status === 304 ? (res as InternalResponse)[VALIDATES] : null;
  if (status < 200 || status === 204 || (status === 304 && validated === null)) return null;
  const encodingHeader = head["content-encoding"];
  if (encodingHeader !== undefined && String(encodingHeader).toLowerCase() !== "identity") return null;
  if (/(?:^|,)\s*no-transform\s*(?:,|$)/i.test(String(head["cache-control"] ?? ""))) return null;
  const type = validated?.type ?? head["content-type"];
  if (type === undefined || !deps!.compressible(String(type))) return null;
  // From here, whether it is compressed depends on the request: caches must know, whatever the status.
  addVary(res, head);
  // Partial content is a range of the identity body's bytes: compressing it would make nonsense of them.
  if (status === 206 || head["content-range"] !== undefined || req.method === "HEAD") return kept(head);
  // An engine that frames the body itself answers its length (see `FRAME_BODY`).
  const frame = (res as BodyFraming)[FRAME_BODY];
  const declared = validated?.length ?? head["content-length"] ?? (frame === undefined ? undefined : res.getHeader("content-length"));
  const length = ending >= 0 ? ending : declared === undefined ? -1 : Number(declared);
  if (length >= 0 && length < settings.threshold) return kept(head);
  const accept = req.headerValue("accept-encoding");
  const negotiator = new deps!.Negotiator({ headers: { "accept-encoding": accept } });
  const encoding = (negotiator.encodings as (available: string[], options: { preferred: string[] }) => string[])(settings.offered, {
    preferred: settings.offered,
  })[0];
  if (encoding === undefined || encoding === "identity") return kept(head);
  if (validated !== null) {
    // The 200 went out compressed, so with the weak tag: the 304 validating it names the same.
    const etag = head.etag;
    if (typeof etag === "string" && etag.startsWith('"')) res.set("etag", `W/${etag}`);
    return kept(head);
  }
  // The head now describes the compressed body: its length is not known yet, its tag is weak.
  delete head["content-length"];
  if (pending !== null) delete pending["content-length"];
  if (res.hasHeader("content-length")) res.removeHeader("content-length");
  frame?.call(res, undefined);
  const etag = head.etag;
  if (typeof etag === "string" && etag.startsWith('"')) head.etag = `W/${etag}`;
  head["content-encoding"] = encoding;
  return { encoding, head, eventStream: String(type).toLowerCase().startsWith("text/event-stream"), etag };
}

function kept(head: OutgoingHttpHeaders): AsItIs {
  return { encoding: null, vary: head.vary };
}

/** `Vary: Accept-Encoding`, added to what the response varies on already. */
function addVary(res: Response, head: OutgoingHttpHeaders): void {
  const vary = head.vary;
  const list = vary === undefined ? "" : Array.isArray(vary) ? vary.join(", ") : String(vary);
  if (/(?:^|,)\s*(?:\*|accept-encoding)\s*(?:,|$)/i.test(list)) return;
  head.vary = list === "" ? "Accept-Encoding" : `${list}, Accept-Encoding`;
}

function toBuffer(chunk: unknown, encoding: BufferEncoding | undefined): Buffer {
  if (typeof chunk === "string") return Buffer.from(chunk, encoding ?? "utf8");
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError(`res.end() takes a string, Buffer or Uint8Array; got ${typeof chunk}`);
}
