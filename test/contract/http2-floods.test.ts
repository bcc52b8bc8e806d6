// HTTP/2's known floods, sent over a socket frame by frame to an app in a process of its own:
// rapid reset (CVE-2023-44487), the CONTINUATION flood (CVE-2024-27316), HPACK bombs and
// references to a large field, PING and SETTINGS floods. Each time the server ends the flooding
// connection (or, for the HPACK bomb, resets its streams), answers another client meanwhile and
// after, and its memory stays flat.
// (The GOAWAY that says why may not reach a client still sending: the server closes with its
// input unread, which the kernel turns into a reset. Each run's outcome is in the diagnostics.)
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { connect as http2Connect } from "node:http2";
import { connect, type Socket } from "node:net";
import { describe, test } from "node:test";
import { startChild, waitForOutput, type Owner } from "../children.js";
import { engine, nativeSkip } from "../helpers.js";
import { PREFACE, frame, literal } from "../h2-frames.js";

const linuxOnly = existsSync("/proc/self/status") ? false : "reads the server's memory from /proc";
const skip = (engine === "native" && nativeSkip) || linuxOnly;

const DATA = 0,
  HEADERS = 1,
  RST_STREAM = 3,
  SETTINGS = 4,
  PING = 6,
  GOAWAY = 7,
  CONTINUATION = 9;
const END_STREAM = 1,
  ACK = 1,
  END_HEADERS = 4;
const ENHANCE_YOUR_CALM = 11;

const request = (path: string) =>
  Buffer.concat([literal(":method", "GET"), literal(":scheme", "http"), literal(":authority", "localhost"), literal(":path", path)]);

/** The server's resident set, in MiB. */
const rss = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startApp(t: Owner): Promise<{ pid: number; port: number }> {
  const app = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/h2c-app.ts"], { env: { ...process.env, COG_ENGINE: engine } });
  await waitForOutput(app, (out) => out.includes("\n"), "the h2c app");
  return { pid: app.child.pid!, port: Number(app.stdout().split("\n")[0]) };
}

/** Calls `on` with each whole frame the server sends on `socket`: its type, flags, stream and payload. */
function onFrames(socket: Socket, on: (type: number, flags: number, stream: number, payload: Buffer) => void): void {
  let input = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    input = Buffer.concat([input, chunk]);
    while (input.length >= 9) {
      const length = input.readUIntBE(0, 3);
      if (input.length < 9 + length) break;
      const payload = input.subarray(9, 9 + length);
      on(input[3]!, input[4]!, input.readUInt32BE(5) & 0x7fffffff, payload);
      input = input.subarray(9 + length);
    }
  });
}

/** What the server sent a flooding connection: its GOAWAY's error code, if any, and whether it closed. */
interface Ended {
  goaway: number | null;
  closed: boolean;
  resets: number;
}

/**
 * Opens a connection, sends the preface, then `flood()`'s frames as fast as the socket takes
 * them (reading what the server sends, unless `unread`), until the server ends the connection
 * or `ms` pass.
 */
function flood(port: number, next: () => Buffer | null, ms: number, unread = false): Promise<Ended> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, "127.0.0.1");
    const ended: Ended = { goaway: null, closed: false, resets: 0 };
    // What the server had done when the flood ended: a copy, so that the close our own destroy()
    // causes after a timeout is not taken for the server's.
    const finish = () => {
      clearTimeout(timer);
      resolve({ ...ended });
      socket.destroy();
    };
    const timer = setTimeout(finish, ms);
    socket.on("error", () => {});
    socket.on("close", () => {
      ended.closed = true;
      finish();
    });
    onFrames(socket, (type, _flags, _stream, payload) => {
      if (type === GOAWAY && ended.goaway === null) ended.goaway = payload.readUInt32BE(4);
      if (type === RST_STREAM) ended.resets++;
    });
    if (unread) socket.pause();
    const pump = () => {
      for (;;) {
        const bytes = next();
        if (bytes === null) return;
        if (!socket.write(bytes)) return void socket.once("drain", pump);
      }
    };
    socket.once("connect", () => {
      socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0)]));
      pump();
    });
  });
}

