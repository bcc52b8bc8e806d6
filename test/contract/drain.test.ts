// A drain never resets a request the server received, on both engines: every answer written once
// the drain has begun says Connection: close (so a keep-alive client sends nothing more on that
// connection), and what a client sent before the drain began, on an idle keep-alive connection,
// is read and answered (503 + Connection: close) before the connection closes, rather than reset.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { connect, type Socket } from "node:net";
import { once } from "node:events";
import { Cog } from "../../src/index.js";
import { engine } from "../helpers.js";
import { parseResponses, header, within } from "../wire.js";

interface Outcome {
  status?: number;
  connection?: string;
  body?: string;
  error?: string;
}

function get(port: number, path: string, agent: Agent): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
      res.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

/** A connection whose bytes are kept, and how it ended: "end" (the server's FIN) or the error's code (a reset). */
async function recorded(t: { after(fn: () => unknown): void }, port: number): Promise<{ socket: Socket; chunks: Buffer[]; ended: Promise<string> }> {
  const socket: Socket = connect(port, "127.0.0.1");
  t.after(() => socket.destroy());
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<string>((resolve) => {
    socket.once("end", () => resolve("end"));
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  await once(socket, "connect");
  return { socket, chunks, ended };
}

test(`an answer finished during the drain says Connection: close, and the keep-alive client's next request meets no reset (${engine})`, async (t) => {
  const app = new Cog({ engine, logErrors: false });
  let release = (): void => {};
  const handling = new Promise<void>((resolve) => {
    app.get("/slow", (_req, res) => {
      release = () => void res.send("done");
      resolve();
    });
  });
  app.get("/next", (_req, res) => res.send("next"));
  const { port } = await app.listen(0, "127.0.0.1");
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const first = get(port, "/slow", agent);
  await handling;
  const closing = app.close(5000);
  release();
  assert.deepEqual(await first, { status: 200, connection: "close", body: "done" });
  // The Agent dropped the connection it was told closes: the next request goes on a new one, which
  // a stopped server refuses (the request never ran), or is answered 503; never a reset.
  const next = await get(port, "/next", agent);
  assert.ok(next.error === "ECONNREFUSED" || next.status === 503, `the next request: ${JSON.stringify(next)}`);
  await closing;
});

test(`a request sent on an idle keep-alive connection before the drain began is answered 503 with Connection: close, not reset (${engine})`, async (t) => {
  const app = new Cog({ engine, logErrors: false });
  app.get("/x", (_req, res) => res.send("x"));
  const { port } = await app.listen(0, "127.0.0.1");
  const { socket, chunks, ended } = await recorded(t, port);
  socket.write("GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  // The first answer is in: the connection is idle, kept alive.
  await within(
    new Promise<void>((resolve) => {
      const check = (): void => {
        if (parseResponses(Buffer.concat(chunks)).responses.length === 1) {
          socket.off("data", check);
          resolve();
        }
      };
      socket.on("data", check);
      check();
    }),
    "the first answer",
  );
  // The second request reaches the kernel before the server looks again: the drain begins in
  // the same turn, with it unread.
  socket.write("GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  const closing = app.close(5000);
  assert.equal(await within(ended, "the server to close the connection"), "end", "a FIN, not a reset");
  await closing;
  const { responses, partial, malformed } = parseResponses(Buffer.concat(chunks));
  assert.equal(malformed, null);
  assert.equal(partial, null);
  // The first kept the connection (node:http says so, the native engine by HTTP/1.1's default).
  assert.deepEqual(
    responses.map((r) => [r.status, header(r, "connection") === "close"]),
    [
      [200, false],
      [503, true],
    ],
  );
});

test(`pipelined requests received before the drain began are all answered, the last saying Connection: close (${engine})`, async (t) => {
  const app = new Cog({ engine, logErrors: false });
  const waiting: Array<() => void> = [];
  let bothArrived = (): void => {};
  const arrived = new Promise<void>((resolve) => (bothArrived = resolve));
  app.get("/held/:n", (req, res) => {
    waiting.push(() => void res.send(`held ${req.params.n}`));
    if (waiting.length === 2) bothArrived();
  });
  const { port } = await app.listen(0, "127.0.0.1");
  const { socket, chunks, ended } = await recorded(t, port);
  socket.write("GET /held/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /held/2 HTTP/1.1\r\nHost: x\r\n\r\n");
  await within(arrived, "both requests to reach their handler");
  const closing = app.close(5000);
  // Answered in reverse order: the second waits for the first, as HTTP/1.1 has it.
  waiting[1]!();
  waiting[0]!();
  assert.equal(await within(ended, "the server to close the connection"), "end");
  await closing;
  const { responses, partial } = parseResponses(Buffer.concat(chunks));
  assert.equal(partial, null);
  assert.deepEqual(
    responses.map((r) => [r.status, r.body.toString(), header(r, "connection") === "close"]),
    [
      [200, "held 1", false],
      [200, "held 2", true],
    ],
  );
});
