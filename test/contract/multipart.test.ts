import { test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import multer from "multer";
import type { Handler } from "../../src/index.js";
import { serve, raw, statuses } from "../helpers.js";

/** A multipart/form-data body, spelled out by hand (so that malformed ones can be too). */
function form(
  parts: Array<{ name: string; value?: string; file?: { filename: string; type: string; bytes: Buffer } }>,
  boundary = "cogboundary",
): { body: Buffer; type: string } {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    if (part.file === undefined) {
      pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    } else {
      pieces.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.file.filename}"\r\nContent-Type: ${part.file.type}\r\n\r\n`,
        ),
        part.file.bytes,
        Buffer.from("\r\n"),
      );
    }
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(pieces), type: `multipart/form-data; boundary=${boundary}` };
}

function post(base: string, path: string, body: Buffer, type: string): Promise<Response> {
  return fetch(base + path, { method: "POST", headers: { "content-type": type }, body });
}

const upload: Handler = async (req, res) => {
  const files: Array<{ field: string; filename: string; mimeType: string; bytes: number; sha1: string }> = [];
  const fields = await req.multipart({
    limits: { fileSize: 3 * 1024 * 1024, files: 2, fields: 3, fieldSize: 100 },
    async onFile(file) {
      const hash = createHash("sha1");
      let bytes = 0;
      for await (const chunk of file.stream) {
        hash.update(chunk as Buffer);
        bytes += (chunk as Buffer).length;
      }
      files.push({ field: file.field, filename: file.filename, mimeType: file.mimeType, bytes, sha1: hash.digest("hex") });
    },
  });
  res.json({ fields, files });
};

test("req.multipart(): fields as an object (repeats as lists), files as streams, a 2 MB file never buffered by Cog", async (t) => {
  const { base } = await serve(t, (app) => app.post("/upload", { bodyLimit: 10 * 1024 * 1024 }, upload));
  const bytes = Buffer.alloc(2 * 1024 * 1024, 7);
  const { body, type } = form([
    { name: "title", value: "hello" },
    { name: "tag", value: "a" },
    { name: "tag", value: "b" },
    { name: "doc", file: { filename: "big.bin", type: "application/octet-stream", bytes } },
  ]);
  const res = await post(base, "/upload", body, type);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    fields: { title: "hello", tag: ["a", "b"] },
    files: [
      { field: "doc", filename: "big.bin", mimeType: "application/octet-stream", bytes: bytes.length, sha1: createHash("sha1").update(bytes).digest("hex") },
    ],
  });
});

test("multipart limits answer 413: file size, files, fields, field size, and the route's bodyLimit", async (t) => {
  const { base } = await serve(t, (app) => {
    app.post("/upload", { bodyLimit: 10 * 1024 * 1024 }, upload);
    app.post("/tight", { bodyLimit: 1000 }, upload);
  });
  const file = (n: number, size = 10) => ({ name: `f${n}`, file: { filename: `${n}.txt`, type: "text/plain", bytes: Buffer.alloc(size, 1) } });
  const cases: Array<[string, ReturnType<typeof form>, RegExp]> = [
    ["a file too large", form([file(1, 4 * 1024 * 1024)]), /larger than 3145728 bytes; raise limits.fileSize/],
    ["too many files", form([file(1), file(2), file(3)]), /more than 2 files/],
    ["too many fields", form(["a", "b", "c", "d"].map((name) => ({ name, value: "v" }))), /more than 3 fields/],
    ["a field too large", form([{ name: "big", value: "x".repeat(200) }]), /Form field "big" is larger than 100 bytes/],
  ];
  for (const [what, { body, type }, message] of cases) {
    const res = await post(base, "/upload", body, type);
    assert.equal(res.status, 413, what);
    assert.match(((await res.json()) as { message: string }).message, message, what);
  }
  const { body, type } = form([file(1, 5000)]);
  assert.equal((await post(base, "/tight", body, type)).status, 413);
});

test("malformed multipart is a 400, a body that isn't multipart a 415, a file where none is taken a 400", async (t) => {
  const { base, port } = await serve(t, (app) => {
    app.post("/upload", upload);
    app.post("/fields", async (req, res) => res.json(await req.multipart()));
  });
  const noBoundary = await post(base, "/upload", Buffer.from("whatever"), "multipart/form-data; charset=utf-8");
  assert.equal(noBoundary.status, 400);
  assert.match(((await noBoundary.json()) as { message: string }).message, /Malformed multipart\/form-data body: .*Boundary not found/);
  const { body, type } = form([{ name: "a", value: "1" }]);
  const cut = await post(base, "/upload", body.subarray(0, body.length - 20), type);
  assert.equal(cut.status, 400);
  assert.match(((await cut.json()) as { message: string }).message, /Malformed multipart/);
  const json = await post(base, "/fields", Buffer.from("{}"), "application/json");
  assert.equal(json.status, 415);
  const gzipped = await raw(port, [
    `POST /fields HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Encoding: gzip\r\nContent-Length: ${gzipSync(body).length}\r\nConnection: close\r\n\r\n`,
    gzipSync(body),
  ]);
  assert.deepEqual(statuses(gzipped), [415]);
  assert.match(gzipped, /Content-Encoding \\"gzip\\" can't be read: send it uncompressed/);
  const withFile = form([{ name: "doc", file: { filename: "x.txt", type: "text/plain", bytes: Buffer.from("hi") } }]);
  const refused = await post(base, "/fields", withFile.body, withFile.type);
  assert.equal(refused.status, 400);
  assert.match(((await refused.json()) as { message: string }).message, /Unexpected file in form field "doc"/);
  // And the server goes on: a good form on a new connection.
  const text = await raw(port, [
    `POST /fields HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    body,
  ]);
  assert.deepEqual(statuses(text), [200]);
  assert.match(text, /\{"a":"1"\}/);
});

test("multer still works on a multipart route (it reads the raw stream)", async (t) => {
  const parse = multer({ storage: multer.memoryStorage(), limits: { fileSize: 4 * 1024 * 1024 } });
  const { base } = await serve(t, (app) => {
    app.post("/multer", { bodyLimit: 8 * 1024 * 1024 }, parse.single("doc") as unknown as Handler, (req, res) => {
      const file = (req as unknown as { file: { originalname: string; size: number } }).file;
      res.json({ title: req.body.title, name: file.originalname, size: file.size });
    });
  });
  const bytes = Buffer.alloc(3 * 1024 * 1024, 3);
  const { body, type } = form([
    { name: "title", value: "t" },
    { name: "doc", file: { filename: "m.bin", type: "application/octet-stream", bytes } },
  ]);
  const res = await post(base, "/multer", body, type);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { title: "t", name: "m.bin", size: bytes.length });
});
