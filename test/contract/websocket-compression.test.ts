// permessage-deflate (RFC 7692) on both engines: negotiated from the client's offer as `ws`
// answers it, messages compressed both ways (RSV1 checked on the wire), the payload limit
// applied to the inflated size (a deflate bomb is 1009, memory bounded), and RSV1 where it
// does not belong a protocol error (1002).
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import WebSocketClient from "ws";
import type { WebSocketHandlers } from "../../src/index.js";
import { engine, serve } from "../helpers.js";
import { BINARY, CONTINUATION, PING, TEXT, frame, openRaw } from "../websocket-wire.js";

const OFFER = { "Sec-WebSocket-Extensions": "permessage-deflate; client_max_window_bits" };
const echo: WebSocketHandlers<unknown> = { message: (ws, data, isBinary) => void ws.send(data, isBinary) };

/** A message compressed as a client sends it: raw deflate, the sync flush's tail left off. */
function compress(data: Buffer | string): Buffer {
  const deflated = deflateRawSync(data, { finishFlush: 2 /* Z_SYNC_FLUSH */ });
  return deflated.subarray(0, deflated.length - 4);
}

const TAIL = Buffer.from([0, 0, 0xff, 0xff]);

function inflate(payload: Buffer): Buffer {
  return inflateRawSync(Buffer.concat([payload, TAIL]), { finishFlush: 2 });
}

/** Inflates one socket's compressed messages in order, as one stream (with context takeover a message may refer to earlier ones). */
function inflater(): (payload: Buffer) => Buffer {
  const stream: Buffer[] = [];
  let seen = 0;
  return (payload) => {
    stream.push(payload, TAIL);
    const all = inflateRawSync(Buffer.concat(stream), { finishFlush: 2 });
    const message = all.subarray(seen);
    seen = all.length;
    return message;
  };
}

test(`[${engine}] a ws client with perMessageDeflate: messages round-trip, large and small, text and binary`, async (t) => {
  const { port } = await serve(t, (app) => app.ws("/echo", echo, { perMessageDeflate: true }));
  const ws = new WebSocketClient(`ws://127.0.0.1:${port}/echo`, { perMessageDeflate: true });
  await once(ws, "open");
  assert.match(String(ws.extensions), /^permessage-deflate/);
  const messages: Array<[Buffer, boolean]> = [];
  ws.on("message", (data: Buffer, isBinary: boolean) => messages.push([data, isBinary]));
  const large = "compress me ".repeat(1000);
  const random = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251));
  for (const message of [large, "hi", random, large]) ws.send(message);
  while (messages.length < 4) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(
    messages.map(([data, isBinary]) => [isBinary, isBinary ? data.toString("hex") : data.toString()]),
    [
      [false, large],
      [false, "hi"],
      [true, random.toString("hex")],
      [false, large],
    ],
  );
  ws.close();
});

/** Deterministic bytes (xorshift32). */
function noise(seed: number): () => number {
  let state = seed | 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
}

/**
 * 64 KiB messages a compressor could get wrong by holding output back: a run then noise (a
 * deflate block ends within the message's last bytes for some run lengths), then slices cut from
 * JPEG-like data (a compressible header, then near-random bytes with byte stuffing).
 */
function awkwardMessages(): Buffer[] {
  const next = noise(0x2545f491);
  const messages: Buffer[] = [];
  for (let run = 6900; run < 7600; run += 4) {
    const message = Buffer.alloc(65536, 0x61);
    for (let i = run; i < message.length; i++) message[i] = next() & 0xff;
    messages.push(message);
  }
  const file = Buffer.alloc(200 * 65536);
  for (let at = 0; at < file.length;) {
    const header = next() % 20000;
    for (let k = 0; k < header && at < file.length; k++) file[at++] = (k % 64) ^ (next() % 4 === 0 ? 1 : 0);
    const body = (next() % 300_000) + 1000;
    for (let k = 0; k < body && at < file.length; k++) {
      const x = next();
      file[at++] = x % 7 === 0 ? 0 : x >>> 8;
    }
  }
  for (let at = 0; at < file.length; at += 65536) messages.push(file.subarray(at, at + 65536));
  return messages;
}

test(`[${engine}] hundreds of 64 KiB binary messages through a ws client with perMessageDeflate come back byte for byte`, async (t) => {
  const { port } = await serve(t, (app) => app.ws("/echo", echo, { perMessageDeflate: true, maxPayload: 1024 * 1024 }));
  const ws = new WebSocketClient(`ws://127.0.0.1:${port}/echo`, { perMessageDeflate: true });
  await once(ws, "open");
  assert.match(String(ws.extensions), /^permessage-deflate/);
  const sent = awkwardMessages();
  const IN_FLIGHT = 4;
  const mismatches: string[] = [];
  let received = 0;
  const all = new Promise<void>((resolve, reject) => {
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      const expected = sent[received];
      if (!isBinary || !data.equals(expected)) mismatches.push(`message ${received}: ${data.length} bytes back of ${expected.length}`);
      if (++received === sent.length) resolve();
      else if (received + IN_FLIGHT <= sent.length) ws.send(sent[received + IN_FLIGHT - 1], { binary: true });
    });
    // A message that does not inflate fails the client (and the rest of the stream with it).
    ws.on("error", (err) => reject(new Error(`after ${received} messages, ${mismatches.length} wrong: ${err.message}`)));
    ws.on("close", (code) => reject(new Error(`closed (${code}) after ${received} of ${sent.length} messages`)));
  });
  // A few in flight at a time: a server whose client falls behind drops what passes maxBackpressure.
  for (const message of sent.slice(0, IN_FLIGHT)) ws.send(message, { binary: true });
  await all;
  assert.deepEqual(mismatches, []);
  ws.close();
});

