import assert from "node:assert/strict";
import { request as httpsRequest } from "node:https";
import { connect as http2Connect, constants as h2, type ClientHttp2Session } from "node:http2";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { on, once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { connect as netConnect } from "node:net";
import { connect as tlsConnect, type PeerCertificate } from "node:tls";
import WebSocketClient from "ws";
import { describe, test } from "node:test";
import { Cog, type CogOptions, type RequestLogLine } from "../../src/index.js";
import { makeCertificates, opensslSkip, type Certificates } from "../certificates.js";
import { engine, raw, serve, statuses } from "../helpers.js";
import { PREFACE, frame, literal, readFrames, type Frame } from "../h2-frames.js";

const certs: Certificates | null = opensslSkip === false ? makeCertificates() : null;

/** The app every protocol serves: the same handlers, Cog's helpers. */
function define(app: Cog): void {
  app.get("/hello", (req, res) => res.json({ hello: req.query.name ?? "world", protocol: req.protocol, secure: req.secure, version: req.httpVersion }));
  app.post("/echo", (req, res) => res.status(201).set("x-seen", String(req.body?.n)).json({ got: req.body }));
  app.get("/boom", () => {
    throw new Error("kaput");
  });
  app.get("/stream", (_req, res) => {
    res.write("a");
    setTimeout(() => res.end("b"), 5);
  });
  app.get("/big", (_req, res) => {
    // 2 MiB in 64 KiB pieces, written as the connection drains: larger than every buffer on the way.
    let left = 32;
    const piece = Buffer.alloc(64 * 1024, "x");
    const more = () => {
      while (left > 0) {
        left--;
        if (left === 0) return void res.end(piece);
        if (!res.write(piece)) return void res.once("drain", more);
      }
    };
    more();
  });
  app.get("/file", (_req, res) => res.sendFile(FILE));
  // A whole answer far larger than the socket takes at once: the native engine sends the app's Buffer where it lies.
  app.get("/buffer", (_req, res) => res.type("application/octet-stream").send(FILE_BYTES));
}

const FILE = join(mkdtempSync(join(tmpdir(), "cog-tls-file-")), "data.bin");
const FILE_BYTES = Buffer.alloc(3 * 1024 * 1024 + 17, "0123456789abcdef");
writeFileSync(FILE, FILE_BYTES);
process.once("exit", () => rmSync(dirname(FILE), { recursive: true, force: true }));

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function https1(
  port: number,
  path: string,
  ca: string,
  init: { method?: string; body?: string } = {},
): Promise<Answer & { alpn: string | false | null; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: init.method ?? "GET",
        ca,
        servername: "localhost",
        agent: false,
        headers: init.body === undefined ? {} : { "content-type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const bytes = Buffer.concat(chunks);
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: bytes.toString("utf8"),
            bytes,
            alpn: (res.socket as unknown as { alpnProtocol: string | false | null }).alpnProtocol,
          });
        });
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}

function h2request(
  session: ClientHttp2Session,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path, ":method": init.method ?? "GET", ...(init.headers ?? {}) });
    let status = 0;
    let headers: Record<string, string | string[] | undefined> = {};
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      headers = h as typeof headers;
    });
    let body = "";
    stream.setEncoding("utf8").on("data", (c: string) => (body += c));
    stream.on("end", () => resolve({ status, headers, body }));
    stream.on("error", reject);
    stream.end(init.body);
  });
}

async function servedWith(t: { after(fn: () => unknown): void }, options: CogOptions) {
  return serve(t, define, options);
}

