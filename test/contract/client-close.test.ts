// A client that ends its side of the connection (a FIN: socket.end()) before its answer is
// complete has gone, on both engines as on node:http: `req` sees 'close', `req.signal` aborts,
// `res` sees 'close' without 'finish', and the access log says `aborted: true`. What 'finish'
// and 'close' listeners read of the response and the connection is the same on both engines.
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { once } from "node:events";
import type { RequestLogLine } from "../../src/index.js";
import { engine, serve } from "../helpers.js";

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await wait(10);
  assert.ok(check(), `timed out waiting for ${what}`);
}

function open(port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  return once(socket, "connect").then(() => socket);
}

test(`a client that ends its side before the answer is gone: req 'close', req.signal, res 'close' without 'finish', aborted in the log (${engine})`, async (t) => {
  const lines: RequestLogLine[] = [];
  const events: string[] = [];
  let started = false;
  let answered: unknown = "not yet";
  const { port } = await serve(
    t,
    (app) => {
      app.get("/slow", async (req, res) => {
        started = true;
        req.on("close", () => events.push("req close"));
        req.signal.addEventListener("abort", () => events.push("signal abort"));
        res.on("finish", () => events.push("res finish"));
        res.on("close", () => events.push("res close"));
        await wait(150);
        // Answering a client that left is harmless: nothing throws, nothing is sent.
        try {
          res.send("too late");
          answered = "no error";
        } catch (err) {
          answered = err;
        }
      });
    },
    { logger: (line) => void lines.push(line as RequestLogLine) },
  );
  const socket = await open(port);
  const closed = once(socket, "close");
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
  socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  await until(() => started, "the handler to start");
  socket.end();
  await until(() => events.includes("res close"), "the response's close");
  await until(() => lines.length === 1, "the access log line");
  await until(() => answered !== "not yet", "the handler to answer");
  await closed;
  assert.deepEqual([...events].sort(), ["req close", "res close", "signal abort"]);
  assert.equal(answered, "no error");
  assert.equal(received, "", "nothing was sent to the client that left");
  assert.deepEqual({ path: lines[0]!.path, status: lines[0]!.status, aborted: lines[0]!.aborted }, { path: "/slow", status: null, aborted: true });
});

test(`req.signal first read after the client left is already aborted (${engine})`, async (t) => {
  let started = false;
  let seen: { aborted: boolean; reason: string } | undefined;
  const { port } = await serve(t, (app) => {
    app.get("/late", async (req, res) => {
      started = true;
      // The handler awaits something else first; only then asks whether to go on.
      await once(res, "close");
      const signal = req.signal;
      seen = { aborted: signal.aborted, reason: (signal.reason as DOMException | undefined)?.name ?? "none" };
    });
  });
  const socket = await open(port);
  socket.write("GET /late HTTP/1.1\r\nHost: x\r\n\r\n");
  await until(() => started, "the handler to start");
  socket.end();
  await until(() => seen !== undefined, "the handler to read req.signal");
  assert.deepEqual(seen, { aborted: true, reason: "AbortError" });
});

test(`a client that ends its side after a request answered at once still gets the answer (${engine})`, async (t) => {
  const lines: RequestLogLine[] = [];
  const { port } = await serve(t, (app) => app.get("/now", (_req, res) => void res.send("here")), {
    logger: (line) => void lines.push(line as RequestLogLine),
  });
  const socket = await open(port);
  const closed = once(socket, "close");
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
  socket.end("GET /now HTTP/1.1\r\nHost: x\r\n\r\n");
  await closed;
  assert.match(received, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nhere$/);
  await until(() => lines.length === 1, "the access log line");
  assert.equal(lines[0]!.aborted, false);
});

test(`req.socket has the client's address and port and the local address and port, also in 'finish' listeners (${engine})`, async (t) => {
  let during: unknown;
  let after: unknown;
  let headersAfter: unknown;
  const { port } = await serve(
    t,
    (app) => {
      app.get("/who", (req, res) => {
        const { remoteAddress, remotePort, localAddress, localPort } = req.socket;
        during = { remoteAddress, remotePort, localAddress, localPort };
        res.on("finish", () => {
          const { remoteAddress, remotePort, localAddress, localPort } = req.socket;
          after = { remoteAddress, remotePort, localAddress, localPort };
          // What pino-http's serializer reads of a finished response.
          headersAfter = { ...res.getHeaders() };
        });
        res.set("x-kind", "who").json({ ok: true });
      });
    },
    // The access log echoes X-Request-Id: the response has a header list, as on node:http.
    { logger: () => {} },
  );
  const socket = await open(port);
  const answer = once(socket, "data");
  socket.write("GET /who HTTP/1.1\r\nHost: x\r\n\r\n");
  await answer;
  await until(() => after !== undefined, "the 'finish' listener");
  const expected = { remoteAddress: socket.localAddress!.replace(/^::ffff:/, ""), remotePort: socket.localPort, localAddress: "127.0.0.1", localPort: port };
  socket.destroy();
  const plain = (seen: unknown) => ({
    ...(seen as typeof expected),
    remoteAddress: (seen as typeof expected).remoteAddress.replace(/^::ffff:/, ""),
    localAddress: (seen as typeof expected).localAddress.replace(/^::ffff:/, ""),
  });
  assert.deepEqual(plain(during), expected);
  assert.deepEqual(plain(after), expected);
  const headers = headersAfter as Record<string, unknown>;
  assert.deepEqual(
    { type: headers["content-type"], length: headers["content-length"], kind: headers["x-kind"], id: typeof headers["x-request-id"] },
    { type: "application/json; charset=utf-8", length: 11, kind: "who", id: "string" },
  );
});
