import type { OutgoingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { withResponseHelpers } from "../../response.js";
import { BufferedResponse } from "./response-base.js";
import { RESPONSE_CLOSE, RESPONSE_HAS_DATE, type NativeAddon } from "./load.js";
import type { NativeRequest } from "./request.js";

/** What Cog's response helpers need, over the native engine: the whole response goes in one call. */
class NativeResponseBase extends BufferedResponse {
  /** @internal Resumes a paused stream once the engine has sent what it held. */
  onDrain: (() => void) | null = null;

  constructor(
    /** @internal */ readonly addon: NativeAddon,
    /** @internal */ readonly request: NativeRequest,
    /** @internal Called once, when the engine has forgotten the request. */
    readonly onDone: (res: NativeResponseBase) => void,
  ) {
    super();
  }

  /** @internal The cached block of `writeHead`'s headers, when it found every line in the cache. */
  declare known: BlockNode | null;

  /**
   * Node's writeHead, with a shortcut for the usual response: no `setHeader` store, and every
   * line one the block cache holds (a lower-case name and a string value). The cache only holds
   * lines that passed the checks when they were first sent, so these need none again, and the
   * walk that finds them finds the block too (two Map lookups a line instead of four, and one
   * pass over the headers instead of two).
   */
  override writeHead(status: number, headers: OutgoingHttpHeaders): this {
    if (this.store === null && !this.headersSent) {
      let node: BlockNode | null = BLOCKS;
      for (const name in headers) {
        const value = headers[name];
        const next: BlockNode | null = typeof value === "string" ? node.known(name, value) : null;
        if (next === null) return super.writeHead(status, headers);
        node = next;
      }
      this.statusCode = status;
      this.head = headers;
      this.headLower = true;
      this.headersSent = true;
      this.known = node;
      return this;
    }
    return super.writeHead(status, headers);
  }

  /** @internal */
  flush(body: string | Buffer | undefined): void {
    const { addon, request } = this;
    if (this.streaming) {
      if (body !== undefined) addon.streamWrite(request.id, body);
      addon.streamEnd(request.id);
      return;
    }
    const known = this.known;
    if (known !== null && this.store === null) {
      const flags = (this.shouldKeepAlive ? 0 : RESPONSE_CLOSE) | (known.hasDate ? RESPONSE_HAS_DATE : 0);
      addon.respond(request.id, this.statusCode, known.keptBy(addon), body ?? "", flags, -1);
      return;
    }
    const head = this.headBlock();
    const block = head.node !== null ? head.node.keptBy(addon) : head.block;
    addon.respond(request.id, this.statusCode, block, body ?? "", head.flags, head.declared);
  }

  /**
   * The headers as the engine takes them: `name: value\r\n` lines, with Content-Length,
   * Transfer-Encoding and Connection left to the engine (it frames the body; "close" becomes a flag).
   * @internal
   */
  headBlock(): HeadBlock {
    const head: HeadBlock = { block: "", node: BLOCKS, flags: this.shouldKeepAlive ? 0 : RESPONSE_CLOSE, declared: -1 };
    this.eachHeader(addHeader, head);
    return head;
  }

  /** @internal */
  cut(): void {
    if (!this.request.gone) this.addon.destroy(this.request.id);
  }

  /** @internal */
  release(): void {
    if (this.request.gone) return;
    this.request.gone = true;
    this.onDone(this);
  }
}

interface HeadBlock {
  /** The lines, when they are not in the cache (`node` is then null). */
  block: string;
  /** The cached block of the lines so far (all of them, once `eachHeader` is done). */
  node: BlockNode | null;
  flags: number;
  declared: number;
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
    if (blockNodes >= 1000 || this.block.length + name.length + value.length > 2048) return null;
    if (byValue === undefined) this.children.set(name, (byValue = new Map()));
    const child = new BlockNode(`${this.block}${name}: ${value}\r\n`, this.hasDate || name === "date");
    byValue.set(value, child);
    blockNodes++;
    return child;
  }
}
const BLOCKS = new BlockNode("", false);
let blockNodes = 0;

Object.assign(NativeResponseBase.prototype, { known: null });

/** A response on the native engine. */
export class NativeResponse extends withResponseHelpers(NativeResponseBase) {
  /**
   * Streams `body` chunked, pausing it while the engine holds more than its high-water mark.
   * @internal
   */
  pipeFrom(body: Readable): void {
    const { addon, request } = this;
    this.headersSent = true;
    const head = this.headBlock();
    addon.streamStart(request.id, this.statusCode, head.node !== null ? head.node.block : head.block, head.flags);
    this.streaming = true;
    this.onAbort = () => body.destroy();
    this.onDrain = () => body.resume();
    body.on("data", (chunk: Buffer | string) => {
      if (this.destroyed) return;
      if (!addon.streamWrite(request.id, chunk)) body.pause();
    });
    body.on("end", () => this.end());
    // A failing stream can't be answered with an error any more: cut the connection.
    body.on("error", () => this.destroy());
  }
}
