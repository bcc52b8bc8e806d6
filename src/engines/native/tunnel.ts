import { Duplex } from "node:stream";
import { getSystemErrorName } from "node:util";
import { ByRequestId } from "./by-request-id.js";
import type { NativeAddon } from "../kit/addon.js";
import { clearTimeout, nextTick, setTimeout } from "../../base/loop.js";

/** Tunnel events from the addon, on its socket callback (native/addon/src/js/deliver.rs). */
export const TUNNEL_DATA = 5;
const TUNNEL_END = 6;
const TUNNEL_DRAIN = 7;
const TUNNEL_CLOSE = 8;
const TUNNEL_SHUT = 9;
/** It closed after a read (or a write) of its socket failed, with the errno (a reset: ECONNRESET). */
const TUNNEL_READ_FAILED = 10;
const TUNNEL_WRITE_FAILED = 11;
/** It closed after its client broke TLS (a bad record): with an Error coded as node:tls's (`ERR_SSL_…`). */
const TUNNEL_TLS_FAILED = 12;

/** Where a tunnelled connection comes from and goes to, read from its request before the engine forgets it. */
export interface TunnelEnds {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly encrypted: boolean;
}

/**
 * An upgraded connection on the native engine, as node:http's 'upgrade' event hands its
 * listener a net.Socket: a Duplex of the connection's bytes (plaintext, on TLS too) with the
 * members of a Socket that upgrade handlers use (`ws` among them): `setNoDelay`, `setTimeout`
 * and its 'timeout', `setKeepAlive`, `ref`/`unref`, `address()`, the ends' addresses. The
 * addon reads and writes it on the loop (native/addon/src/tunnel.rs): a full readable side
 * pauses its reading, and a write past its high-water mark waits for a drain; ending shuts the
 * write side once all is written ('finish' then), as a Node socket that allows half-open
 * connections does, and 'close' follows once both sides are done (or it is destroyed). A socket
 * that fails (the client resets it) emits 'error' first, as a Socket does (`read ECONNRESET`),
 * and 'close' says whether it closed on an error (`hadError`), as a Socket's does; a client
 * that breaks TLS gets an 'error' as node:tls's socket emits it.
 */
