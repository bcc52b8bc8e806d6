// How a file's bytes reach the client, on every engine: a reader that stops holds the file and
// not its bytes while the server answers others, TLS gets the bytes intact, and every file
// opened for an answer is closed whatever the answer was. (What is sent, the validators,
// ranges and variants: static-files.test.ts.)
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { get as httpsGet } from "node:https";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { serveStatic } from "../../src/index.js";
import { makeCertificates, opensslSkip } from "../certificates.js";
import { engine, nativeSkip, raw, serve, statuses } from "../helpers.js";
import { eventually } from "../wire.js";

const root = mkdtempSync(join(tmpdir(), "cog-files-sent-"));
after(() => rmSync(root, { recursive: true, force: true }));
const huge = randomBytes(64 * 1024 * 1024);
const big = randomBytes(3 * 1024 * 1024 + 17);
writeFileSync(join(root, "huge.bin"), huge);
writeFileSync(join(root, "big.bin"), big);
writeFileSync(join(root, "small.txt"), "small and whole\n");
writeFileSync(join(root, "app.js"), "console.log('identity');");
writeFileSync(join(root, "app.js.br"), "BROTLI-BYTES");
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

const skip = engine === "native" && nativeSkip;

describe("a large file to a reader that stops", { skip, timeout: 60_000 }, () => {
  test("holds no more than the socket's worth while other clients are answered, then arrives whole", async (t) => {
    const { port, base } = await serve(t, (app) => {
      app.use("/static", serveStatic(root));
      app.get("/route", (_req, res) => res.send("answered"));
    });
    // The server's Buffers (and the test's own, taken before): a server that held the rest of the
    // file in memory for the reader would show it here.
    const buffers = process.memoryUsage().arrayBuffers;
    const chunks: Buffer[] = [];
    let received = 0;
    const socket = connect(port, "127.0.0.1");
    // The whole answer: the head, then the file. The head's length is found once, in the first
    // chunks (concatenating all of 64 MiB on every read would cost the test seconds under load).
    let headLength = -1;
    const complete = () => {
      if (headLength === -1) {
        const end = Buffer.concat(chunks).indexOf("\r\n\r\n");
        if (end !== -1) headLength = end + 4;
      }
      return headLength !== -1 && received - headLength >= huge.length;
    };
    const ended = new Promise<void>((resolve, reject) => {
      socket.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        // The reader stops after its first bytes.
        if (chunks.length === 1) socket.pause();
        if (complete()) resolve();
      });
      socket.on("error", reject);
      socket.on("close", () => resolve());
    });
    socket.write("GET /static/huge.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    await eventually(() => received > 0, "the answer's first bytes", 10_000);
    // The reader stopped after its first bytes: the rest of 64 MiB waits in the server.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stalled = received;
    assert.ok(stalled < huge.length / 2, `the reader that stopped got ${stalled} bytes`);
    // Meanwhile others are answered, files and routes.
    for (let i = 0; i < 5; i++) {
      assert.equal(await (await fetch(`${base}/static/small.txt`)).text(), "small and whole\n");
      assert.equal(await (await fetch(`${base}/route`)).text(), "answered");
    }
    assert.equal(sha(Buffer.from(await (await fetch(`${base}/static/big.bin`)).arrayBuffer())), sha(big));
    // What waits for the reader is the file, not a copy of its bytes in the server's memory.
    const grown = process.memoryUsage().arrayBuffers - buffers;
    assert.ok(grown < huge.length / 2, `Buffers grew by ${grown} bytes while the reader held a ${huge.length}-byte answer`);
    socket.resume();
    await ended;
    socket.destroy();
    const bytes = Buffer.concat(chunks);
    const end = bytes.indexOf("\r\n\r\n");
    assert.match(bytes.subarray(0, end).toString("latin1"), /^HTTP\/1\.1 200 /);
    assert.equal(sha(bytes.subarray(end + 4, end + 4 + huge.length)), sha(huge), "the whole file, intact");
  });
});

describe("files over TLS", { skip: skip || opensslSkip, timeout: 30_000 }, () => {
  const certs = opensslSkip === false ? makeCertificates() : null;

  /** GET over https with the test CA: status, headers and body. */
  function getTls(
    port: number,
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      httpsGet({ host: "127.0.0.1", port, path, servername: "localhost", ca: certs!.ca, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      }).on("error", reject);
    });
  }

  test("small and large files, a variant and a range arrive intact", async (t) => {
    const { port } = await serve(t, (app) => app.use("/static", serveStatic(root, { precompressed: true })), { tls: certs!.issue("localhost") });
    const small = await getTls(port, "/static/small.txt");
    assert.deepEqual([small.status, small.body.toString()], [200, "small and whole\n"]);
    const large = await getTls(port, "/static/big.bin");
    assert.equal(large.status, 200);
    assert.equal(Number(large.headers["content-length"]), big.length);
    assert.equal(sha(large.body), sha(big));
    const variant = await getTls(port, "/static/app.js", { "accept-encoding": "br" });
    assert.deepEqual([variant.headers["content-encoding"], variant.body.toString()], ["br", "BROTLI-BYTES"]);
    const range = await getTls(port, "/static/big.bin", { range: "bytes=1000000-2999999" });
    assert.equal(range.status, 206);
    assert.equal(sha(range.body), sha(big.subarray(1_000_000, 3_000_000)));
  });
});

describe("descriptors", { skip: skip || (process.platform !== "linux" ? "counts /proc/self/fd" : false), timeout: 60_000 }, () => {
  const descriptors = () => readdirSync("/proc/self/fd").length;

  test("every file opened for an answer is closed, whatever the answer", async (t) => {
    const { port, base } = await serve(t, (app) => app.use("/static", serveStatic(root, { precompressed: true, fallthrough: false })));
    // Warm: the file code loads, the first connections come and go.
    await (await fetch(`${base}/static/small.txt`)).text();
    const before = descriptors();
    const etag = (await fetch(`${base}/static/small.txt`, { method: "HEAD" })).headers.get("etag")!;
    for (let round = 0; round < 20; round++) {
      const answers = statuses(
        await raw(port, [
          "GET /static/small.txt HTTP/1.1\r\nHost: x\r\n\r\n",
          `GET /static/small.txt HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${etag}\r\n\r\n`,
          "HEAD /static/big.bin HTTP/1.1\r\nHost: x\r\n\r\n",
          "GET /static/big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=99999999-\r\n\r\n",
          "GET /static/app.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\n\r\n",
          "GET /static/missing.txt HTTP/1.1\r\nHost: x\r\n\r\n",
          "GET /static/big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-99\r\nConnection: close\r\n\r\n",
        ]),
      );
      assert.deepEqual(answers, [200, 304, 200, 416, 200, 404, 206]);
      // And a client that leaves in the middle of a large file.
      await new Promise<void>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        socket.once("data", () => {
          socket.destroy();
          resolve();
        });
        socket.write("GET /static/huge.bin HTTP/1.1\r\nHost: x\r\n\r\n");
      });
    }
    // Sockets close a little after their clients: the count comes back to where it was.
    await eventually(() => descriptors() <= before + 2, `the descriptors to come back to ${before} (${descriptors()} open)`, 10_000);
  });
});
