import type { Server } from "node:http";
import { availableParallelism } from "node:os";
import type { Engine, EngineConfig, InjectOptions, InjectResponse, ListenAt } from "../engines/contract/engine.js";
import { startEngine, type EngineName } from "../engines/select.js";
import type { TlsOptions } from "../base/tls.js";
import type { HandlerTimeouts } from "./answer.js";
import type { Dispatcher } from "./dispatch.js";
import type { OpenStreams } from "../http/sse.js";
import type { Routes } from "./routes.js";
import type { WorkerPool } from "./workers.js";
import { refuseUnknownKeys } from "../base/known-keys.js";
import { LISTEN_OPTION_HINTS, LISTEN_OPTION_KEYS } from "./options.js";

/** What an `onClose` hook is told of the shutdown it runs in. */
export interface Closing {
  /**
   * Settles once the drain is over: every in-flight request finished (or was cut at `drainMs`)
   * and the server closed. Await it before closing what requests still use (a database pool).
   */
  readonly drained: Promise<void>;
}

/** A hook run once when the app shuts down (see `Cog.onClose`). */
export type CloseHook = (closing: Closing) => void | Promise<void>;

/** Where a server listens, once it does. */
export interface Address {
  readonly host: string;
  readonly port: number;
}

/** Where a server listens on a Unix domain socket (`listen({ path })`). */
export interface SocketAddress {
  readonly path: string;
}

/** Where and how to serve: `app.listen({ port: 8080, workers: "auto" })`. */
export interface ListenOptions {
  /** Default 3000; 0 picks a free port (with workers, one for all of them). */
  port?: number;
  /** Default: every interface ("::", which takes IPv4 too). */
  host?: string;
  /**
   * Listen on a Unix domain socket at this path instead of a port (not with `workers`), as
   * node:http's `server.listen(path)`: the file is made as it listens (listening fails with
   * EADDRINUSE if one is there) and removed when the app closes. Served as HTTP/1.1 (and TLS
   * with the `tls` option).
   */
  path?: string;
  /**
   * Serve from this many worker processes sharing the port ("auto": one per core), each
   * re-running the app's entry file as node:cluster does; this process supervises them: it
   * restarts one that dies (with backoff) and, on SIGTERM or SIGINT, drains them all and exits 0.
   * `listen` resolves in this process once every worker listens (and in each worker with its own).
   */
  workers?: number | "auto";
  /** Without workers: on SIGTERM or SIGINT, drain (`close(drainMs)`) and exit 0. Default false (with workers, always on). */
  signals?: boolean;
  /** How long a drain on a signal waits for in-flight requests before cutting them. Default 10000 ms. */
  drainMs?: number;
  /**
   * Serve HTTP/3 (QUIC) on UDP beside HTTP/1.1 and HTTP/2 over TLS on TCP, on the same port
   * number; answers over TCP then carry `Alt-Svc: h3=":port"` so that clients switch. The native
   * engine only (Node has no QUIC), with the app's `tls` option (TLS 1.3). Default false.
   */
  http3?: boolean;
}

/**
 * Serving an app: listening on one engine (or supervising worker processes that do), draining on
 * signals, closing gracefully, reloading the TLS certificate, and answering `inject` for tests.
 */
export class Serving {
  /** The engine listening, while it is. */
  private listening: Engine | null = null;
  /** The engine chosen for this app, once `listen` or `inject` has made it. */
  private chosen: "node" | "native" | undefined = undefined;
  /** In the primary of `listen({ workers })`: the worker processes. */
  private workerPool: WorkerPool | null = null;
  /** Removes the SIGTERM/SIGINT handlers of `listen({ signals: true })`. */
  private removeSignals: (() => void) | null = null;
  private starting = false;
  /** The engine `inject` answers through, made on its first use (it does not listen). */
  private injecting: Promise<Engine> | null = null;
  /** The hooks `app.onClose` registered, run in order by a shutdown. */
  readonly closeHooks: CloseHook[] = [];
  /** The shutdown under way or done, so that a second `close` awaits the first rather than running again. */
  private closed: Promise<void> | null = null;