export class NativeTunnel extends Duplex {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly encrypted: boolean | undefined;
  /** The addon's reading is paused (the readable side is full). */
  private paused = false;
  /** The connection is open in the addon. */
  private open = true;
  /** A write queued past the high-water mark, called back at the drain. */
  private waiting: ((error?: Error | null) => void) | null = null;
  /** `end()`'s callback, called once the write side is shut. */
  private finishing: ((error?: Error | null) => void) | null = null;
  private timeoutMs = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly addon: NativeAddon,
    private readonly id: number,
    ends: TunnelEnds,
  ) {
    // 'close' is emitted by _destroy, with hadError, as net.Socket emits its own.
    super({ allowHalfOpen: true, emitClose: false });
    this.remoteAddress = ends.remoteAddress;
    this.remotePort = ends.remotePort;
    this.localAddress = ends.localAddress;
    this.localPort = ends.localPort;
    if (ends.encrypted) this.encrypted = true;
  }

  get remoteFamily(): string | undefined {
    const address = this.remoteAddress;
    return address === undefined ? undefined : address.includes(":") ? "IPv6" : "IPv4";
  }

  address(): { address: string; family: string; port: number } | Record<string, never> {
    const address = this.localAddress;
    if (address === undefined || address === "") return {};
    return { address, family: address.includes(":") ? "IPv6" : "IPv4", port: this.localPort ?? 0 };
  }

  /** An event the addon reports for this tunnel. */
  event(kind: number, data: Buffer | number | undefined): void {
    if (kind === TUNNEL_DATA) {
      this.active();
      if (!this.push(data as Buffer) && !this.paused && this.open) {
        this.paused = true;
        this.addon.tunnelPause(this.id, true);
      }
    } else if (kind === TUNNEL_END) {
      this.push(null);
    } else if (kind === TUNNEL_DRAIN) {
      const waiting = this.waiting;
      this.waiting = null;
      waiting?.();
    } else if (kind === TUNNEL_SHUT) {
      const finishing = this.finishing;
      this.finishing = null;
      finishing?.();
    } else if (kind === TUNNEL_CLOSE) {
      this.gone();
    } else if (kind === TUNNEL_READ_FAILED || kind === TUNNEL_WRITE_FAILED) {
      this.failed(kind === TUNNEL_READ_FAILED ? "read" : "write", data as number);
    } else if (kind === TUNNEL_TLS_FAILED) {
      this.broken(data as unknown as Error & { code: string });
    }
  }

  /**
   * The client broke TLS and the addon closed the connection: 'error', as node:tls's socket
   * emits one for a bad record, with OpenSSL's code and reason where rustls's error has one
   * (rustls's message), and as on it no 'close' until the socket is destroyed (by `ws` on its
   * 'error', say: 'close' then says hadError false, as there).
   */
  private broken(error: Error & { code: string }): void {
    if (!this.open) return;
    this.open = false;
    const reason = error.code.slice("ERR_SSL_".length).toLowerCase().replaceAll("_", " ");
    this.emit("error", Object.assign(error, { library: "SSL routines", reason }));
  }

  /** The socket failed and the addon closed it: destroyed with the error a Socket's `syscall` would have given (`read ECONNRESET`). */
  private failed(syscall: "read" | "write", errno: number): void {
    if (!this.open) return;
    this.open = false;
    // As libuv reports it (a negated errno), and so Node's own errors: errno -104, code ECONNRESET.
    const code = getSystemErrorName(-errno);
    this.destroy(Object.assign(new Error(`${syscall} ${code}`), { errno: -errno, code, syscall }));
  }

  /** The addon closed the connection (both sides done, or cut): the stream is destroyed ('close'). */
  private gone(): void {
    if (!this.open) return;
    this.open = false;
    const state = this.readableState();
    // The end the client sent is read first ('end', then 'close'), when the reader is taking it.
    if (state.ended && !state.endEmitted && this.readableFlowing === true) this.once("end", () => this.destroy());
    else this.destroy();
  }

  private readableState(): { ended: boolean; endEmitted: boolean } {
    return (this as unknown as { _readableState: { ended: boolean; endEmitted: boolean } })._readableState;
  }

  override _read(): void {
    if (this.paused && this.open) {
      this.paused = false;
      this.addon.tunnelPause(this.id, false);
    }
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.send(chunk, callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer | string }>, callback: (error?: Error | null) => void): void {
    // What was written while corked goes out in one call.
    this.send(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map(({ chunk }) => (typeof chunk === "string" ? Buffer.from(chunk) : chunk))), callback);
  }

  private send(chunk: Buffer | string, callback: (error?: Error | null) => void): void {
    const written = this.open ? this.addon.tunnelWrite(this.id, chunk) : -1;
    this.active();
    if (written === 1) callback();
    else if (written === 0) this.waiting = callback;
    else callback(Object.assign(new Error("This socket has been ended by the other party"), { code: "EPIPE" }));
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.open) return callback();
    this.finishing = callback;
    this.addon.tunnelEnd(this.id);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.clearTimer();
    if (this.open) {
      this.open = false;
      this.addon.tunnelDestroy(this.id);
    }
    callback(error);
    // After the 'error' the callback queued (if any): net.Socket's order, and its argument.
    nextTick(() => this.emit("close", error !== null && error !== undefined));
  }

  /** As Node's Socket: after `ms` of nothing read or written, 'timeout' (0 turns it off); the socket stays open. */
  setTimeout(ms: number, callback?: () => void): this {
    this.timeoutMs = ms;
    this.clearTimer();
    if (callback !== undefined) {
      if (ms === 0) this.removeListener("timeout", callback);
      else this.once("timeout", callback);
    }
    if (ms > 0 && !this.destroyed) {
      this.timer = setTimeout(() => this.emit("timeout"), ms);
      this.timer.unref();
    }
    return this;
  }

  private active(): void {
    if (this.timer !== null) this.timer.refresh();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The timeout set, as Node's Socket reports it. */
  get timeout(): number | undefined {
    return this.timeoutMs === 0 ? undefined : this.timeoutMs;
  }

  setNoDelay(noDelay = true): this {
    if (this.open) this.addon.tunnelNoDelay(this.id, noDelay);
    return this;
  }

  /** TCP keep-alive probes are the kernel's defaults here; accepted, as on a socket that can't change them. */
  setKeepAlive(): this {
    return this;
  }

  /** The engine's connections never hold Node's loop open (its listening server does): nothing to change. */
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

/** The open tunnels of one server, by id, for the events the addon reports. */
export class NativeTunnels {
  /** Not a Map, which kept closed tunnels alive: see by-request-id.ts. */
  private readonly open = new ByRequestId<NativeTunnel>();
  /** Called once every tunnel is closed (for the engine's `close`). */
  private whenEmpty: (() => void) | null = null;

  constructor(private readonly addon: NativeAddon) {}

  /** A tunnel for request `id`'s connection, or null when the addon could not make one (the client is gone); with the bytes after the request's head. */
  take(id: number, ends: TunnelEnds): { socket: NativeTunnel; head: Buffer } | null {
    const head = this.addon.tunnelOpen(id);
    if (head === null) return null;
    const socket = new NativeTunnel(this.addon, id, ends);
    this.open.set(id, socket);
    // Forgotten once its 'close' is emitted: the server's close waits for that, as node:http's does.
    socket.once("close", () => this.forget(id));
    return { socket, head };
  }

  readonly event = (kind: number, id: number, data: Buffer | number | undefined): void => {
    this.open.get(id)?.event(kind, data);
  };

  private readonly forget = (id: number): void => {
    if (this.open.delete(id) && this.open.size === 0) this.whenEmpty?.();
  };

  /** Resolves once every tunnel is closed (by its owner, or by the client); after `drainMs`, cuts those left. */
  async closeAll(drainMs: number): Promise<void> {
    if (this.open.size === 0) return;
    const empty = new Promise<void>((resolve) => (this.whenEmpty = resolve));
    const deadline = setTimeout(() => {
      for (const socket of this.open.values()) socket.destroy();
    }, drainMs);
    await empty;
    clearTimeout(deadline);
    this.whenEmpty = null;
  }
}
