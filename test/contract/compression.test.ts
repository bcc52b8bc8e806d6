import { test } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import * as zlib from "node:zlib";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compress, serveStatic } from "../../src/index.js";
import { ZSTD } from "../../src/http/compress.js";
import { serve } from "../helpers.js";
import { within } from "../wire.js";

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as sent (not decoded). */
  raw: Buffer;
}

/** A request whose body is not decoded (fetch would inflate it). */
function get(port: number, path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, host: "127.0.0.1", path, headers, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, raw: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

function decode(answer: Answer): string {
  const encoding = answer.headers["content-encoding"];
  const raw = answer.raw;
  const bytes =
    encoding === "gzip"
      ? zlib.gunzipSync(raw)
      : encoding === "br"
        ? zlib.brotliDecompressSync(raw)
        : encoding === "deflate"
          ? zlib.inflateSync(raw)
          : encoding === "zstd"
            ? (zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer }).zstdDecompressSync(raw)
            : raw;
  return bytes.toString("utf8");
}

const big = { items: Array.from({ length: 500 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ["a", "b", "c"] })) };
const bigJson = JSON.stringify(big);

async function app(t: Parameters<typeof serve>[0]) {
  return serve(t, (app) => {
    app.use(compress());
    app.get("/json", (_req, res) => res.json(big));
    app.get("/small", (_req, res) => res.json({ ok: true }));
    app.get("/text", (_req, res) => res.send("x".repeat(5000)));
    app.get("/png", (_req, res) => res.type("image/png").send(Buffer.alloc(5000)));
    app.get("/no-transform", (_req, res) => res.set("cache-control", "no-transform").json(big));
    app.get("/encoded", (_req, res) => res.set("content-encoding", "gzip").type("json").send(zlib.gzipSync(bigJson)));
    app.get("/etag", (_req, res) => res.set("etag", '"abc"').json(big));
    app.get("/vary", (_req, res) => res.set("vary", "Origin").json(big));
    app.get("/empty", (_req, res) => res.status(204).send());
    app.get("/stream", (_req, res) => res.type("text").send(Readable.from(Array.from({ length: 200 }, (_, i) => `line ${i}\n`))));
    app.get("/write", (_req, res) => {
      res.type("text");
      let i = 0;
      const more = () => {
        while (i < 2000) if (!res.write(`chunk ${i++} ${"y".repeat(100)}\n`)) return void res.once("drain", more);
        res.end("end\n");
      };
      more();
    });
  });
}

test("negotiation: the client's q-values choose the coding, the server's order breaks ties", async (t) => {
  const { port } = await app(t);
  const cases: Array<[string, string | undefined]> = [
    ["gzip", "gzip"],
    ["deflate", "deflate"],
    ["br", "br"],
    ["gzip, br", "br"],
    ["gzip;q=1, br;q=0.5", "gzip"],
    ["br;q=0, gzip", "gzip"],
    ["*", "br"],
    ["*;q=0.5, gzip;q=0", "br"],
    ["identity", undefined],
    ["", undefined],
    ["unknown", undefined],
    // No coding acceptable, identity refused too: RFC 9110 12.5.3 recommends sending it uncoded.
    ["identity;q=0", undefined],
    ["GZIP", "gzip"],
  ];
  for (const [accept, expected] of cases) {
    const answer = await get(port, "/json", { "accept-encoding": accept });
    assert.equal(answer.status, 200, accept);
    assert.equal(answer.headers["content-encoding"], expected, `Accept-Encoding: ${accept}`);
    assert.equal(decode(answer), bigJson, accept);
    assert.equal(answer.headers.vary, "Accept-Encoding", accept);
    // A whole body goes out with its (compressed) length.
    assert.equal(Number(answer.headers["content-length"]), answer.raw.length, accept);
  }
  const none = await get(port, "/json");
  assert.equal(none.headers["content-encoding"], undefined);
});

test("zstd where Node has it", { skip: ZSTD ? false : `Node ${process.version} has no zstd in node:zlib` }, async (t) => {
  const { port } = await app(t);
  const answer = await get(port, "/json", { "accept-encoding": "zstd" });
  assert.equal(answer.headers["content-encoding"], "zstd");
  assert.equal(decode(answer), bigJson);
});

