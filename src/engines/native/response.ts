import type { AsyncResource } from "node:async_hooks";
import { ServerResponse, STATUS_CODES, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import { constants as osConstants } from "node:os";
import { getSystemErrorName } from "node:util";
import { isStatus } from "../kit/compat.js";
import { OPEN_FILE, STAT_FILE, type OpenedFile } from "../contract/engine.js";
import { type NativeRequest, type NativeSocket } from "./request.js";
import { NativeServerResponse } from "./server-response.js";
import { underNodeClass } from "./node-class.js";
import { RESPONSE_CLOSE, RESPONSE_HAS_DATE, type NativeAddon } from "../kit/addon.js";
import { ADDON, FORGET, GONE, HEAD, HEAD_LOWER, HEAD_REASON, HEAD_STATUS, ID, KNOWN, SCOPE, SERVER, STORE, STORES } from "../../base/symbols.js";
import { responseFinish } from "./http-channels.js";

/** Called once per request, when the engine has forgotten it (`aborted`: without an answer). */
export type Forget = (res: NativeResponse, aborted: boolean) => void;

/**
 * A response on the native engine: what the contract's `ResponseSurface` asks, over the engine's
 * whole response in one call, or a stream of chunks. The host makes its class from this one with
 * Cog's helpers (`EngineHost.responseClass`).
 */
export class NativeResponse extends NativeServerResponse {
  /** @internal */ declare [ADDON]: NativeAddon;
  /** @internal */ declare [FORGET]: Forget;
  /** @internal */ declare [KNOWN]: BlockNode | null;
  /** @internal What its request entered in its async context (see request-context.ts). */ declare [STORES]: Record<PropertyKey, unknown> | null;
  /** @internal Its request's AsyncResource, where the engine makes one (see request-context.ts). */ declare [SCOPE]: AsyncResource | null;

  /** The request this answers (as Node's `res.req`). */
  constructor(readonly req: NativeRequest) {
    super();
  }

  /**
   * The connection, as node:http's `res.socket` (on-finished listens to its 'close' to learn of a
   * client that left): the request's, until the response has finished, then null.
   */
  get socket(): NativeSocket | null {
    return this.writableFinished ? null : this.req.socket;
  }
  /** Assignable, as on node:http (where it is a plain property). */
  set socket(value: NativeSocket | null) {
    Object.defineProperty(this, "socket", { value, writable: true, configurable: true, enumerable: true });
  }
  /** Node's older name for `socket`. */
  get connection(): NativeSocket | null {
    return this.socket;
  }

  /**
   * writeHead, with a shortcut for the usual response: no `setHeader` store, no reason phrase,
   * and every line one the block cache holds (a lower-case name and a string value). The cache
   * only holds lines that passed the checks when they were first sent, so these need none again,
   * and the walk that finds them finds the block too (two Map lookups a line instead of four, and
   * one pass over the headers instead of two).
   */
  override writeHead(status: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    if (this[STORE] === null && !this.headersSent && typeof reason === "object" && !Array.isArray(reason) && headers === undefined && this.statusMessage === undefined && isStatus(status)) {
      let node: BlockNode | null = BLOCKS;
      for (const name in reason) {
        const value = reason[name];
        const next: BlockNode | null = typeof value === "string" ? node.known(name, value) : null;
        if (next === null) return super.writeHead(status, reason);
        node = next;
      }
      this.statusCode = status;
      this[HEAD_STATUS] = status;
      this[HEAD] = reason;
      this[HEAD_LOWER] = true;
      this.headersSent = true;
      this[KNOWN] = node;
      return this;
    }
    return super.writeHead(status, reason, headers);
  }

  /** @internal */
  protected sendWhole(body: string | Buffer | undefined): void {
    this.keepConnection();
    const known = this[KNOWN];
    // The request id, when the app echoes one, goes beside the block (it differs every time), so a kept block still serves.
    const echoed = this.echoedRequestId();
    if (known === null || this[STORE] !== null) return this.sendBuilt(body, echoed);
    const addon = this[ADDON];
    const flags = (this.shouldKeepAlive ? 0 : RESPONSE_CLOSE) | (known.hasDate ? RESPONSE_HAS_DATE : 0);
    if (echoed === undefined) addon.respond(this.req[ID], this[HEAD_STATUS], known.keptBy(addon), body ?? "", flags, -1);
    else addon.respond(this.req[ID], this[HEAD_STATUS], known.keptBy(addon), body ?? "", flags, -1, undefined, echoed);
  }

  /** `sendWhole` with a head not found whole in the block cache (built from `setHeader`'s store, or lines past the cache). */
  private sendBuilt(body: string | Buffer | undefined, echoed: string | undefined): void {
    const addon = this[ADDON];
    const head = this.headBlock(typeof body === "string");
    const block = head.node !== null ? head.node.keptBy(addon) : head.block;
    const reason = this.reason();
    if (reason === undefined && echoed === undefined) addon.respond(this.req[ID], this[HEAD_STATUS], block, body ?? "", head.flags, head.declared);
    else addon.respond(this.req[ID], this[HEAD_STATUS], block, body ?? "", head.flags, head.declared, reason, echoed);
  }

  /**
   * The engine contract's opened files (see `OPEN_FILE`): the addon opens the file on the
   * loop's thread and keeps it for this response (a request already gone keeps nothing).
   */
  [OPEN_FILE](path: string): OpenedFile | string {
    const found = this[ADDON].openFile(this.req[ID], path, STAT);
    if (found === 0) return { isFile: true, isDirectory: false, size: STAT[0]!, mtimeMs: STAT[1]! * 1000 + STAT[2]! / 1e6 };
    if (found > 0) return { isFile: false, isDirectory: found === 1, size: 0, mtimeMs: 0 };
    return errorName(found);
  }

  /** The engine contract's look at a path without opening it (see `STAT_FILE`). */
  [STAT_FILE](path: string): "file" | "directory" | "other" | string {
    const found = this[ADDON].statFile(path);
    return found >= 0 ? KINDS[found]! : errorName(found);
  }

  /** @internal */
  protected sendOpenedFile(position: number, length: number): void {
    this.keepConnection();
    const addon = this[ADDON];
    const head = this.headBlock(false);
    const block = head.node !== null ? head.node.keptBy(addon) : head.block;
    const reason = this.reason();
    const echoed = this.echoedRequestId();
    if (reason === undefined && echoed === undefined) addon.respond(this.req[ID], this[HEAD_STATUS], block, position, head.flags, length);
    else addon.respond(this.req[ID], this[HEAD_STATUS], block, position, head.flags, length, reason, echoed);
  }

  /** @internal */
  protected startStream(): void {
    const head = this.headBlock(false);
    const block = head.node !== null ? head.node.block : head.block;
    this[ADDON].streamStart(this.req[ID], this[HEAD_STATUS], block, head.flags, head.declared, this.reason(), this.echoedRequestId());
  }

  /** @internal */
  protected sendChunk(chunk: Buffer): boolean {
    return this[ADDON].streamWrite(this.req[ID], chunk);
  }

  /** @internal */
  protected sendFileBody(fd: number, position: number, length: number): boolean {
    return this[ADDON].streamFile(this.req[ID], fd, position, length);
  }

  /** @internal */
  protected endStream(): void {
    this.keepConnection();
    const trailers = this.trailers();
    if (trailers === null || trailers === "") this[ADDON].streamEnd(this.req[ID]);
    else this[ADDON].streamEnd(this.req[ID], trailers);
  }

  /** @internal HTTP/2 sends trailers after any body (see `addTrailers`). */
  protected override sendsTrailers(): boolean {
    return this.req.httpVersionMajor >= 2 || super.sendsTrailers();
  }

  /** @internal */
  protected cut(): void {
    if (!this.req[GONE]) this[ADDON].destroy(this.req[ID]);
  }

  /** @internal */
  protected release(aborted: boolean): void {
    this[FORGET](this, aborted);
  }

  /**
   * Before the engine is handed the end of the response (and forgets the request): keeps the
   * connection's addresses for those who read them once it is finished, 'finish' and 'close'
   * listeners (`req.socket.remoteAddress`, `remotePort`) and http.server.response.finish's
   * subscribers. Only a response someone listens to pays for it.
   */
  private keepConnection(): void {
    if (this._events !== undefined || responseFinish.hasSubscribers) this.req.socket.keep();
  }

  /** @internal */
  finishMessage(): object {
    const request = this.req;
    return { request, response: this, socket: request.socket, server: request[SERVER] };
  }

  /** The reason phrase to send when it isn't the status's usual one. */
  private reason(): string | undefined {
    const message = this[HEAD_REASON];
    // As node:http: an empty one means the status's own (`statusMessage ||= …`).
    return !message || message === STATUS_CODES[this[HEAD_STATUS]] ? undefined : message;
  }

  /**
   * The headers as the engine takes them: `name: value\r\n` lines, with Content-Length,
   * Transfer-Encoding and Connection left to the engine (it frames the body; "close" becomes a
   * flag). `textBody`: the whole body is a string, in which case
   * node:http writes non-ASCII header values as UTF-8 (they go out with the body); otherwise as
   * latin1. The engine writes the block as latin1, so a UTF-8 one is spelled out byte by byte.
   * @internal
   */
  headBlock(textBody: boolean): HeadBlock {
    const head: HeadBlock = { block: "", node: BLOCKS, flags: this.shouldKeepAlive ? 0 : RESPONSE_CLOSE, declared: -1, utf8: textBody };
    this.eachHeader(addHeader, head);
    return head;
  }
}

interface HeadBlock {
  /** The lines, when they are not in the cache (`node` is then null). */
  block: string;
  /** The cached block of the lines so far (all of them, once `eachHeader` is done). */
  node: BlockNode | null;
  flags: number;
  declared: number;
  /** Non-ASCII values go out as UTF-8 bytes (see `headBlock`). */
  utf8: boolean;
}

const NON_ASCII = /[^\x00-\x7f]/;
/** Where the addon writes an opened file's size and modification time (seconds, nanoseconds). */
const STAT = new Float64Array(3);
/** What the addon's `statFile` answers, by its number. */
const KINDS = ["file", "directory", "other"] as const;
const NO_ENTRY = -osConstants.errno.ENOENT;
/** A negated errno's name: the everyday one (a precompressed variant that isn't there) without looking it up. */
function errorName(errno: number): string {
  return errno === NO_ENTRY ? "ENOENT" : getSystemErrorName(errno);
}

function addHeader(head: HeadBlock, name: string, value: string): void {
  switch (name) {
    case "content-length":
      head.declared = Number(value);
      return;
    case "transfer-encoding":
      return;
    case "connection":
      if (value.toLowerCase() === "close") head.flags |= RESPONSE_CLOSE;
      return;
    case "date":
      head.flags |= RESPONSE_HAS_DATE;
  }
  const node = head.node;
  if (node !== null) {
    const next = node.next(name, value);
    if (next !== null) {
      head.node = next;
      return;
    }
    head.block = node.block;
    head.node = null;
  }
  // Lines past the cache: only these can hold non-ASCII values (the cache takes ASCII only).
  if (head.utf8 && NON_ASCII.test(value)) value = Buffer.from(value, "utf8").toString("latin1");
  head.block += `${name}: ${value}\r\n`;
}

/**
 * Header blocks already built, found by their lines in order (a trie on names and values).
 * Responses repeat the same few header sets, and finding one costs two Map lookups a line where
 * building it costs three string concatenations a line and, when the engine copies it out, a
 * walk over every piece (~1,000 instructions for two headers). A block sent once is also kept by
 * the engine, checked there once, and later sent as its number: copying it out and checking it
 * again cost ~300 instructions a response. Bounded in nodes and length, so varying values can't
 * grow it (or the engine's copies) without limit: past the bounds, blocks are built as before.
 * ASCII values only: how node:http writes others depends on the body (see `headBlock`).
 */
class BlockNode {
  readonly children = new Map<string, Map<string, BlockNode>>();
  /** The engine's number for this block once it keeps it; -1 until the block is first sent. */
  private kept = -1;
  constructor(
    readonly block: string,
    /** The block has a Date line (so the engine adds none). */
    readonly hasDate: boolean,
  ) {}

  /** The block with one more line, if the cache holds it. */
  known(name: string, value: string): BlockNode | null {
    return this.children.get(name)?.get(value) ?? null;
  }

  keptBy(addon: NativeAddon): number {
    if (this.kept === -1) this.kept = addon.keepHeaderBlock(this.block);
    return this.kept;
  }

  next(name: string, value: string): BlockNode | null {
    let byValue = this.children.get(name);
    const found = byValue?.get(value);
    if (found !== undefined) return found;
    // X-Request-Id differs on every response: caching it would only fill the cache (the access
    // log's echo of it doesn't come here: see `echoedRequestId`).
    if (blockNodes >= 1000 || this.block.length + name.length + value.length > 2048 || name === "x-request-id" || NON_ASCII.test(value)) return null;
    if (byValue === undefined) this.children.set(name, (byValue = new Map()));
    const child = new BlockNode(`${this.block}${name}: ${value}\r\n`, this.hasDate || name === "date");
    byValue.set(value, child);
    blockNodes++;
    return child;
  }
}
const BLOCKS = new BlockNode("", false);
let blockNodes = 0;

Object.assign(NativeResponse.prototype, { [KNOWN]: null, [STORES]: null, [SCOPE]: null });

// A ServerResponse, as node:http's responses are. Node's members that work here, through the
// header store: `setHeaders` (setHeader for each), `getRawHeaderNames` (Node's private header
// table, see server-response.ts), `pipe` (an error: a response can't be read), and the handler of
// a listener's rejected promise (destroy).
underNodeClass(NativeResponse.prototype, NativeServerResponse.prototype, ServerResponse.prototype, new Set<PropertyKey>(["setHeaders", "getRawHeaderNames", "pipe", Symbol.for("nodejs.rejection")]));