test(`[${engine}] on the wire: with context takeover every message goes out with RSV1 and inflates as one stream; compressed client frames are read`, async (t) => {
  const { port } = await serve(t, (app) => app.ws("/echo", echo, { perMessageDeflate: true }));
  const raw = await openRaw(port, "/echo", OFFER);
  assert.match(raw.head, /\r\nSec-WebSocket-Extensions: permessage-deflate\r\n/i);
  const inflateNext = inflater();
  const large = "a fairly repetitive message ".repeat(200);
  raw.send(frame({ opcode: TEXT, payload: compress(large), rsv: 4 }));
  const first = await raw.next();
  assert.equal(first.rsv1, true);
  assert.ok(first.payload.length < large.length / 10, `compressed to ${first.payload.length} bytes`);
  assert.equal(inflateNext(first.payload).toString(), large);
  // With context takeover the same message again refers to the first: even smaller.
  raw.send(frame({ opcode: TEXT, payload: compress(large), rsv: 4 }));
  const second = await raw.next();
  assert.ok(second.rsv1 && second.payload.length < first.payload.length, `${second.payload.length} vs ${first.payload.length}`);
  assert.equal(inflateNext(second.payload).toString(), large);
  raw.send(frame({ opcode: BINARY, payload: compress("small"), rsv: 4 }), frame({ opcode: TEXT, payload: "plain" }));
  const small = await raw.next();
  assert.deepEqual([small.rsv1, small.opcode, inflateNext(small.payload).toString()], [true, BINARY, "small"]);
  const plain = await raw.next();
  assert.deepEqual([plain.rsv1, plain.opcode, inflateNext(plain.payload).toString()], [true, TEXT, "plain"]);
  // A compressed message split across fragments: RSV1 on the first only.
  const parts = compress(large);
  raw.send(frame({ opcode: TEXT, payload: parts.subarray(0, 10), rsv: 4, fin: false }), frame({ opcode: CONTINUATION, payload: parts.subarray(10) }));
  const whole = await raw.next();
  assert.deepEqual([whole.rsv1, inflateNext(whole.payload).toString() === large], [true, true]);
  raw.socket.destroy();
});

test(`[${engine}] a publication reaches sockets with and without the extension, each as it negotiated`, async (t) => {
  const { app, port } = await serve(t, (app) => app.ws("/room", { open: (ws) => void ws.subscribe("room") }, { perMessageDeflate: true }));
  const [compressed, plainA, plainB] = await Promise.all([openRaw(port, "/room", OFFER), openRaw(port, "/room"), openRaw(port, "/room")]);
  while (app.subscriberCount("room") < 3) await new Promise((resolve) => setTimeout(resolve, 10));
  const news = "news for everyone ".repeat(100);
  app.publish("room", news);
  const [a, b, c] = await Promise.all([compressed.next(), plainA.next(), plainB.next()]);
  assert.deepEqual([a.rsv1, inflate(a.payload).toString() === news], [true, true]);
  for (const f of [b, c]) assert.deepEqual([f.rsv1, f.payload.toString() === news], [false, true]);
  for (const raw of [compressed, plainA, plainB]) raw.socket.destroy();
});

test(`[${engine}] negotiation: the answer names the agreed parameters; an invalid offer fails the handshake with 400 as ws does; off by default`, async (t) => {
  const { port } = await serve(t, (app) => {
    app.ws("/on", echo, { perMessageDeflate: true });
    app.ws("/off", echo);
  });
  const answer = async (path: string, offer: string): Promise<string> => {
    try {
      const raw = await openRaw(port, path, { "Sec-WebSocket-Extensions": offer });
      raw.socket.destroy();
      const line = /\r\nSec-WebSocket-Extensions: ([^\r]*)/i.exec(raw.head)?.[1];
      return line === undefined ? "none" : line.split(/;\s*/).sort().join("; ");
    } catch (err) {
      return (err as Error).message;
    }
  };
  const cases: Array<[string, string, string]> = [
    ["/off", "permessage-deflate", "none"],
    ["/on", "x-webkit-deflate-frame", "none"],
    ["/on", "permessage-deflate; client_max_window_bits", "permessage-deflate"],
    [
      "/on",
      "permessage-deflate; client_no_context_takeover; server_no_context_takeover",
      "client_no_context_takeover; permessage-deflate; server_no_context_takeover",
    ],
    [
      "/on",
      "permessage-deflate; server_max_window_bits=10; client_max_window_bits=12",
      "client_max_window_bits=12; permessage-deflate; server_max_window_bits=10",
    ],
    ["/on", "permessage-deflate; server_max_window_bits=9, permessage-deflate", "permessage-deflate; server_max_window_bits=9"],
    ["/on", "permessage-deflate; server_max_window_bits=7", "HTTP/1.1 400 Bad Request"],
    ["/on", "permessage-deflate; client_no_context_takeover=yes", "HTTP/1.1 400 Bad Request"],
    ["/on", "permessage-deflate; level=9", "HTTP/1.1 400 Bad Request"],
    ["/on", "permessage-deflate; server_no_context_takeover; server_no_context_takeover", "HTTP/1.1 400 Bad Request"],
    ["/on", ", permessage-deflate", "HTTP/1.1 400 Bad Request"],
  ];
  for (const [path, offer, expected] of cases) assert.equal(await answer(path, offer), expected, `${path} ${offer}`);
  // The server still serves after refusing.
  assert.equal(await answer("/on", "permessage-deflate"), "permessage-deflate");
});

