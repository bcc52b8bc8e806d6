import { connect } from "node:net";
import { Cog, type CogOptions } from "../src/index.js";
import { nativeUnavailable } from "../src/engines/native/load.js";

export interface Served {
  app: Cog;
  port: number;
  /** `http://127.0.0.1:PORT` */
  base: string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** The engine the integration tests run on: `COG_ENGINE=native` runs them on Cog's native engine. */
export const engine = (process.env.COG_ENGINE ?? "node") as "node" | "native";

/** Why the native engine can't run here (its addon isn't built, say), or false when it can: a `skip` value. */
export const nativeSkip: string | false = nativeUnavailable() ?? false;

/** For tests of what only the node engine has (Node's stream objects, http.Server): the reason to skip them elsewhere. */
export const nodeOnly = engine === "node" ? false : "node engine only: needs Node's own request/response streams or http.Server";

/** Builds an app, listens on a free port, and closes it when the test ends. */
export async function serve(
  t: { after(fn: () => unknown): void },
  define: (app: Cog) => void,
  options: CogOptions = {},
): Promise<Served> {
  const app = new Cog({ logErrors: false, engine, ...options });
  define(app);
  const { port } = await app.listen(0, "127.0.0.1");
  t.after(() => app.close(100));
  const base = `http://127.0.0.1:${port}`;
  return { app, port, base, fetch: (path, init) => fetch(base + path, init) };
}

const FIRST_BYTE_MS = 3000;

/**
 * Sends raw bytes over a real socket and returns everything the server wrote
 * until it closed the connection, went quiet for `quietMs`, or (when given) `complete` says all
 * that is awaited has come: a test that knows what it waits for need not bet on a quiet period
 * long enough for a loaded machine. Before the first byte the wait is at least `FIRST_BYTE_MS`:
 * on a busy machine a server may take that long to answer at all.
 */
export function raw(port: number, bytes: string | Buffer | Array<string | Buffer>, quietMs = 300, complete?: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString("latin1"));
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(done, chunks.length === 0 ? Math.max(quietMs, FIRST_BYTE_MS) : quietMs);
    };
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      if (complete?.(Buffer.concat(chunks).toString("latin1"))) done();
      else arm();
    });
    socket.on("end", done);
    socket.on("close", done);
    socket.on("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" ? done() : reject(err)));
    socket.on("connect", () => {
      for (const part of Array.isArray(bytes) ? bytes : [bytes]) socket.write(part);
      arm();
    });
  });
}

/** The status codes of every response in a raw HTTP/1.1 byte stream, in order. */
export function statuses(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1]));
}
