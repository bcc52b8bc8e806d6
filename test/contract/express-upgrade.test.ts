// node:http's 'upgrade' event on cog-http/express's server, on every engine: `ws` attached with
// `server.on("upgrade", ...)` and `handleUpgrade`, or with `new WebSocketServer({ server })`,
// serves WebSockets over the connection the engine hands over (on the native engine a Duplex
// the addon tunnels, src/engines/native/tunnel.ts), TLS included. Real sockets, `ws`'s own client.
import assert from "node:assert/strict";
import { once } from "node:events";
import { get as httpGet, type IncomingMessage } from "node:http";
import { get as httpsGet } from "node:https";
import { connect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { Duplex } from "node:stream";
import { describe, test } from "node:test";
import { WebSocket, WebSocketServer } from "ws";
import express from "../../src/express/index.js";
import { makeCertificates, opensslSkip } from "../certificates.js";
import { closed, portOf, type Listening } from "../express-pair.js";
import { engine, nativeSkip } from "../helpers.js";

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);

/** An Express app on the engine under test with `ws` on its server's 'upgrade' event, echoing every message. */
async function echoServer(t: { after(fn: () => unknown): void }, options: Parameters<typeof express>[0] = {}) {
  const app = express({ engine, ...options });
  app.get("/", (_req, res) => res.send("http still served"));
  const server = app.listen(0, "127.0.0.1");
  const wss = new WebSocketServer({ noServer: true });
  const upgrades: Array<{ url: string | undefined; key: unknown; remoteAddress: string | undefined; remotePort: number | undefined; head: number }> = [];
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const s = socket as Socket;
    upgrades.push({ url: req.url, key: req.headers["sec-websocket-key"], remoteAddress: s.remoteAddress, remotePort: s.remotePort, head: head.length });
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });
  wss.on("connection", (ws) => ws.on("message", (data, binary) => ws.send(data, { binary })));
  const port = await portOf(server as Listening);
  t.after(async () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    await closed(server as Listening);
  });
  return { app, server, wss, port, upgrades };
}

/** A `ws` client, open. */
async function client(url: string, options?: ConstructorParameters<typeof WebSocket>[2]): Promise<WebSocket> {
  const ws = new WebSocket(url, options);
  await once(ws, "open");
  return ws;
}

/** The next message a client gets, as text or bytes. */
async function next(ws: WebSocket): Promise<{ data: Buffer; binary: boolean }> {
  const [data, binary] = (await once(ws, "message")) as [Buffer, boolean];
  return { data, binary };
}

