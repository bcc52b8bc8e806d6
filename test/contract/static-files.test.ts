import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, promises as fsp, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import compression from "compression";
import { serveStatic, type Cog, type Handler, type StaticOptions } from "../../src/index.js";
import { raw, serve } from "../helpers.js";

// A site under `public/`, and beside it a secret no request may ever reach.
const dir = mkdtempSync(join(tmpdir(), "cog-static-"));
const root = join(dir, "public");
const SECRET = "TOP-SECRET-BESIDE-THE-ROOT";
const big = randomBytes(5 * 1024 * 1024 + 123);
const medium = randomBytes(200 * 1024);
const bigText = Buffer.from(randomBytes(1024 * 1024).toString("hex"));
const MTIME = new Date("2024-05-01T12:00:00Z");

before(() => {
  mkdirSync(join(root, "docs", "empty"), { recursive: true });
  mkdirSync(join(root, ".git"), { recursive: true });
  mkdirSync(join(root, "%2e%2e"), { recursive: true });
  writeFileSync(join(dir, "secret.txt"), SECRET);
  writeFileSync(join(dir, "public-secret.txt"), SECRET); // "public" + "-secret.txt": a prefix check without the separator would pass it
  writeFileSync(join(root, "index.html"), "<h1>home</h1>");
  writeFileSync(join(root, "hello.txt"), "hello, world\n");
  writeFileSync(join(root, "site.css"), "body{}");
  writeFileSync(join(root, "pixel.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  writeFileSync(join(root, "data.unknownext"), "?");
  writeFileSync(join(root, "empty.txt"), "");
  writeFileSync(join(root, "docs", "index.html"), "<h1>docs</h1>");
  writeFileSync(join(root, "docs", "page.html"), "<p>page</p>");
  writeFileSync(join(root, ".env"), "PASSWORD=1");
  writeFileSync(join(root, ".git", "config"), "[core]");
  writeFileSync(join(root, "%2e%2e", "literal.txt"), "a literal %2e%2e directory");
  writeFileSync(join(root, "app.js"), "console.log('identity');");
  writeFileSync(join(root, "app.js.br"), "BROTLI-BYTES");
  writeFileSync(join(root, "app.js.gz"), "GZIP-BYTES");
  writeFileSync(join(root, "app.js.zst"), "ZSTD-BYTES");
  writeFileSync(join(root, "style.css"), "a{}");
  writeFileSync(join(root, "style.css.gz"), "GZIP-CSS");
  writeFileSync(join(root, "big.bin"), big);
  writeFileSync(join(root, "medium.bin"), medium);
  writeFileSync(join(root, "big.txt"), bigText);
  writeFileSync(join(root, "digits.txt"), "0123456789");
  utimesSync(join(root, "digits.txt"), MTIME, MTIME);
  execFileSync("mkfifo", [join(root, "pipe")]);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Splits raw HTTP/1.1 bytes into responses (bodies framed by Content-Length; `head` when they have none). */
function parseResponses(bytes: Buffer, heads: boolean[] = []): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  while (at < bytes.length) {
    const end = bytes.indexOf("\r\n\r\n", at);
    if (end === -1) break;
    const [statusLine, ...lines] = bytes.subarray(at, end).toString("latin1").split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const status = Number(statusLine!.split(" ")[1]);
    const bodiless = heads[out.length] === true || status === 304 || status === 204;
    const length = bodiless ? 0 : Number(headers["content-length"] ?? 0);
    out.push({ status, headers, body: bytes.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}

/** One raw request (the path exactly as written, which fetch would normalise), answered on a closed connection. */
async function get(port: number, path: string, headers: Record<string, string> = {}, method = "GET"): Promise<RawResponse> {
  const lines = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  // The server closes after its answer; the long quiet time only covers a slow first answer (the
  // file code loads on first use, and the machine may be busy).
  const text = await raw(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\n${lines}Connection: close\r\n\r\n`, 5000);
  const [response] = parseResponses(Buffer.from(text, "latin1"), [method === "HEAD"]);
  assert.ok(response, `no response to ${method} ${path}`);
  return response;
}

function site(t: Parameters<typeof serve>[0], options: StaticOptions = {}, extra?: (app: Cog) => void) {
  return serve(t, (app) => {
    app.use("/static", serveStatic(root, options));
    app.get("/static/fallback", (_req, res) => res.send("a route behind the static files"));
    app.post("/static/hello.txt", (_req, res) => res.send("posted"));
    app.get("/route", (_req, res) => res.send("route"));
    extra?.(app);
  });
}

/** Every path the file system is asked to open during the test `t`. */
function recordOpens(t: TestContext): string[] {
  const opened: string[] = [];
  const open = fsp.open;
  fsp.open = ((path: string, ...rest: unknown[]) => {
    opened.push(String(path));
    return (open as (...args: unknown[]) => Promise<FileHandle>)(path, ...rest);
  }) as typeof fsp.open;
  t.after(() => void (fsp.open = open));
  return opened;
}

describe("serveStatic", () => {
  test("serves files with their type, length, validators and caching headers", async (t) => {
    const { port } = await site(t);
    const res = await get(port, "/static/hello.txt");
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), "hello, world\n");
    assert.equal(res.headers["content-type"], "text/plain; charset=utf-8");
    assert.equal(res.headers["content-length"], "13");
    assert.match(res.headers["etag"]!, /^"[0-9a-f]+-[0-9a-f]+"$/, "a strong ETag");
    assert.equal(res.headers["last-modified"], new Date(Math.floor(statSync(join(root, "hello.txt")).mtimeMs / 1000) * 1000).toUTCString());
    assert.equal(res.headers["cache-control"], "public, max-age=0");
    assert.equal(res.headers["accept-ranges"], "bytes");
    assert.equal((await get(port, "/static/site.css")).headers["content-type"], "text/css; charset=utf-8");
    assert.equal((await get(port, "/static/pixel.png")).headers["content-type"], "image/png");
    assert.equal((await get(port, "/static/data.unknownext")).headers["content-type"], "application/octet-stream");
    const empty = await get(port, "/static/empty.txt");
    assert.deepEqual([empty.status, empty.headers["content-length"], empty.body.length], [200, "0", 0]);
  });

  test("maxAge and immutable make Cache-Control; headers adds to every file", async (t) => {
    const { port } = await site(t, { maxAge: 31536000, immutable: true, headers: { "x-served-by": "cog" } });
    const res = await get(port, "/static/hello.txt");
    assert.equal(res.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.equal(res.headers["x-served-by"], "cog");
  });

  test("index.html for a directory, and a directory without its slash is redirected, query kept", async (t) => {
    const { port } = await site(t);
    assert.equal((await get(port, "/static/")).body.toString(), "<h1>home</h1>");
    assert.equal((await get(port, "/static/docs/")).body.toString(), "<h1>docs</h1>");
    const redirect = await get(port, "/static/docs?x=1");
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers["location"], "/static/docs/?x=1");
    assert.equal((await get(port, "/static/docs/empty/")).status, 404, "a directory without an index falls through");
  });

  test("redirect: false and index: false fall through instead", async (t) => {
    const { port } = await site(t, { redirect: false, index: false });
    assert.equal((await get(port, "/static/docs")).status, 404);
    assert.equal((await get(port, "/static/docs/")).status, 404);
    assert.equal((await get(port, "/static/docs/page.html")).status, 200);
  });

  test("a missing file falls through to the routes behind and then to the app's 404", async (t) => {
    const { port } = await site(t);
    const behind = await get(port, "/static/fallback");
    assert.deepEqual([behind.status, behind.body.toString()], [200, "a route behind the static files"]);
    assert.equal((await get(port, "/static/nothing-here.txt")).status, 404);
    assert.equal((await get(port, "/static/hello.txt/below-a-file")).status, 404);
  });

  test("fallthrough: false answers a missing file with 404 and other methods with 405", async (t) => {
    const { port } = await site(t, { fallthrough: false });
    assert.equal((await get(port, "/static/fallback")).status, 404);
    const post = await get(port, "/static/hello.txt", {}, "POST");
    assert.equal(post.status, 405);
    assert.equal(post.headers["allow"], "GET, HEAD");
  });

  test("methods other than GET and HEAD fall through to the app's routes", async (t) => {
    const { port } = await site(t);
    const post = await get(port, "/static/hello.txt", {}, "POST");
    assert.deepEqual([post.status, post.body.toString()], [200, "posted"]);
    assert.equal((await get(port, "/static/site.css", {}, "DELETE")).status, 404);
  });

  test("HEAD answers the headers of GET with no body, small files and large", async (t) => {
    const { port } = await site(t);
    for (const [path, length] of [
      ["/static/hello.txt", 13],
      ["/static/big.bin", big.length],
    ] as const) {
      const text = await raw(port, `HEAD ${path} HTTP/1.1\r\nHost: x\r\n\r\nGET /route HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 5000);
      const [head, next] = parseResponses(Buffer.from(text, "latin1"), [true]);
      assert.equal(head!.status, 200);
      assert.equal(head!.headers["content-length"], String(length), path);
      assert.ok(head!.headers["etag"]);
      assert.equal(next?.body.toString(), "route", "no body came between the HEAD answer and the next one");
    }
  });

  test("dotfiles are ignored by default, refused with deny, served with allow", async (t) => {
    const ignored = await site(t);
    assert.equal((await get(ignored.port, "/static/.env")).status, 404);
    assert.equal((await get(ignored.port, "/static/.git/config")).status, 404);
    const denied = await site(t, { dotfiles: "deny" });
    assert.equal((await get(denied.port, "/static/.env")).status, 403);
    assert.equal((await get(denied.port, "/static/.git/config")).status, 403);
    const allowed = await site(t, { dotfiles: "allow" });
    assert.equal((await get(allowed.port, "/static/.env")).body.toString(), "PASSWORD=1");
    assert.equal((await get(allowed.port, "/static/.git/config")).body.toString(), "[core]");
  });

  test("no spelling of a path outside the root is served, and nothing outside it is even opened", async (t) => {
    const opened = recordOpens(t);
    const { port } = await site(t, { dotfiles: "allow" });
    const spellings = [
      "/static/../secret.txt",
      "/static/%2e%2e/secret.txt",
      "/static/%2E%2E/secret.txt",
      "/static/.%2e/secret.txt",
      "/static/%2e./secret.txt",
      "/static/..%2fsecret.txt",
      "/static/%2e%2e%2fsecret.txt",
      "/static/docs/..%2f..%2fsecret.txt",
      "/static/docs/%2e%2e/%2e%2e/secret.txt",
      "/static/..%5csecret.txt",
      "/static/%5c..%5csecret.txt",
      "/static/..\\secret.txt",
      "/static/%00../secret.txt",
      "/static/hello.txt%00.png",
      "/static/%c0%ae%c0%ae/secret.txt",
      "/static/%c0%ae%c0%ae%c0%afsecret.txt",
      "/static/%e0%80%ae%e0%80%ae/secret.txt",
      "/static/%252e%252e/secret.txt",
      "/static/%252e%252e%252fsecret.txt",
      "/static/%2fsecret.txt",
      "/static/%2f..%2f..%2fsecret.txt",
      "/static//../secret.txt",
      "/static/-secret.txt",
      "/static/..",
      "/static/%2e%2e",
      "/static/%",
      "/static/%zz",
    ];
    for (const path of spellings) {
      const res = await get(port, path);
      assert.ok([400, 403, 404].includes(res.status), `${path}: ${res.status}`);
      assert.ok(!res.body.toString("latin1").includes(SECRET), `${path} served the secret`);
    }
    // Decoded once: "%252e%252e" names the literal directory "%2e%2e" inside the root.
    assert.equal((await get(port, "/static/%252e%252e/literal.txt")).body.toString(), "a literal %2e%2e directory");
    assert.ok(opened.length > 0, "the opens were watched");
    for (const path of opened) assert.ok(path.startsWith(root + "/") || path === root, `opened outside the root: ${path}`);
    // Still serving.
    assert.equal((await get(port, "/static/hello.txt")).status, 200);
  });

  test("a FIFO under the root is not a file: it falls through without waiting for a writer", async (t) => {
    const { port } = await site(t);
    assert.equal((await get(port, "/static/pipe")).status, 404);
  });

  test("mounted at a prefix, and at the root beside routes", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/api/ping", (_req, res) => res.send("pong"));
      app.use(serveStatic(root));
      app.use("/assets/v1", serveStatic(join(root, "docs")));
    });
    assert.equal((await get(port, "/hello.txt")).body.toString(), "hello, world\n");
    assert.equal((await get(port, "/")).body.toString(), "<h1>home</h1>");
    assert.equal((await get(port, "/api/ping")).body.toString(), "pong");
    assert.equal((await get(port, "/assets/v1/page.html")).body.toString(), "<p>page</p>");
    assert.ok([400, 403].includes((await get(port, "/assets/v1/../hello.txt")).status));
    const redirect = await get(port, "/docs");
    assert.equal(redirect.headers["location"], "/docs/");
    // A leading "//" is collapsed: the redirect can't point at another site.
    const doubled = await get(port, "//docs");
    assert.ok(doubled.status === 301 && doubled.headers["location"] === "/docs/", `${doubled.status} ${doubled.headers["location"]}`);
  });
});

