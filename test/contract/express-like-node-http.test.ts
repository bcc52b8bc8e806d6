// cog-http/express apps behave on every engine as they do on node:http, where the field's
// middleware looks below Express's API: body-parser 1.x's `_body` flag, `res.socket` and
// on-finished, `req.socket.server`, the header list after `res.end(body)`, `server.close`'s
// callback, the router's stack frames (express-rate-limit), and an upload answered before it is
// read. Real sockets to a real listening server, on the engine COG_ENGINE names.
import assert from "node:assert/strict";
import { once } from "node:events";
import { Agent, request as httpRequest, IncomingMessage, OutgoingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { connect, type Socket } from "node:net";
import { describe, test } from "node:test";
import bodyParser1 from "body-parser-1";
import { WebSocket, WebSocketServer } from "ws";
import { rateLimit } from "express-rate-limit";
import helmet from "helmet";
import morgan from "morgan";
import onFinished from "on-finished";
import express from "../../src/express/index.js";
import { startChild } from "../children.js";
import { closed, portOf, type Listening } from "../express-pair.js";
import { engine, nativeSkip } from "../helpers.js";

type Any = any;

// CommonJS without types.
const proxy = createRequire(import.meta.url)("express-http-proxy") as (host: string, options: object) => Any;

/** `app` listening on 127.0.0.1 on the engine under test, closed when the test ends. */
async function listening(t: { after(fn: () => unknown): void }, app: Any): Promise<{ server: Any; port: number }> {
  const server = app.listen(0, "127.0.0.1");
  const port = await portOf(server as Listening);
  t.after(() => closed(server as Listening));
  return { server, port };
}

/** A raw client's request: what came back before the server closed the connection, once it has. */
async function untilClosed(port: number, text: string): Promise<string> {
  const socket = connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.on("error", () => {});
  socket.write(text);
  await once(socket, "close");
  return Buffer.concat(chunks).toString("latin1");
}

/** POSTs `body` on a connection of its own, writing it whole whatever comes back first: the status, or the error the client met. */
function upload(port: number, body: Buffer): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/upload",
      agent: false,
      headers: { "content-type": "application/octet-stream", "content-length": body.length },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end(body);
  });
}

/** A promise and what settles it. */
function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

