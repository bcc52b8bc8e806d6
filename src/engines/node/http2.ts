import { Http2ServerRequest, Http2ServerResponse, type Http2Session, type OutgoingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { OutgoingHttpHeader } from "node:http";
import { HttpError } from "../../errors.js";
import { CHUNKED, NO_BODY } from "../../head.js";
import type { Limits } from "../../limits.js";
import { withRequestHelpers } from "../../request.js";
import { withNodeBody } from "./request.js";
import { withResponseHelpers, type EngineResponse } from "../../response.js";
import { WRITTEN, chunkBytes } from "./body-bytes.js";

/**
 * HTTP/2 on the node engine, through Node's compatibility API: its Http2ServerRequest and
 * Http2ServerResponse, handed Cog's helpers as node:http's classes are, so that the same
 * handlers serve h2 streams. HTTP/2 frames its own messages (no Host, Content-Length optional,
 * no Connection headers), so the head rules differ from HTTP/1.1's: see `inspectH2Head`.
 */
export class H2Request extends withNodeBody(withRequestHelpers(Http2ServerRequest)) {}

/** Headers HTTP/2 forbids (RFC 9113 §8.2.2): Node throws on them; on h2 they mean nothing, so they are dropped. */
const CONNECTION_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

/** Node's Http2ServerResponse as Cog's helpers see it: the response surface, over its stream. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const H2ResponseBase = Http2ServerResponse as unknown as abstract new (...args: any[]) => EngineResponse & { readonly stream: ServerHttp2Stream };

export class H2Response extends withResponseHelpers(H2ResponseBase) {
  /** @internal Body bytes written so far: node:http2 keeps no count (see body-bytes.ts). */ declare [WRITTEN]: number;

  /** Node's write, counted (its `end` writes a last chunk through here too). */
  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (!this.writableEnded && !this.destroyed) this[WRITTEN] += chunkBytes(chunk, encoding);
    return super.write(chunk, encoding as BufferEncoding, callback as () => void);
  }

  override writeHead(status: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    const given = typeof reason === "string" ? headers : reason;
    const kept = given === undefined || Array.isArray(given) ? given : withoutConnectionHeaders(given);
    // HTTP/2 has no reason phrase.
    return super.writeHead(status, kept as OutgoingHttpHeaders);
  }

  override setHeader(name: string, value: number | string | readonly string[]): this {
    if (CONNECTION_HEADERS.has(name.toLowerCase())) return this;
    return super.setHeader(name, value);
  }

  /** A stream's response: whether its connection may be reused is HTTP/2's own business. */
  override get shouldKeepAlive(): boolean {
    return true;
  }
  override set shouldKeepAlive(_keep: boolean) {}

  /** HTTP/2 has no reason phrase: one set by the app (or Cog's error path) is ignored, without Node's warning. */
  override get statusMessage(): string {
    return "";
  }
  override set statusMessage(_message: string) {}

  override get destroyed(): boolean {
    return this.stream.destroyed;
  }
}

H2Response.prototype[WRITTEN] = 0;

function withoutConnectionHeaders(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  let copy: OutgoingHttpHeaders | null = null;
  for (const name in headers) {
    if (CONNECTION_HEADERS.has(name.toLowerCase())) {
      copy ??= { ...headers };
      delete copy[name];
    }
  }
  return copy ?? headers;
}

/**
 * The head rules of HTTP/2 requests, before routing: the header count and URL length limits,
 * then the body announced. Node's HTTP/2 layer has already refused what RFC 9113 forbids
 * (malformed pseudo-headers, connection headers, a Content-Length that disagrees with the DATA).
 * Without a Content-Length, a stream that did not end with its headers has a body of unknown
 * length, read as a chunked one would be.
 */
export function inspectH2Head(req: H2Request, limits: Limits): number {
  // rawHeaders holds the pseudo-headers too (:method, :path, :scheme, :authority).
  let count = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.charCodeAt(0) !== 58 /* ":" */) count++;
  if (count > limits.maxHeaders) throw new HttpError(431, `Too many headers (the limit is ${limits.maxHeaders}); raise the maxHeaders option to accept more`);
  const url = req.url;
  if (url.length > limits.maxUrlLength) throw new HttpError(414, `URL is longer than the limit of ${limits.maxUrlLength} characters; raise the maxUrlLength option to accept it`);
  const declared = req.headers["content-length"];
  if (declared !== undefined) {
    const length = Number(declared);
    return length > 0 ? length : NO_BODY;
  }
  return req.stream.endAfterHeaders ? NO_BODY : CHUNKED;
}

/**
 * The HTTP/2 sessions of a server, so that `close` can end them: GOAWAY lets their open
 * streams finish and refuses new ones; what is left at the deadline is destroyed.
 */
export class Sessions {
  private readonly open = new Set<Http2Session>();

  track(session: Http2Session): void {
    this.open.add(session);
    session.once("close", () => this.open.delete(session));
  }

  /** Sends GOAWAY on every session (each closes once its streams are done). */
  closeGracefully(): void {
    for (const session of this.open) session.close();
  }

  destroyAll(): void {
    for (const session of this.open) session.destroy();
  }
}
