import type { Server } from "node:http";
import type { Socket } from "node:net";
import { WebSocketServer, type WebSocket as WsSocket } from "ws";
import type { SendResult, WebSocketEngine, WebSocketEvents, WebSocketSettings, WebSocketTransport } from "../contract/engine.js";
import type { RequestSurface as Request, ResponseSurface as Response } from "../contract/engine.js";
import { stopLimitingSendTime } from "./send-timeout.js";
import { IdleSweep } from "./websocket-idle.js";
import { UPGRADE_HEAD } from "../../base/symbols.js";
import { clearTimeout, setTimeout } from "../../base/loop.js";

type UpgradeListener = (req: Request, res: Response) => void;

/**
 * WebSockets on the node engine, on `ws` (the field's standard library) in noServer mode.
 *
 * Node hands a request with an Upgrade header to the server's 'upgrade' listeners with its
 * socket, not to the request listener. Cog gives it a response on that socket and sends it
 * through the app as any request, so the app's middleware runs on it; a WebSocket route's
 * handler then calls `accept`, which gives the socket to `ws`. Anything else answers it as
 * usual, and the connection closes after the answer (it was asked to change protocols).
 */
export class NodeWebSockets implements WebSocketEngine {
  /** One `ws` server per route's settings (its maxPayload and compression). */
  private readonly servers = new WeakMap<WebSocketSettings, WebSocketServer>();
  private readonly open = new Set<NodeTransport>();
  private readonly idle = new IdleSweep<NodeTransport>();

  constructor(
    server: Server,
    listener: UpgradeListener,
    private readonly Response: new (req: Request) => Response,
  ) {
    server.on("upgrade", (req: Request, socket: Socket, head: Buffer) => {
      socket.on("error", () => socket.destroy());
      (req as unknown as { [UPGRADE_HEAD]: Buffer })[UPGRADE_HEAD] = head;
      const res = new this.Response(req);
      res.shouldKeepAlive = false;
      (res as unknown as { assignSocket(socket: Socket): void }).assignSocket(socket);
      res.on("finish", () => socket.end());
      listener(req, res);
    });
  }

  accept(req: Request, res: Response, settings: WebSocketSettings, events: WebSocketEvents): WebSocketTransport | null {
    const socket = (res as unknown as { socket: Socket | null }).socket;
    if (socket === null || socket.destroyed) return null;
    // The response is done with: the socket is the WebSocket's now.
    (res as unknown as { detachSocket(socket: Socket): void }).detachSocket(socket);
    stopLimitingSendTime(socket);
    res.destroy();
    let server = this.servers.get(settings);
    if (server === undefined) {
      server = new WebSocketServer({
        noServer: true,
        clientTracking: false,
        maxPayload: settings.maxPayload,
        maxFragments: settings.maxFragments,
        perMessageDeflate: settings.perMessageDeflate,
      });
      this.servers.set(settings, server);
    }
    let transport: NodeTransport | null = null;
    // ws completes the handshake synchronously (no verifyClient): the callback runs before this returns.
    server.handleUpgrade(req as never, socket, (req as unknown as { [UPGRADE_HEAD]: Buffer })[UPGRADE_HEAD], (ws) => {
      transport = new NodeTransport(this, ws, socket, req.socket.remoteAddress, settings, events);
    });
    // The response is done, answered with the 101 ws wrote: its 'close' tells the engine (the
    // access log's line), as the socket, no longer the response's, won't.
    res.statusCode = transport === null ? res.statusCode : 101;
    res.emit("close");
    if (transport === null) return null;
    const opened: NodeTransport = transport;
    this.open.add(opened);
    if (settings.idleTimeout > 0) this.idle.watch(opened, settings.idleTimeout);
    opened.ws.on("close", () => {
      this.open.delete(opened);
      this.idle.forget(opened);
    });
    return opened;
  }

  sendMany(transports: readonly WebSocketTransport[], data: string | Buffer, binary: boolean): void {
    // One Buffer for all: ws frames each send but writes the payload itself, not a copy.
    const payload = typeof data === "string" ? Buffer.from(data) : data;
    for (const transport of transports) transport.send(payload, binary);
  }

  /** Closes every socket with 1001 (going away); cuts those still open after `drainMs`. */
  async closeAll(drainMs: number): Promise<void> {
    this.idle.stop();
    if (this.open.size === 0) return;
    const gone = [...this.open].map((t) => new Promise<void>((resolve) => (t.ws.readyState === t.ws.CLOSED ? resolve() : t.ws.once("close", () => resolve()))));
    for (const t of this.open) t.ws.close(1001, "server shutting down");
    const deadline = setTimeout(() => {
      for (const t of this.open) t.ws.terminate();
    }, drainMs);
    await Promise.all(gone);
    clearTimeout(deadline);
  }
}

class NodeTransport implements WebSocketTransport {
  /** For the idle sweep (websocket-idle.ts). */
  active = false;
  heard = Date.now();
  pinged = false;
  private awaitingDrain = false;

  constructor(
    readonly engine: NodeWebSockets,
    readonly ws: WsSocket,
    private readonly socket: Socket,
    readonly remoteAddress: string | undefined,
    private readonly settings: WebSocketSettings,
    private readonly events: WebSocketEvents,
  ) {
    const heard = (): void => {
      this.active = true;
    };
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      this.active = true;
      events.message(isBinary ? data : data.toString(), isBinary);
    });
    ws.on("ping", heard);
    ws.on("pong", heard);
    // ws closes the socket itself on a protocol error (with the right code); 'close' follows.
    ws.on("error", () => {});
    ws.on("close", (code: number, reason: Buffer) => events.close(code, reason.toString()));
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /**
   * "Queued" means behind bytes the client has not read (the socket's high-water mark is
   * passed), not merely written later: on the node engine a socket's writes are held until the
   * end of the loop's round to be written together (src/engines/node/writes.ts), as the native
   * engine writes a batch's output at its end.
   */
  send(data: string | Buffer, binary: boolean): SendResult {
    if (this.ws.readyState !== this.ws.OPEN) return "dropped";
    const buffered = this.ws.bufferedAmount;
    if (buffered > 0 && buffered + (typeof data === "string" ? Buffer.byteLength(data) : data.length) > this.settings.maxBackpressure) {
      if (this.settings.onBackpressure === "close") this.ws.terminate();
      return "dropped";
    }
    this.ws.send(data, { binary });
    if (!this.socket.writableNeedDrain) return "sent";
    if (!this.awaitingDrain) {
      this.awaitingDrain = true;
      this.socket.once("drain", () => {
        this.awaitingDrain = false;
        if (this.ws.readyState === this.ws.OPEN) this.events.drain();
      });
    }
    return "queued";
  }

  ping(): void {
    this.ws.ping();
  }

  close(code: number | undefined, reason: string): void {
    this.ws.close(code, reason);
  }

  terminate(): void {
    this.ws.terminate();
  }
}
