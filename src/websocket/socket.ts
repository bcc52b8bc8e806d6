import type { SendResult, WebSocketTransport } from "../engines/contract/engine.js";
import type { Topics } from "./topics.js";
import { payloadOf, type OutgoingData } from "./payload.js";

/** Readiness, as the WHATWG WebSocket numbers it. */
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/**
 * An open WebSocket, the same on every engine: what a route's handlers get. The engine's
 * transport frames and writes; this adds the limits (backpressure), topics and the handlers'
 * view of the socket's state.
 */
export class WebSocket<Data = undefined> {
  /** 1 open, 2 closing (close() called), 3 closed. */
  readyState: number = OPEN;
  /** @internal */ readonly topicNames = new Set<string>();

  /** @internal */
  constructor(
    /** What the route's `upgrade` hook returned for this socket. */
    readonly data: Data,
    /** The client's address, as `req.ip` gives it without proxies (`undefined` if the connection was gone). */
    readonly remoteAddress: string | undefined,
    /** @internal */ readonly transport: WebSocketTransport,
    private readonly topics: Topics,
  ) {}

  /**
   * Sends a message: a string as text, bytes as binary (`isBinary` overrides). "sent": written to
   * the connection; "queued": held behind unsent bytes (the `drain` handler runs once they are
   * written); "dropped": the socket is closed, or the message would take its unsent bytes past
   * `maxBackpressure` (then the socket is also cut, with `onBackpressure: "close"`).
   */
  send(data: OutgoingData, isBinary?: boolean): SendResult {
    const payload = payloadOf(data);
    if (this.readyState !== OPEN) return "dropped";
    return this.transport.send(payload, isBinary ?? typeof payload !== "string");
  }

  /** Starts the closing handshake (code 1000 unless given; a reason of at most 123 bytes). */
  close(code?: number, reason = ""): void {
    if (this.readyState !== OPEN) return;
    if (code !== undefined && !isSendableCloseCode(code)) throw new RangeError(`close code must be 1000, 1001-1003, 1007-1014 or 3000-4999; got ${code}`);
    if (Buffer.byteLength(reason) > 123) throw new RangeError("a close reason is at most 123 bytes of UTF-8");
    this.readyState = CLOSING;
    this.transport.close(code, reason);
  }

  /** Cuts the connection at once, without the closing handshake (the `close` handler sees 1006). */
  terminate(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSING;
    this.transport.terminate();
  }

  /** Bytes sent but not yet written to the connection. */
  get bufferedAmount(): number {
    return this.readyState === CLOSED ? 0 : this.transport.bufferedAmount;
  }

  /** Receives what is published to `topic` (here, by `app.publish`, and through the app's broker, elsewhere). */
  subscribe(topic: string): void {
    if (this.readyState === OPEN) this.topics.subscribe(this as WebSocket<unknown>, topic);
  }

  unsubscribe(topic: string): void {
    this.topics.unsubscribe(this as WebSocket<unknown>, topic);
  }

  isSubscribed(topic: string): boolean {
    return this.topicNames.has(topic);
  }

  /** The topics this socket is subscribed to. */
  get subscriptions(): string[] {
    return [...this.topicNames];
  }

  /** Sends to every subscriber of `topic` but this socket, in every process sharing the app's broker. */
  publish(topic: string, data: OutgoingData, isBinary?: boolean): void {
    this.topics.publish(topic, data, isBinary, this as WebSocket<unknown>);
  }

  /** @internal The connection is closed: leave every topic. */
  closed(): void {
    this.readyState = CLOSED;
    this.topics.leaveAll(this as WebSocket<unknown>);
  }
}

/** Codes an endpoint may send in a Close frame (RFC 6455 §7.4; 1004-1006 and 1015 are reserved). */
export function isSendableCloseCode(code: number): boolean {
  return Number.isInteger(code) && ((code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999));
}
