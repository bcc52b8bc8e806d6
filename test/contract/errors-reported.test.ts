// Errors are always reported: a 5xx is logged with its error, the request id, method, path and
// route even when the app has its own onError, which decides the answer, not whether it is
// logged; logErrors: false turns the log off. Errors after the answer (a late throw, a stream
// that fails mid-body) are logged and published on cog.request's error channel; a promise a
// handler left behind is the process's unhandledRejection, heard in its request's context. The
// same on both engines.
import { test } from "node:test";
import assert from "node:assert/strict";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { once } from "node:events";
import { connect } from "node:net";
import { Readable, pipeline } from "node:stream";
import { HttpError, type ErrorLogLine, type LogFunction } from "../../src/index.js";
import { startChild, waitForOutput } from "../children.js";
import { engine, serve } from "../helpers.js";

/** Waits until `condition` holds; the bound only turns a missing line into a failure. */
async function until(condition: () => boolean): Promise<void> {
  for (const end = Date.now() + 15_000; !condition() && Date.now() < end;) await new Promise((resolve) => setTimeout(resolve, 10));
}

function errorLines(): { lines: ErrorLogLine[]; logger: LogFunction } {
  const lines: ErrorLogLine[] = [];
  return { lines, logger: (line) => void (line.level === "error" && lines.push(line as ErrorLogLine)) };
}

test(`a 5xx answered by a custom onError is logged with the error, request id, method, path and route (${engine})`, async (t) => {
  const { lines, logger } = errorLines();
  const { fetch } = await serve(
    t,
    (app) => {
      app.get("/orders/:id", async () => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        throw new Error("the query failed");
      });
      app.get("/sync/:id", () => {
        throw new Error("thrown at once");
      });
      app.onError(async (err, _req, res) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        res.status(500).json({ error: "internal", message: (err as Error).message });
      });
    },
    { logger, logErrors: true },
  );
  const answer = await fetch("/orders/7?secret=1");
  assert.equal(answer.status, 500);
  const id = answer.headers.get("x-request-id");
  assert.equal((await fetch("/sync/1")).status, 500);
  await until(() => lines.length >= 2);
  assert.equal(lines.length, 2);
  const [line] = lines;
  assert.equal(line!.id, id);
  assert.equal(line!.method, "GET");
  assert.equal(line!.path, "/orders/7");
  assert.equal(line!.route, "/orders/:id");
  assert.equal(line!.msg, "cog: GET /orders/7 (route GET /orders/:id)", "the path, not the query");
  assert.equal((line!.err as { message: string }).message, "the query failed");
  assert.equal((lines[1]!.err as { message: string }).message, "thrown at once");
});

test(`onError decides: what it answers with a 4xx is not logged, what it turns into a 5xx is (${engine})`, async (t) => {
  const { lines, logger } = errorLines();
  const { fetch } = await serve(
    t,
    (app) => {
      app.get("/invalid", () => {
        throw new Error("a plain error the app calls a bad request");
      });
      app.get("/upstream", () => {
        throw new HttpError(400, "a 400 the app answers 502");
      });
      app.get("/missing", () => {
        throw new HttpError(404, "no such order");
      });
      app.onError((err, req, res) => {
        if (req.path === "/invalid") return res.status(400).json({ error: "bad" });
        if (req.path === "/upstream") return res.status(502).json({ error: "bad gateway" });
        res.status((err as HttpError).status).json({ error: "missing" });
      });
    },
    { logger, logErrors: true },
  );
  assert.equal((await fetch("/invalid")).status, 400);
  assert.equal((await fetch("/missing")).status, 404);
  assert.equal((await fetch("/upstream")).status, 502);
  await until(() => lines.length >= 1);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(
    lines.map((line) => [line.path, (line.err as { message: string }).message]),
    [["/upstream", "a 400 the app answers 502"]],
  );
});

test(`without a logger, a 5xx under a custom onError goes to stderr with where it happened (${engine})`, async (t) => {
  const written: unknown[][] = [];
  t.mock.method(console, "error", (...args: unknown[]) => void written.push(args));
  const { fetch } = await serve(
    t,
    (app) => {
      app.get("/users/:id", () => {
        throw new Error("no database");
      });
      app.onError((_err, _req, res) => res.status(500).send("sorry"));
    },
    { logErrors: true },
  );
  assert.equal(await (await fetch("/users/3")).text(), "sorry");
  await until(() => written.length >= 1);
  assert.equal(written.length, 1);
  assert.equal(written[0]![0], "cog: GET /users/3 (route GET /users/:id):");
  assert.equal((written[0]![1] as Error).message, "no database");
});

