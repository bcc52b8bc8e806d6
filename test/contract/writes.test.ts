// Answers are held and written a slice at a time (src/engines/node/writes.ts on the node
// engine; the native engine serves in slices too). Whatever the batching, every answer must
// reach its client, in order, including the last ones of a round and the one before an error.
import assert from "node:assert/strict";
import { once } from "node:events";
import { connect, Socket } from "node:net";
import { Readable } from "node:stream";
import { describe, test } from "node:test";
import { nodeOnly, raw, serve, statuses } from "../helpers.js";

describe("answers written in slices", () => {
  test("an answer followed by a malformed request in the same packet reaches the client before the connection closes", async (t) => {
    const { port } = await serve(t, (app) => app.get("/first", (_req, res) => res.send("first answer")));
    const text = await raw(port, "GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\nNo colon in this line\r\n\r\n", 1000);
    assert.equal(statuses(text)[0], 200, text);
    assert.match(text, /\r\n\r\nfirst answer/);
  });

  test("every one of many connections ready at once gets its answer, however the slices fall", async (t) => {
    const { port } = await serve(t, (app) => app.get("/n/:n", (req, res) => res.send(`answer ${req.params.n}`)));
    // Not a multiple of any slice size, so the last slice is a partial one.
    // Each connection waits for its own answer (a quiet period alone bets on a machine that is not busy).
    const answers = await Promise.all(
      Array.from({ length: 203 }, (_, i) => raw(port, `GET /n/${i} HTTP/1.1\r\nHost: x\r\n\r\n`, 5000, (text) => text.endsWith(`answer ${i}`))),
    );
    for (const [i, text] of answers.entries()) {
      assert.equal(statuses(text).join(), "200", `connection ${i}`);
      assert.ok(text.endsWith(`answer ${i}`), `connection ${i}: ${text}`);
    }
  });

  test("ten pipelined requests on each of 40 connections are answered in order", async (t) => {
    const { port } = await serve(t, (app) => app.get("/p/:n", (req, res) => res.json({ n: Number(req.params.n) })));
    const batch = Array.from({ length: 10 }, (_, n) => `GET /p/${n} HTTP/1.1\r\nHost: x\r\n\r\n`).join("");
    const answers = await Promise.all(Array.from({ length: 40 }, () => raw(port, batch, 5000, (text) => text.endsWith('{"n":9}'))));
    for (const text of answers) {
      assert.deepEqual(statuses(text), Array(10).fill(200));
      assert.deepEqual(
        text.match(/\{"n":\d+\}/g),
        Array.from({ length: 10 }, (_, n) => `{"n":${n}}`),
      );
    }
  });

  test("pipelined answers ended out of order, late or streamed go out in request order, each finishing once, the last closing the connection", async (t) => {
    const finished: string[] = [];
    const { port } = await serve(t, (app) => {
      app.use((req, res, next) => {
        res.on("finish", () => finished.push(req.path));
        next();
      });
      app.get("/now/:n", (req, res) => res.send(`now ${req.params.n};`));
      app.get("/late/:n", (req, res) => void setTimeout(() => res.send(`late ${req.params.n};`), 30));
      app.get("/stream/:n", (req, res) => {
        res.set("content-type", "text/plain");
        res.write(`stream ${req.params.n}a;`);
        setTimeout(() => res.end(`stream ${req.params.n}b;`), 20);
      });
    });
    const paths = ["/now/0", "/late/1", "/now/2", "/stream/3", "/now/4", "/late/5", "/now/6", "/now/7"];
    const batch = paths.map((p, i) => `GET ${p} HTTP/1.1\r\nHost: x\r\n${i === paths.length - 1 ? "Connection: close\r\n" : ""}\r\n`).join("");
    // Resolves when the server closes the connection (or after 5 s of silence, which fails below).
    const text = await raw(port, batch, 5000);
    assert.deepEqual(statuses(text), Array(8).fill(200), text);
    assert.deepEqual(text.match(/(?:now|late|stream) \d[ab]?;/g), [
      "now 0;",
      "late 1;",
      "now 2;",
      "stream 3a;",
      "stream 3b;",
      "now 4;",
      "late 5;",
      "now 6;",
      "now 7;",
    ]);
    assert.match(text, /connection: close/i);
    // In request order on the node engine, as each is written; as each ends on the native engine.
    assert.deepEqual([...finished].sort(), [...paths].sort());
  });

  test("a streamed body is written as it comes, before the response ends", { skip: nodeOnly, timeout: 5000 }, async (t) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { port } = await serve(t, (app) => {
      app.get("/stream", async (_req, res) => {
        res.set("content-type", "text/plain");
        // Nested corks unwind as Node's do: the chunk goes out at the outer uncork.
        res.cork();
        res.cork();
        res.write("first chunk;");
        res.uncork();
        res.uncork();
        await released;
        res.end("last chunk");
      });
    });
    const socket = connect(port, "127.0.0.1");
    t.after(() => socket.destroy());
    socket.write("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    let text = "";
    // The server ends the response only after the client has seen the first chunk: held, it would never come.
    while (!text.includes("first chunk;")) text += ((await once(socket, "data")) as [Buffer])[0].toString("latin1");
    assert.ok(!text.includes("last chunk"));
    release();
    while (!/\r\n0\r\n\r\n$/.test(text)) text += ((await once(socket, "data")) as [Buffer])[0].toString("latin1");
    assert.match(text, /last chunk/);
  });

  // The option that turns the mechanism off, for when a Node release breaks the internals it
  // relies on (test/engines/node/node-internals.test.ts): answers are then written as Node writes them.
  test("with sliceWrites: false each answer is written as it ends, unheld, and every connection gets its own", { skip: nodeOnly }, async (t) => {
    for (const sliceWrites of [true, false]) {
      // Per answer: whether the socket was left corked (the answer held) once send() returned.
      const held: boolean[] = [];
      const hooked: boolean[] = [];
      const { port } = await serve(
        t,
        (app) => {
          app.get("/n/:n", (req, res) => {
            res.send(`answer ${req.params.n}`);
            held.push(res.socket!.writableCorked > 0);
            hooked.push(res.socket!.uncork !== Socket.prototype.uncork || res.socket!.destroy !== Socket.prototype.destroy);
          });
        },
        { sliceWrites },
      );
      const answers = await Promise.all(Array.from({ length: 37 }, (_, i) => raw(port, `GET /n/${i} HTTP/1.1\r\nHost: x\r\n\r\n`, 300)));
      for (const [i, text] of answers.entries()) assert.ok(text.endsWith(`answer ${i}`), `sliceWrites ${sliceWrites}, connection ${i}: ${text}`);
      assert.equal(held.length, 37);
      // On, most answers wait (each SLICE-th one writes its slice at once); off, none does.
      if (sliceWrites) assert.ok(held.filter(Boolean).length >= 37 / 2, `sliceWrites true: only ${held.filter(Boolean).length} of 37 answers were held`);
      else assert.deepEqual(held, Array(37).fill(false), "sliceWrites false: answers held after send()");
      assert.deepEqual(hooked, Array(37).fill(sliceWrites), `sliceWrites ${sliceWrites}: sockets with the hook's uncork/destroy`);
    }
  });

  test("large Buffer answers pipelined between small ones arrive whole and in order, HEAD without its body", async (t) => {
    // Each larger than the socket takes at once, with bytes that tell where they came from.
    const big = (letter: string) => Buffer.from(Array.from({ length: 700 * 1024 }, (_, i) => (i % 1000 === 0 ? letter : String(i % 10))).join(""));
    const bodies: Record<string, Buffer> = { a: big("a"), b: big("b") };
    const { port } = await serve(t, (app) => {
      app.get("/big/:letter", (req, res) => res.type("application/octet-stream").send(bodies[req.params.letter!]!));
      app.get("/small/:n", (req, res) => res.send(`small ${req.params.n}`));
    });
    const socket = connect(port, "127.0.0.1");
    t.after(() => socket.destroy());
    const paths = ["/small/1", "/big/a", "/small/2", "/big/b", "HEAD /big/a", "/big/a", "/small/3"];
    socket.write(
      paths.map((p) => `${p.startsWith("HEAD") ? p : `GET ${p}`} HTTP/1.1\r\nHost: x\r\n${p === "/small/3" ? "Connection: close\r\n" : ""}\r\n`).join(""),
    );
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    let all = Buffer.concat(chunks);
    for (const path of paths) {
      const headEnd = all.indexOf("\r\n\r\n");
      assert.ok(headEnd > 0, `${path}: no answer`);
      const head = all.subarray(0, headEnd).toString("latin1");
      assert.match(head, /^HTTP\/1\.1 200 /, path);
      const length = Number(/content-length: (\d+)/i.exec(head)![1]);
      const bodyLength = path.startsWith("HEAD") ? 0 : length;
      const body = all.subarray(headEnd + 4, headEnd + 4 + bodyLength);
      const letter = path.split("/").pop()!;
      if (path.startsWith("HEAD")) assert.equal(length, bodies.a!.length, path);
      else if (path.startsWith("/big")) assert.ok(body.equals(bodies[letter]!), `${path}: ${body.length} bytes, not the body sent`);
      else assert.equal(body.toString(), `small ${letter}`, path);
      all = all.subarray(headEnd + 4 + bodyLength);
    }
    assert.equal(all.length, 0, "nothing after the last answer");
  });

  test("a large streamed body arrives whole, with backpressure", async (t) => {
    const chunk = "0123456789abcdef".repeat(4096); // 64 KiB
    const { base } = await serve(t, (app) => {
      app.get("/big", (_req, res) => res.set("content-type", "text/plain").send(Readable.from(Array.from({ length: 64 }, () => chunk))));
    });
    const res = await fetch(`${base}/big`);
    const body = await res.text();
    assert.equal(res.status, 200);
    assert.equal(body.length, 64 * chunk.length);
    assert.equal(body, chunk.repeat(64));
  });

  test("the answers in flight when the server closes are written before their connections go", async (t) => {
    let arrived = 0;
    let allArrived!: () => void;
    const everyone = new Promise<void>((resolve) => (allArrived = resolve));
    const { app, port } = await serve(t, (a) =>
      a.get("/late", (_req, res) => {
        if (++arrived === 20) allArrived();
        setTimeout(() => res.send("late answer"), 50);
      }),
    );
    const answers = Promise.all(Array.from({ length: 20 }, () => raw(port, "GET /late HTTP/1.1\r\nHost: x\r\n\r\n", 1000)));
    await everyone;
    await app.close(2000);
    for (const text of await answers) assert.ok(text.endsWith("late answer"), text);
  });
});
