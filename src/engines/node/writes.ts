import type { Server } from "node:http";
import { Socket } from "node:net";
import type { AsyncResource } from "node:async_hooks";
import { asyncResource } from "../../base/async-resource.js";
import { ENDING } from "../../base/symbols.js";
import { nextTick, setImmediate } from "../../base/loop.js";

/**
 * Writing answers a slice at a time instead of one by one.
 *
 * Why: every write to a socket whose peer is asleep wakes that peer, and when the peer runs on
 * the same host (a reverse proxy, a sidecar, a load generator; over loopback) the wakeup is paid
 * by the writing process: the kernel runs the peer's receive path and interrupts the peer's CPU.
 * Node writes each answer as soon as `res.end()` is called, so a server answering hundreds of
 * connections, one request each, wakes its peer for most answers: on this project's machine
 * (Node 24, 800 connections, `/hello`, wrk on the other core) 0.6 wakeups per request, about
 * 30% of the server's CPU. Held back and written together, the first answer of a slice wakes
 * the peer and the rest find it awake: 0.07 wakeups a request. Cog's native engine serves in
 * slices for the same reason.
 *
 * How: a response's `end()` corks its socket and uncorks it once the answer is buffered; on
 * the sockets of this server, that last uncork is held (only that one: a streamed response's
 * writes, an event stream's events, go out at once, as Node writes them), and the held sockets are uncorked
 * together: as soon as SLICE are waiting, and otherwise once the event loop has run what this
 * round of I/O brought (setImmediate), so no answer waits beyond the loop iteration that made
 * it. Destroying a socket writes what it holds first, so an answer followed by a
 * connection-closing error still reaches the client, as it does with Node's own writes.
 *
 * Requests pipelined on a connection are answered in one write too. Node queues the answer to a
 * request that arrives while an earlier one is being written (its bytes wait in the response's
 * own buffer), and hands it the socket only once the earlier answer has been written and has
 * emitted 'finish': one write, and one system call, per answer, which was most of the CPU a
 * pipelined request cost (16 requests a write: 1.0 writev per request). When the socket's held
 * answer is written, the answers queued behind it that are already complete are written with it,
 * in order, as Node would write each once its turn came (`joinQueued`); Node then hands each the
 * socket as before, finds its buffer empty, and its 'finish' follows the one before it.
 *
 * SLICE: 4 and 256 serve less than 16 in pairs against itself. 32 served 3-5% more than 16 with
 * one request per connection there, but in the full paired bench, pipelined `/json` fell from
 * 1.04-1.13x the bare server to 0.78-0.83x, so 16.
 */
const SLICE = 16;

interface HeldSocket extends Socket {
  /** Whether this socket's final uncork is held, waiting in `held`. */
  cogHeld: boolean;
  /** The async context the held uncork was called in (see `writeHeld`). */
  cogScope: AsyncResource | undefined;
  /** Answers to requests pipelined behind the one being written, in request order, as Node queued them (see `queueBehind`). */
  cogQueued: QueuedAnswer[] | null;
  /** Node's: the response being written on this socket. */
  _httpMessage?: QueuedAnswer | null;
}

/** Node's ServerResponse, as far as an answer waiting for its connection goes (test/engines/node/node-internals.test.ts checks these). */
interface QueuedAnswer {
  [ENDING]?: boolean;
  /** null until Node hands the answer its socket (and again once it is written). */
  socket: Socket | null;
  /** Whether `end()` was called. */
  finished: boolean;
  destroyed: boolean;
  /** Whether the connection closes after this answer. */
  _last: boolean;
  /** What the answer wrote before it had a socket. */
  outputData: { data: string | Buffer | null; encoding: BufferEncoding | null; callback: ((err?: Error | null) => void) | null }[];
  outputSize: number;
  /** Node's count of the bytes its connection's queued answers hold (it pauses reading past the high-water mark). */
  _onPendingData(delta: number): void;
}

const uncork = Socket.prototype.uncork;
const destroy = Socket.prototype.destroy;
/** Node's own methods that the hooks below wrap (test/engines/node/node-internals.test.ts checks they are still Node's). */
export const wrapped = { uncork, destroy } as const;
let held: HeldSocket[] = [];
let flushScheduled = false;

