import cluster, { type Worker } from "node:cluster";
import { createServer } from "node:net";
import { STOP_SIGNALS } from "./signals.js";
import { clearTimeout, setTimeout } from "../base/loop.js";

/**
 * Cog's workers: the primary process forks n workers that each re-run the app's entry file
 * (node:cluster's model) and serve the same port, restarts a worker that dies (with backoff;
 * it gives up, exiting 1, when workers keep dying before they listen), and on SIGTERM or SIGINT
 * drains every worker and exits 0. The primary serves no request itself.
 *
 * How workers share the port: the node engine listens through node:cluster (the primary holds
 * the socket and hands connections round); the native engine opens its own socket in each
 * worker with SO_REUSEPORT (Linux), and the kernel spreads connections over them.
 */

/** Set in a worker's environment: the primary's port, which every worker listens on. */
export const WORKER_PORT = "COG_WORKER_PORT";

/** What a worker tells its primary, and what the primary asks of a worker. */
export type WorkerMessage = { cog: "listening" } | { cog: "failed"; message: string } | { cog: "drain"; drainMs: number };

/** Whether this process is one of Cog's workers (forked by `superviseWorkers`). */
export function isCogWorker(): boolean {
  return cluster.isWorker && process.env[WORKER_PORT] !== undefined;
}

/** Backoff before restarting a worker that died: doubles with each death in quick succession, up to 10 s. */
const FIRST_DELAY = 100;
const MAX_DELAY = 10_000;
/** A worker that lived this long died of something new: the backoff starts over. */
const HEALTHY_AFTER = 10_000;
/**
 * Workers that die this many times in a row before they listen won't start (a bad deploy, a
 * missing dependency): the primary stops the rest and exits 1, so that the process manager
 * sees a failure instead of a server that serves nothing.
 */
export const START_ATTEMPTS = 5;

/** The primary's side: the workers it runs, and how it stops them. */
export class WorkerPool {
  private readonly workers = new Set<Worker>();
  /** Restarts waiting out their backoff; they keep the primary alive while no worker runs. */
  private readonly restarts = new Set<NodeJS.Timeout>();
  private stopping: Promise<void> | null = null;
  /** Set once every first worker listens: from then on, a worker that dies is replaced. */
  private running = false;
  private quickDeaths = 0;
  /** Workers that died before they listened since one last did. */
  private failedStarts = 0;
  private readonly removeSignals: () => void;

  private constructor(
    private readonly port: number,
    private readonly drainMs: number,
  ) {
    const onSignal = (signal: NodeJS.Signals): void => {
      console.error(`cog: ${signal}: draining ${this.workers.size} worker(s), up to ${this.drainMs} ms`);
      this.stop().then(() => process.exit(0));
    };
    for (const signal of STOP_SIGNALS) process.once(signal, onSignal);
    this.removeSignals = () => {
      for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
    };
  }

  /**
   * Forks `count` workers listening on `port` (0: a free port, picked once for all of them) and
   * resolves with the address once every one listens; rejects, stopping the others, if one fails.
   */
  static async start(
    count: number,
    port: number,
    host: string | undefined,
    drainMs: number,
  ): Promise<{ pool: WorkerPool; address: { host: string; port: number } }> {
    const shared = port === 0 ? await freePort(host) : port;
    const pool = new WorkerPool(shared, drainMs);
    try {
      await Promise.all(Array.from({ length: count }, () => pool.fork()));
    } catch (err) {
      await pool.stop();
      throw err;
    }
    pool.running = true;
    return { pool, address: { host: host ?? "::", port: shared } };
  }

