// The Express middleware people put in front of an app, each in a realistic use on a Cog app,
// over real sockets, on whichever engine COG_ENGINE names: each one must work (or refuse at
// registration, naming the engine), never hang, crash or answer half. Every request has a
// deadline (wire.ts), so a hang fails its test instead of the suite.
import assert from "node:assert/strict";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import bodyParser from "body-parser";
import compression from "compression";
import cookieParser from "cookie-parser";
import cors from "cors";
import express from "express";
import rateLimit from "express-rate-limit";
import session from "express-session";
import helmet from "helmet";
import morgan from "morgan";
import multer from "multer";
import passport from "passport";
import { Strategy as LocalStrategy } from "passport-local";
import pino from "pino";
import { pinoHttp } from "pino-http";
import serveStatic from "serve-static";
import type { Handler } from "../../src/index.js";
import { serve } from "../helpers.js";
import { captureErrors, cookiesOf, eventually, fetchWithin, request } from "../wire.js";

/** Express middleware is typed with Express's req/res; Cog's carry what it uses. */
const mw = (fn: unknown) => fn as Handler;

/** A temp dir of static files, removed when the test ends. */
function staticDir(t: { after(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "cog-static-"));
  writeFileSync(join(dir, "hello.txt"), "hello file\n");
  writeFileSync(join(dir, "index.html"), "<h1>home</h1>");
  mkdirSync(join(dir, "docs"));
  writeFileSync(join(dir, "docs", "index.html"), "<h1>docs</h1>");
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A cookie signed as cookie-parser (cookie-signature) signs it: `s:value.signature`. */
function signCookie(value: string, secret: string): string {
  return `s:${value}.${createHmac("sha256", secret).update(value).digest("base64").replace(/=+$/, "")}`;
}

describe("Express middleware on a Cog app", () => {
  test("cors answers preflights and decorates responses, errors included", async (t) => {
    const { base } = await serve(t, (app) => {
      app.use(mw(cors({ origin: "https://app.example", credentials: true })));
      app.get("/data", (_req, res) => res.json({ ok: true }));
      app.get("/fail", () => {
        throw new Error("x");
      });
    });
    const preflight = await fetchWithin(base + "/data", {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "GET" },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "https://app.example");
    assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /GET/);
    const res = await fetchWithin(base + "/data", { headers: { origin: "https://app.example" } });
    assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example");
    assert.equal(res.headers.get("access-control-allow-credentials"), "true");
    assert.deepEqual(await res.json(), { ok: true });
    const failed = await fetchWithin(base + "/fail", { headers: { origin: "https://app.example" } });
    assert.equal(failed.status, 500);
    assert.equal(failed.headers.get("access-control-allow-origin"), "https://app.example");
  });

  test("helmet sets its security headers beside Cog's own", async (t) => {
    const { base } = await serve(t, (app) => {
      app.use(mw(helmet()));
      app.use((_req, res, next) => {
        res.set("X-Powered-By", "Cog");
        next();
      });
      app.get("/", (_req, res) => res.html("<p>hi</p>"));
    });
    const res = await fetchWithin(base + "/");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'self'/);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(res.headers.get("x-frame-options"), "SAMEORIGIN");
    assert.equal(res.headers.get("x-powered-by"), "Cog");
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(await res.text(), "<p>hi</p>");
  });

  test("morgan writes method, url, status and length once the answer is out", async (t) => {
    const lines: string[] = [];
    let linesWhenSent = -1;
    const { port } = await serve(t, (app) => {
      app.use(mw(morgan(":method :url :status :res[content-length]", { stream: { write: (line: string) => void lines.push(line) } })));
      app.get("/made", (_req, res) => {
        res.status(201).send("made");
        linesWhenSent = lines.length;
      });
    });
    const made = await request(port, "/made?x=1");
    assert.equal(made.status, 201);
    assert.equal(made.text, "made");
    await eventually(() => lines.length === 1, "morgan's line for /made");
    assert.equal(linesWhenSent, 0, "nothing is logged before the answer is out");
    const missing = await request(port, "/nowhere", { method: "POST" });
    assert.equal(missing.status, 404);
    await eventually(() => lines.length === 2, "morgan's line for /nowhere");
    assert.deepEqual(lines, ["GET /made?x=1 201 4\n", `POST /nowhere 404 ${missing.headers["content-length"]}\n`]);
  });

  test("compression gzips large bodies, sent whole or written in pieces, and leaves small ones alone", async (t) => {
    const big = Array.from({ length: 400 }, (_, i) => ({ id: i, name: `item number ${i}`, tags: ["a", "b", "c"] }));
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i}: ${"lorem ipsum ".repeat(4)}\n`);
    const { port } = await serve(t, (app) => {
      app.use(mw(compression()));
      app.get("/big", (_req, res) => res.json(big));
      app.get("/small", (_req, res) => res.json({ ok: true }));
      app.get("/text", (_req, res) => res.send("x".repeat(5000)));
      app.get("/written", (_req, res) => {
        res.setHeader("content-type", "text/plain; charset=utf-8");
        for (const line of lines) res.write(line);
        // compression's own method, for event streams: push what zlib holds to the client now.
        (res as unknown as { flush(): void }).flush();
        res.end("done\n");
      });
    });
    const gzip = { "accept-encoding": "gzip" };
    const bigRes = await request(port, "/big", { headers: gzip });
    assert.equal(bigRes.status, 200);
    assert.equal(bigRes.headers["content-encoding"], "gzip");
    assert.match(String(bigRes.headers.vary), /accept-encoding/i);
    assert.equal(bigRes.headers["content-type"], "application/json; charset=utf-8");
    assert.ok(bigRes.body.length < JSON.stringify(big).length / 4, `compressed to ${bigRes.body.length} bytes`);
    assert.deepEqual(JSON.parse(gunzipSync(bigRes.body).toString("utf8")), big);

    const text = await request(port, "/text", { headers: gzip });
    assert.equal(text.headers["content-encoding"], "gzip");
    assert.equal(gunzipSync(text.body).toString("utf8"), "x".repeat(5000));

    const written = await request(port, "/written", { headers: gzip });
    assert.equal(written.status, 200);
    assert.equal(written.headers["content-encoding"], "gzip");
    assert.equal(gunzipSync(written.body).toString("utf8"), lines.join("") + "done\n");

    const small = await request(port, "/small", { headers: gzip });
    assert.equal(small.headers["content-encoding"], undefined);
    assert.deepEqual(JSON.parse(small.text), { ok: true });

    const identity = await request(port, "/big");
    assert.equal(identity.headers["content-encoding"], undefined);
    assert.deepEqual(JSON.parse(identity.text), big);
  });

  test('serve-static serves files at / and under app.use("/static"), with ETag and 304, and falls through to routes and the 404', async (t) => {
    const dir = staticDir(t);
    const { port } = await serve(t, (app) => {
      app.use(mw(serveStatic(dir)));
      app.use("/static", mw(serveStatic(dir)));
      app.get("/api", (_req, res) => res.json({ api: true }));
      app.notFound((req, res) => res.status(404).send(`no ${req.method} ${req.url}`));
    });
    for (const path of ["/hello.txt", "/static/hello.txt"]) {
      const file = await request(port, path);
      assert.equal(file.status, 200, path);
      assert.equal(file.text, "hello file\n", path);
      assert.equal(file.headers["content-type"], "text/plain; charset=utf-8", path);
      assert.equal(file.headers["content-length"], "11", path);
      const etag = file.headers.etag;
      assert.ok(etag, `${path} has an ETag`);
      const again = await request(port, path, { headers: { "if-none-match": etag } });
      assert.equal(again.status, 304, path);
      assert.equal(again.body.length, 0, path);
      const head = await request(port, path, { method: "HEAD" });
      assert.equal(head.status, 200, path);
      assert.equal(head.headers["content-length"], "11", path);
      assert.equal(head.body.length, 0, path);
    }
    assert.equal((await request(port, "/")).text, "<h1>home</h1>");
    assert.equal((await request(port, "/static/")).text, "<h1>home</h1>");
    assert.equal((await request(port, "/static/docs/")).text, "<h1>docs</h1>");
    // A directory without its slash is redirected to it, by its full URL (req.originalUrl).
    const bare = await request(port, "/static/docs");
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.location, "/static/docs/");
    assert.deepEqual(JSON.parse((await request(port, "/api")).text), { api: true });
    // Files that aren't there fall through, with req.url as it came once the middleware is done.
    for (const path of ["/missing.txt", "/static/missing.txt"]) {
      const missing = await request(port, path);
      assert.equal(missing.status, 404, path);
      assert.equal(missing.text, `no GET ${path}`, path);
    }
  });

  test("express-session keeps a counter across requests with its cookie", async (t) => {
    const { port } = await serve(t, (app) => {
      app.use(mw(session({ secret: "keyboard cat", resave: false, saveUninitialized: false, name: "sid" })));
      app.get("/count", (req, res) => {
        const data = (req as unknown as { session: { views?: number } }).session;
        data.views = (data.views ?? 0) + 1;
        res.json({ views: data.views });
      });
    });
    const first = await request(port, "/count");
    assert.equal(first.status, 200);
    assert.deepEqual(JSON.parse(first.text), { views: 1 });
    const cookie = cookiesOf(first.headers);
    assert.match(cookie, /^sid=s%3A/);
    assert.match(String(first.headers["set-cookie"]), /HttpOnly/);
    const second = await request(port, "/count", { headers: { cookie } });
    assert.deepEqual(JSON.parse(second.text), { views: 2 });
    const third = await request(port, "/count", { headers: { cookie } });
    assert.deepEqual(JSON.parse(third.text), { views: 3 });
    assert.deepEqual(JSON.parse((await request(port, "/count")).text), { views: 1 }, "a client without the cookie has a session of its own");
  });

  test("passport-local logs in with a form POST and keeps the user in the session", async (t) => {
    const auth = new passport.Passport();
    auth.use(
      new LocalStrategy((username, password, done) =>
        username === "alice" && password === "wonderland" ? done(null, { id: 7, name: "alice" }) : done(null, false),
      ),
    );
    auth.serializeUser((user, done) => done(null, (user as { id: number }).id));
    auth.deserializeUser((id, done) => done(null, { id, name: "alice" }));
    const { port } = await serve(t, (app) => {
      app.use(mw(session({ secret: "passport secret", resave: false, saveUninitialized: false })));
      app.use(mw(auth.initialize()));
      app.use(mw(auth.session()));
      app.post("/login", mw(auth.authenticate("local", { successRedirect: "/me", failureRedirect: "/login?failed=1" })));
      app.get("/me", (req, res) => {
        const user = (req as unknown as { user?: unknown }).user;
        if (user === undefined) return res.status(401).json({ user: null });
        res.json({ user });
      });
    });
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const wrong = await request(port, "/login", { method: "POST", headers: form, body: "username=alice&password=nope" });
    assert.equal(wrong.status, 302);
    assert.equal(wrong.headers.location, "/login?failed=1");

    const login = await request(port, "/login", { method: "POST", headers: form, body: "username=alice&password=wonderland" });
    assert.equal(login.status, 302);
    assert.equal(login.headers.location, "/me");
    const cookie = cookiesOf(login.headers);
    assert.match(cookie, /connect\.sid=/);
    const me = await request(port, "/me", { headers: { cookie } });
    assert.equal(me.status, 200);
    assert.deepEqual(JSON.parse(me.text), { user: { id: 7, name: "alice" } });
    assert.equal((await request(port, "/me")).status, 401, "no session cookie, no user");
  });

  test("cookie-parser with a secret verifies signed cookies and rejects tampered ones", async (t) => {
    const secret = "cookie secret";
    const { port } = await serve(t, (app) => {
      app.use(mw(cookieParser(secret)));
      app.get("/whoami", (req, res) => {
        const r = req as unknown as { cookies: Record<string, unknown>; signedCookies: Record<string, unknown>; secret?: string };
        res.json({ signed: r.signedCookies, theme: r.cookies.theme ?? null, user: r.cookies.user ?? null, secret: r.secret === secret });
      });
    });
    const good = encodeURIComponent(signCookie("alice", secret));
    const ok = await request(port, "/whoami", { headers: { cookie: `user=${good}; theme=dark` } });
    assert.equal(ok.status, 200);
    assert.deepEqual(JSON.parse(ok.text), { signed: { user: "alice" }, theme: "dark", user: null, secret: true });
    const tampered = encodeURIComponent(signCookie("alice", secret).replace("alice", "admin"));
    const bad = await request(port, "/whoami", { headers: { cookie: `user=${tampered}; theme=dark` } });
    assert.equal(bad.status, 200);
    assert.deepEqual(JSON.parse(bad.text), { signed: { user: false }, theme: "dark", user: null, secret: true });
    const none = await request(port, "/whoami");
    assert.deepEqual(JSON.parse(none.text), { signed: {}, theme: null, user: null, secret: true });
  });

  test("express-rate-limit answers 429 after the limit, with its headers", async (t) => {
    // Its validations read Express settings through req.app; what they report is not under test here.
    const logged = captureErrors(t);
    const { port } = await serve(t, (app) => {
      app.use(mw(rateLimit({ windowMs: 60_000, limit: 2, standardHeaders: "draft-7", legacyHeaders: false })));
      app.get("/r", (_req, res) => res.send("ok"));
    });
    const first = await request(port, "/r");
    assert.equal(first.status, 200);
    assert.equal(first.text, "ok");
    assert.equal(first.headers["ratelimit-policy"], "2;w=60");
    assert.match(String(first.headers.ratelimit), /^limit=2, remaining=1, reset=\d+$/);
    assert.equal((await request(port, "/r")).status, 200);
    const limited = await request(port, "/r");
    assert.equal(limited.status, 429);
    assert.equal(limited.text, "Too many requests, please try again later.");
    assert.match(String(limited.headers.ratelimit), /^limit=2, remaining=0, reset=\d+$/);
    assert.match(String(limited.headers["retry-after"]), /^\d+$/);
    t.diagnostic(`express-rate-limit logged: ${logged.text().split("\n")[0] ?? ""}`);
  });

  test("multer parses a multipart upload: files and fields", async (t) => {
    const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: 512 * 1024 } });
    const binary = randomBytes(200 * 1024);
    const { base } = await serve(t, (app) => {
      app.post("/upload", mw(upload.fields([{ name: "note" }, { name: "blob" }])), (req, res) => {
        const r = req as unknown as {
          body: Record<string, string>;
          files: Record<string, Array<{ originalname: string; mimetype: string; size: number; buffer: Buffer }>>;
        };
        const note = r.files.note![0]!;
        const blob = r.files.blob![0]!;
        res.json({
          title: r.body.title,
          note: { name: note.originalname, type: note.mimetype, text: note.buffer.toString("utf8") },
          blob: { name: blob.originalname, size: blob.size, sha: createHash("sha256").update(blob.buffer).digest("hex") },
        });
      });
    });
    const form = new FormData();
    form.append("title", "hello multer");
    form.append("note", new Blob(["file content ✓"], { type: "text/plain" }), "note.txt");
    form.append("blob", new Blob([binary], { type: "application/octet-stream" }), "blob.bin");
    const res = await fetchWithin(base + "/upload", { method: "POST", body: form });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      title: "hello multer",
      note: { name: "note.txt", type: "text/plain", text: "file content ✓" },
      blob: { name: "blob.bin", size: binary.length, sha: createHash("sha256").update(binary).digest("hex") },
    });
  });

  test("body-parser and express.json/urlencoded leave the handler the parsed body", async (t) => {
    const { port } = await serve(t, (app) => {
      app.use(mw(express.json()));
      app.use(mw(express.urlencoded({ extended: false })));
      app.use(mw(bodyParser.text()));
      app.post("/echo", (req, res) => res.json({ body: req.body ?? null }));
      app.get("/echo", (req, res) => res.json({ body: req.body ?? null }));
    });
    const json = await request(port, "/echo", { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":[1,2],"b":"é"}' });
    assert.equal(json.status, 200);
    assert.deepEqual(JSON.parse(json.text), { body: { a: [1, 2], b: "é" } });
    const form = await request(port, "/echo", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "x=1&y=two" });
    assert.deepEqual(JSON.parse(form.text), { body: { x: "1", y: "two" } });
    const text = await request(port, "/echo", { method: "POST", headers: { "content-type": "text/plain" }, body: "plain words" });
    assert.deepEqual(JSON.parse(text.text), { body: "plain words" });
    const none = await request(port, "/echo");
    assert.deepEqual(JSON.parse(none.text), { body: null });
    const broken = await request(port, "/echo", { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":' });
    assert.equal(broken.status, 400);
  });

  test("pino-http logs one JSON line per request with its status, and req.log carries the request id", async (t) => {
    const lines: Array<Record<string, any>> = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString("utf8").split("\n")) if (line !== "") lines.push(JSON.parse(line));
        callback();
      },
    });
    const { port } = await serve(t, (app) => {
      app.use(mw(pinoHttp({ logger: pino(destination) })));
      app.get("/p/:id", (req, res) => {
        (req as unknown as { log: pino.Logger }).log.info({ item: req.params.id }, "handling");
        res.status(202).json({ ok: true });
      });
    });
    assert.equal((await request(port, "/p/42")).status, 202);
    assert.equal((await request(port, "/gone")).status, 404);
    const completed = () => lines.filter((line) => line.msg === "request completed");
    await eventually(() => completed().length === 2, "pino-http's two 'request completed' lines");
    const [ok, missing] = completed();
    assert.equal(ok!.res.statusCode, 202);
    assert.equal(ok!.req.method, "GET");
    assert.equal(ok!.req.url, "/p/42");
    assert.equal(typeof ok!.responseTime, "number");
    assert.equal(missing!.res.statusCode, 404);
    assert.equal(missing!.req.url, "/gone");
    const handling = lines.find((line) => line.msg === "handling");
    assert.equal(handling?.item, "42");
    assert.equal(handling?.req?.id ?? handling?.reqId, ok!.req.id, "the handler's log line carries the request's id");
    assert.notEqual(ok!.req.id, missing!.req.id);
  });
});