  constructor(
    /** The `engine` option, as `chooseEngine` settled it. */
    private readonly requested: EngineName,
    private readonly config: EngineConfig,
    private readonly dispatcher: Dispatcher,
    private readonly timeouts: HandlerTimeouts,
    private readonly routes: Routes,
    private readonly openStreams: OpenStreams,
  ) {}

  async listen(options: ListenOptions): Promise<Address | SocketAddress> {
    refuseUnknownKeys(options, LISTEN_OPTION_KEYS, LISTEN_OPTION_HINTS, "app.listen()", "option");
    const drainMs = options.drainMs ?? 10_000;
    if (options.http3 !== undefined) await this.checkHttp3(options);
    if (options.path !== undefined) {
      if (typeof options.path !== "string" || options.path === "")
        throw new TypeError(`listen({ path }) takes the path of a Unix domain socket; got ${JSON.stringify(options.path)}`);
      if (options.workers !== undefined || options.port !== undefined || options.host !== undefined)
        throw new TypeError("listen({ path }) listens on a Unix domain socket: it takes no port, host or workers");
    }
    if (options.workers !== undefined) {
      const workers = await import("./workers.js");
      if (!workers.isCogWorker()) return this.startWorkers(options, drainMs);
      let address: Address;
      try {
        address = (await this.serve({ port: Number(process.env[workers.WORKER_PORT]), host: options.host }, true)) as Address;
      } catch (err) {
        workers.reportListenFailure(err);
        throw err;
      }
      workers.serveAsWorker((ms) => this.close(ms), drainMs);
      return address;
    }
    const address = await this.serve(
      options.path !== undefined ? { path: options.path } : { port: options.port ?? 3000, host: options.host, http3: options.http3 },
      false,
    );
    if (options.signals === true) {
      const { drainOnSignals } = await import("./signals.js");
      this.removeSignals = drainOnSignals(async (signal) => {
        console.error(`cog: ${signal}: draining, up to ${drainMs} ms`);
        await this.close(drainMs);
      });
    }
    return address;
  }

  /** Refuses at startup what `listen({ http3 })` can't serve, saying what to do instead. */
  private async checkHttp3(options: ListenOptions): Promise<void> {
    if (typeof options.http3 !== "boolean") throw new TypeError(`listen({ http3 }) takes true or false; got ${JSON.stringify(options.http3)}`);
    if (!options.http3) return;
    if (options.path !== undefined || options.workers !== undefined)
      throw new TypeError(
        "listen({ http3: true }) serves on a UDP port beside the TCP one: it takes a port, not a path, and no workers yet (one process per UDP port)",
      );
    if (this.config.options.tls === undefined)
      throw new TypeError('listen({ http3: true }) needs the app\'s tls option (QUIC is always encrypted): new Cog({ engine: "native", tls: { key, cert } })');
    if (this.requested === "auto") {
      const unavailable = (await import("../engines/kit/addon.js")).nativeUnavailable();
      if (unavailable !== null)
        throw new Error(`listen({ http3: true }) needs the native engine (Node has no QUIC), and engine "auto" can't use it here, because ${unavailable}`);
    }
  }

  /** The primary of `workers`: forks them, and answers `close` by draining them. */
  private async startWorkers(options: ListenOptions, drainMs: number): Promise<Address> {
    if (this.listening !== null || this.starting || this.workerPool !== null)
      throw new Error("This app is already listening; create another Cog to serve twice");
    const requested = options.workers;
    const count = requested === "auto" ? availableParallelism() : requested;
    if (typeof count !== "number" || !Number.isInteger(count) || count < 1)
      throw new RangeError(`listen({ workers }) takes a whole number of processes (1 or more) or "auto"; got ${String(requested)}`);
    this.starting = true;
    try {
      const { WorkerPool } = await import("./workers.js");
      const { pool, address } = await WorkerPool.start(count, options.port ?? 3000, options.host, drainMs);
      this.workerPool = pool;
      return address;
    } finally {
      this.starting = false;
    }
  }

