import { existsSync } from "node:fs";
import { METHODS } from "node:http";
import { createRequire } from "node:module";
import { isAbsolute } from "node:path";
import { packageFile } from "../../base/package-files.js";

/**
 * The version of the interface between this JavaScript and the addon (its exports, their
 * arguments, the listen options, the flags and the events): an addon that reports another is
 * refused, since a prebuilt platform package can be older (or newer) than the JavaScript that
 * loads it. Bump it here and in native/addon/src/exports.rs (`INTERFACE_VERSION`) together whenever
 * any of that interface changes.
 */
export const INTERFACE_VERSION = 19;

/** The addon's exports (native/addon/src/exports.rs). */
export interface NativeAddon {
  /** See `INTERFACE_VERSION` (addons older than the check lack it). */
  interfaceVersion?(): number;
  uvVersion(): number;
  /** The methods the engine accepts; `onRequest` gets a method as its place in this list. */
  methods(): string[];
  /** `context`: the async resource every call into JavaScript runs in (see request-context.ts). */
  listen(
    options: NativeListenOptions,
    onRequest: NativeRequestHandler,
    onEvent: (kind: number, id: number, piece?: Buffer) => void,
    onSocket: NativeSocketHandler,
    context: object,
  ): [number, number];
  stopListening(server: number): void;
  /** Replaces a TLS server's certificate for the connections made from now on. */
  setTls(server: number, tls: NativeTlsOptions): void;
  /** How many of the server's connections are open (a stopping server's drain waits for none). */
  openConnections(server: number): number;
  destroyConnections(server: number): number[];
  dispose(server: number): void;
  /** HTTP/3 connections still open on the server (closing ones included). */
  quicConnections(server: number): number;
  /** The header lines, `name\0value\0name\0value` (latin1; a head holds no NUL): one string, cheaper to hand over than a list. */
  headers(id: number): string;
  /** One header's value: repeats joined as Node joins them, or with `first`, the first alone. */
  header(id: number, name: string, first?: boolean): string | null;
  /** Whether the request has a Range or an "If-" header (false once it is gone). */
  mayBeConditional(id: number): boolean;
  remoteAddress(id: number): string | null;
  /** The client's port and the local address and port it reached; null once the request is gone. */
  endpoints(id: number): Endpoints | null;
  /** What the client of a TLS connection proved (its certificate, whether it verified); null when the request is gone or not on TLS. */
  tlsPeer(id: number): TlsPeer | null;
  /**
   * A whole response; false when the client is gone. `body`: a string, a Buffer, or a number:
   * then the body is `declared` bytes of the file `openFile` kept for the request, from that
   * position, sent in place (sendfile). `block`: the header lines, or the number
   * `keepHeaderBlock` gave for them; `flags`: RESPONSE_CLOSE, RESPONSE_HAS_DATE; `declared`: the
   * app's Content-Length or -1; `reason`: the status line's reason phrase (`statusMessage`), when
   * not the status's own; `requestId`: the id to echo in X-Request-Id after the block (so a kept
   * block still serves). Throws, writing nothing, for a status outside 100-999, a reason that
   * is not a string of tab, space, visible ASCII and U+0080-U+00FF characters (a CR or LF would
   * end the status line), or a request id that isn't 1-128 visible ASCII characters. A response
   * without a reason or id pays nothing for the arguments.
   */
  respond(
    id: number,
    status: number,
    block: string | number,
    body: string | Buffer | number,
    flags: number,
    declared: number,
    reason?: string,
    requestId?: string,
  ): boolean;
  /**
   * Opens `path` for request `id`'s answer on the loop's thread: 0 for a regular file, which the
   * engine keeps for the answer (`respond` with a number as the body sends `declared` bytes of
   * it from that position; the file is closed when the request ends, whatever its answer), its
   * size and modification time (seconds, nanoseconds) written into `stat`; 1 for a directory;
   * 2 for anything else; otherwise a negated errno (as libuv's errors: `util.getSystemErrorName` names it).
   */
  openFile(id: number, path: string, stat: Float64Array): number;
  /** What is at `path`, without opening it (stat(2)): 0 a regular file, 1 a directory, 2 anything else, otherwise a negated errno (as `openFile`'s). */
  statFile(path: string): number;
  /** Checks header lines once and keeps them; `respond` then takes the number returned. */
  keepHeaderBlock(block: string): number;
  /** The head of a streamed response, framed by `declared` (the app's Content-Length) or else chunked; its other arguments and errors as `respond`'s. */
  streamStart(id: number, status: number, block: string, flags: number, declared: number, reason?: string, requestId?: string): boolean;
  streamWrite(id: number, chunk: string | Buffer): boolean;
  /** Ends a streamed body; `trailers`: trailer lines (`name: value\r\n`) to send after it (HTTP/2; HTTP/1.1 when chunked). Throws for a malformed block. */
  streamEnd(id: number, trailers?: string): boolean;
  /** Sends `length` bytes of the open file `fd` from `position` after what the stream wrote (the engine keeps a duplicate of `fd`). */
  streamFile(id: number, fd: number, position: number, length: number): boolean;
  destroy(id: number): void;
  /** Pauses (the request's body stream is full) or resumes reading a body that follows its request. */
  pauseBody(id: number, paused: boolean): void;
  /** A body still arriving gets its route's own requestTimeout (ms, 0: none) in place of the server's. */
  setBodyTimeout(id: number, ms: number): void;
  /** Accepts up to `max` connections waiting on a listening descriptor (the node engine's; see src/engines/node/accept.ts): their descriptors. */
  acceptQueued(fd: number, max: number): number[];
  /**
   * Completes request `id`'s WebSocket handshake (101); the socket's id is the request's. False
   * when the client is gone. A message in more than `maxFragments` frames (0: no limit) closes it
   * with 1008. `idleTimeout` in ms, 0 for none; past `maxBackpressure` unsent
   * bytes a message is dropped, and with `closeOnBackpressure` the socket cut.
   */
  wsAccept(
    id: number,
    maxPayload: number,
    maxFragments: number,
    idleTimeout: number,
    maxBackpressure: number,
    closeOnBackpressure: boolean,
    perMessageDeflate: boolean,
  ): boolean;
  /** 1 sent, 0 queued behind unsent bytes (a drain event follows), -1 dropped (the socket is closing, or past maxBackpressure). */
  wsSend(id: number, data: string | Buffer, binary: boolean): number;
  /** One message to many sockets, framed once. */
  wsSendMany(ids: number[], data: string | Buffer, binary: boolean): void;
  wsBuffered(id: number): number;
  /** A Close frame (no code when undefined); the connection closes when the client answers, or after 5 s. */
  wsClose(id: number, code: number | undefined, reason: string): void;
  wsTerminate(id: number): void;
  /** Whether requests asking to change protocols wait for the app's answer (it has WebSocket routes, or an 'upgrade' listener) or are served as any other. */
  setUpgrades(server: number, on: boolean): void;
  /**
   * Takes upgrade request `id`'s connection raw (node:http's 'upgrade'): it becomes a tunnel with
   * that id, its events on `onSocket` (TUNNEL_*, src/engines/native/tunnel.ts); returns the bytes
   * that came after the request's head, or null when the client is gone or the request is no
   * upgrade waiting for the app (one with a body is not).
   */
  tunnelOpen(id: number): Buffer | null;
  /** 1 written, 0 queued past the high-water mark (a TUNNEL_DRAIN follows), -1 gone. */
  tunnelWrite(id: number, data: string | Buffer): number;
  /** Ends the write side once what is queued is written (a TUNNEL_SHUT follows). */
  tunnelEnd(id: number): void;
  tunnelPause(id: number, paused: boolean): void;
  tunnelNoDelay(id: number, on: boolean): void;
  tunnelDestroy(id: number): void;
}
/** WebSocket events: (1 text | 2 binary, id, data), (3 drain, id), (4 close, id, reason, code); tunnels' (5 to 11, id, data?: bytes, or a failed socket's errno). */
export type NativeSocketHandler = (kind: number, id: number, data?: string | Buffer | number, code?: number) => void;
export interface NativeListenOptions {
  host: string;
  port: number;
  /** A Unix domain socket to listen on instead of `host` and `port` (its file is removed when the server stops). */
  path?: string;
  maxHeaderSize: number;
  maxHeaders: number;
  maxUrlLength: number;
  strict: boolean;
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  sendTimeout: number;
  timeoutCheckInterval: number;
  /** The app has WebSocket routes (or an 'upgrade' listener): a request with an Upgrade header waits for its answer, and its connection closes after a non-101 one. */
  webSockets: boolean;
  /** SO_REUSEPORT: several processes (Cog's workers) listen on the port. */
  reusePort?: boolean;
  /** Serve TLS (native/addon/src/io/tls.rs). */
  tls?: NativeTlsOptions;
  /** Serve HTTP/2 (native/addon/src/h2): beside HTTP/1.1 by ALPN on TLS; with prior knowledge (h2c) on cleartext. */
  http2?: boolean;
  /** On cleartext HTTP/2, serve HTTP/1.1 too: a client whose first bytes are not HTTP/2's preface. */
  allowHttp1?: boolean;
  /** Serve HTTP/3 on UDP, on the TCP listener's port number (native/addon/src/h3; needs `tls`). */
  http3?: boolean;
}
/** See `NativeAddon.tlsPeer`: as node:tls's `authorized` and `authorizationError`, and the certificate (DER). */
export interface Endpoints {
  remotePort: number;
  localAddress: string;
  localPort: number;
}

