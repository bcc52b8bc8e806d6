// Listening on a Unix domain socket, on every engine: Cog's `app.listen({ path })` and
// cog-http/express's `app.listen(path)` serve HTTP/1.1 there, the socket file exists while they
// listen and is removed when they close (as node:http does), and a path already taken is refused.
import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { Cog } from "../../src/index.js";
import express from "../../src/express/index.js";
import { closed, type Listening } from "../express-pair.js";
import { engine, nativeSkip } from "../helpers.js";

/** A directory of the test's own for its socket files, removed when the test ends. */
function socketDir(t: { after(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "cog-unix-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A request over the Unix domain socket at `socketPath`: its status, a header and its body. */
function ask(socketPath: string, path: string, method = "GET", body?: string): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method, agent: false, headers: body === undefined ? {} : { "content-type": "application/json" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode!, type: res.headers["content-type"], body: text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe(`listening on a Unix domain socket (${engine} engine)`, { skip: engine === "native" && nativeSkip }, () => {
  test("Cog's app.listen({ path }) serves HTTP/1.1 there, and close removes the file", async (t) => {
    const path = join(socketDir(t), "app.sock");
    const app = new Cog({ logErrors: false, engine });
    app.get("/hello/:name", (req, res) => res.json({ hello: req.params.name, address: req.socket.remoteAddress ?? null }));
    app.post("/echo", (req, res) => res.json(req.body));
    const address = await app.listen({ path });
    assert.deepEqual(address, { path });
    assert.ok(existsSync(path), "the socket file is there while the app listens");
    const answer = await ask(path, "/hello/unix");
    assert.equal(answer.status, 200);
    assert.equal(answer.type, "application/json; charset=utf-8");
    assert.deepEqual(JSON.parse(answer.body), { hello: "unix", address: null });
    assert.deepEqual(JSON.parse((await ask(path, "/echo", "POST", '{"a":[1,2]}')).body), { a: [1, 2] });
    assert.equal((await ask(path, "/missing")).status, 404);
    await app.close(100);
    assert.equal(existsSync(path), false, "closing removes the socket file");
  });

  test("cog-http/express's app.listen(path) serves there, address() is the path, and close removes the file", async (t) => {
    const path = join(socketDir(t), "express.sock");
    const app = express({ engine });
    app.get("/", (_req, res) => res.send("over a unix socket"));
    const server = app.listen(path);
    await once(server, "listening");
    assert.equal(server.address(), path);
    assert.ok(existsSync(path));
    const answer = await ask(path, "/");
    assert.deepEqual([answer.status, answer.body], [200, "over a unix socket"]);
    await closed(server as Listening);
    assert.equal(existsSync(path), false);
    // The options form, as node:http takes it, after the first is closed.
    const again = app.listen({ path });
    await once(again, "listening");
    assert.equal((await ask(path, "/")).body, "over a unix socket");
    await closed(again as Listening);
    assert.equal(existsSync(path), false);
  });

  test("a path where a file is already is refused, and the file is left alone", async (t) => {
    const path = join(socketDir(t), "taken");
    writeFileSync(path, "not a socket");
    const app = new Cog({ logErrors: false, engine });
    await assert.rejects(app.listen({ path }), (err: NodeJS.ErrnoException) => err.code === "EADDRINUSE" && /address already in use/i.test(err.message));
    assert.ok(existsSync(path));
    const server = express({ engine }).listen(path);
    const [err] = (await once(server, "error")) as [Error];
    assert.equal((err as NodeJS.ErrnoException).code, "EADDRINUSE");
    await assert.rejects(app.listen({ path, port: 80 } as never), /takes no port, host or workers/);
  });
});