  /** Listens in this process. `shared`: other processes (Cog's workers) listen on the port too. */
  private async serve(at: ListenAt, shared: boolean): Promise<Address | SocketAddress> {
    if (this.listening !== null || this.starting || this.workerPool !== null)
      throw new Error("This app is already listening; create another Cog to serve twice");
    this.starting = true;
    this.dispatcher.closing = false;
    this.openStreams.reopen();
    this.closed = null;
    try {
      const engine = await this.createEngine(true);
      await this.routes.topics?.start();
      const address = await engine.listen(at, shared);
      this.listening = engine;
      this.timeouts.start();
      return address;
    } finally {
      // On failure nothing is listening: a later listen() may try again.
      this.starting = false;
    }
  }

  /**
   * The engine this app serves with, loaded on demand: an app on one engine never loads the other.
   * `listening`: for `listen` (not `inject`), where "auto" says on stderr when it falls back.
   */
  private async createEngine(listening = false): Promise<Engine> {
    const engine = await startEngine(this.requested, this.config, listening);
    this.chosen = engine.name;
    return engine;
  }

  /** See `Cog.setSecureContext`. */
  setSecureContext(tls: TlsOptions): void {
    if (this.config.options.tls === undefined) throw new Error("setSecureContext needs an app made with the tls option: new Cog({ tls: { key, cert } })");
    const engine = this.listening;
    if (engine === null) throw new Error("setSecureContext works once the app listens; before that, pass the certificate as the tls option");
    engine.setSecureContext!(tls);
  }

  /** The engine this app runs on, once `listen` or `inject` has started it. */
  get engine(): "node" | "native" | undefined {
    return this.chosen;
  }

  /** The node engine's `http.Server`, while it listens. */
  get server(): Server | undefined {
    return this.listening?.name === "node" ? (this.listening as unknown as { server: Server }).server : undefined;
  }

  /** See `Cog.close`. */
  close(drainMs: number): Promise<void> {
    this.closed ??= this.shutDown(drainMs);
    return this.closed;
  }

  /**
   * A shutdown, in the order docs/guide/deployment.md gives: stop accepting (new requests on open
   * connections get 503); end the open event streams; run the onClose hooks, in order, while
   * in-flight requests finish; cut what is still open at `drainMs`; stop the WebSocket topics.
   * Resolves once all of that is done; rejects with a hook's error, after the rest is done.
   */
  private async shutDown(drainMs: number): Promise<void> {
    this.removeSignals?.();
    this.removeSignals = null;
    const pool = this.workerPool;
    if (pool !== null) {
      // The primary serves no request and runs no hook: each worker runs its own as it drains.
      await pool.stop();
      this.workerPool = null;
      return;
    }
    const engine = this.listening;
    let drained: Promise<void> = Promise.resolve();
    if (engine !== null) {
      this.dispatcher.closing = true;
      drained = engine.close(drainMs);
      this.openStreams.endAll();
    }
    const settled = drained.then(
      () => undefined,
      () => undefined,
    );
    let failure: { err: unknown } | null = null;
    for (const hook of this.closeHooks) {
      try {
        await hook({ drained: settled });
      } catch (err) {
        failure ??= { err };
      }
    }
    try {
      await drained;
      if (engine !== null) await this.routes.topics?.stop();
    } finally {
      this.listening = null;
      this.timeouts.stop();
    }
    if (failure !== null) throw failure.err;
  }

  /** See `Cog.inject`. */
  async inject(options: InjectOptions | string): Promise<InjectResponse> {
    this.injecting ??= this.createEngine();
    return (await this.injecting).inject(options);
  }
}
