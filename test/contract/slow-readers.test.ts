// Clients that stop reading an answer: the server holds the app's one shared Buffer for all of
// them (no copy each), and closes their connections once no byte has moved for sendTimeout; a
// client that reads slowly but steadily is not cut. The server runs as a process of its own
// (test/fixtures/big-answer-app.ts), so that its memory and sockets, read from /proc, are its own.
import assert from "node:assert/strict";
import { spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { connect as tlsConnect } from "node:tls";
import { describe, test } from "node:test";
import { Cog } from "../../src/index.js";
import { startChild, waitForOutput, type Owner } from "../children.js";
import { makeCertificates, opensslSkip } from "../certificates.js";
import { engine, nativeSkip, serve } from "../helpers.js";

const BIG = 4 * 1024 * 1024;
const HUGE = 32 * 1024 * 1024;
const SEND_TIMEOUT = 1500;
const CHECK_INTERVAL = 250;
const CLIENTS = 150;
const linuxOnly = existsSync("/proc/self/status") ? false : "reads the server's memory and sockets from /proc";
const skip = (engine === "native" && nativeSkip) || linuxOnly;

/** The server's resident set, in MiB. */
const rss = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
/** The server's open sockets: its listener and its connections. */
function sockets(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
    } catch {
      return false; // closed meanwhile
    }
  }).length;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startApp(t: Owner): Promise<{ child: ChildProcess; port: number }> {
  const app = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/big-answer-app.ts"], {
    env: { ...process.env, COG_ENGINE: engine, SEND_TIMEOUT: String(SEND_TIMEOUT), CHECK_INTERVAL: String(CHECK_INTERVAL) },
  });
  await waitForOutput(app, (out) => out.includes("\n"), "the app with a 4 MiB answer");
  return { child: app.child, port: Number(app.stdout().split("\n")[0]) };
}