test("skipped: small bodies, incompressible types, no-transform, HEAD, 204, and bodies already encoded", async (t) => {
  const { port } = await app(t);
  const accept = { "accept-encoding": "gzip, br" };
  const small = await get(port, "/small", accept);
  assert.equal(small.headers["content-encoding"], undefined);
  assert.equal(small.headers.vary, "Accept-Encoding");
  assert.equal(small.raw.toString(), '{"ok":true}');
  const png = await get(port, "/png", accept);
  assert.equal(png.headers["content-encoding"], undefined);
  assert.equal(png.headers.vary, undefined);
  assert.equal(png.raw.length, 5000);
  const noTransform = await get(port, "/no-transform", accept);
  assert.equal(noTransform.headers["content-encoding"], undefined);
  assert.equal(noTransform.raw.toString(), bigJson);
  const head = await get(port, "/json", accept, "HEAD");
  assert.equal(head.headers["content-encoding"], undefined);
  assert.equal(head.headers.vary, "Accept-Encoding");
  assert.equal(head.raw.length, 0);
  const empty = await get(port, "/empty", accept);
  assert.equal(empty.status, 204);
  assert.equal(empty.headers["content-encoding"], undefined);
  const encoded = await get(port, "/encoded", accept);
  assert.equal(encoded.headers["content-encoding"], "gzip");
  assert.equal(zlib.gunzipSync(encoded.raw).toString(), bigJson);
  const text = await get(port, "/text", accept);
  assert.equal(text.headers["content-encoding"], "br");
  assert.equal(decode(text), "x".repeat(5000));
});

test("a strong ETag is weakened, Vary is added to the app's own", async (t) => {
  const { port } = await app(t);
  const tagged = await get(port, "/etag", { "accept-encoding": "gzip" });
  assert.equal(tagged.headers.etag, 'W/"abc"');
  const identity = await get(port, "/etag", { "accept-encoding": "identity" });
  assert.equal(identity.headers.etag, '"abc"');
  const varied = await get(port, "/vary", { "accept-encoding": "gzip" });
  assert.equal(varied.headers.vary, "Origin, Accept-Encoding");
});

test("streams: a piped stream and res.write with backpressure are compressed chunked", async (t) => {
  const { port } = await app(t);
  const piped = await get(port, "/stream", { "accept-encoding": "gzip" });
  assert.equal(piped.headers["content-encoding"], "gzip");
  assert.equal(piped.headers["content-length"], undefined);
  assert.equal(decode(piped), Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join(""));
  const written = await within(get(port, "/write", { "accept-encoding": "br" }), "the written stream", 10_000);
  assert.equal(written.headers["content-encoding"], "br");
  const expected = Array.from({ length: 2000 }, (_, i) => `chunk ${i} ${"y".repeat(100)}\n`).join("") + "end\n";
  assert.equal(decode(written), expected);
});

test("SSE through compression: each event is flushed and reaches the client at once", async (t) => {
  let send: ((n: number) => void) | undefined;
  const { port } = await serve(t, (app) => {
    app.get("/events", { compress: { encodings: ["gzip"] } }, (_req, res) => {
      const stream = res.sse({ heartbeat: 0 });
      send = (n) => void stream.send({ data: { n } });
    });
  });
  const res = await new Promise<import("node:http").IncomingMessage>((resolve) =>
    httpRequest({ port, host: "127.0.0.1", path: "/events", headers: { "accept-encoding": "gzip" } }, resolve).end(),
  );
  assert.equal(res.headers["content-encoding"], "gzip");
  const inflate = zlib.createGunzip();
  res.pipe(inflate);
  let text = "";
  inflate.on("data", (c: Buffer) => (text += c.toString()));
  for (let n = 1; n <= 3; n++) {
    while (send === undefined) await new Promise((r) => setTimeout(r, 5));
    send(n);
    const expected = Array.from({ length: n }, (_, i) => `data: {"n":${i + 1}}\n\n`).join("");
    await within(
      (async () => {
        while (text !== expected) await new Promise((r) => setTimeout(r, 5));
      })(),
      `event ${n}, decoded on its own`,
    );
  }
  res.destroy();
});

test("the route option compresses one route only; bad options are refused", async (t) => {
  const { port } = await serve(t, (app) => {
    app.get("/on", { compress: true }, (_req, res) => res.json(big));
    app.get("/off", (_req, res) => res.json(big));
  });
  assert.equal((await get(port, "/on", { "accept-encoding": "gzip" })).headers["content-encoding"], "gzip");
  assert.equal((await get(port, "/off", { "accept-encoding": "gzip" })).headers["content-encoding"], undefined);
  assert.throws(() => compress({ threshold: -1 }), /threshold must be a whole number/);
  assert.throws(() => compress({ encodings: ["lzma" as "gzip"] }), /unknown encoding "lzma"/);
  assert.throws(() => compress({ syncLimit: 1.5 }), /syncLimit must be a whole number/);
});

