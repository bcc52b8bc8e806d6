import type { Readable } from "node:stream";
import { withResponseHelpers } from "../response.js";
import { BufferedResponse } from "./buffered-response.js";
import type { NativeAddon } from "./native-load.js";
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
    addon.respond(request.id, this.statusCode, this.headerList(), body ?? "", !this.shouldKeepAlive);
  }

  /** @internal `[name, value, …]`, as the engine takes them (it writes Content-Length, Date and Connection). */
  headerList(): string[] {
    const list: string[] = [];
    this.eachHeader(pushHeader, list);
    return list;
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

function pushHeader(list: string[], name: string, value: string): void {
  list.push(name, value);
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
    addon.streamStart(request.id, this.statusCode, this.headerList(), !this.shouldKeepAlive);
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