test(`[${engine}] server_no_context_takeover: each message compresses alone, those under 1 KiB not at all; a limited server window is honoured`, async (t) => {
  const large = "independent message ".repeat(100);
  const { port } = await serve(t, (app) =>
    app.ws("/three", { open: (ws) => void (ws.send(large), ws.send(large), ws.send("short")) }, { perMessageDeflate: true }),
  );
  const raw = await openRaw(port, "/three", { "Sec-WebSocket-Extensions": "permessage-deflate; server_no_context_takeover" });
  const [first, second, short] = [await raw.next(), await raw.next(), await raw.next()];
  assert.ok(first.rsv1 && second.rsv1);
  assert.equal(inflate(second.payload).toString(), large, "the second inflates on its own");
  assert.deepEqual([short.rsv1, short.payload.toString()], [false, "short"]);
  raw.socket.destroy();
  const limited = await openRaw(port, "/three", { "Sec-WebSocket-Extensions": "permessage-deflate; server_max_window_bits=10" });
  const inflateNext = inflater();
  // ws compresses with zlib's smaller window; the native engine's compressor has a fixed 32 KiB window, so it sends them plain.
  for (const expected of [large, large, "short"]) {
    const f = await limited.next();
    assert.equal((f.rsv1 ? inflateNext(f.payload) : f.payload).toString(), expected);
  }
  limited.socket.destroy();
});

test(`[${engine}] a deflate bomb is refused at maxPayload (1009), memory bounded`, async (t) => {
  const { port } = await serve(t, (app) => app.ws("/echo", echo, { perMessageDeflate: true, maxPayload: 1024 * 1024 }));
  const bomb = compress(Buffer.alloc(200 * 1024 * 1024));
  assert.ok(bomb.length < 1024 * 1024, `the bomb is ${bomb.length} bytes`);
  const before = process.memoryUsage().rss;
  const raw = await openRaw(port, "/echo", OFFER);
  raw.send(frame({ opcode: BINARY, payload: bomb, rsv: 4 }));
  const rest = await raw.rest(10_000);
  assert.equal(rest.find((f) => f.opcode === 0x8)?.code, 1009);
  const grown = process.memoryUsage().rss - before;
  assert.ok(grown < 64 * 1024 * 1024, `the server's memory grew ${(grown / 1048576).toFixed(1)} MiB`);
});

test(`[${engine}] RSV1 where it does not belong is 1002; data that is not deflate is 1007`, async (t) => {
  const { port } = await serve(t, (app) => {
    app.ws("/on", echo, { perMessageDeflate: true });
    app.ws("/off", echo);
  });
  const closeCode = async (path: string, headers: Record<string, string>, ...frames: Buffer[]): Promise<number | undefined> => {
    const raw = await openRaw(port, path, headers);
    raw.send(...frames);
    return (await raw.rest()).find((f) => f.opcode === 0x8)?.code;
  };
  const compressed = compress("hello");
  assert.equal(await closeCode("/off", OFFER, frame({ opcode: TEXT, payload: compressed, rsv: 4 })), 1002, "extension off on the route");
  assert.equal(await closeCode("/on", {}, frame({ opcode: TEXT, payload: compressed, rsv: 4 })), 1002, "not offered by the client");
  assert.equal(await closeCode("/on", OFFER, frame({ opcode: PING, payload: "p", rsv: 4 })), 1002, "on a control frame");
  assert.equal(
    await closeCode(
      "/on",
      OFFER,
      frame({ opcode: TEXT, payload: compressed.subarray(0, 2), rsv: 4, fin: false }),
      frame({ opcode: CONTINUATION, payload: compressed.subarray(2), rsv: 4 }),
    ),
    1002,
    "on a continuation",
  );
  assert.equal(await closeCode("/on", OFFER, frame({ opcode: TEXT, payload: Buffer.from([0xff, 0xff, 0xff, 0x01]), rsv: 4 })), 1007, "not deflate data");
});
