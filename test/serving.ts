// Helpers for tests that run an app as a process of its own (test/fixtures/serving-app.ts) and load it.
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { request } from "node:http";
import { startChild, waitForOutput, type Owner } from "./children.js";
import { openStream } from "./wire.js";
import { engine } from "./helpers.js";

export interface Served {
  child: ChildProcess;
  port: number;
  /** Everything the processes wrote to stdout so far (the port, then JSON log lines). */
  output(): string;
  /** Everything the processes wrote to stderr so far. */
  errors(): string;
  /** Resolves with the exit code (or signal). */
  exited: Promise<number | string>;
}

/** Starts the fixture app (`WORKERS` workers, or one process) for the test `t` (stopped when it ends) and waits for its port. */
export async function start(t: Owner, env: Record<string, string> = {}): Promise<Served> {
  const app = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/serving-app.ts"], { env: { ...process.env, COG_ENGINE: engine, ...env } });
  await waitForOutput(app, (out) => out.includes("\n"), "the app to print its port");
  return { child: app.child, port: Number(app.stdout().split("\n")[0]), output: app.stdout, errors: app.stderr, exited: app.exited };
}

/**
 * One GET on a connection of its own (so that connections spread over workers); resolves with
 * status and body, or the error's code (TIMEOUT when unanswered for `timeoutMs`).
 */
export function get(port: number, path: string, timeoutMs = 10_000): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false, headers: { connection: "close" } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
      res.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    });
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    // Nothing may hang a test: a request unanswered for that long counts as failed.
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error("timed out"), { code: "TIMEOUT" })));
    req.end();
  });
}

type Outcome = { status: number; body: string } | { error: string };

/** Requests from `concurrency` clients in a loop, each outcome passed to `done`, until it returns true for one. */
export async function load(port: number, path: string, concurrency: number, done: (outcome: Outcome) => boolean): Promise<Outcome[]> {
  const results: Outcome[] = [];
  let stop = false;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!stop) {
        const outcome = await get(port, path);
        results.push(outcome);
        if (done(outcome)) stop = true;
      }
    }),
  );
  return results;
}

/** The JSON log lines the processes wrote to stdout (after the port). */
export function logLines(output: string): Array<{ level: string; status: number; aborted: boolean; path: string; reason?: string }> {
  return output
    .split("\n")
    .slice(1)
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { level: string; status: number; aborted: boolean; path: string; reason?: string });
}

/**
 * Loads `app` on `/slow` with 16 clients, sends it SIGTERM after 50 answers, and checks the drain:
 * it exits 0, no request it logged was cut, and every request it logged reached its client (and
 * the reverse); what came after the signal is a 200 or a 503 (logged at info, with its reason).
 */
export async function sigtermUnderLoad(app: Served): Promise<void> {
  let answered = 0;
  let signalled = false;
  const results = await load(app.port, "/slow", 16, (r) => {
    if ("status" in r) answered++;
    if (!signalled && answered >= 50) {
      signalled = true;
      app.child.kill("SIGTERM");
    }
    return signalled && "error" in r;
  });
  assert.equal(await app.exited, 0);
  const lines = logLines(app.output());
  assert.deepEqual(
    lines.filter((l) => l.level !== "info"),
    [],
    "a drain logs no error: a request it refuses is an info line",
  );
  assert.ok(
    lines.every((l) => (l.status === 503) === (l.reason === "draining")),
    "each 503 says it was refused while draining",
  );
  const ok = results.filter((r) => "status" in r);
  assert.ok(
    lines.every((l) => !l.aborted),
    "no accepted request was cut",
  );
  assert.equal(ok.length, lines.length, "every request the server logged reached its client, and vice versa");
  assert.ok(
    ok.every((r) => r.status === 200 || r.status === 503),
    JSON.stringify(ok.filter((r) => r.status !== 200 && r.status !== 503)),
  );
}

/** The pids of the processes whose onClose hook ran (the fixture writes `onClose PID`), in order. */
export function closeHookPids(output: string): number[] {
  return [...output.matchAll(/^onClose (\d+)$/gm)].map((m) => Number(m[1]));
}

/**
 * Opens an event stream on `app`, sends it SIGTERM, and checks the shutdown: the stream gets its
 * final event and a clean end (the chunked terminator, then the server's FIN) before the process
 * exits 0, and each serving process ran its onClose hook once. Returns those pids.
 */
export async function sigtermWithStream(app: Served): Promise<number[]> {
  const stream = openStream(app.port, "/events");
  const deadline = Date.now() + 10_000;
  while (!stream.text().includes("data: open\n\n")) {
    assert.ok(Date.now() < deadline, `the stream opened: ${JSON.stringify(stream.text())}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  app.child.kill("SIGTERM");
  assert.equal(await stream.ended, "end", "the stream ended with a FIN, not a reset");
  assert.match(stream.text(), /event: bye\ndata: \d+\n\n\r\n0\r\n\r\n$/, "the final event, then the chunked terminator (not a cut at drainMs)");
  assert.equal(await app.exited, 0);
  return closeHookPids(app.output());
}