/** Asks for /big on a connection of its own and never reads the answer. */
function nonReader(port: number): Socket {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  socket.once("connect", () => {
    socket.write("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    socket.pause();
  });
  return socket;
}

/** Waits (polling) until `done` holds, at most `ms`; returns whether it did. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (done()) return true;
  return done();
}

// The bounds below only turn a hang into a failure: on a machine loaded by other jobs, 150
// connections, and a 32 MiB answer read 64 KiB at a time, take many times what they take on an
// idle one, so each bound is several times that.
describe("clients that stop reading", { skip, timeout: 240_000 }, () => {
  test(`${CLIENTS} of them, on one shared 4 MiB Buffer: the server holds the one Buffer, and closes them after sendTimeout`, async (t) => {
    const { child, port } = await startApp(t);
    const pid = child.pid!;
    for (let i = 0; i < 50; i++) await fetch(`http://127.0.0.1:${port}/ping`, { headers: { connection: "close" } }).then((r) => r.text());
    await sleep(300);
    const idle = sockets(pid);
    const before = rss(pid);
    const asked = Date.now();
    const clients = Array.from({ length: CLIENTS }, () => nonReader(port));
    t.after(() => clients.forEach((c) => c.destroy()));
    assert.ok(await until(() => sockets(pid) - idle >= CLIENTS, 60_000), `the server should hold all ${CLIENTS} connections, has ${sockets(pid) - idle}`);
    // Every answer has been started by now: the kernel has taken what it takes of each.
    await sleep(500);
    const during = rss(pid);
    // A copy of the body per client would be CLIENTS x 4 MiB (600 MiB); the node engine, which
    // holds the app's Buffer, grows by a few MiB. The bound leaves room for the allocator.
    assert.ok(
      during - before < 64,
      `the server grew by ${(during - before).toFixed(0)} MiB for ${CLIENTS} slow readers of one 4 MiB Buffer (${before.toFixed(0)} -> ${during.toFixed(0)} MiB)`,
    );
    assert.ok(await until(() => sockets(pid) - idle <= 0, 60_000), `sendTimeout should close every connection, ${sockets(pid) - idle} still open`);
    const closed = Date.now() - asked;
    assert.ok(closed >= SEND_TIMEOUT, `closed ${closed} ms after the requests, before sendTimeout (${SEND_TIMEOUT} ms)`);
    await sleep(500);
    const after = rss(pid);
    assert.ok(after - before < 64, `after the clients left the server holds ${(after - before).toFixed(0)} MiB more than before`);
    // And it goes on serving.
    assert.equal(await fetch(`http://127.0.0.1:${port}/ping`).then((r) => r.text()), "pong");
  });

  test("a client that reads slowly but steadily is not cut, though the answer takes longer than sendTimeout", async (t) => {
    const { port } = await startApp(t);
    const socket = connect(port, "127.0.0.1");
    t.after(() => socket.destroy());
    const started = Date.now();
    let received = 0;
    let head = "";
    let headLength = -1;
    const whole = await new Promise<boolean>((resolve) => {
      socket.on("error", () => resolve(false));
      socket.on("close", () => resolve(false));
      socket.on("data", (chunk: Buffer) => {
        if (headLength < 0) {
          head += chunk.toString("latin1", 0, Math.min(chunk.length, 4096));
          const end = head.indexOf("\r\n\r\n");
          if (end >= 0) headLength = end + 4;
        }
        received += chunk.length;
        // Done only once the head and every byte of the body are in.
        if (headLength >= 0 && received >= headLength + HUGE) return resolve(true);
        // At most 64 KiB a read (Node's read size), then a pause: ~6 MB/s, 5 s or more for 32 MiB.
        socket.pause();
        setTimeout(() => socket.resume(), 10);
      });
      socket.write("GET /huge HTTP/1.1\r\nHost: x\r\n\r\n");
    });
    const took = Date.now() - started;
    assert.ok(whole, `the connection was cut after ${received} bytes, ${took} ms`);
    assert.ok(headLength > 0 && received === headLength + HUGE, `the head and the whole body arrived (${received} bytes, head ${headLength})`);
    assert.ok(took > SEND_TIMEOUT, `the answer took ${took} ms: longer than sendTimeout (${SEND_TIMEOUT} ms), or this test proves nothing`);
  });
});

/**
 * Over TLS: a client asks for a 4 MiB answer, reads nothing for `pauseMs`, then reads what it can.
 * Resolves with the bytes it got and whether the connection ended in an error (a reset).
 */
function pausedTlsReader(port: number, ca: string, alpn: string[] | undefined, pauseMs: number): Promise<{ bytes: number; reset: boolean }> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: "127.0.0.1", port, ca, servername: "localhost", ALPNProtocols: alpn });
    let bytes = 0;
    socket.on("data", (chunk: Buffer) => (bytes += chunk.length));
    socket.once("error", () => resolve({ bytes, reset: true }));
    socket.once("close", () => resolve({ bytes, reset: false }));
    socket.once("secureConnect", () => {
      socket.write("GET /big HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
      socket.pause();
      setTimeout(() => socket.resume(), pauseMs);
    });
  });
}