describe(`'upgrade' on cog-http/express's server (${engine} engine)`, { skip: engine === "native" && nativeSkip }, () => {
  test("ws's handleUpgrade echoes text and binary messages, and the server still serves HTTP", async (t) => {
    const { port, upgrades } = await echoServer(t);
    const ws = await client(`ws://127.0.0.1:${port}/chat?room=1`);
    ws.send("hello");
    assert.deepEqual(await next(ws), { data: Buffer.from("hello"), binary: false });
    ws.send(Buffer.from([0, 1, 2, 255]));
    assert.deepEqual(await next(ws), { data: Buffer.from([0, 1, 2, 255]), binary: true });
    assert.equal(upgrades.length, 1);
    const [upgrade] = upgrades;
    assert.equal(upgrade!.url, "/chat?room=1");
    assert.equal(typeof upgrade!.key, "string");
    assert.equal(upgrade!.remoteAddress, "127.0.0.1");
    assert.ok(Number.isInteger(upgrade!.remotePort) && upgrade!.remotePort! > 0);
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await answer.text(), "http still served");
    ws.close();
    await once(ws, "close");
  });

  test("bytes sent with the handshake reach the listener as `head`, and the frame in them is served", async (t) => {
    const { port, upgrades } = await echoServer(t);
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    // A masked text frame "hi" (mask 0: the payload as it is), in the same write as the handshake.
    const frame = Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0x68, 0x69]);
    const handshake = `GET /raw HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`;
    socket.write(Buffer.concat([Buffer.from(handshake), frame]));
    let received = Buffer.alloc(0);
    const echoed = Buffer.from([0x81, 0x02, 0x68, 0x69]);
    while (!received.includes(echoed)) received = Buffer.concat([received, (await once(socket, "data"))[0] as Buffer]);
    const text = received.toString("latin1");
    assert.match(text, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(text, /\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\n/);
    assert.equal(upgrades[0]!.head, frame.length);
    socket.destroy();
  });

  test("new WebSocketServer({ server }) serves on the server it is given", async (t) => {
    const app = express({ engine });
    const server = app.listen(0, "127.0.0.1");
    const wss = new WebSocketServer({ server: server as never });
    wss.on("connection", (ws) => ws.on("message", (data) => ws.send(`echo: ${String(data)}`)));
    const port = await portOf(server as Listening);
    t.after(async () => {
      wss.close();
      await closed(server as Listening);
    });
    const ws = await client(`ws://127.0.0.1:${port}/`);
    ws.send("one");
    assert.equal(String((await next(ws)).data), "echo: one");
    ws.close();
    await once(ws, "close");
  });

  test("a large message goes both ways whole, with backpressure: the server's writes wait for a client that stops reading", async (t) => {
    const { wss, port } = await echoServer(t);
    const ws = await client(`ws://127.0.0.1:${port}/`, { maxPayload: 64 * 1024 * 1024 });
    const big = Buffer.alloc(16 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big[i] = i / 4096;
    ws.send(big);
    const echo = await next(ws);
    assert.equal(echo.data.length, big.length);
    assert.ok(echo.data.equals(big), "the echo is the message, byte for byte");
    // The client stops reading: the server's message waits in its socket's buffer, then goes once it reads again.
    const [serverSide] = [...wss.clients];
    (ws as unknown as { _socket: Socket })._socket.pause();
    let sent = false;
    serverSide!.send(big, () => (sent = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(serverSide!.bufferedAmount > 0, "bytes wait for the client");
    assert.equal(sent, false, "the write is not done while the client reads nothing");
    (ws as unknown as { _socket: Socket })._socket.resume();
    const pushed = await next(ws);
    assert.ok(pushed.data.equals(big));
    assert.equal(serverSide!.bufferedAmount, 0);
    ws.close();
    await once(ws, "close");
  });

  test("a listener that stops reading the socket holds the client back, and gets every byte once it reads again", async (t) => {
    const app = express({ engine });
    const server = app.listen(0, "127.0.0.1");
    let upgraded: Duplex | null = null;
    server.on("upgrade", (_req: IncomingMessage, socket: Duplex) => {
      socket.pause();
      upgraded = socket;
      socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n");
    });
    const port = await portOf(server as Listening);
    t.after(() => closed(server as Listening));
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    socket.write("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n");
    await once(socket, "data");
    const total = 48 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024, 7);
    for (let sent = 0; sent < total; sent += chunk.length) socket.write(chunk);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(socket.writableLength > 0, "the client's writes back up while the server reads nothing");
    let received = 0;
    const all = new Promise<void>((resolve) =>
      upgraded!.on("data", (data: Buffer) => {
        received += data.length;
        if (received >= total) resolve();
      }),
    );
    upgraded!.resume();
    await all;
    assert.equal(received, total);
    socket.end();
    await once(upgraded!, "end");
    upgraded!.end();
    await once(upgraded!, "close");
  });

  /** A server whose 'upgrade' listener answers 101 and reads the socket, recording what it emits (and the last error); and a raw client, upgraded (over TLS with `tls`: then `socket` is the TCP connection under it); `served` asks the server for a page. */
  async function rawTunnel(t: { after(fn: () => unknown): void }, tls?: ReturnType<typeof makeCertificates>) {
    const app = express({ engine, ...(tls === undefined ? {} : { tls: tls.issue("localhost") }) });
    app.get("/", (_req, res) => res.send("still served"));
    const server = app.listen(0, "127.0.0.1");
    const seen: string[] = [];
    let lastError: unknown;
    let upgraded: Duplex | null = null;
    const closedSocket = new Promise<void>((resolve) =>
      server.on("upgrade", (_req: IncomingMessage, socket: Duplex) => {
        upgraded = socket;
        socket.on("data", () => {});
        socket.on("end", () => seen.push("end"));
        socket.on("error", (err: NodeJS.ErrnoException) => {
          lastError = err;
          seen.push(`error ${err.message} ${err.code} ${err.errno} ${err.syscall}`);
        });
        socket.on("close", (hadError: unknown) => {
          seen.push(`close ${String(hadError)}`);
          resolve();
        });
        socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n");
      }),
    );
    const port = await portOf(server as Listening);
    t.after(() => closed(server as Listening));
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    await once(socket, "connect");
    const speaking = tls === undefined ? socket : tlsConnect({ socket, servername: "localhost", ca: tls.ca });
    speaking.on("error", () => {});
    speaking.write("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n");
    await once(speaking, "data");
    /** The status of a new request to the server (it still serves after the tunnel's failure). */
    const served = async (): Promise<number | undefined> => {
      const get = tls === undefined ? httpGet : httpsGet;
      const [res] = (await once(get({ host: "127.0.0.1", port, path: "/", servername: "localhost", ca: tls?.ca, agent: false }), "response")) as [
        IncomingMessage,
      ];
      res.resume();
      return res.statusCode;
    };
    return { socket, seen, closedSocket, upgraded: () => upgraded!, lastError: () => lastError, served };
  }

  for (const overTls of [false, true]) {
    test(
      `${overTls ? "over TLS, " : ""}a client that is gone: a write that fails emits 'error' (write ECONNRESET), then 'close' with hadError true, as node:http${overTls ? "s" : ""}'s socket does`,
      { skip: overTls && opensslSkip },
      async (t) => {
        const { socket, seen, closedSocket, upgraded, served } = await rawTunnel(t, overTls ? makeCertificates() : undefined);
        // The reset reaches the server's kernel at once (loopback): the write, before the loop reads again, finds it.
        socket.resetAndDestroy();
        upgraded().write("to a client that is gone");
        await closedSocket;
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(seen, ["error write ECONNRESET ECONNRESET -104 write", "close true"]);
        assert.equal(await served(), 200);
      },
    );
  }

  for (const [what, bytes, code] of [
    // Node 20's OpenSSL (3.0) checks a record's version before its type; later ones, and rustls, the type.
    [
      "bytes that are no TLS",
      Buffer.from("garbage, not a TLS record\r\n"),
      engine === "node" && NODE_MAJOR < 22 ? "ERR_SSL_WRONG_VERSION_NUMBER" : "ERR_SSL_BAD_RECORD_TYPE",
    ],
    ["a record that does not decrypt", Buffer.concat([Buffer.from([0x17, 3, 3, 0, 40]), Buffer.alloc(40, 7)]), "ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC"],
  ] as const) {
    test(
      `over TLS, a client that sends ${what}: 'error' (${code}), as node:https's socket emits it, then 'close' once the listener destroys it`,
      { skip: opensslSkip },
      async (t) => {
        const { socket, seen, closedSocket, upgraded, served, lastError } = await rawTunnel(t, makeCertificates());
        // As ws does on a socket's 'error': node:tls's socket stays open until destroyed.
        upgraded().on("error", () => upgraded().destroy());
        // Under the TLS session, on the TCP connection.
        socket.write(bytes);
        await closedSocket;
        await new Promise((resolve) => setImmediate(resolve));
        const error = lastError() as Error & { code: string; reason: string; library: string };
        assert.ok(error instanceof Error);
        assert.deepEqual([error.code, error.reason, error.library], [code, code.slice("ERR_SSL_".length).toLowerCase().replaceAll("_", " "), "SSL routines"]);
        assert.deepEqual(
          seen.map((event) => (event.startsWith("error ") ? "error" : event)),
          ["error", "close false"],
        );
        assert.equal(await served(), 200);
      },
    );
  }

  test("a client that resets the connection: the server's socket emits 'error' (read ECONNRESET), then 'close' with hadError true, as node:http's", async (t) => {
    const { socket, seen, closedSocket } = await rawTunnel(t);
    socket.resetAndDestroy();
    await closedSocket;
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ["error read ECONNRESET ECONNRESET -104 read", "close true"]);
  });

  test("over TLS, a client that resets the TCP connection: 'error' (read ECONNRESET), then 'close' with hadError true", { skip: opensslSkip }, async (t) => {
    const { socket, seen, closedSocket } = await rawTunnel(t, makeCertificates());
    socket.resetAndDestroy();
    await closedSocket;
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ["error read ECONNRESET ECONNRESET -104 read", "close true"]);
  });

  test("a client that ends, and a server that ends: 'end', then 'close' with hadError false, and no 'error'", async (t) => {
    const { socket, seen, closedSocket, upgraded } = await rawTunnel(t);
    socket.end();
    await once(upgraded(), "end");
    upgraded().end();
    await closedSocket;
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ["end", "close false"]);
  });

  test("a server that destroys its socket: 'close' with hadError false, and no 'error'", async (t) => {
    const { seen, closedSocket, upgraded } = await rawTunnel(t);
    upgraded().destroy();
    await closedSocket;
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ["close false"]);
  });

  test("the client's close reaches the server's socket, with its code and reason", async (t) => {
    const { wss, port } = await echoServer(t);
    const ws = await client(`ws://127.0.0.1:${port}/`);
    const [serverSide] = [...wss.clients];
    const heard = once(serverSide!, "close") as Promise<[number, Buffer]>;
    ws.close(4001, "client leaves");
    const [code, reason] = await heard;
    assert.deepEqual([code, String(reason)], [4001, "client leaves"]);
    assert.deepEqual((await once(ws, "close")).map(String), ["4001", "client leaves"]);
  });

  test("the server's close reaches the client, and server.close() calls back once the upgraded socket is gone", async (t) => {
    const { server, wss, port } = await echoServer(t);
    const ws = await client(`ws://127.0.0.1:${port}/`);
    const order: string[] = [];
    const serverSide = [...wss.clients][0]!;
    const serverClosed = new Promise<void>((resolve) =>
      server.close(() => {
        order.push("server closed");
        resolve();
      }),
    );
    // Not before the upgraded socket closes, however long that takes.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(order, []);
    serverSide.close(1001, "server leaves");
    assert.deepEqual((await once(ws, "close")).map(String), ["1001", "server leaves"]);
    await serverClosed;
    assert.deepEqual(order, ["server closed"]);
  });

  test("without an 'upgrade' listener (or once it is removed), an upgrade request is the app's", async (t) => {
    const app = express({ engine });
    app.get("/ws", (_req, res) => res.status(426).send("upgrade required"));
    const server = app.listen(0, "127.0.0.1");
    const port = await portOf(server as Listening);
    t.after(() => closed(server as Listening));
    const unanswered = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    const [, response] = (await once(unanswered, "unexpected-response")) as [unknown, IncomingMessage];
    assert.equal(response.statusCode, 426);
    response.resume();
    unanswered.on("error", () => {});
    unanswered.terminate();
    const wss = new WebSocketServer({ server: server as never });
    wss.on("connection", (ws) => ws.send("served"));
    // The message may come with the handshake's answer: listened for before the socket opens.
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    const served = next(ws);
    await once(ws, "open");
    assert.equal(String((await served).data), "served");
    ws.close();
    await once(ws, "close");
    wss.close();
    assert.equal(server.listenerCount("upgrade"), 0);
    const again = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    const [, refused] = (await once(again, "unexpected-response")) as [unknown, IncomingMessage];
    assert.equal(refused.statusCode, 426);
    refused.resume();
    again.on("error", () => {});
    again.terminate();
  });

  test("the server's 'request' listeners can be taken over, as engine.io (socket.io) takes them", async (t) => {
    const app = express({ engine });
    app.get("/", (_req, res) => res.send("the app"));
    const server = app.listen(0, "127.0.0.1");
    const port = await portOf(server as Listening);
    t.after(() => closed(server as Listening));
    assert.equal(server.listenerCount("request"), 1, "the app listens, as with http.createServer(app)");
    // engine.io's attach: its own listener answers its path and calls the ones it took for the rest.
    const taken = server.listeners("request").slice(0) as Array<(req: IncomingMessage, res: unknown) => void>;
    server.removeAllListeners("request");
    server.on("request", (req: IncomingMessage, res: { end(body: string): void }) => {
      if (req.url!.startsWith("/socket.io/")) res.end("engine.io");
      else for (const listener of taken) listener.call(server, req, res);
    });
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/socket.io/?EIO=4`)).text(), "engine.io");
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "the app");
  });

  test("over TLS: the socket carries the plaintext", { skip: opensslSkip }, async (t) => {
    const certificates = makeCertificates();
    const { port } = await echoServer(t, { tls: certificates.issue("localhost") });
    const ws = await client(`wss://localhost:${port}/`, { ca: certificates.ca });
    ws.send("secret");
    assert.equal(String((await next(ws)).data), "secret");
    const big = Buffer.alloc(4 * 1024 * 1024, 3);
    ws.send(big);
    assert.ok((await next(ws)).data.equals(big));
    ws.close(1000);
    assert.equal((await once(ws, "close"))[0], 1000);
  });
});