describe("the in-memory cache (an option)", () => {
  test("off by default: every request reads the disk, so a changed file is served changed", async (t) => {
    writeFileSync(join(root, "changing.txt"), "first");
    const { port } = await site(t);
    assert.equal((await get(port, "/static/changing.txt")).body.toString(), "first");
    writeFileSync(join(root, "changing.txt"), "second!");
    assert.equal((await get(port, "/static/changing.txt")).body.toString(), "second!");
  });

  test("with cache, small files and their variants are opened once; ranges, HEAD and 304s are answered from memory", async (t) => {
    writeFileSync(join(root, "kept.txt"), "kept in memory");
    const opened = recordOpens(t);
    const { port, base } = await site(t, { cache: { maxFileBytes: 1024 }, precompressed: true });
    const first = await get(port, "/static/kept.txt");
    writeFileSync(join(root, "kept.txt"), "changed on disk");
    const again = await get(port, "/static/kept.txt");
    assert.deepEqual([again.body.toString(), again.headers["etag"]], ["kept in memory", first.headers["etag"]]);
    assert.equal((await get(port, "/static/kept.txt", { range: "bytes=5-6" })).body.toString(), "in");
    assert.equal((await get(port, "/static/kept.txt", { "if-none-match": first.headers["etag"]! })).status, 304);
    const head = await get(port, "/static/kept.txt", {}, "HEAD");
    assert.deepEqual([head.status, head.headers["content-length"], head.body.length], [200, "14", 0]);
    for (let i = 0; i < 3; i++) assert.equal((await get(port, "/static/app.js", { "accept-encoding": "gzip" })).body.toString(), "GZIP-BYTES");
    for (let i = 0; i < 3; i++) assert.equal((await get(port, "/static/style.css", { "accept-encoding": "br, gzip" })).body.toString(), "GZIP-CSS");
    const count = (name: string) => opened.filter((path) => path === join(root, name)).length;
    assert.deepEqual([count("kept.txt"), count("app.js.gz"), count("style.css.br"), count("style.css.gz")], [1, 1, 1, 1]);
    // Larger than maxFileBytes: read from disk every time, intact.
    for (let i = 0; i < 2; i++) assert.equal(sha(Buffer.from(await (await fetch(`${base}/static/medium.bin`)).arrayBuffer())), sha(medium));
    assert.equal(count("medium.bin"), 2);
  });
});

