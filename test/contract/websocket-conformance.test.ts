// RFC 6455 conformance, case by case, written from the RFC and the Autobahn test suite's case
// list (framing, pings, reserved bits and opcodes, fragmentation, UTF-8, close codes, limits,
// masking), sent by a raw client. Each case runs against Cog (COG_ENGINE) and against a bare
// `ws` server, the reference: both must echo the same messages, answer the same pings, and
// close with the same code. Then fast-check sends random frame sequences to both and compares
// the same, and checks the server survives every one.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { WebSocketServer } from "ws";
import { engine, serve } from "../helpers.js";
import { BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT, closePayload, frame, openRaw, type FrameSpec } from "../websocket-wire.js";

const MAX_PAYLOAD = 100_000;
const runs = Number(process.env.COG_FUZZ_RUNS ?? 150);

/** What a server did with a sequence of client frames. */
interface Outcome {
  /** Messages it echoed, in order: opcode and payload (hex). */
  echoes: string[];
  /** Pongs it answered with, in order (their payloads, hex). */
  pongs: string[];
  /** The code of its Close frame (1005: an empty one; null: it closed without one). */
  close: number | null;
}

async function outcome(port: number, frames: Buffer[]): Promise<Outcome> {
  const raw = await openRaw(port, "/echo");
  raw.send(...frames);
  const all = await raw.rest(5000);
  const close = all.find((f) => f.opcode === CLOSE);
  return {
    echoes: all.filter((f) => f.opcode === TEXT || f.opcode === BINARY).map((f) => `${f.opcode}:${f.payload.toString("hex")}`),
    pongs: all.filter((f) => f.opcode === PONG).map((f) => f.payload.toString("hex")),
    close: close?.code ?? null,
  };
}

/** The reference: a bare `ws` server echoing every message. */
async function reference(t: { after(fn: () => unknown): void }): Promise<number> {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1", maxPayload: MAX_PAYLOAD });
  server.on("connection", (ws) => {
    ws.on("error", () => {});
    ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary }));
  });
  await new Promise((resolve) => server.once("listening", resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as AddressInfo).port;
}

async function servers(t: { after(fn: () => unknown): void }): Promise<{ cog: number; ws: number }> {
  const { port } = await serve(t, (app) => app.ws("/echo", { message: (ws, data, isBinary) => void ws.send(data, isBinary) }, { maxPayload: MAX_PAYLOAD }));
  return { cog: port, ws: await reference(t) };
}

const close1000 = frame({ opcode: CLOSE, payload: closePayload(1000) });
const text = (payload: string | Buffer, fin = true): Buffer => frame({ opcode: TEXT, payload, fin });
const more = (payload: string | Buffer, fin = true): Buffer => frame({ opcode: CONTINUATION, payload, fin });

