// HTTP/3 on the native engine (listen({ http3: true })), judged by a client nobody here wrote:
// aioquic's (PyPI), driven by h3-client.py over one QUIC connection to a real listening app. The
// same app handlers, statuses, access log and request ids as over TCP; answers over TCP say where
// HTTP/3 is (Alt-Svc). Skipped, saying why, where python3 with aioquic is missing.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { request } from "node:https";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Cog } from "../../../src/index.js";
import type { RequestLogLine } from "../../../src/observe/access-log.js";
import { makeCertificates, opensslSkip } from "../../certificates.js";
import { nativeSkip } from "../../helpers.js";

const CLIENT = fileURLToPath(new URL("./h3-client.py", import.meta.url));
const aioquicSkip: string | false =
  spawnSync("python3", ["-c", "import aioquic"]).status === 0 ? false : "python3 with aioquic is not installed (pip install aioquic==1.7.2): the HTTP/3 tests use its client";
const skip = nativeSkip || opensslSkip || aioquicSkip;

interface Spec {
  method: string;
  path: string;
  body?: string | { size: number };
  headers?: [string, string][];
  reset?: boolean;
  stall?: boolean;
}
interface Answer {
  status: number;
  headers: Record<string, string>;
  length: number;
  allX: boolean;
  body?: string;
  reset?: true;
}

/** Runs aioquic's client against `port`: each phase's requests at once, on one connection. */
function h3(port: number, ...phases: Spec[][]): Promise<Answer[][]> {
  return client([String(port), JSON.stringify(phases)]) as Promise<Answer[][]>;
}