test("a whole body is compressed the same on the JavaScript thread (up to syncLimit) as on the thread pool", async (t) => {
  const text = Array.from({ length: 400 }, (_, i) => `row ${i}: ${"abc".repeat(i % 7)}\n`).join("");
  assert.ok(text.length > 4000 && text.length < 8192);
  const { port } = await serve(t, (app) => {
    app.get("/loop", compress(), (_req, res) => res.type("text").send(text));
    app.get("/pool", compress({ syncLimit: 0 }), (_req, res) => res.type("text").send(text));
    app.get("/large", compress({ syncLimit: 100 }), (_req, res) => res.type("text").send(text));
  });
  for (const encoding of ["gzip", "br", "deflate", ...(ZSTD ? ["zstd"] : [])]) {
    const [loop, pool, large] = await Promise.all(["/loop", "/pool", "/large"].map((path) => get(port, path, { "accept-encoding": encoding })));
    for (const answer of [loop!, pool!, large!]) {
      assert.equal(answer.headers["content-encoding"], encoding);
      assert.equal(Number(answer.headers["content-length"]), answer.raw.length);
      assert.equal(decode(answer), text, encoding);
    }
    // zlib and brotli give the same bytes for the same settings; Node's zstd frames a one-shot
    // call's output differently from its asynchronous one (both decode to the same text).
    if (encoding !== "zstd") assert.deepEqual(loop!.raw, pool!.raw, `${encoding}: the same bytes either way`);
  }
});

test("an error response after compress() is compressed or not as any other, and the server goes on", async (t) => {
  const { port } = await serve(t, (app) => {
    app.use(compress({ threshold: 10 }));
    app.get("/throw", () => {
      throw new Error("boom");
    });
  });
  const answer = await get(port, "/throw", { "accept-encoding": "gzip" });
  assert.equal(answer.status, 500);
  assert.match(decode(answer), /Internal Server Error/);
  const again = await get(port, "/missing", { "accept-encoding": "gzip" });
  assert.equal(again.status, 404);
  assert.match(decode(again), /not found/);
});

/** An app serving `files` (by name) at /static behind compress(); the files are removed when the test ends. */
async function compressedFiles(t: Parameters<typeof serve>[0], files: Record<string, string | Buffer>) {
  const dir = mkdtempSync(join(tmpdir(), "cog-compress-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return serve(t, (app) => {
    app.use(compress());
    app.use("/static", serveStatic(dir));
  });
}

test("static files under compress(): a large text file is compressed, a large image goes out as it is", async (t) => {
  const text = "body { color: red; }\n".repeat(20_000);
  const image = Buffer.alloc(600_000, 9);
  const { port } = await compressedFiles(t, { "site.css": text, "photo.png": image });
  const css = await get(port, "/static/site.css", { "accept-encoding": "gzip" });
  assert.equal(css.status, 200);
  assert.equal(css.headers["content-encoding"], "gzip");
  assert.equal(decode(css), text);
  const png = await get(port, "/static/photo.png", { "accept-encoding": "gzip" });
  assert.equal(png.status, 200);
  assert.equal(png.headers["content-encoding"], undefined);
  assert.equal(Number(png.headers["content-length"]), image.length);
  assert.ok(png.raw.equals(image));
});

test("static files under compress(): the 206 and 304 carry the 200's Vary, the 304 its ETag form", async (t) => {
  const { port } = await compressedFiles(t, { "site.css": "body { color: red; }\n".repeat(2000), "tiny.css": "b{}", "photo.png": Buffer.alloc(5000, 9) });
  const gzip = { "accept-encoding": "gzip" };
  // Compressed: the tag weakened on the 200, and the 304 that validates it says so too.
  const whole = await get(port, "/static/site.css", gzip);
  assert.equal(whole.status, 200);
  assert.equal(whole.headers["content-encoding"], "gzip");
  assert.equal(whole.headers.vary, "Accept-Encoding");
  assert.match(whole.headers.etag!, /^W\/"/);
  const part = await get(port, "/static/site.css", { ...gzip, range: "bytes=0-9" });
  assert.equal(part.status, 206);
  assert.equal(part.raw.toString(), "body { col");
  assert.equal(part.headers.vary, "Accept-Encoding");
  const same = await get(port, "/static/site.css", { ...gzip, "if-none-match": whole.headers.etag! });
  assert.equal(same.status, 304);
  assert.equal(same.headers.vary, "Accept-Encoding");
  assert.equal(same.headers.etag, whole.headers.etag);
  // Sent as it is (no acceptable coding, or too small to gain): the tag stays strong on both.
  for (const [path, headers] of [
    ["/static/site.css", { "accept-encoding": "identity" }],
    ["/static/tiny.css", gzip],
  ] as const) {
    const plain = await get(port, path, headers);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.match(plain.headers.etag!, /^"/);
    const validated = await get(port, path, { ...headers, "if-none-match": plain.headers.etag! });
    assert.equal(validated.status, 304);
    assert.equal(validated.headers.vary, "Accept-Encoding");
    assert.equal(validated.headers.etag, plain.headers.etag);
  }
  // A type compress() never compresses varies on nothing, whatever the status.
  const png = await get(port, "/static/photo.png", gzip);
  const pngSame = await get(port, "/static/photo.png", { ...gzip, "if-none-match": png.headers.etag! });
  assert.equal(pngSame.status, 304);
  assert.equal(pngSame.headers.vary, undefined);
  assert.equal(pngSame.headers.etag, png.headers.etag);
});
