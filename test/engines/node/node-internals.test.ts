// Canaries for the Node internals the node engine relies on, over real sockets and servers.
// Writing answers in slices (src/engines/node/writes.ts, option sliceWrites) and draining the
// accept queue (src/engines/node/accept.ts, option drainAcceptQueue) use parts of net.Socket,
// http.ServerResponse and net.Server that Node does not document. When a Node release changes
// one, a test here fails with a message naming what changed and the file that relies on it:
// adapt that file, and until then users can turn its option off. Run once per Node version, on
// the node engine (scripts/test.mjs runs what is under test/engines/ once).
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, Socket, type AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { Cog } from "../../../src/index.js";
import { loadNative } from "../../../src/engines/kit/addon.js";
import { wrapped } from "../../../src/engines/node/writes.js";
import { wrappedBySendTimeout } from "../../../src/engines/node/send-timeout.js";
import { nativeSkip, raw, statuses } from "../../helpers.js";

const WRITES = "src/engines/node/writes.ts (writing answers in slices; option sliceWrites: false turns it off)";
const ACCEPT = "src/engines/node/accept.ts (draining the accept queue; option drainAcceptQueue: false turns it off)";

// Identity checks use assert.ok: Node 20's assert.equal drops a custom message when both values print alike.

/** The message of a failed canary: what changed in this Node, and which file relies on it. */
function changed(internal: string, file: string, detail: string): string {
  return `Node internal changed on Node ${process.version}: ${internal}: ${detail}. Relied on by ${file}.`;
}

/** A plain node:http server on a free loopback port, closed (connections and all) when the test ends. */
async function plainServer(
  t: { after(fn: () => unknown): void },
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { server, port: (server.address() as AddressInfo).port };
}

/** A Cog app on the node engine with its defaults (both mechanisms on), closed when the test ends. */
async function cogServer(t: { after(fn: () => unknown): void }, define: (app: Cog) => void): Promise<{ app: Cog; port: number }> {
  const app = new Cog({ engine: "node", logErrors: false });
  define(app);
  const { port } = await app.listen(0, "127.0.0.1");
  // Bounded: if Node stopped uncounting connections, close() would wait forever; the canaries say why.
  t.after(() => Promise.race([app.close(100), new Promise((resolve) => setTimeout(resolve, 2000).unref())]));
  return { app, port };
}

/** A keep-alive client connection that sends one request at a time and reads each whole answer (Content-Length or chunked). */
function keepAliveClient(port: number): { socket: Socket; ask(request: string): Promise<string> } {
  const socket = connect(port, "127.0.0.1");
  let text = "";
  let waiting: ((answer: string) => void) | null = null;
  const complete = (): number => {
    const headEnd = text.indexOf("\r\n\r\n");
    if (headEnd < 0) return -1;
    const head = text.slice(0, headEnd);
    const length = /content-length: *(\d+)/i.exec(head);
    if (length !== null) return text.length >= headEnd + 4 + Number(length[1]) ? headEnd + 4 + Number(length[1]) : -1;
    if (/transfer-encoding: *chunked/i.test(head)) {
      const end = text.indexOf("\r\n0\r\n\r\n", headEnd);
      return end < 0 ? -1 : end + 7;
    }
    return headEnd + 4;
  };
  socket.on("data", (chunk: Buffer) => {
    text += chunk.toString("latin1");
    const end = complete();
    if (end >= 0 && waiting !== null) {
      const answer = text.slice(0, end);
      text = text.slice(end);
      const resolve = waiting;
      waiting = null;
      resolve(answer);
    }
  });
  return {
    socket,
    ask(request) {
      return new Promise((resolve) => {
        waiting = resolve;
        socket.write(request);
      });
    },
  };
}

