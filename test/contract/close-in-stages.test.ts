// A connection that closes after an answer given while the client is still sending its request's
// body is closed in stages on every engine (RFC 9112 9.6): the answer and the end of the server's
// side go out, the rest of the body is read and dropped, and only then is the socket closed. A
// socket closed over unread bytes is reset, and the client, still writing, met EPIPE or
// ECONNRESET, often before it read the answer (express-fileupload's "fail when using GET").
// Real sockets to a real listening server, on the engine COG_ENGINE names.
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { describe, test } from "node:test";
import express from "../../src/express/index.js";
import { closed, portOf, type Listening } from "../express-pair.js";
import { engine, nativeSkip, serve } from "../helpers.js";

type Any = any;

const PIECE = Buffer.alloc(64 * 1024, "x");

/** `app` listening on 127.0.0.1 on the engine under test, closed when the test ends. */
async function listening(t: { after(fn: () => unknown): void }, app: Any): Promise<number> {
  const server = app.listen(0, "127.0.0.1");
  const port = await portOf(server as Listening);
  t.after(() => closed(server as Listening));
  return port;
}

/** What a raw client met: the answer it read, the error its socket failed with (null: none), whether the server ended its side. */
interface Met {
  answer: string;
  error: string | null;
  ended: boolean;
}

/**
 * Sends `head` and the first piece of a body of `pieces` pieces, reads the whole answer, and only
 * then sends the rest of the body and ends its side (half-open: it goes on writing after the
 * server ended its own, as a client does that has not yet looked at what came back). Resolves
 * once the connection has closed.
 */
function sendAfterAnswer(port: number, head: string, pieces: number): Promise<Met> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    const met: Met = { answer: "", error: null, ended: false };
    let rest = false;
    socket.on("data", (chunk: Buffer) => {
      met.answer += chunk.toString("latin1");
      if (rest || !answered(met.answer)) return;
      rest = true;
      for (let i = 1; i < pieces; i++) socket.write(PIECE);
      socket.end();
    });
    socket.on("end", () => (met.ended = true));
    socket.on("error", (err: NodeJS.ErrnoException) => (met.error = err.code ?? err.message));
    socket.on("close", () => resolve(met));
    socket.write(head);
    socket.write(PIECE);
  });
}

/** Whether `text` holds a whole answer framed by Content-Length. */
function answered(text: string): boolean {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
  return length !== null && text.length - end - 4 >= Number(length[1]);
}

/**
 * A request with a body sent by node:http's client as supertest sends a file: the multipart
 * preamble with the head, then 64 KB at a time as the disk gives it (a timer's turn apart): the
 * status, or the error the client met.
 */
function upload(port: number, method: string, body: Buffer): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      method,
      path: "/upload",
      agent: false,
      headers: { connection: "close", "content-type": "application/octet-stream", "content-length": body.length },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    const next = (from: number): void => {
      if (from >= body.length) return void req.end();
      req.write(body.subarray(from, from + PIECE.length));
      setTimeout(next, 1, from + PIECE.length);
    };
    req.write(body.subarray(0, 150));
    next(150);
  });
}

describe(`closing in stages after an early answer (${engine} engine)`, { skip: nativeSkip }, () => {
  test("a 400 given before the body is read, to a request that says Connection: close: the client reads it, sends the rest, and no reset comes", async (t) => {
    const app = express({ engine });
    app.all("/upload", (_req: Any, res: Any) => res.status(400).send("No files were uploaded."));
    const port = await listening(t, app);
    const pieces = 16;
    const head = `POST /upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nContent-Length: ${PIECE.length * pieces}\r\n\r\n`;
    const met = await sendAfterAnswer(port, head, pieces);
    assert.match(met.answer, /^HTTP\/1\.1 400 /);
    assert.match(met.answer, /No files were uploaded\.$/);
    assert.match(met.answer, /\r\nconnection: close\r\n/i);
    assert.equal(met.error, null, "the client sent the rest of its body on a connection the server still read");
    assert.ok(met.ended, "the server ended its side after the answer");
  });

  test("a 413 for a declared body over the limit: the client reads it, sends the rest, and no reset comes", async (t) => {
    const { port } = await serve(t, (app) => app.post("/upload", () => "never"), { bodyLimit: 1024 });
    const pieces = 8;
    const head = `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${PIECE.length * pieces}\r\n\r\n`;
    const met = await sendAfterAnswer(port, head, pieces);
    assert.match(met.answer, /^HTTP\/1\.1 413 /);
    assert.equal(met.error, null, "the client sent the rest of its body on a connection the server still read");
    assert.ok(met.ended, "the server ended its side after the answer");
  });

  test("a GET with a ~270 KB file attached, answered 400 before it is read (express-fileupload's test, by supertest's client): 400 every time", async (t) => {
    const app = express({ engine });
    app.all("/upload", (_req: Any, res: Any) => res.status(400).send("No files were uploaded."));
    const port = await listening(t, app);
    const body = Buffer.alloc(270 * 1024, "x");
    const outcomes: Array<number | string> = [];
    for (let i = 0; i < 20; i++) outcomes.push(await upload(port, "GET", body));
    assert.deepEqual(outcomes, new Array(20).fill(400));
  });
});
