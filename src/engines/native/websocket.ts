import type { SendResult, WebSocketEngine, WebSocketEvents, WebSocketSettings, WebSocketTransport } from "../contract/engine.js";
import { ByRequestId } from "./by-request-id.js";
import type { NativeAddon } from "../kit/addon.js";
import type { RequestSurface as Request, ResponseSurface as Response } from "../contract/engine.js";
import { clearTimeout, setTimeout } from "../../base/loop.js";

/** WebSocket events from the addon (native/addon/src/js/deliver.rs). */
const SOCKET_TEXT = 1;
const SOCKET_BINARY = 2;
const SOCKET_DRAIN = 3;
const SOCKET_CLOSE = 4;

/** What the native engine's request and response are to this binding: its id, and retiring the response. */
interface NativeUpgrade {
  readonly id: number;
  readonly remoteAddress: string | undefined;
  /** The response is done with (the connection is a WebSocket now): nothing may answer it. */
  retire(res: Response): void;
}

/**
 * WebSockets on the native engine: the addon completes the handshake, frames, pings, closes and
 * enforces maxPayload, maxFragments and idleTimeout on the loop it serves HTTP on (native/addon/src/ws.rs);
 * this holds each socket's events, by id, and delivers what the addon reports in its batches.
 */
export class NativeWebSockets implements WebSocketEngine {
  /** Open sockets by id (not a Map, which kept closed ones alive: see by-request-id.ts). */
  private readonly open = new ByRequestId<NativeTransport>();

  constructor(
    private readonly addon: NativeAddon,
    private readonly upgradeOf: (req: Request) => NativeUpgrade,
  ) {}

  accept(req: Request, res: Response, settings: WebSocketSettings, events: WebSocketEvents): WebSocketTransport | null {
    const upgrade = this.upgradeOf(req);
    const remoteAddress = upgrade.remoteAddress;
    const accepted = this.addon.wsAccept(upgrade.id, settings.maxPayload, settings.maxFragments, settings.idleTimeout * 1000, settings.maxBackpressure, settings.onBackpressure === "close", settings.perMessageDeflate);
    // Retired answered with its 101 (the access log counts it so), or abandoned.
    if (accepted) res.statusCode = 101;
    upgrade.retire(res);
    if (!accepted) return null;
    const transport = new NativeTransport(this, this.addon, upgrade.id, remoteAddress, events);
    this.open.set(upgrade.id, transport);
    return transport;
  }

  sendMany(transports: readonly WebSocketTransport[], data: string | Buffer, binary: boolean): void {
    if (transports.length === 1) return void transports[0]!.send(data, binary);
    this.addon.wsSendMany(
      transports.map((t) => (t as NativeTransport).id),
      data,
      binary,
    );
  }

  /** An event the addon reports for socket `id`. */
  readonly onSocket = (kind: number, id: number, data?: string | Buffer, code?: number): void => {
    const transport = this.open.get(id);
    if (transport === undefined) return;
    const events = transport.events;
    if (kind === SOCKET_TEXT || kind === SOCKET_BINARY) events.message(data!, kind === SOCKET_BINARY);
    else if (kind === SOCKET_DRAIN) events.drain();
    else if (kind === SOCKET_CLOSE) {
      this.open.delete(id);
      events.close(code!, data as string);
    }
  };

  /** Closes every socket with 1001 (going away); cuts those still open after `drainMs`. */
  async closeAll(drainMs: number): Promise<void> {
    if (this.open.size === 0) return;
    const open = this.open.values();
    const gone = open.map((t) => new Promise<void>((resolve) => t.whenClosed.push(resolve)));
    for (const t of open) t.close(1001, "server shutting down");
    const deadline = setTimeout(() => {
      for (const t of this.open.values()) t.terminate();
    }, drainMs);
    await Promise.all(gone);
    clearTimeout(deadline);
  }
}

class NativeTransport implements WebSocketTransport {
  /** Called once the socket is closed (for closeAll). */
  readonly whenClosed: Array<() => void> = [];
  readonly events: WebSocketEvents;

  constructor(
    readonly engine: NativeWebSockets,
    private readonly addon: NativeAddon,
    readonly id: number,
    readonly remoteAddress: string | undefined,
    events: WebSocketEvents,
  ) {
    this.events = {
      message: events.message,
      drain: events.drain,
      close: (code, reason) => {
        events.close(code, reason);
        for (const resolve of this.whenClosed) resolve();
      },
    };
  }

  get bufferedAmount(): number {
    return this.addon.wsBuffered(this.id);
  }

  send(data: string | Buffer, binary: boolean): SendResult {
    const sent = this.addon.wsSend(this.id, data, binary);
    return sent === 1 ? "sent" : sent === 0 ? "queued" : "dropped";
  }

  close(code: number | undefined, reason: string): void {
    this.addon.wsClose(this.id, code, reason);
  }

  terminate(): void {
    this.addon.wsTerminate(this.id);
  }
}
