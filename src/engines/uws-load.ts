import { createRequire } from "node:module";
import type { Limits } from "../limits.js";

/** The part of uWebSockets.js's API the uws engine uses (its own typings are not a dependency). */
export interface UwsModule {
  App(): UwsApp;
  us_listen_socket_close(socket: unknown): void;
  us_socket_local_port(socket: unknown): number;
}
export interface UwsApp {
  any(pattern: string, handler: UwsHandler): UwsApp;
  get(pattern: string, handler: UwsHandler): UwsApp;
  post(pattern: string, handler: UwsHandler): UwsApp;
  put(pattern: string, handler: UwsHandler): UwsApp;
  del(pattern: string, handler: UwsHandler): UwsApp;
  patch(pattern: string, handler: UwsHandler): UwsApp;
  head(pattern: string, handler: UwsHandler): UwsApp;
  options(pattern: string, handler: UwsHandler): UwsApp;
  listen(host: string, port: number, cb: (socket: unknown) => void): UwsApp;
}
export type UwsHandler = (res: UwsHttpResponse, req: UwsHttpRequest) => void;
export interface UwsHttpRequest {
  getUrl(): string;
  getQuery(): string | undefined;
  getMethod(): string;
  getCaseSensitiveMethod?(): string;
  forEach(cb: (key: string, value: string) => void): void;
}
export interface UwsHttpResponse {
  writeStatus(status: string): UwsHttpResponse;
  writeHeader(key: string, value: string): UwsHttpResponse;
  write(chunk: string | Uint8Array): boolean;
  end(body?: string | Uint8Array, closeConnection?: boolean): UwsHttpResponse;
  endWithoutBody(reportedContentLength?: number, closeConnection?: boolean): UwsHttpResponse;
  close(): UwsHttpResponse;
  cork(cb: () => void): UwsHttpResponse;
  onAborted(cb: () => void): UwsHttpResponse;
  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): UwsHttpResponse;
  onWritable(cb: (offset: number) => boolean): UwsHttpResponse;
  getRemoteAddressAsText(): ArrayBuffer;
}

const INSTALL =
  'Install the official build for your Node version: npm install "uWebSockets.js@github:uNetworking/uWebSockets.js#v20.52.0" ' +
  '(its binaries cover the Node versions it lists), or use the default engine: new Cog() or new Cog({ engine: "node" }).';

let loaded: UwsModule | null = null;

/**
 * Loads uWebSockets.js only when the uws engine is asked for, and only its
 * native build: some builds quietly fall back to a slow JavaScript
 * implementation when no binary matches this Node, which would be a silent
 * lie about the engine. Throws an error that says why and what to install.
 */
export function loadUws(limits: Limits): UwsModule {
  if (loaded !== null) return loaded;
  const where = `Node ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch})`;
  // Read once, when the addon loads: uWS's own default head limit is 4 KiB.
  process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= String(limits.maxHeaderSize);
  const require = createRequire(import.meta.url);
  const warn = console.warn;
  let uws: UwsModule;
  try {
    // A fallback announces itself with a warning; keep it off the user's console, the error below says it.
    console.warn = () => {};
    uws = require("uWebSockets.js") as UwsModule;
  } catch (err) {
    throw new Error(`engine "uws" could not load uWebSockets.js on ${where}: ${(err as Error).message.split("\n")[0]}. ${INSTALL}`, { cause: err });
  } finally {
    console.warn = warn;
  }
  const native = Object.keys(require.cache).some((path) => path.endsWith(".node") && /uws|uWebSockets/i.test(path));
  if (!native) {
    throw new Error(`engine "uws": the installed uWebSockets.js has no native binary for ${where} and would run a slow JavaScript fallback. ${INSTALL}`);
  }
  loaded = uws;
  return uws;
}
