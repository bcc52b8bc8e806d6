// The edges of the upgrade request on a server with WebSocket routes: frames that arrive in the
// same packet as the handshake, a handshake that carries a body (refused), and a request with an
// Upgrade header but no Connection: upgrade (an ordinary request, its connection kept). The
// same cases run on both engines (COG_ENGINE).
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import type { WebSocket } from "../../src/index.js";
import { engine, serve, statuses } from "../helpers.js";
import { TEXT, frame, handshake, openRaw } from "../websocket-wire.js";

const echo = { message: (ws: WebSocket, data: string | Buffer, isBinary: boolean) => void ws.send(data, isBinary) };

/**
 * Writes `bytes` in one write and collects what the server sends until it closes the
 * connection (`closed`) or `ms` pass; the client sends nothing more meanwhile.
 */
function exchange(port: number, bytes: Buffer | string, ms = 1000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString("latin1"), closed });
    };
    const timer = setTimeout(() => finish(false), ms);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => finish(true));
    socket.on("connect", () => socket.write(bytes));
  });
}

/** A server text frame's bytes (unmasked, short). */
const serverText = (text: string) => Buffer.concat([Buffer.from([0x81, text.length]), Buffer.from(text)]).toString("latin1");

test(`[${engine}] a frame in the same packet as the handshake is answered without the client sending again`, async (t) => {
  const { port } = await serve(t, (app) => {
    app.ws("/echo", echo);
    app.ws("/hooked", { ...echo, upgrade: async () => ({}) });
  });
  for (const path of ["/echo", "/hooked"]) {
    const packet = Buffer.concat([Buffer.from(handshake(path)), frame({ opcode: TEXT, payload: "early" })]);
    const { text } = await exchange(port, packet, 1500);
    assert.match(text, /^HTTP\/1\.1 101 /, path);
    assert.ok(text.endsWith(serverText("early")), `${path}: the echo arrived: ${JSON.stringify(text)}`);
  }
});

test(`[${engine}] a handshake with a body is refused with 400 and its connection closed; the server goes on`, async (t) => {
  let opened = 0;
  const { port } = await serve(t, (app) => {
    app.ws("/echo", { ...echo, open: () => void opened++ });
    app.get("/ok", (_req, res) => res.send("ok"));
  });
  const withLength = handshake("/echo", { "Content-Length": "5" }) + "hello";
  const chunked = handshake("/echo", { "Transfer-Encoding": "chunked" }) + "5\r\nhello\r\n0\r\n\r\n";
  const bodyAndFrame = Buffer.concat([Buffer.from(withLength), frame({ opcode: TEXT, payload: "early" })]);
  for (const [what, packet] of [
    ["Content-Length", withLength],
    ["chunked", chunked],
    ["body and a frame", bodyAndFrame],
  ] as const) {
    const { text, closed } = await exchange(port, packet, 2000);
    assert.deepEqual(statuses(text), [400], `${what}: ${JSON.stringify(text)}`);
    assert.ok(closed, `${what}: the connection closed`);
  }
  assert.equal(opened, 0);
  assert.equal(await (await fetch(`http://127.0.0.1:${port}/ok`)).text(), "ok");
});

test(`[${engine}] Upgrade without Connection: upgrade is an ordinary request: pipelined requests are answered, the connection kept`, async (t) => {
  const { port } = await serve(t, (app) => {
    app.ws("/echo", echo);
    app.get("/p", (req, res) => res.send(`p ${req.get("upgrade") ?? "-"}`));
  });
  const packet = "GET /p HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\n\r\nGET /p HTTP/1.1\r\nHost: x\r\n\r\n";
  const { text, closed } = await exchange(port, packet, 800);
  assert.deepEqual(statuses(text), [200, 200], text);
  assert.match(text, /p h2c/);
  assert.ok(!closed, "the connection is kept");
});

test(`[${engine}] close(drainMs) drains WebSockets and in-flight requests together, under one deadline`, async (t) => {
  let reached = false;
  const { app, port, base } = await serve(t, (app) => {
    app.ws("/echo", echo);
    app.get("/never", () => void (reached = true)); // never answers: cut at the deadline
  });
  const socket = await openRaw(port, "/echo"); // never answers the server's Close: cut at the deadline
  const request = fetch(`${base}/never`).catch(() => "cut");
  while (!reached) await new Promise((resolve) => setTimeout(resolve, 5));
  const drainMs = 1000;
  const started = performance.now();
  await app.close(drainMs);
  const took = performance.now() - started;
  assert.equal(await request, "cut");
  await socket.rest(1000);
  assert.ok(socket.ended, "the WebSocket was cut");
  // Both cut at one deadline: well before two of them (one after the other, it took 2,000 ms).
  assert.ok(took < 1.7 * drainMs, `close took ${Math.round(took)} ms for drainMs ${drainMs}`);
});