describe("TLS", () => {
  test("bad tls options are refused with what to use instead; every engine serves http2", { skip: opensslSkip }, () => {
    const tls = certs!.issue("localhost");
    assert.doesNotThrow(() => new Cog({ engine: "native", tls }));
    assert.doesNotThrow(() => new Cog({ engine: "native", http2: "h2c" }));
    assert.doesNotThrow(() => new Cog({ engine: "native", http2: true, tls }));
    assert.throws(() => new Cog({ tls: { ...tls, minVersion: "TLSv1.1" } }), /TLS 1\.0 and 1\.1 are deprecated/);
    assert.throws(() => new Cog({ tls: { cert: tls.cert } }), /needs a certificate and its private key/);
    assert.throws(() => new Cog({ http2: true }), /http2: true serves HTTP\/2 over TLS and needs the tls option/);
  });

  test("req.protocol and req.secure: http on a cleartext connection, X-Forwarded-Proto only behind a trusted proxy", async (t) => {
    const plain = await serve(t, define);
    const direct = (await (await plain.fetch("/hello", { headers: { "x-forwarded-proto": "https" } })).json()) as { protocol: string; secure: boolean };
    assert.deepEqual([direct.protocol, direct.secure], ["http", false]);
    const proxied = await serve(t, define, { trustProxy: true });
    const behind = (await (await proxied.fetch("/hello", { headers: { "x-forwarded-proto": "https, http" } })).json()) as { protocol: string; secure: boolean };
    assert.deepEqual([behind.protocol, behind.secure], ["https", true]);
  });

  test("HTTPS: the handshake against the app's CA, req.protocol https, errors and streams as over HTTP", { skip: opensslSkip }, async (t) => {
    const { port } = await servedWith(t, { tls: certs!.issue("localhost") });
    const hello = await https1(port, "/hello?name=tls", certs!.ca);
    assert.equal(hello.status, 200);
    assert.deepEqual(JSON.parse(hello.body), { hello: "tls", protocol: "https", secure: true, version: "1.1" });
    assert.equal((await https1(port, "/boom", certs!.ca)).status, 500);
    assert.equal((await https1(port, "/stream", certs!.ca)).body, "ab");
    const echoed = await https1(port, "/echo", certs!.ca, { method: "POST", body: '{"n":3}' });
    assert.deepEqual([echoed.status, echoed.headers["x-seen"], echoed.body], [201, "3", '{"got":{"n":3}}']);
  });

  test("TLS 1.0 and 1.1 are refused; 1.2 and 1.3 are served", { skip: opensslSkip }, async (t) => {
    const { port } = await servedWith(t, { tls: certs!.issue("localhost") });
    const handshake = (minVersion: "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3", maxVersion: typeof minVersion) =>
      new Promise<string>((resolve, reject) => {
        // SECLEVEL=0 lets this client offer the old versions; the server must refuse them.
        const socket = tlsConnect(
          { host: "127.0.0.1", port, ca: certs!.ca, servername: "localhost", minVersion, maxVersion, ciphers: "DEFAULT@SECLEVEL=0" },
          () => {
            resolve(socket.getProtocol()!);
            socket.end();
          },
        );
        socket.on("error", reject);
      });
    await assert.rejects(handshake("TLSv1", "TLSv1"), /handshake failure|protocol version|wrong version|unsupported protocol|no protocols available/i);
    await assert.rejects(handshake("TLSv1.1", "TLSv1.1"), /handshake failure|protocol version|wrong version|unsupported protocol|no protocols available/i);
    assert.equal(await handshake("TLSv1.2", "TLSv1.2"), "TLSv1.2");
    assert.equal(await handshake("TLSv1.3", "TLSv1.3"), "TLSv1.3");
  });

  test("setSecureContext replaces the certificate for new connections, without a restart", { skip: opensslSkip }, async (t) => {
    const first = certs!.issue("first.localhost");
    const served = await servedWith(t, { tls: first });
    const subject = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: "127.0.0.1", port: served.port, ca: certs!.ca, servername: "localhost" }, () => {
          resolve(String(socket.getPeerCertificate().subject.CN));
          socket.end();
        });
        socket.on("error", reject);
      });
    assert.equal(await subject(), "first.localhost");
    served.app.setSecureContext(certs!.issue("second.localhost"));
    assert.equal(await subject(), "second.localhost");
    assert.equal((await https1(served.port, "/hello", certs!.ca)).status, 200);
    assert.throws(() => new Cog().setSecureContext(first), /needs an app made with the tls option/);
  });

  test("the same bodies over TLS as over HTTP: a large streamed body, a file body, pipelined requests", { skip: opensslSkip }, async (t) => {
    const { port } = await servedWith(t, { tls: certs!.issue("localhost") });
    const plain = await serve(t, define);
    for (const path of ["/hello?name=same", "/big", "/file", "/buffer", "/nope"]) {
      const overTls = await https1(port, path, certs!.ca);
      const overHttp = await plain.fetch(path);
      const bytes = Buffer.from(await overHttp.arrayBuffer());
      assert.equal(overTls.status, overHttp.status, path);
      if (path.startsWith("/hello")) assert.deepEqual({ ...JSON.parse(overTls.body), protocol: "http", secure: false }, JSON.parse(bytes.toString()));
      else assert.ok(overTls.bytes.equals(bytes), `${path}: ${overTls.bytes.length} bytes over TLS, ${bytes.length} over HTTP`);
    }
    assert.ok((await https1(port, "/file", certs!.ca)).bytes.equals(FILE_BYTES), "the file, whole, through TLS");
    assert.ok((await https1(port, "/buffer", certs!.ca)).bytes.equals(FILE_BYTES), "the Buffer, whole, through TLS");
    assert.equal((await https1(port, "/big", certs!.ca)).bytes.length, 2 * 1024 * 1024);

    // Three requests in one write, on one TLS connection: three answers, in order.
    const socket = tlsConnect({ host: "127.0.0.1", port, ca: certs!.ca, servername: "localhost" });
    await once(socket, "secureConnect");
    const ask = (n: number, last = false) => `GET /hello?name=p${n} HTTP/1.1\r\nHost: localhost\r\n${last ? "Connection: close\r\n" : ""}\r\n`;
    socket.write(ask(1) + ask(2) + ask(3, true));
    let text = "";
    socket.setEncoding("latin1").on("data", (c: string) => (text += c));
    await once(socket, "close");
    assert.deepEqual(statuses(text), [200, 200, 200]);
    assert.deepEqual(
      [...text.matchAll(/"hello":"(p\d)"/g)].map((m) => m[1]),
      ["p1", "p2", "p3"],
    );
  });

  test("a plaintext request, garbage, or a silent client on a TLS port: the connection closes, the server goes on", { skip: opensslSkip }, async (t) => {
    const { port } = await servedWith(t, { tls: certs!.issue("localhost"), headersTimeout: 400, requestTimeout: 1000, timeoutCheckInterval: 100 });
    const plaintext = await raw(port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", 2000);
    assert.doesNotMatch(plaintext, /HTTP\/1\.1 200/, "no answer in the clear");
    await raw(port, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)), 2000);
    const started = Date.now();
    await raw(port, [], 5000);
    assert.ok(Date.now() - started < 4000, `a client that never completes the handshake is cut by headersTimeout (after ${Date.now() - started} ms)`);
    assert.equal((await https1(port, "/hello", certs!.ca)).status, 200, "the server still serves");
  });

  test("a passphrase-protected key; an encrypted key without its passphrase is refused", { skip: opensslSkip }, async (t) => {
    const { key, cert } = certs!.issue("localhost");
    const encrypted = createPrivateKey(key).export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "s3cret" }).toString();
    const { port } = await servedWith(t, { tls: { key: encrypted, cert, passphrase: "s3cret" } });
    assert.equal((await https1(port, "/hello", certs!.ca)).status, 200);
    const locked = new Cog({ engine, tls: { key: encrypted, cert } });
    await assert.rejects(locked.listen(0, "127.0.0.1"), /passphrase|decrypt|bad/i);
  });

  test("client certificates: requestCert with ca refuses clients without one and serves those ca signed", { skip: opensslSkip }, async (t) => {
    const client = certs!.issue("client");
    const { port } = await servedWith(t, { tls: { ...certs!.issue("localhost"), ca: certs!.ca, requestCert: true, rejectUnauthorized: true } });
    const get = (identity: { key: string; cert: string } | object) =>
      new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: "127.0.0.1", port, ca: certs!.ca, servername: "localhost", ...identity }, () => {
          socket.end("GET /hello HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        });
        let text = "";
        socket.setEncoding("latin1").on("data", (c: string) => (text += c));
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
      });
    assert.deepEqual(statuses(await get(client)), [200]);
    // TLS 1.3 clients learn of the refusal after their handshake: as an alert, or a connection closed unanswered.
    const refused = await get({}).catch((err: Error) => err.message);
    assert.doesNotMatch(refused, /HTTP\/1\.1 200/);
  });

  test(
    "client certificates: requestCert without rejectUnauthorized lets every client in, and says as node:tls does whether its certificate verified",
    { skip: opensslSkip },
    async (t) => {
      const stranger = makeCertificates().issue("stranger");
      const { port } = await serve(
        t,
        (app) =>
          app.get("/who", (req, res) => {
            const socket = req.socket;
            const peer = socket.getPeerCertificate!() as Partial<PeerCertificate>;
            res.json({
              encrypted: socket.encrypted,
              authorized: socket.authorized,
              error: socket.authorizationError ?? null,
              subject: peer.subject === undefined ? null : { ...peer.subject },
              issuer: peer.issuer === undefined ? null : { ...peer.issuer },
              serial: peer.serialNumber ?? null,
              san: peer.subjectaltname ?? null,
              from: peer.valid_from ?? null,
              fingerprint256: peer.fingerprint256 ?? null,
              raw: peer.raw === undefined ? null : peer.raw.length,
            });
          }),
        { tls: { ...certs!.issue("localhost"), ca: certs!.ca, requestCert: true, rejectUnauthorized: false } },
      );
      const who = (identity: { key: string; cert: string } | object) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          const socket = tlsConnect({ host: "127.0.0.1", port, ca: certs!.ca, servername: "localhost", ...identity }, () => {
            socket.end("GET /who HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
          });
          let text = "";
          socket.setEncoding("utf8").on("data", (c: string) => (text += c));
          socket.on("close", () => resolve(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>));
          socket.on("error", reject);
        });
      const client = certs!.issue("client");
      const trusted = await who(client);
      const der = new X509Certificate(client.cert);
      assert.deepEqual(trusted, {
        encrypted: true,
        authorized: true,
        error: null,
        subject: { CN: "client" },
        issuer: { CN: "Cog test CA" },
        serial: der.serialNumber,
        san: "DNS:localhost, IP Address:127.0.0.1",
        from: der.validFrom,
        fingerprint256: der.fingerprint256,
        raw: der.raw.length,
      });
      const unknown = await who(stranger);
      assert.deepEqual(
        [unknown.authorized, unknown.error, unknown.subject],
        [false, "UNABLE_TO_VERIFY_LEAF_SIGNATURE", { CN: "stranger" }],
        "a certificate another CA signed is let in, unauthorized",
      );
      const none = await who({});
      assert.deepEqual(
        [none.authorized, none.error, none.subject, none.raw],
        [false, "UNABLE_TO_GET_ISSUER_CERT", null, null],
        "a client without a certificate is let in, unauthorized",
      );
    },
  );

  test("wss: a WebSocket over TLS", { skip: opensslSkip }, async (t) => {
    const served = await serve(t, (app) => app.ws("/echo", { message: (ws, data, isBinary) => void ws.send(data, isBinary) }), {
      tls: certs!.issue("localhost"),
    });
    const client = new WebSocketClient(`wss://localhost:${served.port}/echo`, { ca: certs!.ca });
    t.after(() => client.terminate());
    await once(client, "open");
    const big = "y".repeat(300 * 1024);
    client.send("hi");
    client.send(big);
    const got: string[] = [];
    for await (const [data] of on(client, "message")) {
      got.push(String(data));
      if (got.length === 2) break;
    }
    assert.deepEqual(
      got.map((g) => g.length),
      [2, big.length],
    );
    assert.equal(got[0], "hi");
  });
});

