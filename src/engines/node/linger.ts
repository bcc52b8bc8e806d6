import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import { clearTimeout, setTimeout } from "../../base/loop.js";

/**
 * Closing a connection in stages (RFC 9112 9.6), when its last answer goes out while the client
 * is still sending the request's body: an upload answered before it is read (a 400, a 405, a
 * 413) on a request that said `Connection: close`, or one the server refused.
 *
 * Why: node:http closes such a connection as soon as its answer is written (`destroySoon`: end,
 * then destroy on 'finish'). The bytes the client sent meanwhile are then unread, and a socket
 * closed over unread bytes is reset: the client's next write fails with EPIPE, or its read with
 * ECONNRESET, often before it has read the answer waiting for it (express-fileupload's "fail when
 * using GET": supertest's GET with a file attached). node:http gets away with it when the answer
 * is written inside the read that brought the request, where libuv goes on reading what is there
 * before the close; the node engine writes its answers a slice at a time (writes.ts), after that
 * read, and the client lost the answer 9 times out of 10 (a client in another process loses it
 * on node:http too, now and then).
 *
 * How: node:http's `destroySoon` on the server's sockets is replaced by one that ends the write
 * side as Node's does (the answer and a FIN go out) and then, while the request node:http is
 * parsing is not complete and the client has not ended its side, reads on instead of closing:
 * node:http's parser drops the rest of the body (the request was dumped after its answer), and
 * the connection is destroyed once the body is whole, the client ends its side, or LINGER_MS
 * have passed (at once, for a body that broke requestTimeout: `closeAtOnce`). A request the client sends after it is not served (RFC 9112 9.6: the server
 * must not process further requests on a connection it closes): its body is dropped too.
 * Relies on node:http's `socket.parser.incoming` and `parser.onIncoming`
 * (test/engines/node/node-internals.test.ts checks them).
 */

/** How long a client still sending after the last answer is read from before the connection is closed anyway (nginx's lingering_timeout). */
export const LINGER_MS = 5_000;

/** node:http's HTTP/1 parser, as far as this file goes: the message it is parsing, and where it hands a new one. */
interface Parser {
  incoming: IncomingMessage | null;
  onIncoming: (req: IncomingMessage, shouldKeepAlive: boolean) => number;
}

/** On a socket: its request's body was too slow, so it closes at once after its answer (see `closeAtOnce`). */
const AT_ONCE: unique symbol = Symbol("cog.closeAtOnce");

interface ParsedSocket extends Socket {
  parser?: Parser | null;
  [AT_ONCE]?: true;
}

/**
 * The connection closes as soon as its answer is out, without lingering: its request's body did
 * not arrive within requestTimeout, and a client that slow is not waited for (nginx closes
 * such a connection at once too; the native engine does the same).
 */
export function closeAtOnce(socket: Socket): void {
  (socket as ParsedSocket)[AT_ONCE] = true;
}

/** Makes the HTTP/1 connections of `server` close in stages after their last answer. */
export function closeInStages(server: Server): void {
  server.on("connection", (socket: Socket) => {
    socket.destroySoon = endThenLinger;
  });
}

/** node:http's `destroySoon` (net.Socket's): end the write side, and once that is done, close, or linger first. */
function endThenLinger(this: Socket): void {
  if (this.writable) this.end();
  if (this.writableFinished) lingerOrDestroy(this);
  else this.once("finish", () => lingerOrDestroy(this));
}

function lingerOrDestroy(socket: ParsedSocket): void {
  const parser = socket.parser;
  const req = parser?.incoming;
  if (parser == null || req == null || req.complete || socket.readableEnded || socket.destroyed || socket[AT_ONCE] === true) {
    socket.destroy();
    return;
  }
  parser.onIncoming = dropRequest;
  // The body flows to nobody (node:http dumped it after its answer; a body refused for its size was paused).
  if (!req.destroyed) req.resume();
  const close = (): void => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(close, LINGER_MS);
  req.once("end", close);
  socket.once("end", close);
  socket.once("close", () => clearTimeout(timer));
}

/** A request that came after the connection's last answer: not served; its body, if any, is read and dropped. */
function dropRequest(req: IncomingMessage): number {
  req.resume();
  return 0;
}
