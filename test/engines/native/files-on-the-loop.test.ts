// The native engine opens, checks and sends static files itself, on the loop's thread
// (OPEN_FILE, SEND_OPENED_FILE: native/addon/src/io/file.rs, engine/files.rs): no request of
// libuv's thread pool for them. Where fs.promises.open is not Node's own (an instrumentation,
// a test watching opens), files go through it instead.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHook } from "node:async_hooks";
import { mkdtempSync, promises as fsp, rmSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import type { FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cog, serveStatic } from "../../../src/index.js";
import { nativeSkip } from "../../helpers.js";

const root = mkdtempSync(join(tmpdir(), "cog-files-loop-"));
process.once("exit", () => rmSync(root, { recursive: true, force: true }));
writeFileSync(join(root, "small.txt"), "small");
writeFileSync(join(root, "big.bin"), Buffer.alloc(300 * 1024, 1));
writeFileSync(join(root, "app.js"), "identity");
writeFileSync(join(root, "app.js.br"), "BROTLI");

/**
 * The file-system requests (fs.promises' and fs' callbacks, file handles) made while `run` runs,
 * by type: all but tsx's own (which, on Node 26, expires its disk cache with an opendir whenever
 * it gets to it), told by the stack that made them.
 */
async function fsRequestsDuring(run: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const hook = createHook({
    init(_id, type) {
      if (!type.startsWith("FSREQ") && !type.startsWith("FILEHANDLE")) return;
      if (/[\\/]node_modules[\\/]tsx[\\/]/.test(new Error().stack ?? "")) return;
      seen.push(type);
    },
  }).enable();
  try {
    await run();
  } finally {
    hook.disable();
  }
  return seen;
}

async function site() {
  const app = new Cog({ engine: "native", logErrors: false });
  app.use("/static", serveStatic(root, { precompressed: true }));
  app.get("/file", (_req, res) => res.sendFile(join(root, "small.txt")));
  const { port } = await app.listen(0, "127.0.0.1");
  return { app, base: `http://127.0.0.1:${port}` };
}

async function fetchAll(base: string): Promise<void> {
  assert.equal(await (await fetch(`${base}/static/small.txt`)).text(), "small");
  assert.equal((await (await fetch(`${base}/static/big.bin`)).arrayBuffer()).byteLength, 300 * 1024);
  // node:http, which leaves the body as it came (fetch would decode it).
  const variant = await new Promise<{ encoding: string | undefined; body: string }>((resolve, reject) => {
    get(`${base}/static/app.js`, { headers: { "accept-encoding": "br" } }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ encoding: res.headers["content-encoding"], body }));
    }).on("error", reject);
  });
  assert.deepEqual(variant, { encoding: "br", body: "BROTLI" });
  assert.equal(await (await fetch(`${base}/file`)).text(), "small");
  assert.equal((await fetch(`${base}/static/missing.txt`)).status, 404);
}

test("static files and sendFile are opened and sent by the engine, with no thread-pool request", { skip: nativeSkip }, async () => {
  const { app, base } = await site();
  try {
    await fetchAll(base); // the file code loads
    assert.deepEqual(await fsRequestsDuring(() => fetchAll(base)), []);
  } finally {
    await app.close();
  }
});

test("with fs.promises.open replaced, files are opened through it (and read through libuv)", { skip: nativeSkip }, async () => {
  const { app, base } = await site();
  const open = fsp.open;
  const opened: string[] = [];
  fsp.open = ((path: string, ...rest: unknown[]) => {
    opened.push(String(path));
    return (open as (...args: unknown[]) => Promise<FileHandle>)(path, ...rest);
  }) as typeof fsp.open;
  try {
    const requests = await fsRequestsDuring(() => fetchAll(base));
    assert.ok(requests.length > 0, "fs.promises' requests were made");
    assert.ok(opened.includes(join(root, "small.txt")) && opened.includes(join(root, "app.js.br")), `opened: ${opened.join(", ")}`);
  } finally {
    fsp.open = open;
    await app.close();
  }
});