/** Autobahn-style cases: [name, frames, the expected close code]. */
const CASES: Array<[string, Buffer[], number | null]> = [
  // 1.x framing: every length form, text and binary.
  ...[0, 125, 126, 127, 128, 65535, 65536, 99_999].map((n): [string, Buffer[], number] => [`text of ${n} bytes`, [text("*".repeat(n)), close1000], 1000]),
  ...[0, 125, 126, 65536].map((n): [string, Buffer[], number] => [
    `binary of ${n} bytes`,
    [frame({ opcode: BINARY, payload: Buffer.alloc(n, 0xfe) }), close1000],
    1000,
  ]),
  // 2.x pings and pongs.
  ["an empty ping", [frame({ opcode: PING }), close1000], 1000],
  ["a ping of 125 bytes", [frame({ opcode: PING, payload: Buffer.alloc(125, 1) }), close1000], 1000],
  ["a ping of 126 bytes", [frame({ opcode: PING, payload: Buffer.alloc(126, 1) })], 1002],
  ["an unsolicited pong", [frame({ opcode: PONG, payload: "x" }), text("after"), close1000], 1000],
  ["ten pings", [...Array.from({ length: 10 }, (_, i) => frame({ opcode: PING, payload: `p${i}` })), close1000], 1000],
  ["a fragmented ping", [frame({ opcode: PING, payload: "a", fin: false }), frame({ opcode: CONTINUATION, payload: "b" })], 1002],
  // 3.x reserved bits, 4.x reserved opcodes.
  ...[1, 2, 3, 4, 5, 6, 7].map((rsv): [string, Buffer[], number] => [`reserved bits ${rsv}`, [frame({ opcode: TEXT, payload: "x", rsv })], 1002]),
  ...[3, 4, 5, 6, 7, 11, 12, 13, 14, 15].map((op): [string, Buffer[], number] => [`reserved opcode ${op}`, [frame({ opcode: op, payload: "x" })], 1002]),
  // 5.x fragmentation.
  ["a message in two fragments", [text("Hello, ", false), more("world"), close1000], 1000],
  [
    "pings between fragments",
    [text("a", false), frame({ opcode: PING, payload: "1" }), more("b", false), frame({ opcode: PING, payload: "2" }), more("c"), close1000],
    1000,
  ],
  ["a message in 50 one-byte fragments", [text("0", false), ...Array.from({ length: 48 }, (_, i) => more(String(i % 10), false)), more("!"), close1000], 1000],
  ["a continuation with nothing to continue", [more("x")], 1002],
  ["a new message inside a fragmented one", [text("a", false), text("b")], 1002],
  ["binary fragments", [frame({ opcode: BINARY, payload: Buffer.from([1]), fin: false }), more(Buffer.from([2])), close1000], 1000],
  // 6.x UTF-8.
  ["multi-byte UTF-8", [text("κόσμε €𝄞"), close1000], 1000],
  ["a code point split across fragments", [text(Buffer.from("€").subarray(0, 1), false), more(Buffer.from("€").subarray(1)), close1000], 1000],
  [
    "a four-byte code point in four fragments",
    [
      text(Buffer.from("𝄞").subarray(0, 1), false),
      more(Buffer.from("𝄞").subarray(1, 2), false),
      more(Buffer.from("𝄞").subarray(2, 3), false),
      more(Buffer.from("𝄞").subarray(3)),
      close1000,
    ],
    1000,
  ],
  ["an invalid byte", [text(Buffer.from([0x61, 0xff]))], 1007],
  ["an overlong encoding", [text(Buffer.from([0xc0, 0x80]))], 1007],
  ["a UTF-16 surrogate", [text(Buffer.from([0xed, 0xa0, 0x80]))], 1007],
  ["past U+10FFFF", [text(Buffer.from([0xf4, 0x90, 0x80, 0x80]))], 1007],
  ["a truncated code point at the end", [text(Buffer.from([0xe2, 0x82]))], 1007],
  ["an invalid sequence in a later fragment", [text("ok", false), more(Buffer.from([0xff]), false), more("x")], 1007],
  ["a truncated code point across the last fragment", [text(Buffer.from([0xe2]), false), more(Buffer.from([0x82]))], 1007],
  // 7.x closing.
  ["an empty close", [frame({ opcode: CLOSE })], 1005],
  ...[1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999].map((code): [string, Buffer[], number] => [
    `close code ${code}`,
    [frame({ opcode: CLOSE, payload: closePayload(code, "reason") })],
    code,
  ]),
  ...[0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999, 5000, 65535].map((code): [string, Buffer[], number] => [
    `invalid close code ${code}`,
    [frame({ opcode: CLOSE, payload: closePayload(code) })],
    1002,
  ]),
  ["a close payload of one byte", [frame({ opcode: CLOSE, payload: Buffer.from([0x03]) })], 1002],
  ["a close reason that is not UTF-8", [frame({ opcode: CLOSE, payload: closePayload(1000, Buffer.from([0xff])) })], 1007],
  ["a close reason of 123 bytes", [frame({ opcode: CLOSE, payload: closePayload(1000, "r".repeat(123)) })], 1000],
  ["frames after a close are ignored", [frame({ opcode: CLOSE, payload: closePayload(1000) }), text("ignored")], 1000],
  // 9.x limits, and masking.
  ["a frame past maxPayload", [frame({ opcode: BINARY, payload: Buffer.alloc(MAX_PAYLOAD + 1) })], 1009],
  ["fragments adding up past maxPayload", [frame({ opcode: BINARY, payload: Buffer.alloc(60_000), fin: false }), more(Buffer.alloc(60_000))], 1009],
  [
    "a message in 16,384 fragments (ws's limit, maxFragments' default)",
    [text("", false), ...Array.from({ length: 16_382 }, () => more("", false)), more("!"), close1000],
    1000,
  ],
  ["a message in 16,385 fragments", [text("", false), ...Array.from({ length: 16_383 }, () => more("", false)), more("!")], 1008],
  ["a 64-bit length with its top bit set (past any limit)", [frame({ opcode: BINARY, claimedLength: 1n << 63n })], 1009],
  ["an unmasked frame", [frame({ opcode: TEXT, payload: "x", unmasked: true })], 1002],
];

