import { STATUS_CODES } from "node:http";
import type { Readable } from "node:stream";
import { withResponseHelpers } from "../response.js";
import { BufferedResponse, NO_BODY_STATUS } from "./buffered-response.js";
import type { UwsHttpResponse } from "./uws-load.js";
import type { UwsRequest } from "./uws-request.js";

/** "200 OK" and friends, built once per status. */
const STATUS_LINES = new Map<number, string>();
function statusLine(status: number): string {
  if (status === 200) return "200 OK";
  let line = STATUS_LINES.get(status);
  if (line === undefined) STATUS_LINES.set(status, (line = `${status} ${STATUS_CODES[status] ?? "Unknown"}`));
  return line;
}

/**
 * What Cog's response helpers need, over a uWebSockets.js response. Besides
 * the shared header rules (uWS would write a CR/LF through:
 * uNetworking/uWebSockets.js#1299), nothing touches uWS's object once the
 * client is gone (uWS crashes on that), and writes are corked into one send.
 */
class UwsResponseBase extends BufferedResponse {
  /** @internal */ readonly raw: UwsHttpResponse;
  /** @internal */ readonly request: UwsRequest;
  /** @internal Called once, when uWS's response may no longer be touched. */
  readonly onDone: (res: UwsResponseBase) => void;
  // Prototype defaults (below), so this is the one constructor of the response's class chain.
  /** @internal True while uWS's handler runs: uWS has corked the socket already, so writes need no cork(). */
  declare corked: boolean;
  /** @internal The Content-Length the app set (a HEAD response reports it), met while writing headers. */
  declare declaredLength: string | undefined;

  constructor(raw: UwsHttpResponse, request: UwsRequest, onDone: (res: UwsResponseBase) => void) {
    super();
    this.raw = raw;
    this.request = request;
    this.onDone = onDone;
  }

  /**
   * Called by the engine when its handler returns with this response unfinished (an async handler,
   * a body still arriving): uWS requires an abort handler then, and only then.
   * @internal
   */
  watchAbort(): void {
    this.raw.onAborted(() => this.aborted());
  }

  /** @internal */
  flush(body: string | Buffer | undefined): void {
    // uWS encodes a lone surrogate on its own; Node (and the other engines) write U+FFFD for it.
    if (typeof body === "string" && !body.isWellFormed()) body = body.toWellFormed();
    if (this.corked) this.writeAll(body);
    else this.raw.cork(() => this.writeAll(body));
  }

  /** @internal Writes the whole response (or ends a streamed one); the socket must be corked. */
  writeAll(body: string | Buffer | undefined): void {
    const raw = this.raw;
    if (this.streaming) {
      // The status and headers went out with the first chunk: this ends the chunked body.
      raw.end(body ?? "", this.closing());
      return;
    }
    this.writeStatusAndHeaders();
    if (this.request.method === "HEAD" || NO_BODY_STATUS(this.statusCode)) {
      // uWS would send a HEAD response's body, and its endWithoutBody(length, close) stalls the
      // connection: write the length as a header and end without a body, keeping the connection.
      const reported = this.declaredLength ?? (body === undefined ? undefined : String(typeof body === "string" ? Buffer.byteLength(body) : body.length));
      if (reported !== undefined && !NO_BODY_STATUS(this.statusCode)) raw.writeHeader("content-length", reported);
      raw.endWithoutBody();
    } else {
      // uWS writes Content-Length from the body itself.
      raw.end(body ?? "", this.closing());
    }
  }

  /** @internal */
  cut(): void {
    if (!this.request.gone) this.raw.close();
  }

  /**
   * @internal Writes the status line and the headers in one call into uWS: each call costs about
   * as much as a small handler, and uWS writes the status it is given followed by CRLF, so the
   * header lines ride along ("200 OK\r\nname: value..."). Every value passed Node's checks
   * (no CR, LF or NUL), so the only line breaks are these.
   */
  writeStatusAndHeaders(): void {
    lines = statusLine(this.statusCode);
    this.eachHeader(addLine, this);
    this.raw.writeStatus(lines);
    lines = "";
  }

  /** @internal Whether the connection ends with this response: Cog decided so, or the client asked. */
  closing(): boolean {
    return !this.shouldKeepAlive || this.request.wantsClose;
  }

  /** @internal */
  release(): void {
    if (this.request.gone) return;
    this.request.gone = true;
    this.onDone(this);
  }
}

Object.assign(UwsResponseBase.prototype, { corked: true, declaredLength: undefined });

/** The status line and header lines being put together by `addLine` (module-level: no closure per response). */
let lines = "";

/** Adds one header line, except for those uWS writes itself (Content-Length, Date) or takes as a flag (Connection). */
function addLine(res: UwsResponseBase, name: string, value: string): void {
  switch (name) {
    case "content-length":
      res.declaredLength = value;
      return;
    case "connection":
      if (value.toLowerCase() === "close") res.shouldKeepAlive = false;
      return;
    case "date":
    case "transfer-encoding":
      return;
    default:
      lines += `\r\n${name}: ${value}`;
  }
}

/** A response on the uws engine: Cog's helpers over uWS's response. */
export class UwsResponse extends withResponseHelpers(UwsResponseBase) {
  /**
   * Streams `body` with backpressure: a write uWS can't take yet pauses the stream until `onWritable`.
   * @internal
   */
  pipeFrom(body: Readable): void {
    const raw = this.raw;
    this.headersSent = true;
    raw.cork(() => this.writeStatusAndHeaders());
    this.streaming = true;
    this.onAbort = () => body.destroy();
    body.on("data", (chunk: Buffer | string) => {
      if (this.destroyed) return;
      let accepted = true;
      raw.cork(() => {
        accepted = raw.write(chunk);
      });
      if (!accepted) {
        body.pause();
        raw.onWritable(() => {
          body.resume();
          return true;
        });
      }
    });
    body.on("end", () => this.end());
    // A failing stream can't be answered with an error any more: cut the connection.
    body.on("error", () => this.destroy());
  }
}
