// req.log: a logger bound to the request's id, on both engines: a pino child with a pino logger,
// Cog's own with logger: true or a function (its lines go where the access log's go); without a
// logger undefined, for a middleware to set (pino-http does).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import pino from "pino";
import type { AppLogLine, Cog, LogFunction, RequestLog } from "../../src/index.js";
import { startChild, stop, waitForOutput } from "../children.js";
import { engine, serve } from "../helpers.js";

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

test(`with a pino logger, req.log is its child bound to the request id (${engine})`, async (t) => {
  const written: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n")) if (line !== "") written.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: "debug" }, destination);
  const { fetch } = await serve(
    t,
    (app) => {
      app.get("/orders/:id", async (req, res) => {
        req.log!.info({ order: req.params.id }, "loading");
        await new Promise((resolve) => setTimeout(resolve, 2));
        req.log!.warn("slow");
        res.send("ok");
      });
    },
    { logger },
  );
  const answers = await Promise.all([fetch("/orders/1"), fetch("/orders/2")]);
  const ids = answers.map((answer) => answer.headers.get("x-request-id"));
  await until(() => written.filter((line) => line.msg === "loading" || line.msg === "slow").length >= 4);
  for (const [n, id] of ids.entries()) {
    const mine = written.filter((line) => line.id === id && line.msg !== "request");
    assert.deepEqual(
      mine.map((line) => [line.level, line.msg, line.order]),
      [
        [30, "loading", String(n + 1)],
        [40, "slow", undefined],
      ],
    );
  }
});

test(`with a logger function, req.log's lines go to it with the request id; an Error is serialized (${engine})`, async (t) => {
  const lines: AppLogLine[] = [];
  const logger: LogFunction = (line) => {
    if (line.msg !== "request") lines.push(line as AppLogLine);
  };
  const { fetch } = await serve(
    t,
    (app) => {
      app.get("/", (req, res) => {
        req.log!.debug("plain message");
        req.log!.error(new Error("kept"), "with an error");
        res.send("ok");
      });
    },
    { logger, logErrors: false },
  );
  const answer = await fetch("/");
  assert.equal(await answer.text(), "ok");
  const id = answer.headers.get("x-request-id");
  assert.equal(lines.length, 2);
  assert.deepEqual({ ...lines[0], time: 0 }, { level: "debug", time: 0, msg: "plain message", id });
  assert.equal(lines[1]!.level, "error");
  assert.equal(lines[1]!.msg, "with an error");
  assert.equal(lines[1]!.id, id);
  assert.equal((lines[1]!.err as { message: string }).message, "kept");
  assert.equal(typeof lines[1]!.time, "number");
});

test(`with logger: true, req.log writes JSON lines to stdout with the request id (${engine})`, async (t) => {
  const app = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/logging-app.ts"], { env: { ...process.env, COG_ENGINE: engine } });
  await waitForOutput(app, (out) => out.includes("\n"), "the fixture to print its port");
  const port = Number(app.stdout().split("\n")[0]);
  const answer = await fetch(`http://127.0.0.1:${port}/noted`);
  assert.equal(await answer.text(), "ok");
  await stop(app.child);
  const lines = app
    .stdout()
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const noted = lines.find((line) => line.msg === "noted")!;
  assert.equal(noted.level, "info");
  assert.equal(noted.user, "ann");
  assert.equal(noted.id, answer.headers.get("x-request-id"));
  assert.ok(lines.some((line) => line.msg === "request" && line.route === "/noted"));
});

test(`without a logger req.log is undefined, for a middleware to set; with one, a middleware may replace it (${engine})`, async (t) => {
  const replaced: string[] = [];
  const mine: RequestLog = {
    debug: () => {},
    info: (fields: object | string, msg?: string) => void replaced.push(typeof fields === "string" ? fields : String(msg)),
    warn: () => {},
    error: () => {},
  };
  const define = (app: Cog) => {
    app.get("/unset", (req, res) => res.send(typeof req.log));
    app.get(
      "/replaced",
      (req, _res, next) => {
        req.log = mine;
        next();
      },
      (req, res) => {
        req.log!.info("mine");
        res.send("ok");
      },
    );
  };
  const without = await serve(t, define);
  assert.equal(await (await without.fetch("/unset")).text(), "undefined");
  assert.equal(await (await without.fetch("/replaced")).text(), "ok");
  const withLogger = await serve(t, define, { logger: () => {} });
  assert.equal(await (await withLogger.fetch("/unset")).text(), "object");
  assert.equal(await (await withLogger.fetch("/replaced")).text(), "ok");
  assert.deepEqual(replaced, ["mine", "mine"]);
});
