// WebSocket routes: the handshake through the app's middleware and the upgrade hook, the socket's
// API (send, close, terminate, data, remote address), topics and app.publish, idleTimeout, and
// a handler's errors. The same cases run on both engines (COG_ENGINE).
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import WebSocketClient from "ws";
import { HttpError, type WebSocket } from "../../src/index.js";
import { engine, raw, serve, statuses } from "../helpers.js";
import { BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT, closePayload, frame, handshake, openRaw } from "../websocket-wire.js";

const echo = { message: (ws: WebSocket, data: string | Buffer, isBinary: boolean) => void ws.send(data, isBinary) };

interface Message {
  data: string;
  bytes: Buffer;
  isBinary: boolean;
}
const inbox = new WeakMap<WebSocketClient, { messages: Message[]; waiting: Array<(m: Message) => void> }>();

/** Opens a `ws` client and waits for it to be open; its messages queue up from the start (the server may send in `open`). */
async function client(port: number, path: string, options?: WebSocketClient.ClientOptions): Promise<WebSocketClient> {
  const ws = new WebSocketClient(`ws://127.0.0.1:${port}${path}`, options);
  const box = { messages: [] as Message[], waiting: [] as Array<(m: Message) => void> };
  inbox.set(ws, box);
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    const message = { data: data.toString(), bytes: data, isBinary };
    const waiter = box.waiting.shift();
    if (waiter !== undefined) waiter(message);
    else box.messages.push(message);
  });
  await once(ws, "open");
  return ws;
}

function nextMessage(ws: WebSocketClient): Promise<Message> {
  const box = inbox.get(ws)!;
  const queued = box.messages.shift();
  return queued !== undefined ? Promise.resolve(queued) : new Promise((resolve) => box.waiting.push(resolve));
}

/** The status a refused handshake is answered with. */
async function refusal(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; head: string }> {
  const answer = await raw(port, handshake(path, headers));
  return { status: statuses(answer)[0]!, head: answer };
}

