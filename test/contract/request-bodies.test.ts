import { test } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { gzipSync, deflateSync, brotliCompressSync } from "node:zlib";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { serve, raw, statuses } from "../helpers.js";
import { eventually, within } from "../wire.js";

/** POSTs `total` bytes (`byte`, "a" unless said) in `piece`-sized writes, as fast as the server takes them; resolves with the status and body. */
function upload(
  port: number,
  path: string,
  total: number,
  options: { piece?: number; byte?: number; chunked?: boolean; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string }> {
  const piece = Buffer.alloc(options.piece ?? 64 * 1024, options.byte ?? 0x61);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { port, host: "127.0.0.1", path, method: "POST", headers: { ...(options.chunked ? {} : { "content-length": total }), ...options.headers } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on("error", reject);
    let sent = 0;
    const pump = () => {
      while (sent < total) {
        const n = Math.min(piece.length, total - sent);
        sent += n;
        if (!req.write(n === piece.length ? piece : piece.subarray(0, n))) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

test('body: "stream" counts a 20 MB upload without holding it whole, on Content-Length and chunked', async (t) => {
  let largest = 0;
  const { port } = await serve(t, (app) => {
    app.post("/count", { body: "stream", bodyLimit: 32 * 1024 * 1024 }, async (req, res) => {
      let bytes = 0;
      for await (const chunk of req) {
        bytes += (chunk as Buffer).length;
        largest = Math.max(largest, (chunk as Buffer).length);
      }
      res.json({ bytes });
    });
  });
  const total = 20 * 1024 * 1024;
  assert.deepEqual(await upload(port, "/count", total), { status: 200, body: JSON.stringify({ bytes: total }) });
  assert.deepEqual(await upload(port, "/count", total, { chunked: true }), { status: 200, body: JSON.stringify({ bytes: total }) });
  // Pieces as they came off the socket, never the body whole.
  assert.ok(largest <= 1024 * 1024, `a piece of ${largest} bytes`);
});

test("pieces of a streamed body the app keeps keep their bytes while later uploads arrive", async (t) => {
  // Each upload is a different byte; the app keeps every piece of the first one. Were a piece's
  // memory reused for later reads (the engine's, or a pool's), its bytes would change.
  const kept: Buffer[] = [];
  const { port } = await serve(t, (app) => {
    app.post("/keep", { body: "stream", bodyLimit: 32 * 1024 * 1024 }, async (req, res) => {
      const first = kept.length === 0;
      let bytes = 0;
      for await (const chunk of req) {
        if (first) kept.push(chunk as Buffer);
        bytes += (chunk as Buffer).length;
      }
      res.send(String(bytes));
    });
  });
  const size = 3 * 1024 * 1024;
  const withByte = async (byte: number) => {
    const piece = Buffer.alloc(256 * 1024, byte);
    return new Promise<string>((resolve, reject) => {
      const req = httpRequest({ port, host: "127.0.0.1", path: "/keep", method: "POST", headers: { "content-length": size } }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve(body));
      });
      req.on("error", reject);
      let sent = 0;
      const pump = () => {
        while (sent < size) {
          sent += piece.length;
          if (!req.write(piece)) return void req.once("drain", pump);
        }
        req.end();
      };
      pump();
    });
  };
  assert.equal(await withByte(0x31), String(size));
  assert.ok(kept.length > 1, `the first upload came in pieces (${kept.length})`);
  for (const byte of [0x32, 0x33, 0x34]) assert.equal(await withByte(byte), String(size));
  assert.equal(
    kept.reduce((n, piece) => n + piece.length, 0),
    size,
  );
  for (const piece of kept)
    assert.ok(
      piece.every((b) => b === 0x31),
      "a kept piece still holds the first upload's bytes",
    );
});

test("a kept piece keeps its bytes after collections free the pieces dropped around it and later uploads take their memory", async (t) => {
  // The native engine reads large pieces into memory it reuses once V8 has freed the Buffer over
  // it. The app keeps one piece of each of the first two uploads and drops the rest; full
  // collections (and the turns of the loop in which the engine learns of them) come between the
  // uploads, so the dropped pieces' memory goes to the later ones. Were a kept piece's memory
  // reused, it would show a later upload's byte.
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const kept: Buffer[] = [];
  const { port } = await serve(t, (app) => {
    app.post("/keep-one", { body: "stream", bodyLimit: 32 * 1024 * 1024 }, async (req, res) => {
      let bytes = 0;
      let first = true;
      for await (const chunk of req) {
        if (first && kept.length < 2) kept.push(chunk as Buffer);
        first = false;
        bytes += (chunk as Buffer).length;
      }
      res.send(String(bytes));
    });
  });
  const size = 4 * 1024 * 1024;
  const collect = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const bytes = [0x31, 0x32, 0x33, 0x34, 0x35, 0x36];
  for (const byte of bytes) {
    assert.deepEqual(await upload(port, "/keep-one", size, { piece: 256 * 1024, byte }), { status: 200, body: String(size) });
    await collect();
  }
  assert.equal(kept.length, 2);
  assert.ok(kept[0]!.length > 0 && kept[0]!.every((b) => b === 0x31), "the first upload's kept piece holds its bytes");
  assert.ok(kept[1]!.length > 0 && kept[1]!.every((b) => b === 0x32), "the second upload's kept piece holds its bytes");
});

test("pieces kept from uploads arriving at once on several connections each keep their own upload's bytes", async (t) => {
  // Six uploads at once, each of its own byte, every piece kept until all are in: pieces read in
  // the same turn of the loop for different connections must not share or reuse memory.
  const kept = new Map<number, Buffer[]>();
  const { port } = await serve(t, (app) => {
    app.post("/keep/:byte", { body: "stream", bodyLimit: 32 * 1024 * 1024 }, async (req, res) => {
      const pieces: Buffer[] = [];
      kept.set(Number(req.params.byte), pieces);
      for await (const chunk of req) pieces.push(chunk as Buffer);
      res.send(String(pieces.reduce((n, piece) => n + piece.length, 0)));
    });
  });
  const size = 2 * 1024 * 1024;
  const bytes = [0x41, 0x42, 0x43, 0x44, 0x45, 0x46];
  const answers = await Promise.all(bytes.map((byte) => upload(port, `/keep/${byte}`, size, { piece: 300 * 1024, byte })));
  for (const answer of answers) assert.deepEqual(answer, { status: 200, body: String(size) });
  for (const byte of bytes) {
    const pieces = kept.get(byte)!;
    assert.equal(
      pieces.reduce((n, piece) => n + piece.length, 0),
      size,
    );
    for (const piece of pieces)
      assert.ok(
        piece.every((b) => b === byte),
        `a piece of upload ${byte.toString(16)} holds only its bytes`,
      );
  }
});

test("a streamed body pauses the connection while the handler is behind (backpressure), and loses nothing", async (t) => {
  const { port } = await serve(t, (app) => {
    app.post("/slow", { body: "stream", bodyLimit: 64 * 1024 * 1024 }, async (req, res) => {
      let bytes = 0;
      let sum = 0;
      for await (const chunk of req) {
        bytes += (chunk as Buffer).length;
        for (const b of chunk as Buffer) sum = (sum + b) % 65521;
        await new Promise((r) => setTimeout(r, 2));
      }
      res.json({ bytes, sum });
    });
  });
  const total = 8 * 1024 * 1024;
  const answer = await within(upload(port, "/slow", total), "the slow upload", 20_000);
  assert.equal(answer.status, 200);
  assert.deepEqual(JSON.parse(answer.body), { bytes: total, sum: (total * 0x61) % 65521 });
});

test("a streamed body past the route's bodyLimit fails the stream with a 413, declared or not", async (t) => {
  const { port } = await serve(t, (app) => {
    app.post("/small", { body: "stream", bodyLimit: 100_000 }, async (req, res) => {
      let bytes = 0;
      for await (const chunk of req) bytes += (chunk as Buffer).length;
      res.json({ bytes });
    });
  });
  const declared = await upload(port, "/small", 200_000);
  assert.equal(declared.status, 413);
  assert.match(declared.body, /limit of 100000 bytes/);
  const chunked = await upload(port, "/small", 2_000_000, { chunked: true });
  assert.equal(chunked.status, 413);
  assert.deepEqual(await upload(port, "/small", 100_000), { status: 200, body: JSON.stringify({ bytes: 100_000 }) });
});

test("bodyLimit per route, buffered: above the app's limit on one route, below it on another", async (t) => {
  const { port } = await serve(
    t,
    (app) => {
      app.post("/big", { bodyLimit: 5_000_000 }, (req, res) => res.json({ bytes: (req.rawBody as Buffer).length }));
      app.post("/tiny", { bodyLimit: 10 }, (req, res) => res.json({ bytes: (req.rawBody as Buffer).length }));
      app.post("/default", (req, res) => res.json({ bytes: (req.rawBody as Buffer).length }));
    },
    { bodyLimit: 1000 },
  );
  assert.deepEqual(await upload(port, "/big", 3_000_000), { status: 200, body: '{"bytes":3000000}' });
  assert.equal((await upload(port, "/big", 6_000_000, { chunked: true })).status, 413);
  assert.equal((await upload(port, "/tiny", 11)).status, 413);
  assert.deepEqual(await upload(port, "/tiny", 10), { status: 200, body: '{"bytes":10}' });
  assert.equal((await upload(port, "/default", 1001)).status, 413);
  assert.deepEqual(await upload(port, "/default", 1000), { status: 200, body: '{"bytes":1000}' });
});

test("bad route options are refused at registration, naming the route", async (t) => {
  await serve(t, (app) => {
    assert.throws(() => app.post("/x", { bodyLimit: -1 }, (_req, res) => res.send("")), /POST \/x: bodyLimit must be a whole number/);
    assert.throws(() => app.post("/y", { body: "file" as "stream" }, (_req, res) => res.send("")), /POST \/y: body must be "buffer" or "stream"/);
  });
});

test("an upload cut off mid-body errors the handler's stream, and the server goes on serving", async (t) => {
  let failure: NodeJS.ErrnoException | undefined;
  let finished = false;
  const { port, fetch } = await serve(t, (app) => {
    app.post("/cut", { body: "stream", bodyLimit: 10_000_000 }, async (req, res) => {
      try {
        for await (const _chunk of req);
        finished = true;
      } catch (err) {
        failure = err as NodeJS.ErrnoException;
      }
      if (!res.destroyed) res.send("done");
    });
    app.get("/ok", (_req, res) => res.send("ok"));
  });
  const socket = connect(port, "127.0.0.1");
  await new Promise((r) => socket.once("connect", r));
  socket.write("POST /cut HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n");
  socket.write(Buffer.alloc(300_000, 1));
  await new Promise((r) => setTimeout(r, 100));
  socket.destroy();
  await eventually(() => failure !== undefined, "the stream's error");
  assert.equal(finished, false);
  assert.equal(failure!.code, "ECONNRESET");
  assert.equal(await (await fetch("/ok")).text(), "ok");
});

test("a handler that answers without reading the body: the rest is dropped and the connection serves the next request", async (t) => {
  const { port } = await serve(t, (app) => {
    app.post("/ignore", { body: "stream", bodyLimit: 10_000_000 }, (_req, res) => res.send("ignored"));
    app.get("/next", (_req, res) => res.send("next"));
  });
  const body = Buffer.alloc(1_000_000, 0x62);
  const text = await raw(
    port,
    [`POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`, body, "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"],
    500,
  );
  assert.deepEqual(statuses(text), [200, 200]);
  assert.match(text, /ignored[\s\S]*next/);
});

test("gzip, deflate and br request bodies are inflated before parsing", async (t) => {
  const { port } = await serve(t, (app) => {
    app.post("/json", (req, res) => res.json(req.body));
  });
  const value = { hello: "world", list: Array.from({ length: 100 }, (_, i) => i) };
  const json = Buffer.from(JSON.stringify(value));
  for (const [encoding, bytes] of [
    ["gzip", gzipSync(json)],
    ["deflate", deflateSync(json)],
    ["br", brotliCompressSync(json)],
    ["GZIP", gzipSync(json)],
    ["identity", json],
  ] as const) {
    const res = await fetch(`http://127.0.0.1:${port}/json`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": encoding },
      body: bytes,
    });
    assert.equal(res.status, 200, encoding);
    assert.deepEqual(await res.json(), value);
  }
});

test("a zip bomb gets a 413: the limit applies to the inflated size", async (t) => {
  const { port } = await serve(
    t,
    (app) => {
      app.post("/json", { bodyLimit: 1024 * 1024 }, (req, res) => res.json(req.body));
    },
    { logErrors: false },
  );
  // 100 MB of zeros, gzipped to ~100 KB: well within the limit as sent.
  const bomb = gzipSync(Buffer.alloc(100 * 1024 * 1024));
  assert.ok(bomb.length < 200 * 1024);
  for (const encoding of ["gzip"]) {
    const res = await fetch(`http://127.0.0.1:${port}/json`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": encoding },
      body: bomb,
    });
    assert.equal(res.status, 413);
    assert.match(((await res.json()) as { message: string }).message, /inflates to more than the limit of 1048576 bytes/);
  }
  const brBomb = brotliCompressSync(Buffer.alloc(50 * 1024 * 1024));
  const res = await fetch(`http://127.0.0.1:${port}/json`, {
    method: "POST",
    headers: { "content-type": "application/json", "content-encoding": "br" },
    body: brBomb,
  });
  assert.equal(res.status, 413);
});

test("an unknown Content-Encoding is a 415, a body that isn't what its encoding says a 400", async (t) => {
  const { port } = await serve(t, (app) => {
    app.post("/json", (req, res) => res.json(req.body));
  });
  const json = Buffer.from('{"a":1}');
  const unknown = await fetch(`http://127.0.0.1:${port}/json`, {
    method: "POST",
    headers: { "content-type": "application/json", "content-encoding": "compress" },
    body: json,
  });
  assert.equal(unknown.status, 415);
  assert.match(((await unknown.json()) as { message: string }).message, /Unsupported Content-Encoding "compress"/);
  const broken = await fetch(`http://127.0.0.1:${port}/json`, {
    method: "POST",
    headers: { "content-type": "application/json", "content-encoding": "gzip" },
    body: json,
  });
  assert.equal(broken.status, 400);
  assert.match(((await broken.json()) as { message: string }).message, /not valid gzip/);
});