// What fails here fails by waiting for what never comes: bounded, so that it fails in good time.
describe(`cog-http/express apps as on node:http (${engine} engine)`, { skip: engine === "native" && nativeSkip, timeout: 60_000 }, () => {
  test("body-parser 1.x reads small JSON and form bodies (it sets req._body before it reads the stream)", async (t) => {
    const app = express({ engine });
    app.post("/json", bodyParser1.json(), (req: Any, res: Any) => res.json({ body: req.body }));
    app.post("/form", bodyParser1.urlencoded({ extended: false }), (req: Any, res: Any) => res.json({ body: req.body }));
    app.post("/text", bodyParser1.text(), (req: Any, res: Any) => res.json({ body: req.body }));
    const { port } = await listening(t, app);
    const json = await fetch(`http://127.0.0.1:${port}/json`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":123}' });
    assert.equal(json.status, 200);
    assert.deepEqual(await json.json(), { body: { a: 123 } });
    const form = await fetch(`http://127.0.0.1:${port}/form`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "a=1&b=two",
    });
    assert.equal(form.status, 200);
    assert.deepEqual(await form.json(), { body: { a: "1", b: "two" } });
    const text = await fetch(`http://127.0.0.1:${port}/text`, { method: "POST", headers: { "content-type": "text/plain" }, body: "x".repeat(200_000) });
    assert.equal(text.status, 413);
    const small = await fetch(`http://127.0.0.1:${port}/text`, { method: "POST", headers: { "content-type": "text/plain" }, body: "hello" });
    assert.deepEqual(await small.json(), { body: "hello" });
  });

  test("express.json() then body-parser 1.x: the body read once, the second parser passes", async (t) => {
    const app = express({ engine });
    app.post("/", express.json(), bodyParser1.json(), (req: Any, res: Any) => res.json({ body: req.body, readable: req.readable }));
    const { port } = await listening(t, app);
    const answer = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' });
    assert.deepEqual(await answer.json(), { body: { a: 1 }, readable: false });
  });

  test("after res.end(body), getHeader('content-length') is undefined, as node:http keeps the length it writes to itself (morgan logs '-')", async (t) => {
    const seen: Array<{ header: unknown; listed: boolean }> = [];
    const lines: string[] = [];
    let logged!: () => void;
    const twoLines = new Promise<void>((resolve) => (logged = resolve));
    const app = express({ engine });
    app.use(
      morgan(":url :res[content-length]", {
        stream: {
          write: (line: string) => {
            lines.push(line.trim());
            if (lines.length === 2) logged();
          },
        },
      }),
    );
    app.get("/end", (_req: Any, res: Any) => {
      res.end("hello");
      seen.push({ header: res.getHeader("content-length"), listed: "content-length" in res.getHeaders() });
    });
    app.get("/send", (_req: Any, res: Any) => res.send("hello"));
    const { port } = await listening(t, app);
    const ended = await fetch(`http://127.0.0.1:${port}/end`);
    assert.equal(await ended.text(), "hello");
    assert.equal(ended.headers.get("content-length"), "5");
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/send`)).text(), "hello");
    await twoLines;
    assert.deepEqual(seen, [{ header: undefined, listed: false }]);
    assert.deepEqual(lines.sort(), ["/end -", "/send 5"]);
  });

  test("a throw in server.listen's or server.close's callback is an uncaught exception, not an unhandled rejection", async (t) => {
    const child = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/throwing-server-callbacks.ts"], {
      env: { ...process.env, COG_ENGINE: engine },
    });
    assert.equal(await child.exited, 0, child.stderr());
    assert.equal(child.stdout(), "listen uncaughtException\nclose uncaughtException\n");
  });

  test("express-rate-limit finds Layer.handleRequest in the stack of a limiter made in a handler or middleware, and warns", async (t) => {
    const codes: string[] = [];
    const logger = { warn: () => {}, error: (err: { code?: string }) => codes.push(`${err.code}`) };
    const app = express({ engine });
    app.use(rateLimit({ limit: 100, logger }));
    app.use("/mw", (_req: Any, _res: Any, next: Any) => {
      rateLimit({ limit: 100, logger });
      next();
    });
    app.get("/mw", (_req: Any, res: Any) => res.send("mw"));
    app.get("/handler", (_req: Any, res: Any) => {
      rateLimit({ limit: 100, logger });
      res.send("handler");
    });
    const { port } = await listening(t, app);
    assert.deepEqual(codes, [], "made at the app's start");
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/mw`)).text(), "mw");
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/handler`)).text(), "handler");
    assert.deepEqual(codes, ["ERR_ERL_CREATED_IN_REQUEST_HANDLER", "ERR_ERL_CREATED_IN_REQUEST_HANDLER"]);
  });

  test("res.socket and res.connection are the request's connection: on-finished hears a client that left, and morgan logs it", async (t) => {
    const arrived = signal<boolean[]>();
    const finished = signal<unknown>();
    const lines: string[] = [];
    const logged = signal();
    const app = express({ engine });
    app.use(morgan(":url :status", { stream: { write: (line: string) => (lines.push(line.trim()), logged.resolve()) } }));
    app.get("/slow", (req: Any, res: Any) => {
      onFinished(res, (err: unknown) => finished.resolve(err));
      arrived.resolve([res.socket === req.socket, res.connection === req.socket]);
    });
    const { port } = await listening(t, app);
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.deepEqual(await arrived.promise, [true, true]);
    socket.destroy();
    assert.equal(await finished.promise, null);
    await logged.promise;
    assert.deepEqual(lines, ["/slow -"]);
  });

  test("res.destroy() cuts the connection, and on-finished calls back", async (t) => {
    const finished = signal<unknown>();
    const app = express({ engine });
    app.get("/", (_req: Any, res: Any) => {
      onFinished(res, (err: unknown) => finished.resolve(err));
      res.destroy();
    });
    const { port } = await listening(t, app);
    assert.equal(await untilClosed(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "");
    assert.equal(await finished.promise, null);
  });

  test("req.destroy() cuts the connection at once, as an unread request's on node:http: no answer goes out, res closes", async (t) => {
    const closed = signal<string[]>();
    const app = express({ engine });
    app.get("/", (req: Any, res: Any) => {
      const events: string[] = [];
      req.on("aborted", () => events.push("aborted"));
      res.on("close", () => closed.resolve(events));
      req.destroy();
      // What connect-timeout's 503 did on the native engine: answered after the request was destroyed.
      setImmediate(() => res.writableEnded || res.destroyed || res.status(503).send("late"));
    });
    const { port } = await listening(t, app);
    assert.equal(await untilClosed(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "");
    assert.deepEqual(await closed.promise, ["aborted"]);
  });

  test("req.socket.destroy() cuts the connection, and res emits 'close' without a later end()", async (t) => {
    const closed = signal<boolean>();
    const app = express({ engine });
    app.get("/", (req: Any, res: Any) => {
      res.on("close", () => closed.resolve(res.writableEnded));
      req.socket.destroy();
    });
    const { port } = await listening(t, app);
    assert.equal(await untilClosed(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "");
    assert.equal(await closed.promise, false);
  });

  test("req.socket.server is the server app.listen returned: an 'upgrade' listener put there from a request (http-proxy-middleware's ws) gets the upgrades", async (t) => {
    const wss = new WebSocketServer({ noServer: true });
    wss.on("connection", (ws) => ws.on("message", (data) => ws.send(`echo ${String(data)}`)));
    const servers: unknown[] = [];
    const app = express({ engine });
    app.use((req: Any, _res: Any, next: Any) => {
      const server = req.socket.server;
      servers.push(server);
      if (server.listenerCount("upgrade") === 0)
        server.on("upgrade", (r: IncomingMessage, socket: Socket, head: Buffer) => wss.handleUpgrade(r, socket, head, (ws) => wss.emit("connection", ws, r)));
      next();
    });
    app.get("/", (_req: Any, res: Any) => res.send("ok"));
    const { server, port } = await listening(t, app);
    t.after(() => wss.close());
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "ok");
    assert.equal(servers.length, 1);
    assert.equal(servers[0], server);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/socket`);
    await once(ws, "open");
    ws.send("hi");
    const [data] = await once(ws, "message");
    assert.equal(String(data), "echo hi");
    ws.close();
    await once(ws, "close");
  });

  test("an upload of ~270 KB answered before it is read gets its answer, as from node:http (no EPIPE, no reset)", async (t) => {
    const app = express({ engine });
    app.post("/upload", (_req: Any, res: Any) => res.status(400).send("refused"));
    const { port } = await listening(t, app);
    const body = Buffer.alloc(270 * 1024, "x");
    const outcomes: Array<number | string> = [];
    for (let i = 0; i < 20; i++) outcomes.push(await upload(port, body));
    assert.deepEqual(outcomes, new Array(20).fill(400));
  });

  test("server.close() once an upload has its early answer lets the client send the rest: no reset (supertest closes its server so)", async () => {
    // The answer comes after the first piece; then the server is closed, and the client sends
    // megabytes more on the connection it keeps alive, more than a server reads in a turn or two.
    const piece = Buffer.alloc(64 * 1024, "x");
    const pieces = 128;
    const outcomes: Array<number | string> = [];
    for (let round = 0; round < 5; round++) {
      const app = express({ engine });
      app.post("/upload", (_req: Any, res: Any) => res.status(405).json({ message: "no uploads here" }));
      const server = app.listen(0, "127.0.0.1");
      const port = await portOf(server as Listening);
      const agent = new Agent({ keepAlive: true });
      outcomes.push(
        await new Promise<number | string>((resolve) => {
          let status: number | string = "no answer";
          const req = httpRequest({
            host: "127.0.0.1",
            port,
            method: "POST",
            path: "/upload",
            agent,
            headers: { "content-type": "application/octet-stream", "content-length": piece.length * pieces },
          });
          req.on("response", (res) => {
            status = res.statusCode!;
            // Its callback comes once the connection has closed: after the rest was read, or cut.
            const serverClosed = new Promise((closed) => server.close(closed));
            res.resume();
            res.on("end", () => {
              for (let i = 1; i < pieces; i++) req.write(piece);
              req.end(() => void serverClosed.then(() => resolve(status)));
            });
          });
          req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
          req.write(piece);
        }),
      );
      agent.destroy();
    }
    assert.deepEqual(outcomes, new Array(5).fill(405));
  });

  test("req is an http.IncomingMessage and res an http.ServerResponse, and Node's members that are reachable on them work", async (t) => {
    const app = express({ engine });
    app.get("/kinds", (req: Any, res: Any) => {
      const seen = {
        request: req instanceof IncomingMessage,
        response: res instanceof ServerResponse && res instanceof OutgoingMessage,
        timeout: req.setTimeout(60_000) === req,
        distinct: req.headersDistinct["x-twice"],
        // Node's older name for writeHead, which Node 26 no longer has: there as node:http has it.
        writeHeader: typeof res.writeHeader === typeof (ServerResponse.prototype as Any).writeHeader,
      };
      res.setHeaders(new Map([["x-set", "by setHeaders"]]));
      res.setHeader("X-Case", "kept");
      const body = JSON.stringify({
        ...seen,
        raw: res
          .getRawHeaderNames()
          .map((name: string) => name.toLowerCase())
          .sort(),
      });
      (res.writeHeader ?? res.writeHead).call(res, 200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    });
    const { port } = await listening(t, app);
    const answer = await untilClosed(port, "GET /kinds HTTP/1.1\r\nHost: x\r\nX-Twice: a\r\nX-Twice: b\r\nConnection: close\r\n\r\n");
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(answer, /\r\nx-set: by setHeaders\r\n/i);
    assert.deepEqual(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)), {
      request: true,
      response: true,
      timeout: true,
      distinct: ["a", "b"],
      writeHeader: true,
      raw: ["x-case", "x-powered-by", "x-set"],
    });
  });

  test("Node's members that work on node:http's private fields are not reachable on the native engine's objects (middleware that feature-detects one goes on without)", async (t) => {
    const app = express({ engine });
    const reached: string[] = [];
    app.get("/", (req: Any, res: Any) => {
      const inherit = new Set<PropertyKey>(["constructor", "setTimeout", "setHeaders", "getRawHeaderNames", "pipe", Symbol.for("nodejs.rejection")]);
      for (const [object, top] of [
        [req, IncomingMessage.prototype],
        [res, ServerResponse.prototype],
      ] as const) {
        for (
          let p: object = top;
          p !== Object.getPrototypeOf(OutgoingMessage.prototype) && p !== Object.getPrototypeOf(IncomingMessage.prototype);
          p = Object.getPrototypeOf(p)
        ) {
          for (const key of Reflect.ownKeys(p)) {
            if (inherit.has(key)) continue;
            let holder: object = object;
            while (!Object.hasOwn(holder, key)) holder = Object.getPrototypeOf(holder);
            if (holder === p) reached.push(`${p.constructor.name}.${String(key)}`);
          }
        }
      }
      res.end();
    });
    const { port } = await listening(t, app);
    assert.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 200);
    // On node:http they are the objects' own class's members, and work.
    if (engine === "native") assert.deepEqual(reached, []);
    else assert.ok(reached.includes("ServerResponse.writeEarlyHints"), reached.join(", "));
  });

  test("helmet's CSP directive functions get an IncomingMessage and a ServerResponse (helmet's own test asserts it)", async (t) => {
    const app = express({ engine });
    const directive = (req: unknown, res: unknown) => (req instanceof IncomingMessage && res instanceof ServerResponse ? "kinds.example" : "other.example");
    app.use(helmet({ contentSecurityPolicy: { useDefaults: false, directives: { "default-src": ["'self'", directive] } } }));
    app.get("/", (_req: Any, res: Any) => res.send("ok"));
    const { port } = await listening(t, app);
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get("content-security-policy"), "default-src 'self' kinds.example");
  });

  test("express-http-proxy hands its decorators and path resolvers the IncomingMessage it proxies (its own tests assert it)", async (t) => {
    const upstream = express({ engine });
    upstream.get("/*path", (req: Any, res: Any) => res.json({ url: req.url, decorated: req.headers["x-decorated"] ?? null }));
    const { port: upstreamPort } = await listening(t, upstream);
    const seen: boolean[] = [];
    const app = express({ engine });
    app.use(
      proxy(`127.0.0.1:${upstreamPort}`, {
        proxyReqPathResolver: (req: unknown) => (seen.push(req instanceof IncomingMessage), "/resolved"),
        proxyReqOptDecorator: (options: { headers: Record<string, string> }, req: unknown) => {
          seen.push(req instanceof IncomingMessage);
          options.headers["x-decorated"] = "yes";
          return options;
        },
      }),
    );
    const { port } = await listening(t, app);
    const answer = await fetch(`http://127.0.0.1:${port}/asked`);
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), { url: "/resolved", decorated: "yes" });
    assert.deepEqual(seen, [true, true]);
  });
});
