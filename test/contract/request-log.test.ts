import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ErrorLogLine, RequestLogLine } from "../../src/index.js";
import { Cog } from "../../src/index.js";
import { startChild, stop, waitForOutput } from "../children.js";
import { engine, raw, serve, statuses } from "../helpers.js";
import { slowConnection } from "../wire.js";
import { TEXT, frame, openRaw } from "../websocket-wire.js";

type Line = RequestLogLine | ErrorLogLine;

/**
 * Waits until `lines` holds `n` lines (the access line is written after the answer reaches the
 * client); the bound is only there so that a missing line fails rather than hangs.
 */
async function until(lines: Line[], n: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (lines.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  assert.equal(lines.length, n, `expected ${n} log lines, got ${JSON.stringify(lines)}`);
}

describe("request log", () => {
  test("one line per request after the answer: method, path, route, status, bytes, duration and id, echoed in X-Request-Id", async (t) => {
    const lines: Line[] = [];
    const { fetch } = await serve(
      t,
      (app) => {
        app.get("/users/:id", (req, res) => res.json({ id: req.params.id, requestId: req.id }));
        app.get("/stream", (_req, res) => {
          res.write("é");
          res.write(Buffer.from("xyz"));
          res.end("b");
        });
        app.get("/ended", (_req, res) => void res.end("héllo"));
        app.get("/phrase", (_req, res) => {
          res.statusMessage = "Quite Fine";
          res.status(203).send("x");
        });
      },
      { logger: (line) => lines.push(line) },
    );
    const res = await fetch("/users/7?secret=x");
    const body = (await res.json()) as { id: string; requestId: string };
    const id = res.headers.get("x-request-id");
    assert.ok(id !== null && id.length > 0);
    assert.equal(body.requestId, id, "req.id is the id echoed in X-Request-Id");
    await until(lines, 1);
    const line = lines[0] as RequestLogLine;
    assert.equal(line.level, "info");
    assert.equal(line.msg, "request");
    assert.equal(line.method, "GET");
    assert.equal(line.path, "/users/7", "the query string stays out of the log");
    assert.equal(line.route, "/users/:id");
    assert.equal(line.status, 200);
    assert.equal(line.bytes, Buffer.byteLength(JSON.stringify(body)));
    assert.equal(line.id, id);
    assert.equal(line.aborted, false);
    assert.ok(line.ms >= 0 && line.ms < 10_000);

    const missing = await fetch("/nope");
    await missing.text();
    await until(lines, 2);
    assert.equal((lines[1] as RequestLogLine).status, 404);
    assert.equal((lines[1] as RequestLogLine).route, null);
    assert.notEqual(lines[1]!.id, id, "each request gets its own id");

    const streamed = await fetch("/stream");
    assert.equal(await streamed.text(), "éxyzb");
    await until(lines, 3);
    assert.equal((lines[2] as RequestLogLine).status, 200);
    assert.equal((lines[2] as RequestLogLine).bytes, 6, "a stream without a length: the bytes written (é is two)");
    assert.equal(streamed.headers.get("x-request-id"), lines[2]!.id, "a streamed response echoes its id too");

    assert.equal(await (await fetch("/ended")).text(), "héllo");
    await until(lines, 4);
    assert.equal((lines[3] as RequestLogLine).bytes, 6, "a whole body given to end() without a length: its bytes");

    // Twice: the second is sent with the header block the first left in the engine's cache.
    for (const n of [5, 6]) {
      const phrased = await fetch("/phrase");
      assert.equal(`${phrased.status} ${phrased.statusText} ${await phrased.text()}`, "203 Quite Fine x");
      await until(lines, n);
      assert.equal(phrased.headers.get("x-request-id"), lines[n - 1]!.id, "beside a reason phrase of the app's");
    }
  });

  test("a client's X-Request-Id is ignored unless trustRequestId is on, and kept only when well-formed", async (t) => {
    const lines: Line[] = [];
    const untrusting = await serve(t, (app) => app.get("/", (req, res) => res.send(req.id)), { logger: (line) => lines.push(line) });
    const sent = await untrusting.fetch("/", { headers: { "x-request-id": "from-client-1" } });
    assert.notEqual(await sent.text(), "from-client-1");

    const trusting = await serve(t, (app) => app.get("/", (req, res) => res.send(req.id)), { logger: () => {}, trustRequestId: true });
    const kept = await trusting.fetch("/", { headers: { "x-request-id": "from-proxy-1" } });
    assert.equal(await kept.text(), "from-proxy-1");
    assert.equal(kept.headers.get("x-request-id"), "from-proxy-1");
    const bad = await trusting.fetch("/", { headers: { "x-request-id": "<script>" } });
    assert.notEqual(await bad.text(), "<script>", "an id unsafe to echo or log is replaced");
    assert.match(bad.headers.get("x-request-id")!, /^[A-Za-z0-9_-]+-\d+$/);
  });

  test("errors are logged with the request id and route; a refused request is logged too", async (t) => {
    const lines: Line[] = [];
    const { fetch, port } = await serve(
      t,
      (app) => {
        app.get("/boom", () => {
          throw new Error("kaput");
        });
      },
      { logger: (line) => lines.push(line), logErrors: true },
    );
    const res = await fetch("/boom");
    assert.equal(res.status, 500);
    await res.text();
    await until(lines, 2);
    const error = lines.find((l) => l.level === "error") as ErrorLogLine;
    const access = lines.find((l) => l.level === "info") as RequestLogLine;
    assert.equal(error.route, "/boom");
    assert.equal(error.id, res.headers.get("x-request-id"));
    assert.equal((error.err as { message: string }).message, "kaput");
    assert.match(error.msg, /GET \/boom/);
    assert.equal(access.status, 500);
    assert.equal(access.id, error.id);

    const refused = await raw(port, "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
    assert.match(refused, /^HTTP\/1\.1 400/);
    await until(lines, 3);
    assert.equal((lines[2] as RequestLogLine).status, 400);
  });

  test("a request refused while the server drains is an info line with reason draining, not an error", async () => {
    const lines: Line[] = [];
    const app = new Cog({ engine, logErrors: true, logger: (line) => lines.push(line) });
    const connection = await slowConnection(app);
    const closing = app.close(2000);
    // On the connection still busy with /slow, after the drain began.
    await connection.lateRequestArrived();
    connection.release();
    await closing;
    await connection.ended;
    const received = connection.received();
    assert.deepEqual(statuses(received), [200, 503]);
    await until(lines, 2);
    assert.deepEqual(
      lines.map((l) => l.level),
      ["info", "info"],
      "no error line for the refusal",
    );
    // The native engine dispatches a pipelined request as it arrives, so its refusal may be logged first.
    const [served, refused] = [200, 503].map((status) => (lines as RequestLogLine[]).find((l) => l.status === status)!);
    assert.deepEqual([refused!.status, refused!.reason, refused!.path, refused!.aborted], [503, "draining", "/slow", false]);
    assert.equal(served!.reason, undefined, "an ordinary line has no reason");
  });

  test("a pino logger gets info and error calls", async (t) => {
    const calls: Array<[string, Record<string, unknown>, string | undefined]> = [];
    const pino = {
      info: (o: object, msg?: string) => calls.push(["info", o as Record<string, unknown>, msg]),
      error: (o: object, msg?: string) => calls.push(["error", o as Record<string, unknown>, msg]),
    };
    const { fetch } = await serve(
      t,
      (app) =>
        app.get("/fail", () => {
          throw new Error("pino sees this");
        }),
      { logger: pino, logErrors: true },
    );
    const res = await fetch("/fail");
    await res.text();
    for (let i = 0; i < 200 && calls.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    const error = calls.find((c) => c[0] === "error")!;
    assert.ok(error[1].err instanceof Error, "pino's own serializer gets the Error");
    assert.equal(error[1].route, "/fail");
    const info = calls.find((c) => c[0] === "info")!;
    assert.equal(info[2], "request");
    assert.equal(info[1].status, 500);
    assert.equal(info[1].id, res.headers.get("x-request-id"));
  });

  test("logger: true writes JSON lines to stdout that parse and carry the request id", async (t) => {
    const app = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/logging-app.ts"], { env: { ...process.env, COG_ENGINE: engine } });
    await waitForOutput(app, (out) => out.includes("\n"), "the fixture to print its port");
    const port = Number(app.stdout().split("\n")[0]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/hello`);
      await res.text();
      ids.push(res.headers.get("x-request-id")!);
    }
    await stop(app.child);
    const lines = app
      .stdout()
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l) as RequestLogLine);
    assert.deepEqual(
      lines.map((l) => l.id),
      ids,
    );
    assert.ok(lines.every((l) => l.msg === "request" && l.status === 200 && l.route === "/hello"));
  });
  test("handlers see the echoed id with getHeader and may replace it; a response cut without an answer is logged as aborted", async (t) => {
    const lines: Line[] = [];
    const { fetch, port } = await serve(
      t,
      (app) => {
        app.get("/seen", (req, res) => res.json({ echoed: res.getHeader("x-request-id"), has: res.hasHeader("x-request-id"), id: req.id }));
        app.get("/own", (_req, res) => {
          res.setHeader("X-Request-Id", "own-1");
          res.send("ok");
        });
        app.get("/cut", (_req, res) => void res.destroy());
      },
      { logger: (line) => lines.push(line) },
    );
    const seen = await fetch("/seen");
    const body = (await seen.json()) as { echoed: string; has: boolean; id: string };
    assert.deepEqual(body, { echoed: body.id, has: true, id: seen.headers.get("x-request-id") });
    const own = await fetch("/own");
    await own.text();
    assert.equal(own.headers.get("x-request-id"), "own-1", "one header, the handler's (fetch joins repeats with a comma)");
    await until(lines, 2);

    assert.equal(await raw(port, "GET /cut HTTP/1.1\r\nHost: a\r\n\r\n", 100), "", "the connection is cut unanswered");
    await until(lines, 3);
    const cut = lines[2] as RequestLogLine;
    assert.equal(cut.route, "/cut");
    assert.equal(cut.aborted, true);
    assert.equal(cut.status, null, "no head was sent");
  });
  test("an accepted WebSocket is one line with status 101, not aborted; a refused handshake is logged with its status", async (t) => {
    const lines: Line[] = [];
    const { port, fetch } = await serve(t, (app) => app.ws("/chat", { message: (ws, data) => void ws.send(data) }), { logger: (line) => lines.push(line) });
    const socket = await openRaw(port, "/chat");
    socket.send(frame({ opcode: TEXT, payload: "hi" }));
    assert.equal((await socket.next()).payload.toString(), "hi");
    await until(lines, 1);
    const accepted = lines[0] as RequestLogLine;
    assert.equal(accepted.status, 101);
    assert.equal(accepted.aborted, false);
    assert.equal(accepted.route, "/chat");
    assert.equal(accepted.path, "/chat");
    socket.socket.destroy();

    const plain = await fetch("/chat");
    await plain.text();
    assert.equal(plain.status, 426);
    await until(lines, 2);
    assert.equal((lines[1] as RequestLogLine).status, 426);
    assert.equal((lines[1] as RequestLogLine).aborted, false);
  });
});