describe("Node internals relied on to write answers in slices (src/engines/node/writes.ts)", { timeout: 20_000 }, () => {
  test("the sockets an http.Server accepts use Socket.prototype.uncork and destroy, the functions the hook wraps", async (t) => {
    for (const name of ["uncork", "destroy"] as const) {
      assert.equal(typeof Socket.prototype[name], "function", changed(`net.Socket.prototype.${name}`, WRITES, "it is not a function"));
      assert.ok(
        wrapped[name] === Socket.prototype[name],
        changed(`net.Socket.prototype.${name}`, WRITES, "it is not the function the hook captured when it loaded"),
      );
    }
    const seen: Array<{ uncork: unknown; destroy: unknown; corked: unknown }> = [];
    const { server, port } = await plainServer(t, (_req, res) => res.end("ok"));
    server.on("connection", (socket: Socket) => seen.push({ uncork: socket.uncork, destroy: socket.destroy, corked: socket.writableCorked }));
    assert.deepEqual(statuses(await raw(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")), [200]);
    assert.equal(seen.length, 1);
    assert.ok(
      seen[0]!.uncork === Socket.prototype.uncork,
      changed("the uncork of a socket http.Server accepts", WRITES, "it is not net.Socket.prototype.uncork, so the hook would call the wrong function"),
    );
    assert.ok(
      seen[0]!.destroy === Socket.prototype.destroy,
      changed("the destroy of a socket http.Server accepts", WRITES, "it is not net.Socket.prototype.destroy, so the hook would call the wrong function"),
    );
    assert.equal(seen[0]!.corked, 0, changed("net.Socket writableCorked", WRITES, `a new socket's is ${String(seen[0]!.corked)}, not the number 0`));
  });

  // end() corks the socket, buffers the answer, then sets writableCorked to 1 and calls the
  // socket's uncork(), which writes: the hook holds that call. Node 22 and later call the socket's
  // uncork() once more from OutgoingMessage's own uncork() (at writableCorked 0 here; with the hook
  // at 1 on a socket already held, which it ignores), Node 20 does not: only the writing call matters.
  test("ServerResponse.end() on a keep-alive socket writes through the socket's own uncork, called at writableCorked 1", async (t) => {
    // Per request: each call to the socket's uncork made inside end(), as writableCorked before and after it.
    const calls: Array<[number, number]> = [];
    const after: Array<{ calls: Array<[number, number]>; corked: number; keepAlive: boolean }> = [];
    const { server, port } = await plainServer(t, (req, res) => {
      calls.length = 0;
      if (req.url === "/empty") {
        res.writeHead(204);
        res.end();
      } else if (req.url === "/chunked") {
        res.write("first part, ");
        calls.length = 0;
        res.end("last part");
      } else {
        res.setHeader("content-length", 5);
        res.end("hello");
      }
      after.push({ calls: [...calls], corked: res.socket!.writableCorked, keepAlive: res.shouldKeepAlive });
    });
    server.on("connection", (socket: Socket) => {
      socket.uncork = function spy(this: Socket) {
        const before = this.writableCorked;
        Socket.prototype.uncork.call(this);
        calls.push([before, this.writableCorked]);
      };
    });
    const client = keepAliveClient(port);
    t.after(() => client.socket.destroy());
    const answers = [];
    for (const path of ["/body", "/empty", "/chunked", "/body"]) answers.push(await client.ask(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
    assert.deepEqual(
      answers.map((a) => statuses(a)[0]),
      [200, 204, 200, 200],
    );
    assert.match(answers[0]!, /\r\n\r\nhello$/);
    assert.match(answers[2]!, /first part, .*last part/s);
    for (const [i, state] of after.entries()) {
      const request = `request ${i + 1} on the connection`;
      assert.ok(state.keepAlive, `${request} was not kept alive: the canary tests the keep-alive case`);
      const seen = state.calls.map(([from, to]) => `${from}->${to}`).join(", ") || "none";
      assert.ok(
        state.calls.length > 0,
        changed("ServerResponse.end()", WRITES, `${request}: it no longer calls the socket's uncork(), so the hook can't hold the answer`),
      );
      const writing = state.calls.filter(([from, to]) => from === 1 && to === 0);
      assert.equal(
        writing.length,
        1,
        changed(
          "ServerResponse.end()",
          WRITES,
          `${request}: the answer is not written by one call to the socket's uncork() at writableCorked 1 (writableCorked before->after each call: ${seen}), so the hook would not hold it`,
        ),
      );
      assert.equal(
        state.corked,
        0,
        changed(
          "ServerResponse.end()",
          WRITES,
          `${request}: the socket is left corked (${state.corked}) after end(), so that uncork is not the one that writes the answer`,
        ),
      );
    }
  });

  test("the hook holds the answer end() buffered: nothing is written until the slice is, then the client gets it", async (t) => {
    const states: Array<{ corked: number; buffered: number; flushedCorked?: number; flushedBuffered?: number }> = [];
    const { port } = await cogServer(t, (app) =>
      app.get("/", (_req, res) => {
        res.send("held answer");
        const socket = res.socket!;
        const state: (typeof states)[number] = { corked: socket.writableCorked, buffered: socket.writableLength };
        states.push(state);
        // The hook writes the held sockets from a setImmediate it scheduled first.
        setImmediate(() => {
          state.flushedCorked = socket.writableCorked;
          state.flushedBuffered = socket.writableLength;
        });
      }),
    );
    const client = keepAliveClient(port);
    t.after(() => client.socket.destroy());
    for (let i = 0; i < 3; i++) assert.match(await client.ask("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), /^HTTP\/1\.1 200[^]*\r\n\r\nheld answer$/);
    assert.equal(states.length, 3);
    for (const state of states) {
      assert.equal(
        state.corked,
        1,
        changed("ServerResponse.end() and socket.uncork()", WRITES, `after end() the socket's writableCorked is ${state.corked}: the answer was not held`),
      );
      assert.ok(
        state.buffered > 0,
        changed(
          "ServerResponse.end() and socket.uncork()",
          WRITES,
          `after end() nothing waits in the socket's buffer (writableLength ${state.buffered}): the answer went to the client unheld`,
        ),
      );
      assert.equal(
        state.flushedCorked,
        0,
        `the held socket was not uncorked by the end of the loop's round (writableCorked ${state.flushedCorked}): ${WRITES}`,
      );
    }
  });

  // A response's first write() corks the socket and uncorks it a tick later (connectionCorkNT);
  // that uncork must not be held as an answer's is: a streamed chunk, an SSE event, goes out then.
  test("a streamed write is not held: the socket is uncorked the tick after it, before the slice is written", async (t) => {
    const states: number[] = [];
    const { port } = await cogServer(t, (app) =>
      app.get("/", (_req, res) => {
        res.write("streamed");
        const socket = res.socket!;
        // Scheduled after Node's own uncork of the write's cork: runs just after it, before the slice's setImmediate.
        process.nextTick(() => process.nextTick(() => states.push(socket.writableCorked)));
        setTimeout(() => res.end(), 20);
      }),
    );
    const client = keepAliveClient(port);
    t.after(() => client.socket.destroy());
    assert.match(await client.ask("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), /streamed/);
    assert.deepEqual(states, [0], `the streamed write was held (writableCorked ${String(states[0])} after Node's uncork): ${WRITES}`);
  });

  test("destroying a socket that holds an answer writes the answer first", async (t) => {
    const before: number[] = [];
    const { port } = await cogServer(t, (app) =>
      app.get("/", (_req, res) => {
        res.send("last words");
        before.push(res.socket!.writableCorked);
        res.socket!.destroy();
      }),
    );
    const text = await raw(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 1000);
    assert.deepEqual(before, [1], `the answer was not held when the socket was destroyed, so this canary proves nothing: ${WRITES}`);
    assert.match(
      text,
      /^HTTP\/1\.1 200[^]*\r\n\r\nlast words$/,
      changed("net.Socket destroy()", WRITES, `an answer held when the socket was destroyed never reached the client (got ${JSON.stringify(text)})`),
    );
  });

  test("http.Server closes a connection after a malformed request through the socket's own destroy, so the answer before it is written", async (t) => {
    let destroys = 0;
    const { app, port } = await cogServer(t, (a) => a.get("/first", (_req, res) => res.send("first answer")));
    // After Cog's own 'connection' listener, which installed the hook: count the calls that reach it.
    app.server!.on("connection", (socket: Socket) => {
      const hook = socket.destroy;
      socket.destroy = function counted(this: Socket, err?: Error) {
        destroys++;
        return hook.call(this, err);
      };
    });
    const text = await raw(port, "GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\nNo colon in this line\r\n\r\n", 1000);
    assert.ok(
      destroys > 0,
      changed(
        "http.Server's handling of a parse error",
        WRITES,
        "it closed the connection without calling the socket's destroy(), so a held answer would be lost",
      ),
    );
    assert.match(
      text,
      /^HTTP\/1\.1 200[^]*\r\n\r\nfirst answer/,
      changed(
        "http.Server's handling of a parse error",
        WRITES,
        `the answer held before the malformed request never reached the client (got ${JSON.stringify(text)})`,
      ),
    );
  });
});

describe("Node internals relied on to write pipelined answers together (src/engines/node/writes.ts)", { timeout: 20_000 }, () => {
  // joinQueued writes a queued answer's buffered output as Node's _flushOutput does, from these fields.
  test("the answer to a pipelined request waits without a socket, its bytes in outputData as { data, encoding, callback }, counted in outputSize and _onPendingData", async (t) => {
    const seen: Array<{ socket: unknown; finished: unknown; last: unknown; outputSize: unknown; entries: unknown; pending: unknown }> = [];
    const { port } = await plainServer(t, (req, res) => {
      res.setHeader("content-length", 2);
      res.end("ok");
      const queued = res as unknown as {
        socket: unknown;
        finished: unknown;
        _last: unknown;
        outputSize: unknown;
        outputData: unknown;
        _onPendingData: unknown;
      };
      const entries = Array.isArray(queued.outputData)
        ? queued.outputData.map((e: Record<string, unknown>) => Object.keys(e).sort().join())
        : String(queued.outputData);
      seen.push({
        socket: queued.socket,
        finished: queued.finished,
        last: queued._last,
        outputSize: queued.outputSize,
        entries,
        pending: typeof queued._onPendingData,
      });
      void req;
    });
    const text = await raw(port, "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 1000);
    assert.deepEqual(statuses(text), [200, 200]);
    assert.equal(seen.length, 2);
    const [first, second] = seen as [(typeof seen)[number], (typeof seen)[number]];
    assert.ok(first.socket !== null, changed("http.Server's first answer on a connection", WRITES, "it has no socket"));
    assert.equal(
      second.socket,
      null,
      changed(
        "ServerResponse.socket of a pipelined request's answer",
        WRITES,
        "it is not null while the answer before it is written, so queued answers are not recognised",
      ),
    );
    assert.equal(second.finished, true, changed("ServerResponse.finished", WRITES, "not true after end()"));
    assert.equal(first.last, false, changed("ServerResponse._last", WRITES, "not false for a keep-alive answer"));
    assert.equal(second.last, true, changed("ServerResponse._last", WRITES, "not true for the answer to a Connection: close request"));
    assert.ok(
      Array.isArray(second.entries) && second.entries.length > 0 && second.entries.every((keys: string) => keys === "callback,data,encoding"),
      changed("ServerResponse.outputData", WRITES, `a queued answer's is ${JSON.stringify(second.entries)}, not entries of { data, encoding, callback }`),
    );
    assert.ok(
      typeof second.outputSize === "number" && second.outputSize > 0,
      changed("ServerResponse.outputSize", WRITES, `a queued answer's is ${String(second.outputSize)}`),
    );
    assert.equal(second.pending, "function", changed("ServerResponse._onPendingData", WRITES, "not a function"));
  });

  test("the answers to requests pipelined in one packet go out in one write, in order", async (t) => {
    const writes: number[] = [];
    const { app, port } = await cogServer(t, (a) => a.get("/p/:n", (req, res) => res.send(`answer ${req.params.n}`)));
    app.server!.on("connection", (socket: Socket) => {
      // Below the hook's uncork: each call is one write to the kernel.
      const own = socket as unknown as {
        _writev: (chunks: unknown[], cb: () => void) => void;
        _write: (data: unknown, encoding: unknown, cb: () => void) => void;
      };
      const writev = own._writev;
      const write = own._write;
      own._writev = function (this: Socket, chunks, cb) {
        writes.push(chunks.length);
        return writev.call(this, chunks, cb);
      };
      own._write = function (this: Socket, data, encoding, cb) {
        writes.push(1);
        return write.call(this, data, encoding, cb);
      };
    });
    const batch = Array.from({ length: 16 }, (_, n) => `GET /p/${n} HTTP/1.1\r\nHost: x\r\n\r\n`).join("");
    const text = await raw(port, batch, 1000, (got) => got.endsWith("answer 15"));
    assert.deepEqual(statuses(text), Array(16).fill(200));
    assert.deepEqual(
      text.match(/answer \d+/g),
      Array.from({ length: 16 }, (_, n) => `answer ${n}`),
    );
    // One packet is one read and one write; a read split by the kernel would make it two or three (Node alone writes 16).
    assert.ok(writes.length <= 3, `the 16 answers took ${writes.length} writes (${writes.join(", ")} pieces): ${WRITES}`);
  });
});

describe(
  "Node internals relied on to drain the accept queue (src/engines/node/accept.ts)",
  { timeout: 20_000, skip: process.platform !== "linux" && "the accept queue is drained on Linux only" },
  () => {
    test("a listening http.Server has its descriptor at _handle.fd", async (t) => {
      const { server } = await plainServer(t, (_req, res) => res.end());
      const fd = (server as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
      assert.equal(typeof fd, "number", changed("net.Server _handle.fd", ACCEPT, `a listening server's is ${typeof fd}, not a number`));
      assert.ok((fd as number) >= 0, changed("net.Server _handle.fd", ACCEPT, `a listening server's is ${String(fd)}, not a descriptor`));
    });

    test("_connections counts a connection the server accepts, which carries _server, and goes back down when it closes", async (t) => {
      const { server, port } = await plainServer(t, (_req, res) => res.end("ok"));
      const internals = server as unknown as { _connections: unknown };
      assert.equal(
        internals._connections,
        0,
        changed("net.Server _connections", ACCEPT, `an idle server's is ${String(internals._connections)}, not the number 0`),
      );
      const accepted = once(server, "connection") as Promise<[Socket]>;
      const client = connect(port, "127.0.0.1");
      t.after(() => client.destroy());
      const [socket] = await accepted;
      assert.equal(
        internals._connections,
        1,
        changed("net.Server _connections", ACCEPT, `it is ${String(internals._connections)} with one connection accepted, not 1`),
      );
      assert.ok(
        (socket as unknown as { _server: unknown })._server === server,
        changed("net.Socket _server", ACCEPT, "an accepted socket does not point to its server there"),
      );
      const closed = once(socket, "close");
      client.end();
      await closed;
      assert.equal(
        internals._connections,
        0,
        changed("net.Server _connections", ACCEPT, `it is ${String(internals._connections)} once the only connection closed, not 0`),
      );
    });

    test(
      "a socket accepted outside Node, with _server set and counted in _connections, is served, waited for by close(), and uncounted on destroy",
      { skip: nativeSkip },
      async (t) => {
        const addon = loadNative();
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let arrived = false;
        const { server, port } = await plainServer(t, (_req, res) => {
          arrived = true;
          // Busy until released (close() ends idle connections at once), then closing the connection.
          void gate.then(() => res.setHeader("connection", "close").end("adopted"));
        });
        t.after(release);
        const internals = server as unknown as { _handle: { fd: number }; _connections: number };
        const client = connect(port, "127.0.0.1");
        t.after(() => client.destroy());
        // net.connect to an IP address connects on the next tick; then accept before Node's loop can.
        await new Promise((resolve) => process.nextTick(resolve));
        let fds: number[] = [];
        for (const until = Date.now() + 2000; fds.length === 0 && Date.now() < until;) fds = addon.acceptQueued(internals._handle.fd, 1);
        assert.equal(fds.length, 1, "the client's connection never reached the accept queue");
        // As accept.ts's adopt() does.
        const socket = new Socket({ fd: fds[0], readable: true, writable: true, allowHalfOpen: true });
        internals._connections++;
        (socket as unknown as { _server: Server })._server = server;
        server.emit("connection", socket);
        const socketClosed = once(socket, "close");
        let text = "";
        client.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
        client.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        for (const until = Date.now() + 2000; !arrived && Date.now() < until;) await new Promise((r) => setTimeout(r, 5));
        assert.ok(arrived, changed("http.Server's 'connection' event", ACCEPT, "a request on a socket emitted there never reached the handler"));
        const counted = await new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
        assert.equal(counted, 1, changed("net.Server _connections", ACCEPT, `getConnections() says ${counted} with one adopted connection counted there`));
        let closedServer = false;
        const closing = new Promise<void>((resolve) => server.close(() => resolve())).then(() => (closedServer = true));
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(closedServer, false, changed("net.Server close()", ACCEPT, "it did not wait for a busy connection counted in _connections"));
        release();
        await Promise.race([socketClosed, new Promise((r) => setTimeout(r, 2000))]);
        assert.match(
          text,
          /^HTTP\/1\.1 200[^]*adopted$/,
          changed("http.Server's 'connection' event", ACCEPT, `a socket emitted there is not answered (got ${JSON.stringify(text)})`),
        );
        assert.ok(socket.destroyed, "the adopted connection was not closed after its Connection: close answer");
        assert.equal(
          internals._connections,
          0,
          changed(
            "net.Socket destroy() of a socket with _server set",
            ACCEPT,
            `it did not uncount the socket from its server's _connections (${internals._connections})`,
          ),
        );
        await Promise.race([closing, new Promise((r) => setTimeout(r, 2000))]);
        assert.equal(
          closedServer,
          true,
          changed("net.Socket destroy() of a socket with _server set", ACCEPT, "the server's close() was not called back once the socket was gone"),
        );
      },
    );
  },
);

describe("Node internals relied on by sendTimeout (src/engines/node/send-timeout.ts)", { timeout: 20_000 }, () => {
  const SEND = "src/engines/node/send-timeout.ts (sendTimeout; sendTimeout: 0 turns it off)";

  test("a socket writes through Socket.prototype._write and _writev, the functions the limit wraps, and can be reset", () => {
    for (const name of ["_write", "_writev"] as const) {
      const own = (Socket.prototype as unknown as Record<string, unknown>)[name];
      assert.equal(typeof own, "function", changed(`net.Socket.prototype.${name}`, SEND, "it is not a function"));
      assert.ok(wrappedBySendTimeout[name] === own, changed(`net.Socket.prototype.${name}`, SEND, "it is not the function the limit captured when it loaded"));
    }
    assert.equal(typeof Socket.prototype.resetAndDestroy, "function", changed("net.Socket.prototype.resetAndDestroy", SEND, "it is not a function"));
  });

  test("a write the kernel takes at once is done when _write returns; one it can't take stays in writableLength, and bytesWritten - writableLength grows as pieces go out", async (t) => {
    const seen: Array<{ length: number; written: number }> = [];
    let socket: Socket | null = null;
    const { port } = await plainServer(t, (_req, res) => {
      socket = res.socket as Socket;
      res.end(Buffer.alloc(32 * 1024 * 1024));
    });
    const client = connect(port, "127.0.0.1");
    t.after(() => client.destroy());
    client.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    client.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(socket !== null);
    const server = socket as Socket;
    assert.ok(server.writableLength > 0, changed("net.Socket writableLength", SEND, "a write the kernel could not take is not counted in it"));
    const before = server.bytesWritten - server.writableLength;
    // The limit hands a large write over in pieces; here, one more small write, then reading resumes.
    client.resume();
    // Until the count moves (or the bound, which only turns a hang into a failure, passes).
    for (const end = Date.now() + 30_000; server.bytesWritten - server.writableLength === before && server.writableLength > 0 && Date.now() < end;) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    seen.push({ length: server.writableLength, written: server.bytesWritten - server.writableLength });
    assert.ok(
      seen[0]!.written > before || seen[0]!.length === 0,
      changed("net.Socket bytesWritten and writableLength", SEND, "bytesWritten - writableLength does not grow as queued bytes are written"),
    );
  });
});

describe("Node internals relied on to drain without resets (src/engines/node/drain.ts)", { timeout: 20_000 }, () => {
  const DRAIN = "src/engines/node/drain.ts (the drain's Connection: close and its closing of idle connections)";
  test("http.Server keeps its connections in a list (symbol 'http.server.connections') whose all() and idle() entries carry the socket, and close() calls the server's own closeIdleConnections", async (t) => {
    const { connectionsListOf } = await import("../../../src/engines/node/drain.js");
    const { server, port } = await plainServer(t, (_req, res) => res.end("x"));
    const list = connectionsListOf(server);
    assert.ok(
      list !== undefined && typeof list.all === "function" && typeof list.idle === "function",
      changed("http.Server's connections list", DRAIN, "no symbol described 'http.server.connections' with all() and idle()"),
    );
    const socket = connect(port, "127.0.0.1");
    t.after(() => socket.destroy());
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await once(socket, "data");
    const idle = list.idle();
    assert.ok(
      idle.length === 1 && idle[0]!.socket !== null && idle[0]!.socket.remotePort === socket.localPort,
      changed("http.Server's connections list", DRAIN, "idle() does not hold the idle connection's socket"),
    );
    let called = false;
    server.closeIdleConnections = () => void (called = true);
    server.close();
    assert.ok(called, changed("http.Server.close", DRAIN, "it no longer calls the server's closeIdleConnections"));
  });
});

describe("Node internals relied on to close in stages (src/engines/node/linger.ts)", { timeout: 20_000 }, () => {
  const LINGER = "src/engines/node/linger.ts (closing in stages after an early answer)";
  test("http.Server closes a connection after its last answer with the socket's destroySoon, while its parser (socket.parser) still holds the incomplete request at .incoming, with an onIncoming of its own", async (t) => {
    const seen: Array<{ incoming: unknown; complete: unknown; onIncoming: unknown }> = [];
    let request: IncomingMessage | undefined;
    const { server, port } = await plainServer(t, (req, res) => {
      request = req;
      res.end("refused");
    });
    server.on("connection", (socket: Socket) => {
      socket.destroySoon = function (this: Socket) {
        const parser = (this as unknown as { parser?: { incoming?: IncomingMessage; onIncoming?: unknown } | null }).parser;
        seen.push({ incoming: parser?.incoming, complete: parser?.incoming?.complete, onIncoming: typeof parser?.onIncoming });
        this.destroy();
      };
    });
    const text = await raw(port, "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1000\r\n\r\nabc");
    assert.deepEqual(statuses(text), [200]);
    assert.equal(seen.length, 1, changed("http.Server's close after a last answer", LINGER, "it no longer calls the socket's destroySoon"));
    assert.ok(seen[0]!.incoming === request, changed("socket.parser.incoming", LINGER, "it is not the request being parsed when its answer is done"));
    assert.equal(seen[0]!.complete, false, changed("IncomingMessage.complete", LINGER, "a request whose body is still arriving is complete"));
    assert.equal(seen[0]!.onIncoming, "function", changed("socket.parser.onIncoming", LINGER, "the parser hands new requests elsewhere"));
  });
});