export interface TlsPeer {
  authorized: boolean;
  authorizationError: string | null;
  certificate: Buffer | null;
}
/** TLS as the addon takes it (see `src/engines/native/tls.ts`): PEM text, the key unencrypted. */
export interface NativeTlsOptions {
  key: string;
  cert: string;
  ca: string | undefined;
  requestCert: boolean;
  rejectUnauthorized: boolean;
  tls12: boolean;
  tls13: boolean;
}
/** `body`: the whole body; or, when it follows in pieces (EVENT_BODY_PIECE, EVENT_BODY_END), its declared length (-1: chunked). */
export type NativeRequestHandler = (
  id: number,
  method: number,
  url: string,
  body: Buffer | number | undefined,
  flags: number,
  problem: string | undefined,
) => void;

/** Flags and events shared with the addon (native/addon/src/events.rs and js/deliver.rs; the RESPONSE_ flags: exports.rs), held to it by test/engines/native/shared-numbers.test.ts. */
export const FLAG_HTTP11 = 1;
/** The request broke one of Cog's head rules (checked by the engine); the status is `flags >>> 16`. */
export const FLAG_REFUSED = 4;
/** The request has a body and a Content-Encoding header (the app asks for it only then). */
export const FLAG_ENCODED = 8;
/** The request asks to change protocols: the connection closes after an answer other than a WebSocket's 101. */
export const FLAG_UPGRADE = 16;
/** The request came on an HTTP/2 stream. */
export const FLAG_HTTP2 = 32;
/** The request came on an HTTP/3 stream (QUIC). */
export const FLAG_HTTP3 = 64;
export const RESPONSE_CLOSE = 1;
export const RESPONSE_HAS_DATE = 2;
export const EVENT_ABORT = 1;
export const EVENT_DRAIN = 2;
export const EVENT_BODY_PIECE = 3;
export const EVENT_BODY_END = 4;
/** A body the app is receiving did not arrive within its requestTimeout: the app answers the 408. */
export const EVENT_BODY_TIMEOUT = 5;
/** The trailer fields after a request's body (`name\0value\0…`, latin1): before its EVENT_BODY_END, or after its request when the body came whole. */
export const EVENT_BODY_TRAILERS = 6;
/** The server could not accept for want of a file descriptor: the connections waiting were closed unserved (once per server; id 0). */
export const EVENT_OUT_OF_DESCRIPTORS = 7;

