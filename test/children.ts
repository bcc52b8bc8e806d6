// The processes tests start (apps, redis-server): each is stopped when its test ends, whatever
// the outcome (node:test runs a test's after hooks when it fails or times out too), and killed
// when this process exits. None inherits this process's stdio: a child left behind holding the
// test runner's pipe would keep the runner waiting for its end forever.
import { spawn, type ChildProcess, type IOType, type SpawnOptions } from "node:child_process";

const running = new Set<ChildProcess>();
// 'exit' handlers run synchronously: kill is all there is time for, and all that is needed.
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** What a test gives: its context (`t`), whose end stops the child. */
export interface Owner {
  after(fn: () => unknown): void;
  readonly signal?: AbortSignal;
}

export interface Started {
  child: ChildProcess;
  /** Everything the child wrote to stdout so far. */
  stdout(): string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Resolves once it has exited, with its code (or signal). */
  exited: Promise<number | string>;
}

/**
 * Starts `command` for the test `owner` (stopped at its end), or for the file (null: stopped
 * when this process exits, or by `stop`). Its stdout and stderr are collected, never inherited;
 * stdin is closed.
 */
export function startChild(owner: Owner | null, command: string, args: readonly string[], options: Omit<SpawnOptions, "stdio"> = {}): Started {
  // A test that timed out goes on running: what it starts then would outlive it.
  if (owner?.signal?.aborted) throw new Error(`not starting ${command}: its test has ended`);
  const stdio: IOType[] = ["ignore", "pipe", "pipe"];
  const child = spawn(command, args, { ...options, stdio });
  running.add(child);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve(code ?? signal!);
    }),
  );
  // A spawn that fails (no such command) reports here, and is then "exited".
  child.once("error", () => running.delete(child));
  owner?.after(() => stop(child));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** SIGTERM, then SIGKILL if it has not exited after `graceMs`; resolves once it has exited (or given up waiting). */
export function stop(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
    const giveUp = setTimeout(done, graceMs + 5_000);
    function done() {
      clearTimeout(kill);
      clearTimeout(giveUp);
      resolve();
    }
    child.once("exit", done);
    child.kill("SIGTERM");
  });
}

/** Waits until `ready(stdout)` holds, failing (with the child's output) if it exits first or `ms` pass. */
export async function waitForOutput(started: Started, ready: (stdout: string) => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready(started.stdout())) {
    const { child } = started;
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined || Date.now() > deadline) {
      const why = Date.now() > deadline ? `not within ${ms} ms` : `it exited (${child.exitCode ?? child.signalCode})`;
      throw new Error(`${what}: ${why}\n--- stdout\n${started.stdout()}\n--- stderr\n${started.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