/** Makes the sockets of `server` hold their answers for writing in slices. */
export function writeInSlices(server: Server): void {
  // First among the listeners, so that nothing can have written before the socket holds.
  server.prependListener("connection", (socket: Socket) => {
    const holding = socket as HeldSocket;
    holding.cogHeld = false;
    holding.cogScope = undefined;
    holding.cogQueued = null;
    holding.uncork = uncorkInSlice;
    holding.destroy = destroyAfterWriting;
  });
}

/**
 * Notes the answer to a request that Node queued behind the one being written on `socket` (the
 * answer has no socket yet), on a server that writes in slices.
 */
export function queueBehind(socket: Socket, res: object): void {
  const holding = socket as HeldSocket;
  if (holding.cogHeld === undefined) return;
  (holding.cogQueued ??= []).push(res as QueuedAnswer);
}

function uncorkInSlice(this: HeldSocket): void {
  // Only the uncork that would write is held; inner levels of cork unwind as usual.
  if (this.writableCorked !== 1) return uncork.call(this);
  // A write of a response still being streamed (Node uncorks its first write a tick later): not held.
  if (this._httpMessage?.[ENDING] === false) return uncork.call(this);
  if (this.cogHeld) return;
  this.cogHeld = true;
  this.cogScope = asyncResource("CogHeldWrite");
  held.push(this);
  if (held.length >= SLICE) {
    writeHeld();
  } else if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(writeHeldAtEndOfRound);
  }
}

/**
 * Writes the held sockets. Each is uncorked in the async context its response's `end()` ran in,
 * as Node would have uncorked it there: the write's completion, and with it the response's
 * 'finish' and 'close' (and their listeners, which middleware such as on-finished or a tracer
 * add), belong to that request, not to whichever request's `end()` filled the slice or
 * scheduled the flush.
 */
function writeHeld(): void {
  const sockets = held;
  held = [];
  for (const socket of sockets) {
    if (!socket.cogHeld) continue;
    socket.cogHeld = false;
    const scope = socket.cogScope;
    socket.cogScope = undefined;
    if (socket.cogQueued !== null) joinQueued(socket);
    if (scope === undefined) uncork.call(socket);
    else scope.runInAsyncScope(uncork, socket);
  }
}

/**
 * Adds to the held socket's write the answers queued behind its answer that are complete, in
 * request order, as Node's `_flushOutput` writes one when its turn comes (each piece with its
 * callback, the last of which emits the answer's 'finish'); stops at the first answer still
 * being written, and after one that closes the connection (Node writes none after it). The
 * answer being written must have ended too: a streamed one's later writes go first.
 */
function joinQueued(socket: HeldSocket): void {
  const queued = socket.cogQueued!;
  const current = socket._httpMessage;
  let done = 0;
  if (current != null && current.finished && !current._last && socket.writable) {
    for (; done < queued.length; done++) {
      const res = queued[done]!;
      // Handed the socket already, or written and done (a queued answer that has ended holds at least its head).
      if (res.socket !== null || (res.finished && res.outputData.length === 0)) continue;
      if (!res.finished || res.destroyed) break;
      const { outputData, outputSize } = res;
      res.outputData = [];
      res.outputSize = 0;
      for (const piece of outputData) socket.write(piece.data!, piece.encoding!, piece.callback!);
      res._onPendingData(-outputSize);
      if (res._last) {
        done++;
        break;
      }
    }
  }
  if (done === queued.length) socket.cogQueued = null;
  else if (done > 0) queued.splice(0, done);
}

/**
 * Writes what waits once the round's I/O has been handled. A pipelined request's answer goes
 * out only when the one before it has finished (Node's 'finish', a tick after its write), so
 * the ticks that follow a write may hold more: write those too before the loop polls again.
 */
function writeHeldAtEndOfRound(): void {
  flushScheduled = false;
  writeHeld();
  nextTick(writeFollowers);
}

function writeFollowers(): void {
  if (held.length === 0) return;
  writeHeld();
  nextTick(writeFollowers);
}

function destroyAfterWriting(this: HeldSocket, err?: Error): HeldSocket {
  if (this.cogHeld) {
    this.cogHeld = false;
    this.cogScope = undefined;
    uncork.call(this);
  }
  return destroy.call(this, err) as HeldSocket;
}