/** What a client sending HPACK references got: besides `Ended`, its streams' fates. */
interface Referenced extends Ended {
  /** Requests of references sent, and those answered (not reset). */
  sent: number;
  answered: number;
  /** The RST_STREAM error codes the server sent for them. */
  codes: Set<number>;
}

/**
 * A client that stores a 4,000-byte field in the server's HPACK table (index 62) with one
 * request to /ping, answered, then sends GETs of /bomb whose header block is `refs` one-byte
 * references to it, ten at a time, each ten answered or reset before the next, until the server
 * ends the connection or `ms` pass. It acknowledges the server's SETTINGS (before its first
 * request) when `ack`, so that the server's SETTINGS_MAX_HEADER_LIST_SIZE is in force.
 */
function referenceFlood(port: number, refs: number, ack: boolean, ms: number): Promise<Referenced> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, "127.0.0.1");
    const got: Referenced = { goaway: null, closed: false, resets: 0, sent: 0, answered: 0, codes: new Set() };
    const store = Buffer.concat([request("/ping"), literal("x-big", "b".repeat(4000), true)]);
    const block = Buffer.concat([request("/bomb"), Buffer.alloc(refs, 0x80 | 62)]);
    const open = new Set<number>();
    let next = 3;
    let over = false;
    const finish = () => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      resolve({ ...got, codes: new Set(got.codes) });
      socket.destroy();
    };
    const timer = setTimeout(finish, ms);
    const batch = () => {
      const frames: Buffer[] = [];
      for (let i = 0; i < 10; i++, next += 2) {
        frames.push(frame(HEADERS, END_HEADERS | END_STREAM, next, block));
        open.add(next);
      }
      got.sent += frames.length;
      socket.write(Buffer.concat(frames));
    };
    const done = (stream: number) => {
      if (open.delete(stream) && open.size === 0 && !over) batch();
    };
    socket.on("error", () => {});
    socket.on("close", () => {
      got.closed = true;
      finish();
    });
    onFrames(socket, (type, flags, stream, payload) => {
      if (type === SETTINGS && !(flags & ACK) && !open.has(1) && next === 3) {
        if (ack) socket.write(frame(SETTINGS, ACK, 0));
        open.add(1);
        socket.write(frame(HEADERS, END_HEADERS | END_STREAM, 1, store));
      } else if (type === GOAWAY && got.goaway === null) {
        got.goaway = payload.readUInt32BE(4);
      } else if (type === RST_STREAM) {
        got.resets++;
        got.codes.add(payload.readUInt32BE(0));
        done(stream);
      } else if ((type === HEADERS || type === DATA) && flags & END_STREAM) {
        if (stream !== 1) got.answered++;
        done(stream);
      }
    });
    socket.once("connect", () => socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0)])));
  });
}

/** Asks /ping on a session of its own every 20 ms while `during` runs, then once more: every answer must be "pong". */
async function othersAnswered(port: number, during: Promise<unknown>): Promise<number> {
  const session = http2Connect(`http://127.0.0.1:${port}`);
  session.on("error", () => {});
  const ask = () =>
    new Promise<string>((resolve, reject) => {
      const stream = session.request({ ":path": "/ping" });
      let body = "";
      stream.setEncoding("utf8").on("data", (c: string) => (body += c));
      stream.on("end", () => resolve(body));
      stream.on("error", reject);
    });
  let answered = 0;
  let done = false;
  void during.then(() => (done = true));
  while (!done) {
    assert.equal(await ask(), "pong");
    answered++;
    await sleep(20);
  }
  assert.equal(await ask(), "pong");
  session.close();
  return answered + 1;
}