describe("clients that stop reading, over TLS", { skip: (engine === "native" && nativeSkip) || opensslSkip, timeout: 30_000 }, () => {
  const certs = opensslSkip === false ? makeCertificates() : null;
  const body = Buffer.alloc(BIG, "z");
  const define = (app: Cog) => app.get("/big", (_req, res) => res.type("application/octet-stream").send(body));

  test("are cut after sendTimeout; a client that reads at once gets the whole answer", async (t) => {
    const { port } = await serve(t, define, { tls: certs!.issue("localhost"), sendTimeout: SEND_TIMEOUT, timeoutCheckInterval: CHECK_INTERVAL });
    const prompt = await pausedTlsReader(port, certs!.ca, undefined, 0);
    assert.ok(prompt.bytes > BIG, `a client that reads got ${prompt.bytes} bytes`);
    const stalled = await pausedTlsReader(port, certs!.ca, undefined, SEND_TIMEOUT + 4 * CHECK_INTERVAL + 1000);
    assert.ok(stalled.bytes < BIG, `a client that stopped reading for longer than sendTimeout got all ${stalled.bytes} bytes: it was not cut`);
  });

  test("an http2: true server's HTTP/1.1 clients are cut after sendTimeout too", async (t) => {
    const { port } = await serve(t, define, { tls: certs!.issue("localhost"), http2: true, sendTimeout: SEND_TIMEOUT, timeoutCheckInterval: CHECK_INTERVAL });
    const prompt = await pausedTlsReader(port, certs!.ca, ["http/1.1"], 0);
    assert.ok(prompt.bytes > BIG, `a client that reads got ${prompt.bytes} bytes`);
    const stalled = await pausedTlsReader(port, certs!.ca, ["http/1.1"], SEND_TIMEOUT + 4 * CHECK_INTERVAL + 1000);
    assert.ok(stalled.bytes < BIG, `a client that stopped reading for longer than sendTimeout got all ${stalled.bytes} bytes: it was not cut`);
  });
});

// slowhttptest (https://github.com/shekyan/slowhttptest), in its slow-read mode: connections that
// advertise a tiny receive window and read a few bytes a second, an attack on servers that keep
// answers waiting for as long as the client likes.
const slowhttptest = spawnSync("slowhttptest", ["-h"]).error === undefined ? false : "slowhttptest is not installed (apt-get install slowhttptest)";

describe("slowhttptest's slow-read mode", { skip: skip || slowhttptest, timeout: 60_000 }, () => {
  test("100 slow readers of a 4 MiB answer: closed by sendTimeout, the server's memory flat, and it goes on serving", async (t) => {
    const { child, port } = await startApp(t);
    const pid = child.pid!;
    await fetch(`http://127.0.0.1:${port}/ping`, { headers: { connection: "close" } }).then((r) => r.text());
    await sleep(300);
    const idle = sockets(pid);
    const before = rss(pid);
    // 100 connections at 100 a second, each reading 32 bytes a second through a 512-1024 byte window, for 8 s.
    startChild(
      t,
      "slowhttptest",
      ["-X", "-c", "100", "-r", "100", "-l", "8", "-n", "1", "-z", "32", "-w", "512", "-y", "1024", "-k", "1", "-p", "3", "-u", `http://127.0.0.1:${port}/big`],
      { cwd: tmpdir() },
    );
    assert.ok(await until(() => sockets(pid) - idle >= 50, 10_000), `slowhttptest's connections should reach the server, ${sockets(pid) - idle} did`);
    assert.equal(
      await fetch(`http://127.0.0.1:${port}/ping`, { headers: { connection: "close" } }).then((r) => r.text()),
      "pong",
      "the server answers others meanwhile",
    );
    let peak = rss(pid);
    assert.ok(
      await until(() => {
        peak = Math.max(peak, rss(pid));
        return sockets(pid) - idle <= 0;
      }, 15_000),
      `sendTimeout should close every slow reader, ${sockets(pid) - idle} still open`,
    );
    assert.ok(peak - before < 64, `the server grew by ${(peak - before).toFixed(0)} MiB (${before.toFixed(0)} -> ${peak.toFixed(0)} MiB)`);
    assert.equal(await fetch(`http://127.0.0.1:${port}/ping`, { headers: { connection: "close" } }).then((r) => r.text()), "pong");
  });
});

describe("sendTimeout", () => {
  test("is checked when the app is made: a whole number of ms, 0 for none", () => {
    assert.throws(() => new Cog({ sendTimeout: -1 }), /sendTimeout must be a whole number >= 0, got -1/);
    assert.throws(() => new Cog({ sendTimeout: "60s" as unknown as number }), /sendTimeout must be a whole number >= 0, got 60s/);
    assert.doesNotThrow(() => new Cog({ sendTimeout: 0 }));
    assert.doesNotThrow(() => new Cog({ sendTimeout: 120_000 }));
  });
});