test(`[${engine}] the handshake answers 101 with the RFC's accept key, and messages echo`, async (t) => {
  const { port } = await serve(t, (app) => app.ws("/echo", echo));
  const socket = await openRaw(port, "/echo");
  assert.match(socket.head, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
  assert.match(socket.head, /\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\n/i);
  assert.match(socket.head, /\r\nUpgrade: websocket\r\n/i);
  socket.send(frame({ opcode: TEXT, payload: "hello" }));
  assert.deepEqual(await socket.next(), { fin: true, rsv1: false, opcode: TEXT, payload: Buffer.from("hello") });
  socket.send(frame({ opcode: BINARY, payload: Buffer.from([0, 1, 2]) }));
  assert.deepEqual(await socket.next(), { fin: true, rsv1: false, opcode: BINARY, payload: Buffer.from([0, 1, 2]) });
  socket.send(frame({ opcode: CLOSE, payload: closePayload(1000) }));
  const rest = await socket.rest();
  assert.equal(rest.at(-1)?.code, 1000);
});

test(`[${engine}] the app's middleware and route params run on the upgrade request; upgrade's value is ws.data`, async (t) => {
  const seen: string[] = [];
  const { port } = await serve(t, (app) => {
    app.use((req, _res, next) => {
      seen.push(`mw ${req.path}`);
      if (req.query.token !== "ok") throw new HttpError(401, "a token is needed");
      next();
    });
    app.ws("/rooms/:room", {
      upgrade: async (req) => {
        if (req.params.room === "closed") throw new HttpError(403, "this room is closed");
        return { room: req.params.room!, who: req.get("x-user") ?? "anon" };
      },
      open: (ws) => void ws.send(`${ws.data.who} in ${ws.data.room} from ${ws.remoteAddress}`),
    });
  });
  const ws = await client(port, "/rooms/lobby?token=ok", { headers: { "x-user": "ada" } });
  const { data } = await nextMessage(ws);
  assert.match(data, /^ada in lobby from (::ffff:)?127\.0\.0\.1$/);
  ws.close();
  assert.deepEqual(seen, ["mw /rooms/lobby"]);
  const noToken = await refusal(port, "/rooms/lobby");
  assert.equal(noToken.status, 401);
  assert.match(noToken.head, /a token is needed/);
  assert.equal((await refusal(port, "/rooms/closed?token=ok")).status, 403);
  assert.equal((await refusal(port, "/nowhere?token=ok")).status, 404);
});

test(`[${engine}] a request that is not a version-13 handshake is refused with what to send`, async (t) => {
  const { port, fetch } = await serve(t, (app) => app.ws("/ws", echo));
  const plain = await fetch("/ws");
  assert.equal(plain.status, 426);
  assert.equal(plain.headers.get("upgrade"), "websocket");
  const version = await refusal(port, "/ws", { "Sec-WebSocket-Version": "8" });
  assert.equal(version.status, 426);
  assert.match(version.head, /\r\nSec-WebSocket-Version: 13\r\n/i);
  assert.equal((await refusal(port, "/ws", { "Sec-WebSocket-Key": "short" })).status, 400);
  assert.equal((await refusal(port, "/ws", { Connection: "keep-alive" })).status, 400);
  // A refused upgrade closes its connection: nothing after it is read as HTTP.
  const answer = await raw(port, handshake("/ws", { "Sec-WebSocket-Version": "8" }) + "GET /ws HTTP/1.1\r\nHost: x\r\n\r\n");
  assert.deepEqual(statuses(answer), [426]);
});

test(`[${engine}] the other routes still answer while sockets are open, and an Upgrade to a plain route gets its answer`, async (t) => {
  const { port, fetch } = await serve(t, (app) => {
    app.ws("/ws", echo);
    app.get("/hello", (_req, res) => res.send("hi"));
  });
  const ws = await client(port, "/ws");
  assert.equal(await (await fetch("/hello")).text(), "hi");
  const answer = await raw(port, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
  assert.deepEqual(statuses(answer), [200]);
  assert.match(answer, /hi$/);
  ws.close();
});

test(`[${engine}] open, message, close handlers see the socket's life; send reports sent, then dropped once closed`, async (t) => {
  const events: string[] = [];
  const results: string[] = [];
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const { port } = await serve(t, (app) =>
    app.ws("/life", {
      open: (ws) => void events.push(`open ${ws.readyState}`),
      message: (ws, data, isBinary) => {
        events.push(`message ${String(data)} ${isBinary}`);
        results.push(ws.send("echo"));
      },
      close: (ws, code, reason) => {
        events.push(`close ${code} ${reason}`);
        results.push(ws.send("too late"));
        closed();
      },
    }),
  );
  const ws = await client(port, "/life");
  ws.send("one");
  await nextMessage(ws);
  ws.close(4000, "bye");
  await done;
  assert.deepEqual(events, ["open 1", "message one false", "close 4000 bye"]);
  assert.deepEqual(results, ["sent", "dropped"]);
});

test(`[${engine}] the server closes with a code and reason; terminate cuts (the handler sees 1006); a cut client is 1006`, async (t) => {
  const codes: number[] = [];
  const { port } = await serve(t, (app) =>
    app.ws("/bye", {
      message: (ws, data) => {
        if (data === "close") ws.close(4001, "as asked");
        if (data === "terminate") ws.terminate();
      },
      close: (_ws, code) => void codes.push(code),
    }),
  );
  const a = await client(port, "/bye");
  a.send("close");
  const [code, reason] = (await once(a, "close")) as [number, Buffer];
  assert.deepEqual([code, reason.toString()], [4001, "as asked"]);
  const b = await client(port, "/bye");
  b.send("terminate");
  assert.equal(((await once(b, "close")) as [number])[0], 1006);
  const c = await client(port, "/bye");
  c.terminate();
  await waitFor(() => codes.length === 3);
  assert.deepEqual(codes, [4001, 1006, 1006]);
});

test(`[${engine}] close() refuses a code a server may not send, and a reason over 123 bytes`, async (t) => {
  const errors: string[] = [];
  const { port } = await serve(t, (app) =>
    app.ws("/codes", {
      open: (ws) => {
        for (const attempt of [() => ws.close(1005), () => ws.close(999), () => ws.close(1000, "x".repeat(124))]) {
          try {
            attempt();
          } catch (err) {
            errors.push((err as Error).name);
          }
        }
        ws.close(1000);
      },
    }),
  );
  const ws = await client(port, "/codes");
  assert.equal(((await once(ws, "close")) as [number])[0], 1000);
  assert.deepEqual(errors, ["RangeError", "RangeError", "RangeError"]);
});

test(`[${engine}] topics: publish reaches the other subscribers, app.publish all of them; closed sockets leave their topics`, async (t) => {
  const { app, port } = await serve(t, (app) =>
    app.ws("/chat/:room", {
      upgrade: (req) => req.params.room!,
      open: (ws) => {
        ws.subscribe(ws.data);
        ws.send(`subscribed ${ws.isSubscribed(ws.data)} ${ws.isSubscribed("other")}`);
      },
      message: (ws, data) => {
        if (data === "leave") {
          ws.unsubscribe(ws.data);
          return void ws.send(`left ${ws.isSubscribed(ws.data)}`);
        }
        ws.publish(ws.data, data);
      },
    }),
  );
  const [a, b, c] = await Promise.all([client(port, "/chat/x"), client(port, "/chat/x"), client(port, "/chat/y")]);
  for (const ws of [a, b, c]) assert.equal((await nextMessage(ws)).data, "subscribed true false");
  const received: string[] = [];
  for (const [name, ws] of [
    ["a", a],
    ["b", b],
    ["c", c],
  ] as const)
    ws.on("message", (data: Buffer) => received.push(`${name}:${data.toString()}`));
  a.send("hi x");
  await waitFor(() => received.length === 1);
  app.publish("x", "to x");
  app.publish("y", Buffer.from("to y"));
  await waitFor(() => received.length === 4);
  assert.deepEqual(received.sort(), ["a:to x", "b:hi x", "b:to x", "c:to y"]);
  assert.equal(app.subscriberCount("x"), 2);
  b.send("leave");
  await waitFor(() => received.includes("b:left false"));
  assert.equal(app.subscriberCount("x"), 1);
  a.close();
  await waitFor(() => app.subscriberCount("x") === 0);
  c.close();
});

test(`[${engine}] binary and text round-trip at every length form (7, 16 and 64 bits)`, async (t) => {
  const { port } = await serve(t, (app) => app.ws("/echo", echo));
  const ws = await client(port, "/echo");
  for (const size of [0, 125, 126, 65535, 65536, 200_000]) {
    const payload = Buffer.alloc(size, size % 251);
    ws.send(payload);
    const back = await nextMessage(ws);
    assert.equal(back.isBinary, true);
    assert.ok(payload.equals(back.bytes), `binary of ${size} bytes`);
    const text = "é".repeat(Math.floor(size / 2));
    ws.send(text);
    const echoed = await nextMessage(ws);
    assert.equal(echoed.isBinary, false);
    assert.equal(echoed.data, text, `text of ${size} bytes`);
  }
  ws.close();
});

test(`[${engine}] pings are answered with their payload; a socket silent past idleTimeout is pinged, then cut`, async (t) => {
  const codes: number[] = [];
  const { port } = await serve(t, (app) => {
    app.ws("/idle", { close: (_ws, code) => void codes.push(code) }, { idleTimeout: 1 });
  });
  const socket = await openRaw(port, "/idle");
  socket.send(frame({ opcode: PING, payload: "are you there" }));
  assert.deepEqual(await socket.next(), { fin: true, rsv1: false, opcode: PONG, payload: Buffer.from("are you there") });
  // This client never answers the server's ping: it is pinged half-way, then cut.
  const started = Date.now();
  assert.equal((await socket.next(2000)).opcode, PING);
  await socket.rest(3000);
  const waited = Date.now() - started;
  assert.ok(waited >= 700 && waited < 2500, `cut after ${waited} ms`);
  await waitFor(() => codes.length === 1);
  assert.deepEqual(codes, [1006]);
  // A client that answers pings (ws does) stays open past the timeout.
  const live = await client(port, "/idle");
  await new Promise((resolve) => setTimeout(resolve, 1800));
  assert.equal(live.readyState, WebSocketClient.OPEN);
  live.close();
});

test(`[${engine}] a handler that throws is reported and the socket goes on; the server keeps serving`, async (t) => {
  const { port } = await serve(t, (app) =>
    app.ws("/throws", {
      message: (ws, data) => {
        if (data === "boom") throw new Error("boom");
        if (data === "reject") return Promise.reject(new Error("rejected"));
        ws.send(`ok ${String(data)}`);
      },
    }),
  );
  const ws = await client(port, "/throws");
  ws.send("boom");
  ws.send("reject");
  ws.send("after");
  assert.equal((await nextMessage(ws)).data, "ok after");
  ws.close();
});

test(`[${engine}] maxPayload: a larger message closes with 1009; perMessageDeflate is off unless asked`, async (t) => {
  const { port } = await serve(t, (app) => app.ws("/small", echo, { maxPayload: 1000 }));
  const ws = await client(port, "/small");
  assert.equal(ws.extensions, "");
  ws.send(Buffer.alloc(1000, 65));
  assert.equal((await nextMessage(ws)).data, "A".repeat(1000));
  ws.send(Buffer.alloc(1001));
  assert.equal(((await once(ws, "close")) as [number])[0], 1009);
});

test(`[${engine}] maxFragments: a message in more frames closes with 1008, the count starting again with each message`, async (t) => {
  const { port } = await serve(t, (app) => app.ws("/few", echo, { maxFragments: 3 }));
  const raw = await openRaw(port, "/few");
  const inFrames = (count: number): Buffer[] =>
    Array.from({ length: count }, (_, i) => frame({ opcode: i === 0 ? TEXT : CONTINUATION, payload: String(i), fin: i === count - 1 }));
  raw.send(...inFrames(3), ...inFrames(1), ...inFrames(3), ...inFrames(4));
  const frames = await raw.rest();
  assert.deepEqual(
    frames.map((f) => (f.opcode === CLOSE ? `close ${f.code}` : `${f.opcode}:${f.payload.toString()}`)),
    [`${TEXT}:012`, `${TEXT}:0`, `${TEXT}:012`, "close 1008"],
  );
  // A ws client sending fragments (ws.send's `fin`) is closed the same way.
  const ws = await client(port, "/few");
  for (const [i, part] of ["a", "b", "c"].entries()) ws.send(part, { fin: i === 2 });
  assert.equal((await nextMessage(ws)).data, "abc");
  for (const [i, part] of ["a", "b", "c", "d"].entries()) ws.send(part, { fin: i === 3 });
  assert.equal(((await once(ws, "close")) as [number])[0], 1008);
});

test(`[${engine}] app.close() closes open sockets with 1001`, async (t) => {
  const { app, port } = await serve(t, (app) => app.ws("/ws", echo));
  const ws = await client(port, "/ws");
  const closed = once(ws, "close");
  await app.close(2000);
  assert.equal(((await closed) as [number])[0], 1001);
});

test(`[${engine}] ws() checks its arguments when the route is registered`, async (t) => {
  await serve(t, (app) => {
    assert.throws(() => app.ws("/a", null as never), /handlers must be an object/);
    assert.throws(() => app.ws("/a", { message: "no" as never }), /handlers\.message must be a function/);
    assert.throws(() => app.ws("/a", {}, { maxPayload: -1 }), /maxPayload must be a positive number/);
    assert.throws(() => app.ws("/a", {}, { maxFragments: 1.5 }), /maxFragments must be a whole number >= 0, got 1.5/);
    assert.throws(() => app.ws("/a", {}, { onBackpressure: "wait" as never }), /onBackpressure must be "drop" or "close"/);
  });
});

async function waitFor(condition: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for a condition");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