describe("HTTP/2 floods", { skip, timeout: 120_000 }, () => {
  /** Runs a flood against a fresh app while another client asks; checks the server's memory before and after. */
  async function withFlood<E extends Ended>(
    t: Owner & { diagnostic(message: string): void },
    run: (port: number) => Promise<E>,
  ): Promise<{ ended: E; grew: number; handled: number; bombs: number }> {
    const { pid, port } = await startApp(t);
    // Warm: the first requests load what a request needs.
    await othersAnswered(port, sleep(200));
    await sleep(200);
    const before = rss(pid);
    const flooding = run(port);
    await othersAnswered(port, flooding);
    const ended = await flooding;
    await sleep(500);
    const after = rss(pid);
    const count = await new Promise<{ handled: number; bombs: number }>((resolve) => {
      const session = http2Connect(`http://127.0.0.1:${port}`);
      const stream = session.request({ ":path": "/count" });
      let body = "";
      stream.setEncoding("utf8").on("data", (c: string) => (body += c));
      stream.on("end", () => {
        session.close();
        resolve(JSON.parse(body) as { handled: number; bombs: number });
      });
    });
    t.diagnostic(
      `GOAWAY ${ended.goaway ?? "none"}, closed ${ended.closed}, ${ended.resets} resets; RSS ${before.toFixed(1)} -> ${after.toFixed(1)} MiB; ${count.handled} requests handled`,
    );
    return { ended, grew: after - before, ...count };
  }

  test("rapid reset: requests opened and reset at once end the connection, and reach no handler past the limit", async (t) => {
    const STREAMS = 20_000;
    let stream = 1;
    const { ended, grew, handled } = await withFlood(t, (port) =>
      flood(
        port,
        () => {
          if (stream > STREAMS * 2) return null;
          const batch: Buffer[] = [];
          for (let i = 0; i < 100 && stream <= STREAMS * 2; i++, stream += 2)
            batch.push(frame(HEADERS, END_HEADERS | END_STREAM, stream, request("/slow")), frame(RST_STREAM, 0, stream, Buffer.from([0, 0, 0, 8])));
          return Buffer.concat(batch);
        },
        20_000,
      ),
    );
    assert.ok(ended.goaway !== null || ended.closed, "the flooding connection is ended");
    assert.ok(handled < STREAMS / 4, `${handled} of ${STREAMS} reset requests reached the handler`);
    assert.ok(grew < 40, `the server grew by ${grew.toFixed(1)} MiB`);
  });

  test("CONTINUATION flood: a header block that never ends ends the connection", async (t) => {
    let sent = 0;
    const { ended, grew } = await withFlood(t, (port) =>
      flood(
        port,
        () => {
          if (sent++ === 0) return frame(HEADERS, 0, 1, request("/ping"));
          if (sent > 200_000) return null;
          // Empty, and never END_HEADERS: each costs the server a parse, and holds the stream open.
          return Buffer.concat(Array.from({ length: 100 }, () => frame(CONTINUATION, 0, 1, literal("x-a", "b"))));
        },
        20_000,
      ),
    );
    assert.ok(ended.goaway !== null || ended.closed, "the flooding connection is ended");
    assert.ok(grew < 40, `the server grew by ${grew.toFixed(1)} MiB`);
  });

  test("HPACK bomb: a field put in the table once, then referenced thousands of times a request, gets the stream reset and costs no memory", async (t) => {
    // A 4,000-byte value in the dynamic table (index 62), then blocks of one-byte references to it:
    // each 4 KiB block would decode to 16 MiB of fields.
    const big = literal("x-bomb", "b".repeat(4000), true);
    const references = Buffer.alloc(4000, 0x80 | 62);
    let stream = 1;
    const { ended, grew } = await withFlood(t, (port) =>
      flood(
        port,
        () => {
          if (stream > 400) return null;
          const block = stream === 1 ? Buffer.concat([request("/ping"), big]) : Buffer.concat([request("/ping"), references]);
          const bytes = frame(HEADERS, END_HEADERS | END_STREAM, stream, block);
          stream += 2;
          return bytes;
        },
        5_000,
      ),
    );
    assert.ok(ended.resets > 0 || ended.goaway !== null || ended.closed, "the bombs' streams are reset (or the connection ended)");
    assert.ok(grew < 40, `the server grew by ${grew.toFixed(1)} MiB`);
  });

  test("HPACK references to a large field: each stream is reset, the connection is ended (GOAWAY, ENHANCE_YOUR_CALM) after repeated offenders, and others are served", async (t) => {
    // 510 references a request: 2 MB of fields decoded from a 530-byte block, far past the
    // 16 KiB the server announced and the client acknowledged.
    const { ended, grew, bombs } = await withFlood(t, (port) => referenceFlood(port, 510, true, 30_000));
    t.diagnostic(`${ended.sent} sent, ${ended.answered} answered, reset with ${[...ended.codes].join(", ")}`);
    assert.equal(ended.answered, 0, "no request of references is answered");
    assert.deepEqual([...ended.codes], [ENHANCE_YOUR_CALM], "each is reset with ENHANCE_YOUR_CALM");
    assert.equal(bombs, 0, "none reached its handler");
    assert.ok(ended.resets >= 100, `the connection outlives a few refused streams (${ended.resets} before it ended)`);
    assert.equal(ended.goaway, ENHANCE_YOUR_CALM, "then it is ended with GOAWAY (ENHANCE_YOUR_CALM)");
    assert.ok(grew < 40, `the server grew by ${grew.toFixed(1)} MiB`);
  });

  test("header lists past maxHeaderSize before the client acknowledged it are answered 431, until a client that keeps sending them is ended (GOAWAY, ENHANCE_YOUR_CALM)", async (t) => {
    // 5 references: 20 KB of fields, past the 16 KiB limit, from a client that never
    // acknowledges the server's SETTINGS (it may not know the limit yet).
    const { ended, bombs } = await withFlood(t, (port) => referenceFlood(port, 5, false, 30_000));
    t.diagnostic(`${ended.sent} sent, ${ended.answered} answered, reset with ${[...ended.codes].join(", ") || "none"}`);
    assert.equal(bombs, 0, "none reached its handler");
    assert.ok(ended.answered >= 100, `the first are answered (${ended.answered})`);
    assert.equal(ended.goaway, ENHANCE_YOUR_CALM, "then the connection is ended with GOAWAY (ENHANCE_YOUR_CALM)");
  });

  test("a header list past maxHeaderSize: 431 before the client has acknowledged the limit, a reset (ENHANCE_YOUR_CALM) after, the session going on", async (t) => {
    const { port } = await startApp(t);
    const session = http2Connect(`http://127.0.0.1:${port}`);
    t.after(() => session.destroy());
    const ask = (headers: Record<string, string> = {}) =>
      new Promise<{ status: number } | { reset: number }>((resolve) => {
        const stream = session.request({ ":path": "/ping", ...headers });
        stream.on("response", (h) => resolve({ status: Number(h[":status"]) }));
        stream.on("error", () => resolve({ reset: stream.rstCode! }));
        stream.resume();
      });
    const big = { "x-big": "v".repeat(20_000) };
    // Requested before the connection is up: sent before the server's SETTINGS are read.
    const first = ask(big);
    assert.deepEqual(await first, { status: 431 });
    // The session has read the server's SETTINGS and acknowledged them (before this request).
    assert.deepEqual(await ask(), { status: 200 });
    assert.deepEqual(await ask(big), { reset: ENHANCE_YOUR_CALM });
    assert.deepEqual(await ask(), { status: 200 });
  });

  test("PING flood from a client that reads nothing: the connection is ended", async (t) => {
    let sent = 0;
    const ping = frame(PING, 0, 0, Buffer.alloc(8, 1));
    const { ended, grew } = await withFlood(t, (port) =>
      flood(port, () => (sent++ < 2_000 ? Buffer.concat(Array.from({ length: 100 }, () => ping)) : null), 20_000, true),
    );
    assert.ok(ended.goaway !== null || ended.closed, "the flooding connection is ended");
    assert.ok(grew < 40, `the server grew by ${grew.toFixed(1)} MiB`);
  });

  test("SETTINGS flood: the connection is ended", async (t) => {
    let sent = 0;
    const settings = frame(SETTINGS, 0, 0, Buffer.from([0, 3, 0, 0, 0, 100]));
    const { ended, grew } = await withFlood(t, (port) =>
      flood(port, () => (sent++ < 2_000 ? Buffer.concat(Array.from({ length: 100 }, () => settings)) : null), 20_000, true),
    );
    assert.ok(ended.goaway !== null || ended.closed, "the flooding connection is ended");
    assert.ok(grew < 40, `the server grew by ${grew.toFixed(1)} MiB`);
  });
});