describe("conditional requests", () => {
  test("If-None-Match and If-Modified-Since answer 304; If-None-Match takes precedence", async (t) => {
    const { port } = await site(t);
    const first = await get(port, "/static/digits.txt");
    const etag = first.headers["etag"]!;
    const modified = first.headers["last-modified"]!;
    assert.equal(modified, MTIME.toUTCString());

    const same = await get(port, "/static/digits.txt", { "if-none-match": etag });
    assert.equal(same.status, 304);
    assert.equal(same.headers["etag"], etag);
    assert.equal(same.headers["content-type"], undefined);
    assert.equal(same.body.length, 0);
    assert.equal((await get(port, "/static/digits.txt", { "if-none-match": `"other", W/${etag}` })).status, 304, "weak comparison, in a list");
    assert.equal((await get(port, "/static/digits.txt", { "if-none-match": "*" })).status, 304);
    assert.equal((await get(port, "/static/digits.txt", { "if-modified-since": modified })).status, 304);
    assert.equal((await get(port, "/static/digits.txt", { "if-modified-since": new Date(MTIME.getTime() - 1000).toUTCString() })).status, 200);
    assert.equal((await get(port, "/static/digits.txt", { "if-modified-since": "not a date" })).status, 200);
    // RFC 9110 13.2.2: a present If-None-Match decides, If-Modified-Since is then ignored.
    assert.equal((await get(port, "/static/digits.txt", { "if-none-match": '"other"', "if-modified-since": new Date().toUTCString() })).status, 200);
    assert.equal((await get(port, "/static/digits.txt", { "if-none-match": etag, "if-modified-since": new Date(0).toUTCString() })).status, 304);
  });

  test("If-Match and If-Unmodified-Since answer 412 when they fail", async (t) => {
    const { port } = await site(t);
    const etag = (await get(port, "/static/digits.txt")).headers["etag"]!;
    assert.equal((await get(port, "/static/digits.txt", { "if-match": etag })).status, 200);
    assert.equal((await get(port, "/static/digits.txt", { "if-match": "*" })).status, 200);
    assert.equal((await get(port, "/static/digits.txt", { "if-match": '"stale"' })).status, 412);
    assert.equal((await get(port, "/static/digits.txt", { "if-match": `W/${etag}` })).status, 412, "If-Match compares strongly");
    assert.equal((await get(port, "/static/digits.txt", { "if-unmodified-since": new Date(0).toUTCString() })).status, 412);
    assert.equal((await get(port, "/static/digits.txt", { "if-unmodified-since": MTIME.toUTCString() })).status, 200);
  });
});