test(`logErrors: false turns the log off, custom onError or not (${engine})`, async (t) => {
  const { lines, logger } = errorLines();
  const { fetch } = await serve(
    t,
    (app) => {
      app.get("/", () => {
        throw new Error("quiet");
      });
      app.onError((_err, _req, res) => res.status(500).send("sorry"));
    },
    { logger, logErrors: false },
  );
  assert.equal((await fetch("/")).status, 500);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(lines, []);
});

test(`an error after the answer is logged and published on cog.request's error channel (${engine})`, async (t) => {
  const { lines, logger } = errorLines();
  const published: Array<[string, boolean]> = [];
  const onError = (message: unknown) => {
    const { error, res } = message as { error: Error; res: { writableEnded: boolean } };
    published.push([error.message, res.writableEnded]);
  };
  subscribe("tracing:cog.request:error", onError);
  t.after(() => unsubscribe("tracing:cog.request:error", onError));
  const { fetch } = await serve(
    t,
    (app) => {
      app.get("/late/:id", async (_req, res) => {
        res.send("answered");
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new Error("after the answer");
      });
    },
    { logger, logErrors: true },
  );
  const answer = await fetch("/late/1");
  assert.equal(await answer.text(), "answered");
  await until(() => lines.length >= 1 && published.length >= 1);
  assert.deepEqual(published, [["after the answer", true]]);
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.id, answer.headers.get("x-request-id"));
  assert.equal(lines[0]!.route, "/late/:id");
  assert.match(lines[0]!.msg, /after the response was sent/);
});

test(`a stream that fails mid-body cuts the connection, and its error is logged and published: res.send(stream), pipeline into res, res.destroy(err) (${engine})`, async (t) => {
  const { lines, logger } = errorLines();
  const published: string[] = [];
  const onError = (message: unknown) => void published.push((message as { error: Error }).error.message);
  subscribe("tracing:cog.request:error", onError);
  t.after(() => unsubscribe("tracing:cog.request:error", onError));
  const { fetch } = await serve(
    t,
    (app) => {
      app.get("/send", (_req, res) => res.type("text").send(failing("send")));
      app.get("/pipeline", (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        pipeline(failing("pipeline"), res, () => {});
      });
      app.get("/destroy", (_req, res) => {
        res.write("a first part\n");
        setTimeout(() => res.destroy(new Error("destroy failed mid-body")), 5);
      });
    },
    { logger, logErrors: true },
  );
  for (const path of ["/send", "/pipeline", "/destroy"]) {
    const answer = await fetch(path);
    assert.equal(answer.status, 200);
    // The head and the first part are out; the connection is cut before the end.
    await assert.rejects(answer.text(), (err: Error) => /terminated/.test(err.message));
  }
  await until(() => lines.length >= 3 && published.length >= 3);
  assert.deepEqual(published, ["send failed mid-body", "pipeline failed mid-body", "destroy failed mid-body"]);
  assert.deepEqual(
    lines.map((line) => [line.path, (line.err as Error).message]),
    [
      ["/send", "send failed mid-body"],
      ["/pipeline", "pipeline failed mid-body"],
      ["/destroy", "destroy failed mid-body"],
    ],
  );
  for (const line of lines) assert.match(line.msg, /it destroyed the response: the connection was cut/);
});

test(`a client that leaves mid-stream is no error: nothing is logged or published, and the stream is destroyed (${engine})`, async (t) => {
  const { lines, logger } = errorLines();
  const published: unknown[] = [];
  const onError = (message: unknown) => void published.push(message);
  subscribe("tracing:cog.request:error", onError);
  t.after(() => unsubscribe("tracing:cog.request:error", onError));
  const streams: Readable[] = [];
  const { port } = await serve(
    t,
    (app) => {
      app.get("/endless", (_req, res) => {
        const body = new Readable({ read() {} });
        const timer = setInterval(() => body.push("more\n"), 2);
        body.on("close", () => clearInterval(timer));
        streams.push(body);
        res.type("text").send(body);
      });
    },
    { logger, logErrors: true },
  );
  const socket = connect(port, "127.0.0.1");
  socket.write("GET /endless HTTP/1.1\r\nHost: x\r\n\r\n");
  await once(socket, "data");
  socket.destroy();
  await until(() => streams[0]?.destroyed === true);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(streams[0]!.destroyed, true);
  assert.deepEqual(lines, []);
  assert.deepEqual(published, []);
});

