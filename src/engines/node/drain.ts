import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * What a drain on node:http needs that node:http does not do itself (Node 20-26): the answers
 * still to be written say `Connection: close`, and idle connections are closed only once what
 * their clients sent before the drain began has been read. node:http's `server.close()` closes
 * idle connections at once (a reset when a request waits unread in the kernel), and lets an
 * answer finished during the drain say `Connection: keep-alive`, after which the connection is
 * closed as idle: a keep-alive client sends its next request on it and gets a reset, and cannot
 * tell whether that request ran. Relies on node:http's list of connections
 * (test/engines/node/node-internals.test.ts checks it is still there).
 */

/** node:http's list of a server's HTTP/1 connections: each entry is a parser with its socket. */
interface ConnectionsList {
  all(): Array<{ socket: Socket | null }>;
  /** The connections whose parser waits for a request (an answer may still be on its way out). */
  idle(): Array<{ socket: Socket | null }>;
}

/** On a socket: the answer `lastAnswersClose` made close the connection, while its head is not out. */
const CLOSER: unique symbol = Symbol("cog.drainCloser");

/** An answer as this file sees it: whether its head is out, and whether it keeps the connection. */
interface Answer {
  headersSent: boolean;
  shouldKeepAlive: boolean;
}

/** The socket's state this file reads: Node's current answer, and the answers Cog saw queued behind it (writes.ts). */
interface AnsweringSocket {
  /** writes.ts's: the socket's write is held, to go out with the slice's. */
  cogHeld?: boolean;
  _httpMessage?: Answer | null;
  cogQueued?: Answer[] | null;
  [CLOSER]?: Answer;
}

/** node:http's symbol for its list of connections, found by its description. */
export function connectionsListOf(server: Server): ConnectionsList | undefined {
  const key = Object.getOwnPropertySymbols(server).find((symbol) => symbol.description === "http.server.connections");
  return key === undefined ? undefined : (server as unknown as Record<symbol, ConnectionsList | undefined>)[key];
}

/**
 * The drain has begun: on every HTTP/1 connection, the last answer due closes it, unless its
 * head is already out: the answer in progress, or the last of those queued behind it for
 * pipelined requests (known where answers are written in slices, writes.ts; elsewhere node:http
 * keeps its queue to itself, and the one in progress is taken for the last). Answers before it
 * keep the connection, so that the ones behind them are still written.
 */
export function lastAnswersClose(server: Server): void {
  const connections = connectionsListOf(server)?.all() ?? [];
  for (const { socket } of connections) {
    const answering = socket as unknown as AnsweringSocket | null;
    if (answering === null) continue;
    const queued = answering.cogQueued;
    const last = queued != null && queued.length > 0 ? queued[queued.length - 1] : answering._httpMessage;
    if (last != null && !last.headersSent) {
      last.shouldKeepAlive = false;
      answering[CLOSER] = last;
    }
  }
}

/**
 * A request arrived during the drain behind answers still due on its connection (pipelined):
 * the one that was to close the connection keeps it, so that this request is answered too (the
 * app's 503, which closes it).
 */
export function answerQueuedToo(socket: Socket): void {
  const answering = socket as unknown as AnsweringSocket;
  const closer = answering[CLOSER];
  if (closer === undefined) return;
  answering[CLOSER] = undefined;
  if (!closer.headersSent) closer.shouldKeepAlive = true;
}

/**
 * How long a connection must have been idle during the drain before it is closed. A keep-alive
 * client sends its next request the moment it has an answer; closing the connection under it
 * then resets that request, which the client cannot tell from one that ran. Given this long,
 * the request arrives and is answered 503 with Connection: close.
 */
const IDLE_GRACE_MS = 200;

/**
 * The drain's closer of idle connections: those that wait for a request with nothing left to
 * write, and have waited `IDLE_GRACE_MS` with no byte read (node:http's `closeIdleConnections`
 * closes them at once, and also takes a connection whose last answer is finished but not yet
 * written out: an answer queued behind another, or one held for its slice, is cut unsent).
 * Call it again and again (every few tens of ms) until the server has closed.
 */
export function idleCloser(server: Server): () => void {
  const list = connectionsListOf(server);
  const seen = new WeakMap<Socket, { read: number; since: number }>();
  return () => {
    // Not node:http's server (node:http2's, which closes its sessions itself): none to close here.
    if (list === undefined) return;
    const now = performance.now();
    for (const { socket } of list.idle()) {
      if (socket === null) continue;
      const answering = socket as unknown as AnsweringSocket;
      if (answering._httpMessage != null || answering.cogHeld === true || socket.writableLength > 0) continue;
      const idle = seen.get(socket);
      if (idle === undefined || idle.read !== socket.bytesRead) seen.set(socket, { read: socket.bytesRead, since: now });
      else if (now - idle.since >= IDLE_GRACE_MS) socket.destroy();
    }
  };
}
