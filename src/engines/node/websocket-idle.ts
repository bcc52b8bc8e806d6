import { clearInterval, setInterval } from "../../base/loop.js";

/** What the idle sweep needs of a socket. */
export interface Heard {
  /** Set when the client sends anything (a message, ping or pong); the sweep reads and clears it. */
  active: boolean;
  /** When the sweep last found it active (Date.now()). */
  heard: number;
  /** Whether it was pinged since. */
  pinged: boolean;
  ping(): void;
  terminate(): void;
}

/**
 * idleTimeout for the node engine's sockets: one sweep for them all rather than a timer each
 * (a timer reset per message costs more than a pass over the sockets a few times per timeout).
 * A socket silent for half its timeout is pinged; silent for all of it, it is cut (1006).
 */
export class IdleSweep<Socket extends Heard> {
  private readonly timeouts = new Map<Socket, number>();
  private timer: NodeJS.Timeout | null = null;
  private every = Infinity;

  watch(socket: Socket, seconds: number): void {
    this.timeouts.set(socket, seconds * 1000);
    // Four passes per timeout: a socket is cut at most a quarter of it late.
    const every = Math.max(25, Math.min(1000, (seconds * 1000) / 4));
    if (every < this.every) {
      this.every = every;
      if (this.timer !== null) clearInterval(this.timer);
      this.timer = setInterval(() => this.sweep(), every);
      this.timer.unref();
    }
  }

  forget(socket: Socket): void {
    this.timeouts.delete(socket);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.every = Infinity;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [socket, timeout] of this.timeouts) {
      // A flag per message rather than a clock read (Date.now() was 3% of an echo server's CPU).
      if (socket.active) {
        socket.active = false;
        socket.heard = now;
        socket.pinged = false;
        continue;
      }
      const silent = now - socket.heard;
      if (silent >= timeout) socket.terminate();
      else if (silent >= timeout / 2 && !socket.pinged) {
        socket.pinged = true;
        socket.ping();
      }
    }
  }
}