describe("ranges", () => {
  const cases: [string, number, string, string | undefined][] = [
    ["bytes=0-0", 206, "0", "bytes 0-0/10"],
    ["bytes=2-4", 206, "234", "bytes 2-4/10"],
    ["bytes=-3", 206, "789", "bytes 7-9/10"],
    ["bytes=-30", 206, "0123456789", "bytes 0-9/10"],
    ["bytes=7-", 206, "789", "bytes 7-9/10"],
    ["bytes=5-1000", 206, "56789", "bytes 5-9/10"],
    ["bytes=9-9", 206, "9", "bytes 9-9/10"],
    ["bytes=0-2,1-4", 206, "01234", "bytes 0-4/10"],
    ["bytes=0-1,5-6", 200, "0123456789", undefined],
    ["bytes=abc", 200, "0123456789", undefined],
    ["bytes=", 200, "0123456789", undefined],
    ["bytes=5-2", 200, "0123456789", undefined],
    ["bytes=0-1,5-2", 200, "0123456789", undefined],
    ["items=0-1", 200, "0123456789", undefined],
    ["0-1", 200, "0123456789", undefined],
  ];
  for (const [range, status, body, contentRange] of cases) {
    test(`Range: ${range} → ${status}`, async (t) => {
      const { port } = await site(t);
      const res = await get(port, "/static/digits.txt", { range });
      assert.equal(res.status, status);
      assert.equal(res.body.toString(), body);
      assert.equal(res.headers["content-length"], String(body.length));
      assert.equal(res.headers["content-range"], contentRange);
    });
  }

  test("an unsatisfiable range is a 416 with Content-Range bytes */size", async (t) => {
    const { port } = await site(t);
    for (const range of ["bytes=10-", "bytes=100-200", "bytes=10-20,30-40", "bytes=-0"]) {
      const res = await get(port, "/static/digits.txt", { range });
      assert.equal(res.status, 416, range);
      assert.equal(res.headers["content-range"], "bytes */10", range);
    }
  });

  test("If-Range with the current ETag or date gets the range; a stale one, a weak one or a bad date the whole file", async (t) => {
    const { port } = await site(t);
    const etag = (await get(port, "/static/digits.txt")).headers["etag"]!;
    const check = async (ifRange: string, status: number) =>
      assert.equal((await get(port, "/static/digits.txt", { range: "bytes=0-1", "if-range": ifRange })).status, status, ifRange);
    await check(etag, 206);
    await check(MTIME.toUTCString(), 206);
    await check('"stale"', 200);
    await check(`W/${etag}`, 200);
    await check(new Date(MTIME.getTime() + 1000).toUTCString(), 200);
    await check("yesterday", 200);
  });

  test("ranges of a large file arrive intact", async (t) => {
    const { base } = await site(t);
    const res = await fetch(`${base}/static/big.bin`, { headers: { range: "bytes=1000000-3999999" } });
    assert.equal(res.status, 206);
    assert.equal(res.headers.get("content-range"), `bytes 1000000-3999999/${big.length}`);
    assert.equal(sha(Buffer.from(await res.arrayBuffer())), sha(big.subarray(1000000, 4000000)));
    const tail = await fetch(`${base}/static/big.bin`, { headers: { range: "bytes=-100000" } });
    assert.equal(sha(Buffer.from(await tail.arrayBuffer())), sha(big.subarray(big.length - 100000)));
  });
});

