import assert from "node:assert/strict";
import { request as httpsRequest } from "node:https";
import { connect as http2Connect, constants as h2, type ClientHttp2Session } from "node:http2";
import { connect as tlsConnect } from "node:tls";
import { describe, test } from "node:test";
import { Cog, type CogOptions, type RequestLogLine } from "../src/index.js";
import { makeCertificates, opensslSkip, type Certificates } from "./certificates.js";
import { engine, serve } from "./helpers.js";

const certs: Certificates | null = opensslSkip === false ? makeCertificates() : null;
const nodeEngineOnly = engine === "node" ? opensslSkip : "TLS and HTTP/2 are served by the node engine; the native engine's refusal is tested in the first test";

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
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function https1(port: number, path: string, ca: string, init: { method?: string; body?: string } = {}): Promise<Answer & { alpn: string | false | null }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: "127.0.0.1", port, path, method: init.method ?? "GET", ca, servername: "localhost", agent: false, headers: init.body === undefined ? {} : { "content-type": "application/json" } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body, alpn: (res.socket as unknown as { alpnProtocol: string | false | null }).alpnProtocol }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

function h2request(session: ClientHttp2Session, path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
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
  test("the native engine refuses tls and http2 with what to use instead", { skip: opensslSkip }, () => {
    const tls = certs!.issue("localhost");
    assert.throws(() => new Cog({ engine: "native", tls }), /native engine serves cleartext HTTP\/1\.1 only: tls needs engine: "node"/);
    assert.throws(() => new Cog({ engine: "native", http2: "h2c" }), /http2 needs engine: "node"/);
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

  test("HTTPS: the handshake against the app's CA, req.protocol https, errors and streams as over HTTP", { skip: nodeEngineOnly }, async (t) => {
    const { port } = await servedWith(t, { tls: certs!.issue("localhost") });
    const hello = await https1(port, "/hello?name=tls", certs!.ca);
    assert.equal(hello.status, 200);
    assert.deepEqual(JSON.parse(hello.body), { hello: "tls", protocol: "https", secure: true, version: "1.1" });
    assert.equal((await https1(port, "/boom", certs!.ca)).status, 500);
    assert.equal((await https1(port, "/stream", certs!.ca)).body, "ab");
    const echoed = await https1(port, "/echo", certs!.ca, { method: "POST", body: '{"n":3}' });
    assert.deepEqual([echoed.status, echoed.headers["x-seen"], echoed.body], [201, "3", '{"got":{"n":3}}']);
  });

  test("TLS 1.0 and 1.1 are refused; 1.2 and 1.3 are served", { skip: nodeEngineOnly }, async (t) => {
    const { port } = await servedWith(t, { tls: certs!.issue("localhost") });
    const handshake = (minVersion: "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3", maxVersion: typeof minVersion) =>
      new Promise<string>((resolve, reject) => {
        // SECLEVEL=0 lets this client offer the old versions; the server must refuse them.
        const socket = tlsConnect({ host: "127.0.0.1", port, ca: certs!.ca, servername: "localhost", minVersion, maxVersion, ciphers: "DEFAULT@SECLEVEL=0" }, () => {
          resolve(socket.getProtocol()!);
          socket.end();
        });
        socket.on("error", reject);
      });
    await assert.rejects(handshake("TLSv1", "TLSv1"), /protocol version|wrong version|unsupported protocol|no protocols available/i);
    await assert.rejects(handshake("TLSv1.1", "TLSv1.1"), /protocol version|wrong version|unsupported protocol|no protocols available/i);
    assert.equal(await handshake("TLSv1.2", "TLSv1.2"), "TLSv1.2");
    assert.equal(await handshake("TLSv1.3", "TLSv1.3"), "TLSv1.3");
  });

  test("setSecureContext replaces the certificate for new connections, without a restart", { skip: nodeEngineOnly }, async (t) => {
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
});

describe("HTTP/2", () => {
  test("http2: true negotiates h2 by ALPN and falls back to HTTP/1.1; the same bodies on both, and on plain HTTP", { skip: nodeEngineOnly }, async (t) => {
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
    assert.deepEqual([echoed.status, echoed.headers["x-seen"], echoed.body], [201, "5", '{"got":{"n":5}}'], "a body without Content-Length is read to the stream's end");
    const failed = await h2request(session, "/boom");
    assert.equal(failed.status, 500);
    assert.match(failed.body, /"statusCode":500/);
    assert.equal((await h2request(session, "/nope")).status, 404);
    assert.equal((await h2request(session, "/stream")).body, "ab");
    const tooBig = await h2request(session, "/echo", { method: "POST", body: "x".repeat(2048), headers: { "content-type": "text/plain" } });
    assert.equal(tooBig.status, 413, "bodyLimit applies per stream");
  });

  test('http2: "h2c" serves cleartext HTTP/2 with prior knowledge; close() ends its sessions', { skip: engine === "node" ? false : nodeEngineOnly }, async (t) => {
    const lines: RequestLogLine[] = [];
    const app = new Cog({ http2: "h2c", logErrors: false, bodyLimit: 1024, logger: (line) => void (line.level === "info" && lines.push(line)) });
    define(app);
    const { port } = await app.listen(0, "127.0.0.1");
    const session = http2Connect(`http://127.0.0.1:${port}`);
    t.after(() => session.destroy());
    const answer = await h2request(session, "/hello?name=c");
    assert.deepEqual(JSON.parse(answer.body), { hello: "c", protocol: "http", secure: false, version: "2.0" });
    for (let i = 0; i < 100 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual([lines[0]?.route, lines[0]?.status, lines[0]?.id], ["GET /hello", 200, answer.headers["x-request-id"]], "the access log works over h2 too");
    const goaway = new Promise<number>((resolve) => session.once("goaway", (code: number) => resolve(code)));
    await app.close(1000);
    assert.equal(await goaway, h2.NGHTTP2_NO_ERROR, "close() sends GOAWAY");
  });
});
