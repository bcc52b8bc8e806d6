// Helpers for tests that run an app as a process of its own (test/fixtures/serving-app.ts) and load it.
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { engine } from "./helpers.js";

export interface Served {
  child: ChildProcess;
  port: number;
  /** Everything the processes wrote to stdout so far (the port, then JSON log lines). */
  output(): string;
  /** Resolves with the exit code (or signal). */
  exited: Promise<number | string>;
}

/** Starts the fixture app (`WORKERS` workers, or one process) and waits for its port. */
export async function start(env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/serving-app.ts"], { env: { ...process.env, COG_ENGINE: engine, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal!)));
  for (let i = 0; i < 600 && !out.includes("\n"); i++) {
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const port = Number(out.split("\n")[0]);
  if (!(port > 0)) {
    child.kill("SIGKILL");
    throw new Error(`the app did not start: ${out}${err}`);
  }
  return { child, port, output: () => out, exited };
}

/** One GET on a connection of its own (so that connections spread over workers); resolves with status and body, or the error's code. */
export function get(port: number, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false, headers: { connection: "close" } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
      res.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    });
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    // Nothing may hang a test: a request unanswered for 10 s counts as failed.
    req.setTimeout(10_000, () => req.destroy(Object.assign(new Error("timed out"), { code: "TIMEOUT" })));
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

/** The access-log lines the processes wrote (not the error lines: a 503 while draining is logged as one too). */
export function logLines(output: string): Array<{ status: number; aborted: boolean; path: string }> {
  return output
    .split("\n")
    .slice(1)
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { level: string; status: number; aborted: boolean; path: string })
    .filter((l) => l.level === "info");
}
