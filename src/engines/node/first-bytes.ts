import type { Server } from "node:http";
import type { Server as NetServer, Socket } from "node:net";

/**
 * One cleartext port for HTTP/1.1 and HTTP/2 with prior knowledge (`http2: "h2c"` with
 * `allowHTTP1`), as Go's h2c handler and hyper's auto connection serve both: each connection's
 * first bytes say which protocol it speaks. A client with prior knowledge begins with HTTP/2's
 * connection preface; no HTTP/1.1 request does (its version would be 2.0). The connection then
 * goes to node:http2's server or to node:http's, each as if it had accepted it, the bytes read
 * so far put back first (`unshift`; node:http2 reads what a socket holds when its session
 * begins, node:http's parser once the socket flows again).
 *
 * node:http's server listens: its HTTP/1.1 clients get everything a plain server gives them
 * (limits, timeouts, answers written in slices, WebSockets), and close() drains both protocols.
 */

/** HTTP/2's connection preface (RFC 9113 §3.4). */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** What a client's first bytes say it speaks; undefined while they are a part of the preface. */
export function protocolOf(bytes: Buffer): "h2" | "http/1.1" | undefined {
  const seen = Math.min(bytes.length, PREFACE.length);
  if (bytes.compare(PREFACE, 0, seen, 0, seen) !== 0) return "http/1.1";
  return seen === PREFACE.length ? "h2" : undefined;
}

/** The connections whose first bytes have not decided yet. */
export interface Undecided {
  /** Closes them (nothing of theirs is in flight): `close()` does, once what clients sent is read. */
  closeAll(): void;
}

/**
 * Makes `http1` (node:http's server, just made) hand each connection, by its first bytes, to
 * itself or to `h2c` (node:http2's cleartext server, which does not listen). A connection whose
 * first bytes have not decided within `headersTimeout` (a part of the preface, then nothing) is
 * closed, as is one whose client ends its side before they decide.
 */
export function serveByFirstBytes(http1: Server, h2c: NetServer, headersTimeout: number): Undecided {
  // node:http's server handles a connection with the one listener its constructor adds.
  const own = http1.listeners("connection");
  if (own.length !== 1) throw new Error(`node:http's server has ${own.length} 'connection' listeners when made, where Cog expects its own one`);
  const serveHttp1 = own[0] as (this: Server, socket: Socket) => void;
  http1.removeListener("connection", serveHttp1);
  const undecided = new Set<Socket>();
  http1.on("connection", (socket: Socket) => {
    let seen: Buffer | undefined;
    const onData = (chunk: Buffer): void => {
      seen = seen === undefined ? chunk : Buffer.concat([seen, chunk]);
      const protocol = protocolOf(seen);
      if (protocol !== undefined) hand(protocol);
    };
    const drop = (): void => {
      forget();
      socket.destroy();
    };
    const forget = (): void => {
      undecided.delete(socket);
      socket.removeListener("data", onData);
      socket.removeListener("end", drop);
      socket.removeListener("error", drop);
      socket.removeListener("timeout", drop);
      socket.removeListener("close", forget);
      socket.setTimeout(0);
    };
    const hand = (protocol: "h2" | "http/1.1"): void => {
      forget();
      socket.pause();
      socket.unshift(seen!);
      if (protocol === "h2") {
        h2c.emit("connection", socket);
      } else {
        serveHttp1.call(http1, socket);
        socket.resume();
      }
    };
    undecided.add(socket);
    socket.on("data", onData);
    socket.on("end", drop);
    socket.on("error", drop);
    socket.on("timeout", drop);
    socket.on("close", forget);
    if (headersTimeout > 0) socket.setTimeout(headersTimeout);
  });
  return {
    closeAll() {
      for (const socket of undecided) socket.destroy();
    },
  };
}