describe("precompressed variants", () => {
  const negotiated: [string | undefined, string, string | undefined][] = [
    ["br;q=1, gzip;q=0.8", "BROTLI-BYTES", "br"],
    ["gzip", "GZIP-BYTES", "gzip"],
    ["gzip, deflate", "GZIP-BYTES", "gzip"],
    ["zstd", "ZSTD-BYTES", "zstd"],
    ["br;q=0, gzip", "GZIP-BYTES", "gzip"],
    ["gzip;q=0.5, zstd;q=0.9", "ZSTD-BYTES", "zstd"],
    ["*", "BROTLI-BYTES", "br"],
    ["*;q=0.5, br;q=0", "ZSTD-BYTES", "zstd"],
    ["GZIP", "GZIP-BYTES", "gzip"],
    ["identity", "console.log('identity');", undefined],
    ["deflate", "console.log('identity');", undefined],
    ["br;q=0, gzip;q=0, zstd;q=0", "console.log('identity');", undefined],
    ["", "console.log('identity');", undefined],
    [undefined, "console.log('identity');", undefined],
  ];
  for (const [accept, body, encoding] of negotiated) {
    test(`Accept-Encoding: ${JSON.stringify(accept)} → ${encoding ?? "the file itself"}`, async (t) => {
      const { port } = await site(t, { precompressed: true });
      const res = await get(port, "/static/app.js", accept === undefined ? {} : { "accept-encoding": accept });
      assert.equal(res.status, 200);
      assert.equal(res.body.toString(), body);
      assert.equal(res.headers["content-encoding"], encoding);
      assert.equal(res.headers["content-type"], "text/javascript; charset=utf-8", "the type of the file, not of its variant");
      assert.equal(res.headers["vary"], "Accept-Encoding");
    });
  }

  test("a missing variant falls back to the next one the client accepts, then to the file; identity;q=0 still gets the file", async (t) => {
    const { port } = await site(t, { precompressed: true });
    const css = await get(port, "/static/style.css", { "accept-encoding": "br, gzip;q=0.5" });
    assert.deepEqual([css.body.toString(), css.headers["content-encoding"]], ["GZIP-CSS", "gzip"]);
    const none = await get(port, "/static/hello.txt", { "accept-encoding": "br, identity;q=0" });
    assert.deepEqual([none.status, none.body.toString(), none.headers["content-encoding"]], [200, "hello, world\n", undefined]);
  });

  test("each variant has its own ETag, and 304s and ranges apply to the variant", async (t) => {
    const { port } = await site(t, { precompressed: true });
    const br = await get(port, "/static/app.js", { "accept-encoding": "br" });
    const gz = await get(port, "/static/app.js", { "accept-encoding": "gzip" });
    const plain = await get(port, "/static/app.js");
    assert.equal(new Set([br.headers["etag"], gz.headers["etag"], plain.headers["etag"]]).size, 3);
    assert.equal((await get(port, "/static/app.js", { "accept-encoding": "br", "if-none-match": br.headers["etag"]! })).status, 304);
    assert.equal((await get(port, "/static/app.js", { "accept-encoding": "gzip", "if-none-match": br.headers["etag"]! })).status, 200);
    const part = await get(port, "/static/app.js", { "accept-encoding": "br", range: "bytes=0-5" });
    assert.deepEqual([part.status, part.body.toString(), part.headers["content-encoding"]], [206, "BROTLI", "br"]);
  });

  // The variant is opened first and the file itself only checked: what is served must be what
  // opening the file first serves, on the engine's own path, through fs.promises and from the cache.
  for (const [way, options, watch] of [
    ["", {}, false],
    [" (files opened through fs.promises)", {}, true],
    [" (with the cache)", { cache: true }, false],
  ] as const) {
    test(`a variant is served only for a regular file: a directory beside one is redirected, one whose file is gone is not found${way}`, async (t) => {
      writeFileSync(join(root, "gone.js.br"), "STALE-BROTLI");
      writeFileSync(join(root, "docs.br"), "NOT-THE-DIRECTORY");
      writeFileSync(join(root, "docs", "index.html.br"), "BROTLI-INDEX");
      t.after(() => ["gone.js.br", "docs.br", join("docs", "index.html.br")].forEach((name) => rmSync(join(root, name))));
      if (watch) recordOpens(t);
      const { port } = await site(t, { precompressed: true, ...options }, (app) => {
        app.use("/varied", (_req, res, next) => {
          res.set("vary", "Origin");
          next();
        });
        app.use("/varied", serveStatic(root, { precompressed: true, ...options }));
      });
      for (let i = 0; i < 2; i++) {
        assert.equal((await get(port, "/static/gone.js", { "accept-encoding": "br" })).status, 404);
        const directory = await get(port, "/static/docs", { "accept-encoding": "br" });
        assert.deepEqual([directory.status, directory.headers["location"], directory.headers["vary"]], [301, "/static/docs/", undefined]);
        const index = await get(port, "/static/docs/", { "accept-encoding": "br" });
        assert.deepEqual(
          [index.status, index.body.toString(), index.headers["content-encoding"], index.headers["content-type"]],
          [200, "BROTLI-INDEX", "br", "text/html; charset=utf-8"],
        );
        const varied = await get(port, "/varied/app.js", { "accept-encoding": "br" });
        assert.deepEqual([varied.body.toString(), varied.headers["vary"]], ["BROTLI-BYTES", "Origin, Accept-Encoding"]);
      }
    });
  }

  test("a list limits the encodings looked for; without the option no variant is served and nothing varies", async (t) => {
    const listed = await site(t, { precompressed: ["gzip"] });
    const res = await get(listed.port, "/static/app.js", { "accept-encoding": "br, gzip;q=0.1" });
    assert.equal(res.headers["content-encoding"], "gzip");
    const off = await site(t);
    const plain = await get(off.port, "/static/app.js", { "accept-encoding": "br" });
    assert.deepEqual([plain.body.toString(), plain.headers["content-encoding"], plain.headers["vary"]], ["console.log('identity');", undefined, undefined]);
  });
});