describe("HTTP/2", () => {
  test("http2: true negotiates h2 by ALPN and falls back to HTTP/1.1; the same bodies on both, and on plain HTTP", { skip: opensslSkip }, async (t) => {
    const { port } = await servedWith(t, { tls: certs!.issue("localhost"), http2: true, bodyLimit: 1024 });
    const plain = await serve(t, define);
    const over1 = await https1(port, "/hello?name=x", certs!.ca);
    assert.equal(over1.alpn, false, "a client that offers no ALPN gets HTTP/1.1");
    assert.deepEqual(JSON.parse(over1.body), { hello: "x", protocol: "https", secure: true, version: "1.1" });
    const session = http2Connect(`https://localhost:${port}`, { ca: certs!.ca });
    t.after(() => session.close());
    const over2 = await h2request(session, "/hello?name=x");
    assert.equal(over2.status, 200);
    assert.deepEqual(JSON.parse(over2.body), { hello: "x", protocol: "https", secure: true, version: "2.0" });
    assert.equal(session.alpnProtocol, "h2");
    const cleartext = (await (await plain.fetch("/hello?name=x")).json()) as Record<string, unknown>;
    assert.deepEqual({ ...cleartext, protocol: "https", secure: true, version: "2.0" }, JSON.parse(over2.body));

    const echoed = await h2request(session, "/echo", { method: "POST", body: '{"n":5}', headers: { "content-type": "application/json" } });
    assert.deepEqual(
      [echoed.status, echoed.headers["x-seen"], echoed.body],
      [201, "5", '{"got":{"n":5}}'],
      "a body without Content-Length is read to the stream's end",
    );
    const failed = await h2request(session, "/boom");
    assert.equal(failed.status, 500);
    assert.match(failed.body, /"statusCode":500/);
    assert.equal((await h2request(session, "/nope")).status, 404);
    assert.equal((await h2request(session, "/stream")).body, "ab");
    const tooBig = await h2request(session, "/echo", { method: "POST", body: "x".repeat(2048), headers: { "content-type": "text/plain" } });
    assert.equal(tooBig.status, 413, "bodyLimit applies per stream");
  });

  test("http2: true serves its HTTP/1.1 clients with the app's timeouts: a head that trickles in gets 408", { skip: opensslSkip }, async (t) => {
    const { port } = await servedWith(t, { tls: certs!.issue("localhost"), http2: true, headersTimeout: 300, requestTimeout: 600, timeoutCheckInterval: 100 });
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: "127.0.0.1", port, ca: certs!.ca, servername: "localhost", ALPNProtocols: ["http/1.1"] }, () => {
        // One byte every 50 ms: never a whole head before headersTimeout (node:http2's own default is a minute).
        const head = "GET /hello HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + "s".repeat(200);
        let i = 0;
        const drip = setInterval(() => (i < head.length && !socket.destroyed ? socket.write(head[i++]!) : clearInterval(drip)), 50);
        socket.once("close", () => clearInterval(drip));
      });
      let text = "";
      socket.setEncoding("latin1").on("data", (c: string) => (text += c));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    assert.match(answer, /^HTTP\/1\.1 408/);
    assert.ok(Date.now() - started < 3000, `cut after ${Date.now() - started} ms`);
  });

  test("the access log counts body bytes over h2 and h2c: whole bodies, streams, files", { skip: opensslSkip }, async (t) => {
    for (const http2 of [true, "h2c"] as const) {
      const lines: RequestLogLine[] = [];
      const tls = http2 === true ? { tls: certs!.issue("localhost") } : {};
      const { port } = await servedWith(t, { http2, ...tls, logger: (line) => void (line.level === "info" && lines.push(line)) });
      const session = http2Connect(http2 === true ? `https://localhost:${port}` : `http://127.0.0.1:${port}`, { ca: certs!.ca });
      t.after(() => session.close());
      const hello = await h2request(session, "/hello?name=bytes");
      assert.equal((await h2request(session, "/stream")).body, "ab");
      await h2request(session, "/big");
      await h2request(session, "/file");
      await h2request(session, "/nope");
      for (let i = 0; i < 200 && lines.length < 5; i++) await new Promise((r) => setTimeout(r, 5));
      const bytes = Object.fromEntries(lines.map((l) => [l.path, l.bytes]));
      assert.deepEqual(
        bytes,
        {
          "/hello": Buffer.byteLength(hello.body),
          "/stream": 2,
          "/big": 2 * 1024 * 1024,
          "/file": FILE_BYTES.length,
          "/nope": Buffer.byteLength((await h2request(session, "/nope")).body),
        },
        `over ${http2 === true ? "h2" : "h2c"}`,
      );
    }
  });

  test(
    "limits, timeouts and bad input per stream, as over HTTP/1.1: each stream gets its 4xx/5xx and the session's other streams go on",
    { skip: opensslSkip },
    async (t) => {
      const limits: CogOptions = {
        bodyLimit: 1024,
        maxHeaders: 10,
        maxHeaderSize: 2048,
        maxUrlLength: 200,
        headersTimeout: 200,
        requestTimeout: 400,
        keepAliveTimeout: 300,
        timeoutCheckInterval: 100,
      };
      const routes = (app: Cog) => {
        define(app);
        app.post("/small", { bodyLimit: 10 }, (req, res) => res.json({ got: req.body }));
        app.post("/count", { body: "stream" }, async (req, res) => {
          let n = 0;
          for await (const chunk of req) n += (chunk as Buffer).length;
          res.json({ n });
        });
        // Longer than keepAliveTimeout: a session busy with it is not idle.
        app.get("/slow", (_req, res) => void setTimeout(() => res.send("late"), 600));
      };
      const json = { "content-type": "application/json" };
      const text = { "content-type": "text/plain" };
      const cases: Array<{ name: string; path: string; method?: string; headers?: Record<string, string>; body?: string }> = [
        { name: "bad JSON", path: "/echo", method: "POST", headers: json, body: "{bad" },
        { name: "a body over bodyLimit, larger than the stream's window", path: "/echo", method: "POST", headers: text, body: "x".repeat(256 * 1024) },
        { name: "a body over the route's bodyLimit", path: "/small", method: "POST", headers: text, body: "x".repeat(50) },
        {
          name: "a streamed body over bodyLimit",
          path: "/count",
          method: "POST",
          headers: { "content-type": "application/octet-stream" },
          body: "x".repeat(5000),
        },
        { name: "a handler that throws", path: "/boom" },
        { name: "too many headers", path: "/hello", headers: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`x-h${i}`, "v"])) },
        { name: "headers over maxHeaderSize", path: "/hello", headers: { "x-big": "v".repeat(3000) } },
        { name: "a URL over maxUrlLength", path: `/hello?${"q".repeat(300)}` },
        { name: "an unknown route", path: "/nope" },
        { name: "a handler slower than keepAliveTimeout", path: "/slow" },
        { name: "a good request", path: "/echo", method: "POST", headers: json, body: '{"n":1}' },
      ];
      // The statuses over HTTP/1.1 first, on a server with the same limits.
      const plain = await serve(t, routes, limits);
      const expected: Record<string, number> = {};
      for (const c of cases) {
        const res = await plain.fetch(c.path, { method: c.method ?? "GET", headers: c.headers ?? {}, body: c.body ?? null });
        await res.arrayBuffer();
        expected[c.name] = res.status;
      }
      const stalled = await raw(plain.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nabc", 1500);
      expected["a body that stops arriving"] = statuses(stalled)[0]!;
      assert.deepEqual(Object.values(expected), [400, 413, 413, 413, 500, 431, 431, 414, 404, 200, 201, 408], JSON.stringify(expected));

      for (const http2 of [true, "h2c"] as const) {
        const lines: RequestLogLine[] = [];
        const served = await serve(t, routes, {
          ...limits,
          http2,
          ...(http2 === true ? { tls: certs!.issue("localhost") } : {}),
          logger: (line) => void (line.level === "info" && lines.push(line)),
        });
        const session = http2Connect(http2 === true ? `https://localhost:${served.port}` : `http://127.0.0.1:${served.port}`, { ca: certs!.ca });
        // Not close(): a client stream still pushing a refused body would hold it open.
        t.after(() => session.destroy());
        const got: Record<string, number> = {};
        // All at once, on one session; the stalled body never ends.
        const stalledStream = session.request({ ":method": "POST", ":path": "/echo", ...text });
        stalledStream.write("abc");
        const timedOut = new Promise<number>((resolve) => stalledStream.on("response", (h) => resolve(Number(h[":status"]))));
        await Promise.all(cases.map(async (c) => (got[c.name] = (await h2request(session, c.path, c)).status)));
        got["a body that stops arriving"] = await timedOut;
        assert.deepEqual(got, expected, `over ${http2 === true ? "h2" : "h2c"}`);
        assert.equal((await h2request(session, "/hello")).status, 200, "the session still serves");
        // Every stream closed on the server, the refused and timed-out ones too: each has its log line.
        for (let i = 0; i < 200 && lines.length < cases.length + 2; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(lines.length, cases.length + 2, JSON.stringify(lines.map((l) => [l.path, l.status])));
        // Idle now: closed after keepAliveTimeout, as an idle keep-alive connection is.
        const goaway = await Promise.race([once(session, "goaway").then(() => true), new Promise((r) => setTimeout(() => r(false), 2000))]);
        assert.equal(goaway, true, "an idle session is closed (GOAWAY) after keepAliveTimeout");
      }
    },
  );

  test("a stream the client resets mid-body never reaches its handler, and is logged as aborted", async (t) => {
    const lines: RequestLogLine[] = [];
    const bodies: string[] = [];
    const { port } = await serve(
      t,
      (app) => {
        app.post("/take", (req, res) => {
          bodies.push(String(req.body));
          res.send("took");
        });
        app.post("/count", { body: "stream" }, async (req, res) => {
          let n = 0;
          for await (const chunk of req) n += (chunk as Buffer).length;
          bodies.push(`streamed ${n}`);
          res.json({ n });
        });
      },
      { http2: "h2c", logger: (line) => void (line.level === "info" && lines.push(line)) },
    );
    const session = http2Connect(`http://127.0.0.1:${port}`);
    t.after(() => session.destroy());
    // Reset on a stream of the session (Node's client ends its side first: the Content-Length
    // says the body is short), and a whole connection cut mid-body.
    const cut = http2Connect(`http://127.0.0.1:${port}`);
    for (const [client, path] of [
      [session, "/take"],
      [session, "/count"],
      [cut, "/take"],
    ] as const) {
      const stream = client.request({ ":method": "POST", ":path": path, "content-type": "text/plain", "content-length": "100" });
      stream.on("error", () => {});
      stream.write("half a bo");
      await new Promise((r) => setTimeout(r, 50));
      if (client === cut) cut.destroy();
      else stream.close(h2.NGHTTP2_CANCEL);
    }
    for (let i = 0; i < 200 && lines.length < 3; i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(bodies, [], "no handler ran on half a body");
    assert.deepEqual(
      lines.map((l) => [l.path, l.status, l.aborted]),
      [
        ["/take", null, true],
        ["/count", null, true],
        ["/take", null, true],
      ],
    );
    assert.equal((await h2request(session, "/take", { method: "POST", body: "whole", headers: { "content-type": "text/plain" } })).body, "took");
    assert.deepEqual(bodies, ["whole"]);
  });

  test("a file over h2c: If-None-Match gets a 304, Range a 206, and neither changes a plain request's 200", async (t) => {
    const { port } = await servedWith(t, { http2: "h2c" });
    const session = http2Connect(`http://127.0.0.1:${port}`);
    t.after(() => session.destroy());
    const whole = await h2request(session, "/file");
    assert.deepEqual([whole.status, whole.body.length, whole.headers["accept-ranges"]], [200, FILE_BYTES.length, "bytes"]);
    const etag = String(whole.headers["etag"]);
    assert.equal((await h2request(session, "/file", { headers: { "if-none-match": etag } })).status, 304);
    assert.equal((await h2request(session, "/file", { headers: { "if-match": '"other"' } })).status, 412);
    const part = await h2request(session, "/file", { headers: { range: "bytes=16-31" } });
    assert.deepEqual([part.status, part.body, part.headers["content-range"]], [206, "0123456789abcdef", `bytes 16-31/${FILE_BYTES.length}`]);
    assert.equal((await h2request(session, "/file", { headers: { range: "bytes=0-1", "if-range": '"stale"' } })).status, 200);
    assert.equal((await h2request(session, "/file")).status, 200);
  });

  test('http2: "h2c" serves cleartext HTTP/2 with prior knowledge; close() ends its sessions', async (t) => {
    const lines: RequestLogLine[] = [];
    const app = new Cog({ http2: "h2c", logErrors: false, bodyLimit: 1024, logger: (line) => void (line.level === "info" && lines.push(line)) });
    define(app);
    const { port } = await app.listen(0, "127.0.0.1");
    const session = http2Connect(`http://127.0.0.1:${port}`);
    t.after(() => session.destroy());
    const answer = await h2request(session, "/hello?name=c");
    assert.deepEqual(JSON.parse(answer.body), { hello: "c", protocol: "http", secure: false, version: "2.0" });
    for (let i = 0; i < 100 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual([lines[0]?.route, lines[0]?.status, lines[0]?.id], ["/hello", 200, answer.headers["x-request-id"]], "the access log works over h2 too");
    const goaway = new Promise<number>((resolve) => session.once("goaway", (code: number) => resolve(code)));
    await app.close(1000);
    assert.equal(await goaway, h2.NGHTTP2_NO_ERROR, "close() sends GOAWAY");
  });

  test("req.destroy() on a request whose body is not read ends its reading, and its stream still takes the answer (as node:http2's)", async (t) => {
    const { port } = await serve(
      t,
      (app) =>
        app.post("/give-up", { body: "stream" }, (req, res) => {
          req.destroy();
          res.setHeader("x-read", String(req.readableEnded));
          res.end("answered");
        }),
      { http2: "h2c" },
    );
    const session = http2Connect(`http://127.0.0.1:${port}`);
    t.after(() => session.close());
    const stream = session.request({ ":method": "POST", ":path": "/give-up", "content-type": "application/octet-stream" });
    stream.write("part of a body that is never finished");
    let head: Record<string, unknown> = {};
    stream.on("response", (h) => (head = h));
    // The answer ends the stream while the request's side is still open: the server may then reset
    // it (NO_ERROR, as node:http2 does), so the body is read from its data events to the close.
    let body = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => (body += chunk));
    stream.on("error", () => {});
    await once(stream, "close");
    assert.equal(stream.rstCode, h2.NGHTTP2_NO_ERROR);
    assert.equal(head[":status"], 200);
    assert.equal(head["x-read"], "false");
    assert.equal(body, "answered");
  });

  test("a response ended as the request's body ends (read to its end) leaves the stream unreset: no RST_STREAM after it", async (t) => {
    // Connect's handlers answer so: a `for await` over the body, then the answer, all in the
    // microtasks set off by the body's last DATA frame, before nghttp2 marks the stream
    // half-closed. The node engine took the stream for one whose body was still coming and reset
    // it (NO_ERROR) in place of the response's END_STREAM: Go's client dropped the response.
    let handlerWaits = (): void => {};
    const waiting = new Promise<void>((resolve) => (handlerWaits = resolve));
    const { port } = await serve(
      t,
      (app) =>
        app.post("/read-all", { body: "stream" }, async (req, res) => {
          handlerWaits();
          let length = 0;
          for await (const chunk of req) length += (chunk as Buffer).length;
          res.end(`read ${length}`);
        }),
      { http2: "h2c" },
    );
    const frames = await h2Frames(t, port, "/read-all", true, waiting);
    assert.equal(frames.body, "read 12");
    assert.ok(frames.ended, "the response ends its stream with END_STREAM");
    assert.deepEqual(frames.resets, [], "no RST_STREAM on a stream whose request was whole");
  });

  test("a response ended before the request's body: END_STREAM, then RST_STREAM NO_ERROR asks the client to stop sending", async (t) => {
    // RFC 9113 §8.1: the reset comes after a complete response, which the client keeps. The node
    // engine's reset went out in place of the END_STREAM (nghttp2 drops what is queued behind
    // it), so the response was never complete.
    const { port } = await serve(t, (app) => app.post("/early", { body: "stream" }, (_req, res) => void res.end("early answer")), { http2: "h2c" });
    const frames = await h2Frames(t, port, "/early", false);
    assert.equal(frames.body, "early answer");
    assert.ok(frames.ended, "the response ends its stream with END_STREAM");
    assert.deepEqual(frames.resets, [h2.NGHTTP2_NO_ERROR], "then the stream is reset, NO_ERROR");
    assert.ok(frames.endedBeforeReset, "the END_STREAM comes before the RST_STREAM");
  });
});

