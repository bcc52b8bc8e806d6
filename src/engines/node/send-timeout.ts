import type { Server } from "node:http";
import { Socket } from "node:net";
import { TLSSocket } from "node:tls";
import { clearInterval, setInterval } from "../../base/loop.js";

/**
 * `sendTimeout` on the node engine: a connection whose client has stopped reading is closed once
 * no byte of the answer waiting on it has moved for that long. node:http has no such timeout
 * (its socket timeout counts reads as activity, and a client that sends nothing more looks the
 * same as one that reads nothing).
 *
 * What it costs: nothing for a write the kernel takes at once (nearly all of them). A socket is
 * watched only once a write leaves bytes queued, and one sweep per server, every
 * `timeoutCheckInterval` while any socket is watched, looks at them, as the native engine's
 * sweep does: no timer per request or per socket.
 *
 * How it sees bytes move: Node reports a write done only once all of it is in the kernel, so a
 * 4 MiB Buffer handed over in one write would look stalled for as long as a slow reader takes
 * to read all of it. Writes larger than PIECE are therefore handed to the socket a piece at a
 * time, each once the one before is written (the Buffer is sliced, not copied): what Node
 * reports written then moves with every piece, and a client that reads slowly but steadily is
 * never cut. Bytes buffered per connection stay what the app handed over (Node's `res.write`
 * returns false past the socket's high-water mark; `res.end(buffer)` holds the app's Buffer).
 */
const PIECE = 256 * 1024;

type Write = (this: Socket, data: Buffer | string, encoding: BufferEncoding, callback: (err?: Error | null) => void) => void;
type Writev = (this: Socket, chunks: Chunk[], callback: (err?: Error | null) => void) => void;
interface Chunk {
  chunk: Buffer | string;
  encoding: BufferEncoding;
}
interface WritingSocket extends Socket {
  _write: Write;
  _writev: Writev;
}

const ownWrite = (Socket.prototype as unknown as WritingSocket)._write;
const ownWritev = (Socket.prototype as unknown as WritingSocket)._writev;
/** Node's own methods that the limit wraps (test/engines/node/node-internals.test.ts checks they are still there). */
export const wrappedBySendTimeout = { _write: ownWrite, _writev: ownWritev } as const;

/** Closes the connections of `server` whose clients stop reading for `ms` (checked every `every` ms). */
export function limitSendTime(server: Server, ms: number, every: number, tls: boolean): void {
  const limit = new SendTimeLimit(ms, every);
  server.on(tls ? "secureConnection" : "connection", (socket: Socket) => {
    const writing = socket as WritingSocket;
    writing._write = limit.write;
    writing._writev = limit.writev;
  });
}

/**
 * The socket is no longer HTTP's (a WebSocket has it now): its writes are left to it. Node's own
 * methods are set back rather than the limit's deleted: deleting properties turns an object's
 * properties into a dictionary (a hash table of ~3 KB for a socket, and slow lookups for every
 * write after), which under WebSocket churn was most of what the old generation took in.
 */
export function stopLimitingSendTime(socket: Socket): void {
  const writing = socket as WritingSocket;
  if (writing._write !== ownWrite) writing._write = ownWrite;
  if (writing._writev !== ownWritev) writing._writev = ownWritev;
}

class SendTimeLimit {
  /** Sockets with bytes queued: what Node had reported written when last seen moving (-1: not seen yet), and when. */
  private readonly watched = new Map<Socket, { written: number; since: number }>();
  private sweep: NodeJS.Timeout | null = null;

  constructor(
    private readonly ms: number,
    private readonly every: number,
  ) {}

  // Bound once per server and set on each of its sockets, so a socket's writes find their limit.
  readonly write: Write = (() => {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the function made here is the socket's method: its `this` is the socket
    const limit = this;
    return function write(this: Socket, data, encoding, callback) {
      if (typeof data !== "string" && data.length > PIECE) return limit.inPieces(this, [{ chunk: data, encoding }], callback);
      ownWrite.call(this, data, encoding, callback);
      limit.queued(this);
    };
  })();

  readonly writev: Writev = (() => {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the function made here is the socket's method: its `this` is the socket
    const limit = this;
    return function writev(this: Socket, chunks, callback) {
      for (const { chunk } of chunks) {
        if (typeof chunk !== "string" && chunk.length > PIECE) return limit.inPieces(this, chunks, callback);
      }
      ownWritev.call(this, chunks, callback);
      limit.queued(this);
    };
  })();

  /** Writes `chunks` with their large Buffers sliced into pieces, one write after another. */
  private inPieces(socket: Socket, chunks: Chunk[], callback: (err?: Error | null) => void): void {
    const parts: Chunk[] = [];
    for (const { chunk, encoding } of chunks) {
      if (typeof chunk === "string" || chunk.length <= PIECE) parts.push({ chunk, encoding });
      else for (let at = 0; at < chunk.length; at += PIECE) parts.push({ chunk: chunk.subarray(at, at + PIECE), encoding });
    }
    // What comes before the first piece goes with it, in one write.
    const first = parts.findIndex(({ chunk }) => chunk.length >= PIECE) + 1;
    let next = first;
    const writeNext = (err?: Error | null): void => {
      if (err) return callback(err);
      if (next === parts.length) return callback();
      const { chunk, encoding } = parts[next++]!;
      ownWrite.call(socket, chunk, encoding, writeNext);
      this.queued(socket);
    };
    if (first === 1) ownWrite.call(socket, parts[0]!.chunk, parts[0]!.encoding, writeNext);
    else ownWritev.call(socket, parts.slice(0, first), writeNext);
    this.queued(socket);
  }

  /**
   * After a write: if bytes are left queued, the socket is watched. Its stall is timed from the
   * first sweep that sees it (as on the native engine), not from here: `bytesWritten` can't be
   * read inside a write (Node may be part-way through its buffer of writes).
   */
  private queued(socket: Socket): void {
    if (socket.writableLength === 0 || this.watched.has(socket)) return;
    this.watched.set(socket, { written: -1, since: 0 });
    if (this.sweep === null) {
      this.sweep = setInterval(() => this.check(), this.every);
      this.sweep.unref();
    }
  }

  private check(): void {
    const now = Date.now();
    for (const [socket, seen] of this.watched) {
      if (socket.destroyed || socket.writableLength === 0 || (socket as WritingSocket)._write !== this.write) {
        this.watched.delete(socket);
        continue;
      }
      const moved = written(socket);
      if (moved !== seen.written) {
        seen.written = moved;
        seen.since = now;
      } else if (now - seen.since >= this.ms) {
        this.watched.delete(socket);
        // A reset rather than a close: the kernel drops what it holds for a client that reads nothing.
        if (socket instanceof TLSSocket) socket.destroy();
        else socket.resetAndDestroy();
      }
    }
    if (this.watched.size === 0) {
      clearInterval(this.sweep!);
      this.sweep = null;
    }
  }
}

/** Bytes Node has written to the kernel for the socket (handed over, minus those not yet written). */
function written(socket: Socket): number {
  return socket.bytesWritten - socket.writableLength;
}
