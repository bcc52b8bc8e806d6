import type { Readable } from "node:stream";
import { withResponseHelpers } from "../response.js";
import { BufferedResponse } from "./buffered-response.js";
import { RESPONSE_CLOSE, RESPONSE_HAS_DATE, type NativeAddon } from "./native-load.js";
import type { NativeRequest } from "./native-request.js";

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

  /** @internal */
  flush(body: string | Buffer | undefined): void {
    const { addon, request } = this;
    if (this.streaming) {
      if (body !== undefined) addon.streamWrite(request.id, body);
      addon.streamEnd(request.id);
      return;
    }
    const head = this.headBlock();
    addon.respond(request.id, this.statusCode, head.block, body ?? "", head.flags, head.declared);
  }

  /**
   * The headers as the engine takes them: `name: value\r\n` lines, with Content-Length,
   * Transfer-Encoding and Connection left to the engine (it frames the body; "close" becomes a flag).
   * @internal
   */
  headBlock(): HeadBlock {
    const head: HeadBlock = { block: "", flags: this.shouldKeepAlive ? 0 : RESPONSE_CLOSE, declared: -1 };
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
  block: string;
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
  head.block += `${name}: ${value}\r\n`;
}

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
    addon.streamStart(request.id, this.statusCode, head.block, head.flags);
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
