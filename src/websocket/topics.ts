import type { WebSocketEngine, WebSocketTransport } from "../engines/contract/engine.js";
import { payloadOf, type OutgoingData } from "./payload.js";

/** What topics need of a socket (socket.ts's `WebSocket`, which holds its `Topics`): its state, its transport and its topics. */
interface Subscriber {
  readonly readyState: number;
  readonly transport: WebSocketTransport;
  readonly topicNames: Set<string>;
}

/**
 * Carries publications between processes (and machines): every process sharing a broker hands
 * it what its app publishes, and gets back what the others publish, for its own subscribers.
 * The promise Cog makes on top of one (docs/guide/websockets.md): at most once, in each
 * publisher's order.
 */
export interface Broker {
  /** Connects; from then on, what other processes publish reaches `deliver`. */
  start(deliver: (topic: string, data: string | Buffer, isBinary: boolean) => void): Promise<void>;
  /** Sends a publication to the other processes (this one has delivered it to its own subscribers already). */
  publish(topic: string, data: string | Buffer, isBinary: boolean): void;
  /** This process has a subscriber to `topic` now (or no longer): publications on it should (no longer) reach it. */
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
  close(): Promise<void>;
}

/** An app's topics: which of its sockets subscribe to what, and publishing to them (and through the broker). */
export class Topics {
  private readonly subscribers = new Map<string, Set<Subscriber>>();

  constructor(private readonly broker: Broker | null) {}

  /** Connects the broker, when there is one (at listen). */
  start(): Promise<void> {
    return this.broker === null ? Promise.resolve() : this.broker.start((topic, data, isBinary) => this.deliver(topic, data, isBinary, null));
  }

  stop(): Promise<void> {
    return this.broker === null ? Promise.resolve() : this.broker.close();
  }

  subscribe(ws: Subscriber, topic: string): void {
    if (typeof topic !== "string") throw new TypeError(`a topic is a string; got ${typeof topic}`);
    if (ws.topicNames.has(topic)) return;
    ws.topicNames.add(topic);
    let set = this.subscribers.get(topic);
    if (set === undefined) {
      this.subscribers.set(topic, (set = new Set()));
      this.broker?.subscribe(topic);
    }
    set.add(ws);
  }

  unsubscribe(ws: Subscriber, topic: string): void {
    if (!ws.topicNames.delete(topic)) return;
    const set = this.subscribers.get(topic)!;
    set.delete(ws);
    if (set.size === 0) {
      this.subscribers.delete(topic);
      this.broker?.unsubscribe(topic);
    }
  }

  leaveAll(ws: Subscriber): void {
    for (const topic of ws.topicNames) this.unsubscribe(ws, topic);
  }

  /** How many sockets of this process subscribe to `topic`. */
  count(topic: string): number {
    return this.subscribers.get(topic)?.size ?? 0;
  }

  /** Delivers to this process's subscribers (but `except`), then hands the publication to the broker. */
  publish(topic: string, data: OutgoingData, isBinary: boolean | undefined, except: Subscriber | null): void {
    const payload = payloadOf(data);
    const binary = isBinary ?? typeof payload !== "string";
    this.deliver(topic, payload, binary, except);
    this.broker?.publish(topic, payload, binary);
  }

  /**
   * One message to every local subscriber: grouped by engine, which frames it once for all of
   * them (the native engine) where it can, and drops it for a socket past its maxBackpressure.
   */
  private deliver(topic: string, payload: string | Buffer, binary: boolean, except: Subscriber | null): void {
    const set = this.subscribers.get(topic);
    if (set === undefined) return;
    let engine: WebSocketEngine | null = null;
    let batch: WebSocketTransport[] = [];
    for (const ws of set) {
      if (ws === except || ws.readyState !== 1) continue;
      const transport = ws.transport;
      if (transport.engine !== engine) {
        if (engine !== null) engine.sendMany(batch, payload, binary);
        engine = transport.engine;
        batch = [];
      }
      batch.push(transport);
    }
    if (engine !== null) engine.sendMany(batch, payload, binary);
  }
}
