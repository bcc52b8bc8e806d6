import { randomBytes } from "node:crypto";
import type { Broker } from "./topics.js";

/** The part of a node-redis client (the `redis` package, v5) the broker uses. */
export interface RedisClientLike {
  readonly isOpen: boolean;
  connect(): Promise<unknown>;
  publish(channel: string, message: Buffer): Promise<unknown>;
  duplicate(overrides?: object): RedisClientLike;
  subscribe(channel: string, listener: (message: Buffer, channel: Buffer) => unknown, bufferMode: true): Promise<unknown>;
  unsubscribe(channel: string, listener: (message: Buffer, channel: Buffer) => unknown, bufferMode: true): Promise<unknown>;
  on(event: "error", listener: (err: Error) => void): unknown;
  on(event: "ready", listener: () => void): unknown;
  destroy(): void;
}

export interface RedisBrokerOptions {
  /** Put before every topic to make its Redis channel, so apps sharing a Redis keep apart. Default "cog:ws:". */
  prefix?: string;
}

/** A publication's first byte: its flags (bit 0: binary); then the publishing process's id; then the payload. */
const ORIGIN = 16;
const HEADER = 1 + ORIGIN;

/**
 * Carries an app's WebSocket publications through Redis (or Valkey) pub/sub, to every process
 * and machine that serves the app with a broker on the same Redis and prefix. `connection` is a
 * `redis://` URL, or a node-redis client (connected or not) that the broker publishes with; it
 * subscribes on a duplicate of it. The `redis` package is loaded when the app starts listening.
 *
 * Delivery: at most once, in each publisher's order. Each topic is a Redis channel; a process
 * subscribes to the channels its sockets subscribe to. The publishing process delivers to its
 * own subscribers at once and ignores its own publication when Redis hands it back, so none is
 * delivered twice. While Redis is unreachable, publications to other processes are dropped (a
 * client of the broker's own does not queue them) and local delivery goes on; once it is back,
 * node-redis reconnects and subscribes again, and publications flow as before.
 */
export function redisBroker(connection: string | RedisClientLike, options: RedisBrokerOptions = {}): Broker {
  return new RedisBroker(connection, options.prefix ?? "cog:ws:");
}

class RedisBroker implements Broker {
  private publisher: RedisClientLike | null = null;
  private subscriber: RedisClientLike | null = null;
  private readonly origin = randomBytes(ORIGIN);
  private deliver: ((topic: string, data: string | Buffer, isBinary: boolean) => void) | null = null;
  /** Whether Redis is known to be unreachable (so an outage is logged once, not per retry). */
  private down = false;
  private readonly ownsPublisher: boolean;

  constructor(
    private readonly connection: string | RedisClientLike,
    private readonly prefix: string,
  ) {
    this.ownsPublisher = typeof connection === "string";
  }

  async start(deliver: (topic: string, data: string | Buffer, isBinary: boolean) => void): Promise<void> {
    this.deliver = deliver;
    let publisher: RedisClientLike;
    if (typeof this.connection === "string") {
      let redis: { createClient(options: object): unknown };
      try {
        redis = (await import("redis")) as never;
      } catch {
        throw new Error('redisBroker needs the "redis" package (node-redis): npm install redis');
      }
      // Offline, a publication fails at once rather than waiting in a queue: at most once, never late.
      publisher = redis.createClient({ url: this.connection, disableOfflineQueue: true }) as RedisClientLike;
    } else {
      publisher = this.connection;
    }
    this.publisher = publisher;
    this.watch(publisher);
    if (!publisher.isOpen) await publisher.connect();
    const subscriber = (this.subscriber = publisher.duplicate({ disableOfflineQueue: false }));
    this.watch(subscriber);
    await subscriber.connect();
  }

  private watch(client: RedisClientLike): void {
    client.on("error", (err) => {
      if (this.down) return;
      this.down = true;
      console.error(`cog: the WebSocket broker lost Redis (publications to other processes are dropped until it is back): ${err.message}`);
    });
    client.on("ready", () => {
      if (!this.down) return;
      this.down = false;
      console.error("cog: the WebSocket broker reached Redis again");
    });
  }

  publish(topic: string, data: string | Buffer, isBinary: boolean): void {
    const publisher = this.publisher;
    if (publisher === null || !publisher.isOpen) return;
    const payload = typeof data === "string" ? Buffer.from(data) : data;
    const message = Buffer.allocUnsafe(HEADER + payload.length);
    message[0] = isBinary ? 1 : 0;
    this.origin.copy(message, 1);
    payload.copy(message, HEADER);
    // A publication Redis did not take is dropped: at most once.
    publisher.publish(this.prefix + topic, message).catch(() => {});
  }

  private readonly onMessage = (message: Buffer, channel: Buffer): void => {
    if (message.length < HEADER || this.deliver === null) return;
    // Its own publication, back from Redis: its subscribers here have it already.
    if (this.origin.equals(message.subarray(1, HEADER))) return;
    const isBinary = (message[0]! & 1) === 1;
    const payload = message.subarray(HEADER);
    this.deliver(channel.toString().slice(this.prefix.length), isBinary ? payload : payload.toString(), isBinary);
  };

  subscribe(topic: string): void {
    this.subscriber?.subscribe(this.prefix + topic, this.onMessage, true).catch(() => {});
  }

  unsubscribe(topic: string): void {
    this.subscriber?.unsubscribe(this.prefix + topic, this.onMessage, true).catch(() => {});
  }

  async close(): Promise<void> {
    this.deliver = null;
    this.subscriber?.destroy();
    this.subscriber = null;
    if (this.ownsPublisher) this.publisher?.destroy();
    this.publisher = null;
  }
}
