import type { Server } from "node:http";
import { Socket } from "node:net";
import type { AsyncResource } from "node:async_hooks";
import { asyncResource } from "../../async-resource.js";
import { ENDING } from "../../symbols.js";

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
  /** Node's: the response being written on this socket. */
  _httpMessage?: { [ENDING]?: boolean } | null;
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
    holding.uncork = uncorkInSlice;
    holding.destroy = destroyAfterWriting;
  });
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
    if (scope === undefined) uncork.call(socket);
    else scope.runInAsyncScope(uncork, socket);
  }
}

/**
 * Writes what waits once the round's I/O has been handled. A pipelined request's answer goes
 * out only when the one before it has finished (Node's 'finish', a tick after its write), so
 * the ticks that follow a write may hold more: write those too before the loop polls again.
 */
function writeHeldAtEndOfRound(): void {
  flushScheduled = false;
  writeHeld();
  process.nextTick(writeFollowers);
}

function writeFollowers(): void {
  if (held.length === 0) return;
  writeHeld();
  process.nextTick(writeFollowers);
}

function destroyAfterWriting(this: HeldSocket, err?: Error): HeldSocket {
  if (this.cogHeld) {
    this.cogHeld = false;
    this.cogScope = undefined;
    uncork.call(this);
  }
  return destroy.call(this, err) as HeldSocket;
}