describe("res.sendFile, res.download, res.attachment, res.type", () => {
  function app(t: Parameters<typeof serve>[0]) {
    const errors: unknown[] = [];
    return serve(t, (app) => {
      app.onError((err, _req, res) => {
        errors.push(err);
        const status = (err as { status?: number }).status ?? 500;
        res.status(status).send(`handled ${status}`);
      });
      app.get("/absolute", (_req, res) => res.sendFile(join(root, "hello.txt")));
      app.get("/rooted/:name", (req, res) => res.sendFile(req.params.name!, { root, maxAge: 60 }));
      app.get("/missing", (_req, res) => res.sendFile(join(root, "nope.txt")));
      app.get("/directory", (_req, res) => res.sendFile(join(root, "docs")));
      app.get("/relative", (_req, res) => res.sendFile("hello.txt"));
      app.get("/climb", (_req, res) => res.sendFile("../secret.txt", { root }));
      app.get("/dot", (_req, res) => res.sendFile(".env", { root }));
      app.get("/big", (_req, res) => res.sendFile(join(root, "big.bin")));
      app.get("/download", (_req, res) => res.download(join(root, "hello.txt"), "report 2024.txt"));
      app.get("/download-unicode", (_req, res) => res.download(join(root, "pixel.png"), "café ☕.png"));
      app.get("/download-plain", (_req, res) => res.download(join(root, "site.css")));
      app.get("/attachment", (_req, res) => res.attachment().send("x"));
      app.get("/attachment-named", (_req, res) => res.attachment("dir/data.json").send("{}"));
      app.get("/download-typed", (_req, res) => res.type("application/vnd.ms-excel").download(join(root, "hello.txt"), "report.txt"));
      app.get("/attachment-typed", (_req, res) => res.set("content-type", "text/csv; charset=utf-8").attachment("export.json").send("id\n1\n"));
      app.get("/type/:t", (req, res) => res.type(decodeURIComponent(req.params.t!)).send("x"));
    }).then((served) => ({ ...served, errors }));
  }

  test("sendFile sends a file by absolute path or under a root, with the validators", async (t) => {
    const { port } = await app(t);
    const abs = await get(port, "/absolute");
    assert.deepEqual([abs.status, abs.body.toString(), abs.headers["content-type"]], [200, "hello, world\n", "text/plain; charset=utf-8"]);
    assert.ok(abs.headers["etag"]);
    const rooted = await get(port, "/rooted/site.css");
    assert.deepEqual([rooted.body.toString(), rooted.headers["cache-control"]], ["body{}", "public, max-age=60"]);
    const etag = rooted.headers["etag"]!;
    assert.equal((await get(port, "/rooted/site.css", { "if-none-match": etag })).status, 304);
    assert.equal((await get(port, "/rooted/digits.txt", { range: "bytes=-2" })).body.toString(), "89");
  });

  test("a missing file or a directory is a 404 through the app's error handler; a bad path a clear error", async (t) => {
    const { port, errors } = await app(t);
    assert.equal((await get(port, "/missing")).body.toString(), "handled 404");
    assert.match(String(errors.at(-1)), /no file at .*nope\.txt/);
    assert.equal((await get(port, "/directory")).body.toString(), "handled 404");
    assert.equal((await get(port, "/relative")).body.toString(), "handled 500");
    assert.match(String(errors.at(-1)), /absolute path or the root option/);
    const climb = await get(port, "/climb");
    assert.equal(climb.body.toString(), "handled 403");
    assert.equal((await get(port, "/dot")).body.toString(), "handled 404");
    assert.equal((await get(port, "/absolute")).status, 200, "still serving");
  });

  test("a large file arrives intact (checksum), on its own and after a range", async (t) => {
    const { base } = await app(t);
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${base}/big`);
      assert.equal(res.headers.get("content-length"), String(big.length));
      assert.equal(sha(Buffer.from(await res.arrayBuffer())), sha(big));
    }
  });

  test("download and attachment set Content-Disposition and the type from the name", async (t) => {
    const { port } = await app(t);
    const named = await get(port, "/download");
    assert.equal(named.headers["content-disposition"], 'attachment; filename="report 2024.txt"');
    assert.equal(named.headers["content-type"], "text/plain; charset=utf-8");
    assert.equal(named.body.toString(), "hello, world\n");
    const unicode = await get(port, "/download-unicode");
    assert.equal(unicode.headers["content-disposition"], `attachment; filename="caf? ?.png"; filename*=UTF-8''caf%C3%A9%20%E2%98%95.png`);
    assert.equal(unicode.headers["content-type"], "image/png");
    assert.equal((await get(port, "/download-plain")).headers["content-disposition"], "attachment; filename=site.css");
    assert.equal((await get(port, "/attachment")).headers["content-disposition"], "attachment");
    const json = await get(port, "/attachment-named");
    assert.deepEqual(
      [json.headers["content-disposition"], json.headers["content-type"]],
      ["attachment; filename=data.json", "application/json; charset=utf-8"],
    );
  });

  test("download and attachment keep a Content-Type the app set first", async (t) => {
    const { port } = await app(t);
    const download = await get(port, "/download-typed");
    assert.deepEqual(
      [download.status, download.headers["content-type"], download.headers["content-disposition"], download.body.toString()],
      [200, "application/vnd.ms-excel", "attachment; filename=report.txt", "hello, world\n"],
    );
    const attachment = await get(port, "/attachment-typed");
    assert.deepEqual(
      [attachment.status, attachment.headers["content-type"], attachment.headers["content-disposition"], attachment.body.toString()],
      [200, "text/csv; charset=utf-8", "attachment; filename=export.json", "id\n1\n"],
    );
  });

  test("res.type takes a media type, a short name, an extension or a file name", async (t) => {
    const { port } = await app(t);
    const type = async (t: string) => (await get(port, `/type/${encodeURIComponent(t)}`)).headers["content-type"];
    assert.equal(await type("json"), "application/json; charset=utf-8");
    assert.equal(await type("html"), "text/html; charset=utf-8");
    assert.equal(await type(".css"), "text/css; charset=utf-8");
    assert.equal(await type("png"), "image/png");
    assert.equal(await type("photo.jpeg"), "image/jpeg");
    assert.equal(await type("application/vnd.cog+json"), "application/vnd.cog+json");
    assert.equal(await type("no-such-extension-here"), "application/octet-stream");
  });
});

describe("files among other responses", () => {
  test("pipelined requests for files and routes are answered in order, bodies intact", async (t) => {
    const { port } = await site(t);
    const paths = ["/static/big.bin", "/route", "/static/hello.txt", "/static/medium.bin", "/static/nothing", "/static/digits.txt", "/route"];
    const requests = paths.map(
      (path, i) =>
        `GET ${path} HTTP/1.1\r\nHost: x\r\n${i === paths.length - 1 ? "Connection: close\r\n" : ""}${path === "/static/digits.txt" ? "Range: bytes=3-4\r\n" : ""}\r\n`,
    );
    const bytes = await rawBytes(port, requests.join(""));
    const responses = parseResponses(bytes);
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200, 200, 200, 404, 206, 200],
    );
    assert.equal(sha(responses[0]!.body), sha(big));
    assert.equal(responses[1]!.body.toString(), "route");
    assert.equal(responses[2]!.body.toString(), "hello, world\n");
    assert.equal(sha(responses[3]!.body), sha(medium));
    assert.equal(responses[5]!.body.toString(), "34");
    assert.equal(responses[6]!.body.toString(), "route");
  });

  test("many large files at once on separate connections all arrive intact", async (t) => {
    const { base } = await site(t);
    const bodies = await Promise.all(Array.from({ length: 6 }, () => fetch(`${base}/static/big.bin`).then(async (r) => Buffer.from(await r.arrayBuffer()))));
    for (const body of bodies) assert.equal(sha(body), sha(big));
  });
});

test("a middleware that wraps res.write (compression) sees every byte of a large file", async (t) => {
  const { base } = await serve(t, (app) => {
    app.use(compression({ threshold: 0 }) as unknown as Handler);
    app.use("/static", serveStatic(root));
  });
  // fetch inflates the gzip body: what arrives must be the file.
  const res = await fetch(`${base}/static/big.txt`, { headers: { "accept-encoding": "gzip" } });
  assert.equal(res.headers.get("content-encoding"), "gzip");
  assert.equal(sha(Buffer.from(await res.arrayBuffer())), sha(bigText));
});

test("app.inject answers files as the socket does, large ones included", async (t) => {
  const { app } = await site(t);
  const whole = await app.inject("/static/big.bin");
  assert.equal(whole.statusCode, 200);
  assert.equal(sha(whole.rawPayload), sha(big));
  const part = await app.inject({ url: "/static/digits.txt", headers: { range: "bytes=-4" } });
  assert.deepEqual([part.statusCode, part.payload], [206, "6789"]);
});

describe("files that fail", () => {
  test("a file that can't be read (EACCES) is a 403; one whose first read fails an error response; the server goes on", async (t) => {
    // Root reads any file whatever its permission bits, so the refusals are made at the fs.promises calls.
    const open = fsp.open;
    fsp.open = (async (path: string, ...rest: unknown[]) => {
      if (String(path).endsWith("locked.txt")) throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: "EACCES" });
      const handle = await (open as (...args: unknown[]) => Promise<FileHandle>)(path, ...rest);
      if (String(path).endsWith("medium.bin"))
        handle.read = (() => Promise.reject(Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" }))) as FileHandle["read"];
      return handle;
    }) as typeof fsp.open;
    t.after(() => void (fsp.open = open));
    writeFileSync(join(root, "locked.txt"), "locked");
    const { port } = await site(t, { maxAge: 3600 });
    assert.equal((await get(port, "/static/locked.txt")).status, 403);
    const broken = await get(port, "/static/medium.bin");
    assert.equal(broken.status, 500);
    assert.equal(broken.headers["cache-control"], undefined, "an error response is not made cacheable by the file's max-age");
    assert.ok(!broken.body.includes(medium.subarray(0, 64)), "none of the file went out");
    assert.equal((await get(port, "/static/hello.txt")).status, 200);
  });

  test("a file truncated while it is being sent cuts the connection after the bytes that exist; the server goes on", async (t) => {
    const path = join(root, "shrinking.bin");
    const size = 48 * 1024 * 1024;
    writeFileSync(path, Buffer.alloc(size, 7));
    const { port } = await site(t);
    const received = await new Promise<{ bytes: number; length: number }>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      let bytes = 0;
      let length = -1;
      let head = "";
      let truncated = false;
      socket.on("data", (chunk: Buffer) => {
        if (length === -1) {
          head += chunk.toString("latin1");
          const end = head.indexOf("\r\n\r\n");
          if (end === -1) return;
          length = Number(/content-length: (\d+)/i.exec(head)![1]);
          bytes = head.length - end - 4;
        } else bytes += chunk.length;
        if (!truncated) {
          // The head and the first bytes are out: stop reading, so the rest waits in the server, then cut the file short.
          truncated = true;
          socket.pause();
          setTimeout(() => {
            writeFileSync(path, Buffer.alloc(1024, 7));
            socket.resume();
          }, 100);
        }
      });
      socket.on("close", () => resolve({ bytes, length }));
      socket.on("error", reject);
      socket.write("GET /static/shrinking.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    });
    assert.equal(received.length, size);
    assert.ok(received.bytes < size, `the connection closed short (${received.bytes} of ${size})`);
    assert.equal((await get(port, "/static/hello.txt")).status, 200);
  });

  test("a client that leaves in the middle of a large file doesn't disturb the server", async (t) => {
    const { port, base } = await site(t);
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        socket.once("data", () => {
          socket.destroy();
          resolve();
        });
        socket.write("GET /static/big.bin HTTP/1.1\r\nHost: x\r\n\r\n");
      });
    }
    const res = await fetch(`${base}/static/big.bin`);
    assert.equal(sha(Buffer.from(await res.arrayBuffer())), sha(big));
  });
});

test("an app that serves no file loads none of the file code", () => {
  // In a process of its own: this one has loaded it already.
  const script = `
    import { createRequire } from "node:module";
    const { Cog } = await import(${JSON.stringify(new URL("../../src/index.ts", import.meta.url).href)});
    const app = new Cog({ logErrors: false });
    app.get("/", (_req, res) => res.type("text").send("hi"));
    const answer = await app.inject("/");
    const loaded = Object.keys(createRequire(process.cwd() + "/").cache).filter((path) => /node_modules\\/(mime-types|negotiator|range-parser|content-disposition)\\//.test(path));
    console.log(JSON.stringify({ status: answer.statusCode, loaded }));
  `;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 60_000 });
  assert.deepEqual(JSON.parse(out), { status: 200, loaded: [] });
});

/** Every byte the server wrote until it closed (raw's latin1 text, as bytes). */
async function rawBytes(port: number, request: string): Promise<Buffer> {
  return Buffer.from(await raw(port, request, 2000), "latin1");
}