function client(args: string[]): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    execFile("python3", [CLIENT, ...args], { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err !== null) return reject(new Error(`h3-client.py failed: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout) as unknown[]);
    });
  });
}

describe("HTTP/3 on the native engine, with aioquic's client", { skip }, () => {
  const lines: RequestLogLine[] = [];
  let app: Cog;
  let port: number;
  /** Resolved when the app sees the client reset a request it was reading. */
  let resetSeen: Promise<void>;

  const files = mkdtempSync(join(tmpdir(), "cog-h3-"));
  // Past a stream's 64 KiB high-water mark many times over; small enough for aioquic, whose
  // Python reads about 130 KB/s of answers on this machine under load (quic-go reads 78 MiB/s).
  const FILE_SIZE = 1024 * 1024 + 17;

  before(async () => {
    writeFileSync(join(files, "big.bin"), Buffer.alloc(FILE_SIZE, "x"));
    const certs = makeCertificates();
    app = new Cog({ engine: "native", tls: certs.issue("localhost"), bodyLimit: 64 * 1024 * 1024, timeoutCheckInterval: 100, logger: (line) => void lines.push(line as RequestLogLine) });
    app.get("/", (req, res) => res.json({ version: req.httpVersion, ip: req.ip, id: req.id }));
    app.post("/echo", (req, res) => res.type("application/octet-stream").send(req.body as Buffer));
    app.get("/big", (_req, res) => res.type("application/octet-stream").send(Buffer.alloc(1 << 20, "x")));
    app.get("/streamed", async (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const piece = Buffer.alloc(64 * 1024, "x");
      for (let i = 0; i < 8; i++) if (!res.write(piece)) await once(res, "drain");
      res.addTrailers({ "x-checksum": "abc123" });
      res.end();
    });
    app.get("/file", (_req, res) => res.sendFile(join(files, "big.bin")));
    app.get("/many/:n", (req, res) => res.send(`n=${req.params.n}`));
    app.get("/fails", () => {
      throw new Error("a handler that fails");
    });
    app.post("/small", { bodyLimit: 1024 } as never, (req, res) => res.send(req.body));
    app.post("/upload", { requestTimeout: 300 } as never, (req, res) => res.send(req.body));
    let sawReset!: () => void;
    resetSeen = new Promise((resolve) => (sawReset = resolve));
    app.post("/slow", { body: "stream" } as never, (req, res) => {
      req.on("data", () => {});
      // The head tells the client that the app has its request: it resets the stream then.
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("started");
      res.on("close", () => {
        if (!res.writableEnded) sawReset();
      });
    });
    ({ port } = (await app.listen({ port: 0, host: "127.0.0.1", http3: true })) as { port: number });
  });
  after(async () => {
    await app.close();
    rmSync(files, { recursive: true, force: true });
  });

  test("a GET is answered over HTTP/3 by the app's handler: httpVersion 3.0, its request id, its access log line", async () => {
    const [[answer]] = await h3(port, [{ method: "GET", path: "/" }]);
    assert.equal(answer!.status, 200);
    const body = JSON.parse(answer!.body!) as { version: string; ip: string; id: string };
    assert.deepEqual({ version: body.version, ip: body.ip }, { version: "3.0", ip: "127.0.0.1" });
    assert.equal(answer!.headers["x-request-id"], body.id);
    assert.equal(answer!.headers["content-length"], String(answer!.length));
    assert.equal(answer!.headers["alt-svc"], undefined, "no Alt-Svc over HTTP/3 itself");
    const line = lines.find((l) => l.id === body.id);
    assert.ok(line, `an access log line for ${body.id}`);
    assert.deepEqual({ method: line.method, path: line.path, status: line.status }, { method: "GET", path: "/", status: 200 });
  });

  test("a POST's body is read and echoed, 100 KB", async () => {
    const [[answer]] = await h3(port, [{ method: "POST", path: "/echo", body: { size: 100_000 } }]);
    assert.deepEqual([answer!.status, answer!.length, answer!.allX], [200, 100_000, true]);
  });

  test("a 1 MiB answer arrives whole, and a streamed one waits for drains and ends with its trailers", async () => {
    const [[big, streamed]] = await h3(port, [
      { method: "GET", path: "/big" },
      { method: "GET", path: "/streamed" },
    ]);
    assert.deepEqual([big!.status, big!.length, big!.allX, big!.headers["content-length"]], [200, 1 << 20, true, String(1 << 20)]);
    assert.deepEqual([streamed!.status, streamed!.length, streamed!.allX], [200, 8 * 64 * 1024, true]);
    assert.equal(streamed!.headers["x-checksum"], "abc123", "the trailer field, after the body");
  });

  test("a file answer (res.sendFile) arrives whole, read into the stream as it drains", async () => {
    const [[file]] = await h3(port, [{ method: "GET", path: "/file" }]);
    assert.deepEqual([file!.status, file!.length, file!.allX, file!.headers["content-length"]], [200, FILE_SIZE, true, String(FILE_SIZE)]);
  });

  test("100 concurrent streams on one connection are each answered with their own", async () => {
    const specs = Array.from({ length: 100 }, (_, n) => ({ method: "GET", path: `/many/${n}` }));
    const [answers] = await h3(port, specs);
    assert.equal(answers!.length, 100);
    answers!.forEach((answer, n) => assert.deepEqual([answer.status, answer.body], [200, `n=${n}`]));
    assert.equal(new Set(answers!.map((a) => a.headers["x-request-id"])).size, 100, "a request id each");
  });

  test("a stream the client resets aborts its request in the app, and the connection goes on", async () => {
    const [[reset], [after]] = await h3(port, [{ method: "POST", path: "/slow", body: { size: 10_000 }, reset: true }], [{ method: "GET", path: "/many/7" }]);
    assert.equal(reset!.reset, true);
    await resetSeen;
    assert.deepEqual([after!.status, after!.body], [200, "n=7"]);
  });

  test("statuses are the app's: 404 for no route, 413 past a route's body limit, 500 for a handler that throws", async () => {
    const [[missing, tooLarge, fails, fine]] = await h3(port, [
      { method: "GET", path: "/nowhere" },
      { method: "POST", path: "/small", body: { size: 4096 } },
      { method: "GET", path: "/fails" },
      { method: "GET", path: "/many/1" },
    ]);
    assert.equal(missing!.status, 404);
    assert.equal(tooLarge!.status, 413);
    assert.equal(fails!.status, 500);
    assert.deepEqual([fine!.status, fine!.body], [200, "n=1"]);
    for (const answer of [missing!, tooLarge!, fails!]) assert.match(answer.headers["content-type"] ?? "", /json/, "Cog's error body");
  });

  test("a body that does not arrive within the route's requestTimeout gets 408, and the connection goes on", async () => {
    const [[late, fine]] = await h3(port, [
      { method: "POST", path: "/upload", body: { size: 2000 }, stall: true },
      { method: "GET", path: "/many/2" },
    ]);
    assert.equal(late!.status, 408);
    assert.deepEqual([fine!.status, fine!.body], [200, "n=2"]);
  });

  // The answer is often acknowledged before close() runs, so the connection is quiet when it is
  // shut down: it still gets its GOAWAY first (the close waits until the GOAWAY has left).
  test("close() lets the answer go, sends GOAWAY, then closes the connection gracefully with H3_NO_ERROR", async () => {
    const closing = new Cog({ engine: "native", tls: makeCertificates().issue("localhost") });
    closing.get("/bye", (_req, res) => {
      res.send("bye");
      setImmediate(() => void closing.close());
    });
    const { port: closingPort } = (await closing.listen({ port: 0, host: "127.0.0.1", http3: true })) as { port: number };
    const [[answer], closed] = (await client([String(closingPort), JSON.stringify([[{ method: "GET", path: "/bye" }]]), "wait-close"])) as [Answer[], { closedWith: number; goaway: boolean }];
    assert.deepEqual([answer!.status, answer!.body], [200, "bye"]);
    assert.equal(closed.closedWith, 0x100, `closed with ${closed.closedWith}`);
    assert.equal(closed.goaway, true, "a GOAWAY on the server's control stream before the close");
    await closing.close();
  });

  test("answers over TLS on TCP carry Alt-Svc naming the HTTP/3 port", async () => {
    const req = request({ host: "127.0.0.1", port, path: "/", rejectUnauthorized: false });
    req.end();
    const [res] = (await once(req, "response")) as [import("node:http").IncomingMessage];
    res.resume();
    await once(res, "end");
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["alt-svc"], `h3=":${port}"; ma=86400`);
  });
});