  /** Forks one worker; resolves once it listens, rejects with why if it dies or fails to first. */
  private fork(): Promise<void> {
    const worker = cluster.fork({ [WORKER_PORT]: String(this.port) });
    const born = Date.now();
    this.workers.add(worker);
    // A failed send or kill on one worker must never end the primary; its exit is handled below.
    worker.on("error", (err) => console.error(`cog: worker ${worker.process.pid}: ${err.message}`));
    let listened = false;
    let failure: string | undefined;
    const listening = new Promise<void>((resolve, reject) => {
      worker.on("message", (message: WorkerMessage) => {
        if (message?.cog === "listening") {
          listened = true;
          this.failedStarts = 0;
          resolve();
        } else if (message?.cog === "failed") {
          failure = `could not listen: ${message.message}`;
          reject(new Error(`a worker ${failure}`));
        }
      });
      worker.once("exit", (code, signal) => reject(new Error(`a worker exited (${exitReason(code, signal)}) before it listened`)));
    });
    worker.once("exit", (code, signal) => {
      this.workers.delete(worker);
      if (this.stopping !== null || !this.running) return;
      const how = exitReason(code, signal);
      if (!listened && ++this.failedStarts >= START_ATTEMPTS) {
        this.giveUp(`${START_ATTEMPTS} workers in a row died before they listened (the last: ${failure ?? `exited (${how})`})`);
        return;
      }
      this.quickDeaths = Date.now() - born > HEALTHY_AFTER ? 0 : this.quickDeaths + 1;
      const delay = Math.min(MAX_DELAY, FIRST_DELAY * 2 ** Math.max(0, this.quickDeaths - 1));
      const when = listened ? "" : " before it listened";
      console.error(`cog: worker ${worker.process.pid} exited (${how})${when}; starting another in ${delay} ms`);
      // Not unref'd: when every worker is dead, this timer is what keeps the primary alive.
      const restart = setTimeout(() => {
        this.restarts.delete(restart);
        // Its failure is counted and logged by its own exit; nothing more to do here.
        this.fork().catch(() => {});
      }, delay);
      this.restarts.add(restart);
    });
    return listening;
  }

  /** Workers won't start: stops those still running and exits 1 with why. */
  private giveUp(why: string): void {
    console.error(`cog: giving up: ${why}; stopping and exiting with code 1`);
    this.stop().then(() => process.exit(1));
  }

  /** The workers' process ids (for tests and tooling). */
  get pids(): number[] {
    return [...this.workers].map((w) => w.process.pid!);
  }

  /**
   * Asks every worker to drain (stop accepting, finish in-flight requests within `drainMs`) and
   * resolves once all have exited; one still running a second after the deadline is killed.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.removeSignals();
      for (const restart of this.restarts) clearTimeout(restart);
      this.restarts.clear();
      const exits = [...this.workers].map((worker) => {
        const exited = new Promise<void>((resolve) => {
          if (worker.isDead()) resolve();
          else worker.once("exit", () => resolve());
        });
        // A worker already on its way out closes its channel between isConnected() and the write;
        // the callback takes that EPIPE (unheard, it would be an 'error' that ends the primary),
        // and the worker's exit is what this waits for anyway.
        if (worker.isConnected()) worker.send({ cog: "drain", drainMs: this.drainMs } satisfies WorkerMessage, undefined, () => {});
        const deadline = setTimeout(() => worker.process.kill("SIGKILL"), this.drainMs + 1000);
        return exited.finally(() => clearTimeout(deadline));
      });
      await Promise.all(exits);
    })();
    return this.stopping;
  }
}

/**
 * The worker's side: tells the primary it listens (or why it can't), and drains then exits 0
 * when the primary asks, when the primary goes away, or on its own SIGTERM/SIGINT (a terminal's
 * Ctrl-C reaches every process of the group).
 */
export function serveAsWorker(drain: (drainMs: number) => Promise<void>, defaultDrainMs: number): void {
  let draining = false;
  const stop = (drainMs: number): void => {
    if (draining) return;
    draining = true;
    drain(drainMs).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("message", (message: WorkerMessage) => {
    if (message?.cog === "drain") stop(message.drainMs);
  });
  process.once("disconnect", () => stop(defaultDrainMs));
  for (const signal of STOP_SIGNALS) process.on(signal, () => stop(defaultDrainMs));
  process.send!({ cog: "listening" } satisfies WorkerMessage);
}

/** Tells the primary why this worker can't listen. */
export function reportListenFailure(err: unknown): void {
  process.send?.({ cog: "failed", message: err instanceof Error ? err.message : String(err) } satisfies WorkerMessage);
}

/** How a process ended, for log lines: "code 1" or "SIGKILL". */
function exitReason(code: number | null, signal: string | null): string {
  return signal ?? `code ${code}`;
}

/** A port free right now on `host`, for workers asked to listen on port 0 (they must all share one). */
function freePort(host: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