/** A readable that gives two chunks, then fails with "NAME failed mid-body". */
function failing(name: string): Readable {
  let chunks = 0;
  return new Readable({
    read() {
      if (chunks++ < 2) this.push(`chunk ${chunks}\n`);
      else setTimeout(() => this.destroy(new Error(`${name} failed mid-body`)), 5);
    },
  });
}

test(`a promise a handler left behind rejects to Node's unhandledRejection, in the context of the request that made it; unheard, Node ends the process (${engine})`, async (t) => {
  const app = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/left-behind-app.ts"], {
    env: { ...process.env, COG_ENGINE: engine, LISTEN: "1" },
  });
  await waitForOutput(app, (out) => out.includes("\n"), "the fixture to print its port");
  const port = Number(app.stdout().split("\n")[0]);
  const ids = Array.from({ length: 50 }, (_, i) => `order-${i}`);
  const answers = await Promise.all(ids.map(async (id) => (await fetch(`http://127.0.0.1:${port}/orders?id=${id}`)).status));
  assert.deepEqual(new Set(answers), new Set([202]));
  await waitForOutput(app, (out) => out.trim().split("\n").length > ids.length, "a line for each rejection");
  const heard = app
    .stdout()
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => JSON.parse(line) as { reason: string; store: string });
  // Each rejection's listener ran in its own request's context: the store that request entered.
  assert.deepEqual(heard.map(({ reason, store }) => [reason, store]).sort(), ids.map((id) => [`left behind by ${id}`, id]).sort());
  assert.equal(app.child.exitCode, null, "a listener keeps the process running");

  // Without a listener: Node's default (--unhandled-rejections=throw) ends the process, as
  // under any framework; Cog does not listen for it.
  const unheard = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/left-behind-app.ts"], { env: { ...process.env, COG_ENGINE: engine } });
  await waitForOutput(unheard, (out) => out.includes("\n"), "the fixture to print its port");
  const answer = await fetch(`http://127.0.0.1:${Number(unheard.stdout().split("\n")[0])}/orders?id=lost`);
  assert.equal(answer.status, 202);
  assert.equal(await unheard.exited, 1);
  assert.match(unheard.stderr(), /left behind by lost/);
});

test(`no log line carries the query, which holds tokens: stderr, the JSON error line and pino's msg name the path alone (${engine})`, async (t) => {
  const { default: pino } = await import("pino");
  const { Writable } = await import("node:stream");
  const written: unknown[][] = [];
  t.mock.method(console, "error", (...args: unknown[]) => void written.push(args));
  const boom = (app: import("../../src/index.js").Cog) =>
    app.get("/boom/:id", () => {
      throw new Error("no database");
    });
  const bare = await serve(t, boom, { logErrors: true });
  assert.equal((await bare.fetch("/boom/1?token=s3cret&page=2")).status, 500);
  await until(() => written.length >= 1);
  assert.equal(written[0]![0], "cog: GET /boom/1 (route GET /boom/:id):");

  const { lines, logger } = errorLines();
  const json = await serve(t, boom, { logger, logErrors: true });
  assert.equal((await json.fetch("/boom/2?token=s3cret")).status, 500);
  await until(() => lines.length >= 1);
  assert.equal(lines[0]!.msg, "cog: GET /boom/2 (route GET /boom/:id)");
  assert.equal(lines[0]!.path, "/boom/2");

  const pinoLines: string[] = [];
  const destination = new Writable({ write: (chunk, _encoding, done) => void (pinoLines.push(String(chunk)), done()) });
  const viaPino = await serve(t, boom, { logger: pino(destination), logErrors: true });
  assert.equal((await viaPino.fetch("/boom/3?token=s3cret")).status, 500);
  await until(() => pinoLines.some((line) => line.includes('"level":50')));
  const errorLine = pinoLines.find((line) => line.includes('"level":50'))!;
  assert.equal(JSON.parse(errorLine).msg, "cog: GET /boom/3 (route GET /boom/:id)");
  assert.ok(
    ![...written.flat().map(String), ...pinoLines, ...lines.map((line) => JSON.stringify(line))].some((text) => text.includes("s3cret")),
    "no line holds the token",
  );
});