test(`[${engine}] RFC 6455 and Autobahn cases: the same outcome as the ws reference server, and the expected close code`, async (t) => {
  const { cog, ws } = await servers(t);
  for (const [name, frames, code] of CASES) {
    const [ours, theirs] = await Promise.all([outcome(cog, frames), outcome(ws, frames)]);
    assert.deepEqual(ours, theirs, `${name}: Cog and ws differ`);
    assert.equal(ours.close, code, `${name}: close code`);
  }
});

test(`[${engine}] a message split anywhere across TCP writes arrives whole`, async (t) => {
  const { cog } = await servers(t);
  const bytes = Buffer.concat([text("split into pieces"), frame({ opcode: BINARY, payload: Buffer.alloc(300, 7) }), close1000]);
  const raw = await openRaw(cog, "/echo");
  for (let i = 0; i < bytes.length; i += 3) {
    raw.send(bytes.subarray(i, i + 3));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const frames = await raw.rest();
  assert.deepEqual(
    frames.map((f) => f.opcode),
    [TEXT, BINARY, CLOSE],
  );
});

/** A client frame, valid or not. */
const frameSpec: fc.Arbitrary<FrameSpec> = fc.record(
  {
    opcode: fc.constantFrom(TEXT, TEXT, BINARY, CONTINUATION, CONTINUATION, PING, PONG, CLOSE, 3, 11),
    payload: fc.oneof(
      fc.string({ maxLength: 40 }).map((s) => Buffer.from(s)),
      fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
      fc.constantFrom(
        Buffer.from([0xe2]),
        Buffer.from([0x82, 0xac]),
        Buffer.alloc(130, 0x41),
        Buffer.from([0x03, 0xe8]),
        Buffer.from([0x0f, 0xa0, 0x68, 0x69]),
      ),
    ),
    fin: fc.boolean(),
    rsv: fc.constantFrom(0, 0, 0, 0, 0, 0, 4),
    unmasked: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
  },
  { requiredKeys: ["opcode", "payload", "fin"] },
);

test(`[${engine}] fuzzing: random frame sequences get what the ws reference server gives them, and the server survives`, async (t) => {
  const { cog, ws } = await servers(t);
  await fc.assert(
    fc.asyncProperty(fc.array(frameSpec, { minLength: 1, maxLength: 8 }), async (specs) => {
      const frames = [...specs.map(frame), close1000];
      const [ours, theirs] = await Promise.all([outcome(cog, frames), outcome(ws, frames)]);
      assert.deepEqual(ours, theirs);
      assert.ok(ours.close !== null && (ours.close === 1005 || [1000, 1002, 1007, 1009].includes(ours.close) || (ours.close >= 1000 && ours.close < 5000)));
    }),
    { numRuns: runs },
  );
  // Still serving.
  assert.deepEqual((await outcome(cog, [text("alive"), close1000])).echoes, [`${TEXT}:${Buffer.from("alive").toString("hex")}`]);
});