/**
 * A POST to `path` over a raw h2c connection: the preface, SETTINGS and the request's head, then,
 * once the handler waits for it (`handlerWaiting`, or else once its answer has begun), a body of
 * 12 bytes, with END_STREAM when `whole`. Returns what came back on the stream: the body, whether
 * an END_STREAM came (and before any reset), and the RST_STREAM error codes, read once the
 * stream has ended (and, when the body was cut short, been reset) and a PING sent after has come
 * back: a reset the server sends with its answer comes before that PING's ACK.
 */
async function h2Frames(t: { after(fn: () => unknown): void }, port: number, path: string, whole: boolean, handlerWaiting?: Promise<void>) {
  const socket = netConnect(port, "127.0.0.1");
  t.after(() => socket.destroy());
  const seen: Frame[] = [];
  let check = (): void => {};
  readFrames(socket, (f) => {
    seen.push(f);
    check();
  });
  const until = (what: string, done: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${what} in 5 s; frames (type, flags, stream): ${JSON.stringify(seen.map((f) => [f.type, f.flags, f.stream]))}`)),
        5000,
      );
      check = () => {
        if (!done()) return;
        clearTimeout(timer);
        check = () => {};
        resolve();
      };
      check();
    });
  const stream1 = () => seen.filter((f) => f.stream === 1);
  const endIndex = () => stream1().findIndex((f) => (f.flags & 1) === 1 && (f.type === 0 || f.type === 1));
  const resetIndex = () => stream1().findIndex((f) => f.type === 3);
  const headers = Buffer.concat([literal(":method", "POST"), literal(":scheme", "http"), literal(":authority", "localhost"), literal(":path", path)]);
  await once(socket, "connect");
  socket.write(Buffer.concat([PREFACE, frame(4, 0, 0), frame(1, 4 /* END_HEADERS */, 1, headers)]));
  await (handlerWaiting ?? until("response HEADERS", () => stream1().some((f) => f.type === 1)));
  socket.write(frame(0, whole ? 1 /* END_STREAM */ : 0, 1, Buffer.from("a whole body")));
  await until("END_STREAM or RST_STREAM", () => endIndex() !== -1 || resetIndex() !== -1);
  if (!whole) await until("RST_STREAM", () => resetIndex() !== -1);
  socket.write(frame(6 /* PING */, 0, 0, Buffer.alloc(8)));
  await until("PING ACK", () => seen.some((f) => f.stream === 0 && f.type === 6 && (f.flags & 1) === 1));
  return {
    body: Buffer.concat(
      stream1()
        .filter((f) => f.type === 0)
        .map((f) => f.payload),
    ).toString(),
    ended: endIndex() !== -1,
    endedBeforeReset: endIndex() !== -1 && (resetIndex() === -1 || endIndex() < resetIndex()),
    resets: stream1()
      .filter((f) => f.type === 3)
      .map((f) => f.payload.readUInt32BE(0)),
  };
}
