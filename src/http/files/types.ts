// What every stage of the file server shares: the request and response as it sees them, and a
// file found.
import type { IncomingHttpHeaders } from "node:http";
import type { FileHandle } from "node:fs/promises";
import type { OpenedFile, ResponseSurface } from "../../engines/contract/engine.js";
import { PENDING, VALIDATES } from "../../base/symbols.js";

/**
 * What the file server uses of a request and a response: Cog's helpers (http/request.ts,
 * http/response.ts), named here rather than imported, since the response loads this module for
 * `res.sendFile` (./load.ts) and must not be imported back.
 */
export interface Request {
  readonly method?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly path: string;
  readonly originalUrl: string;
}

export type InternalRequest = Request & {
  headerValue(name: string): string | undefined;
  mayBeConditional(): boolean;
};

export interface Response extends ResponseSurface {
  status(code: number): this;
  set(name: string, value: string | number | readonly string[]): this;
  get(name: string): string | number | readonly string[] | undefined;
  send(body?: unknown): this;
  redirect(status: number, url: string): this;
}

export type InternalResponse = Response & {
  [PENDING]: Record<string, string | number | readonly string[]> | null;
  [VALIDATES]: { type: string; length: number } | null;
};

export type Next = (err?: unknown) => void;

export type Handler = (req: Request, res: Response, next: Next) => unknown;

/** What is at a path, opened through fs.promises. */
export interface Opened {
  file: FileHandle;
  stat: OpenedFile;
}

/**
 * A file to send: open through fs.promises (`file`: read as it is sent; the sender closes it),
 * or its bytes from the cache. (A file the engine opens is sent by `sendOnEngine`.)
 */
export interface Found {
  size: number;
  mtimeMs: number;
  file: FileHandle | null;
  bytes: Buffer | null;
}