/** The platforms cog-http carries a prebuilt binary for (scripts/native-platforms.mjs lists how each is built; a test keeps the two the same). */
export const PREBUILT_PLATFORMS = ["linux-x64-gnu", "linux-x64-musl", "linux-arm64-gnu", "darwin-x64", "darwin-arm64", "win32-x64"] as const;

const BUILD_FROM_SOURCE =
  'build it from source with Rust (https://rustup.rs): npx cog-build-native (in this repository: node scripts/build-native.mjs). Or use engine: "node" (or engine: "auto", which falls back to it).';

let loaded: NativeAddon | null = null;

/** This machine's platform as Cog names its binaries: "linux-x64-gnu", "linux-x64-musl", "darwin-arm64"… */
export function platformName(): string {
  const glibc =
    process.platform === "linux"
      ? (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime
      : undefined;
  return `${process.platform}-${process.arch}${process.platform === "linux" ? (glibc ? "-gnu" : "-musl") : ""}`;
}

/**
 * Where the addon may be, in order: a build from source (there is one only when it was built on
 * purpose: a developer's, or `npx cog-build-native`'s), the binary cog-http carries for this
 * platform (prebuilds/, every install has it), then the platform's own package (npm/<platform>/,
 * the slim option, for an install whose prebuilds/ was pruned).
 */
function candidates(platform: string): string[] {
  const at = (path: string) => packageFile(import.meta.url, 2, path);
  return [at("native/cog-native.node"), at(`prebuilds/${platform}/cog-native.node`), `@cog-http/native-${platform}`];
}

/**
 * Loads Cog's native engine, or throws an error that says why it can't run here: it needs
 * Node itself (Bun and Deno export no usable libuv), libuv 1.x (whose ABI the addon uses),
 * and a built addon.
 */
export function loadNative(): NativeAddon {
  if (loaded !== null) return loaded;
  const versions = process.versions as Record<string, string | undefined>;
  if (versions.bun !== undefined || versions.deno !== undefined || "Deno" in globalThis) {
    throw new Error(
      `engine "native" runs on Node.js only (it drives Node's own libuv loop); this is ${versions.bun !== undefined ? "Bun" : "Deno"}. Use engine: "node".`,
    );
  }
  const platform = platformName();
  const where = `Node ${process.version} (${platform})`;
  const { addon, failures } = firstUsable(candidates(platform));
  if (addon === null) throw new Error(`engine "native" is not available on ${where}: ${unavailableBecause(platform, failures)}`);
  const major = addon.uvVersion() >>> 16;
  if (major !== 1) throw new Error(`engine "native" needs libuv 1.x, and ${where} has libuv ${major}.x. Use engine: "node".`);
  // A copy: the addon's own exports object is in dictionary mode (Node-API defines its members
  // one by one), so each call the engine makes through it (several a request) would look its
  // function up in a dictionary; a spread copy is an object with fast properties, whose loads
  // the optimizing compiler inlines.
  loaded = { ...addon };
  return loaded;
}

/** Why no binary loaded, and what to do, from what was tried (`failures`: those found that could not be used). */
function unavailableBecause(platform: string, failures: string[]): string {
  if (failures.length > 0) return `no build of it could be used: ${failures.join("; ")}. Reinstall cog-http, or ${BUILD_FROM_SOURCE}`;
  if (!(PREBUILT_PLATFORMS as readonly string[]).includes(platform)) {
    return `Cog ships it prebuilt for ${PREBUILT_PLATFORMS.join(", ")}, not for ${platform}; ${BUILD_FROM_SOURCE}`;
  }
  return `this copy of cog-http has no binary for ${platform} (prebuilds/${platform}/cog-native.node is missing: it was packed without it, or removed), no @cog-http/native-${platform} is installed, and nothing was built from source. Reinstall cog-http from the registry, or ${BUILD_FROM_SOURCE}`;
}

/**
 * The first of `files` (paths, or package names) that loads and speaks this interface version,
 * and why each one before it could not be used (a missing one is no failure: none is required).
 */
export function firstUsable(files: readonly string[]): { addon: NativeAddon | null; failures: string[] } {
  const requireHere = createRequire(import.meta.url);
  const failures: string[] = [];
  for (const file of files) {
    // A path (C:\… on Windows), or else a package name.
    const isPath = isAbsolute(file);
    if (isPath && !existsSync(file)) continue;
    let addon: NativeAddon;
    try {
      addon = requireHere(file) as NativeAddon;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") failures.push((err as Error).message.split("\n")[0]!);
      continue;
    }
    // Prebuilt (carried in prebuilds/, or a platform package), or else built from source: which says how to fix it.
    const mismatch = interfaceMismatch(addon, isPath ? file : requireHere.resolve(file), !isPath || /[\\/]prebuilds[\\/]/.test(file));
    if (mismatch === null) return { addon, failures };
    failures.push(mismatch);
  }
  return { addon: null, failures };
}

/**
 * Why `addon` (loaded from `file`) can't serve this JavaScript, or null when its interface
 * version is this one's. `packaged`: it came from a prebuilt platform package (else from a
 * build from source), which says how to fix it.
 */
export function interfaceMismatch(addon: Partial<NativeAddon>, file: string, packaged: boolean): string | null {
  const version = interfaceVersionOf(addon);
  if (version === INTERFACE_VERSION) return null;
  const has = version === undefined ? "no interface version (it predates them)" : `interface version ${String(version)}`;
  const fix = packaged
    ? "reinstall cog-http (npm install), so that its prebuilt engine is the same version as its JavaScript, or build the addon from source: npx cog-build-native"
    : "rebuild it: npx cog-build-native (in this repository: node scripts/build-native.mjs)";
  return `${file} has ${has}, and this cog-http needs interface version ${INTERFACE_VERSION}: ${fix}`;
}

/** The interface version an addon reports; undefined for one older than interface versions. */
export function interfaceVersionOf(addon: Partial<NativeAddon>): number | undefined {
  return typeof addon.interfaceVersion === "function" ? addon.interfaceVersion() : undefined;
}

/** Why the native engine can't run here, or null when it can (for engine: "auto", and tests). */
export function nativeUnavailable(): string | null {
  try {
    loadNative();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * The addon's methods as strings, by number, each Node's own `http.METHODS` string where it has
 * it: one string per method for every request, which the app compares as cheaply as a literal.
 */
export function methodNames(addon: NativeAddon): string[] {
  return addon.methods().map((name) => METHODS.find((known) => known === name) ?? name);
}
