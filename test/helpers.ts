import { connect } from "node:net";
import { Cog, type CogOptions } from "../src/index.js";
import { nativeUnavailable } from "../src/engines/kit/addon.js";

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

/**
 * Why the engine under test can't take a QUERY request on this Node, or false when it can: a
 * `skip` value. node:http's parser (llhttp) knows QUERY from Node 20.19.3 and 22.2: 20.19.0 and
 * 20.19.1 answer 400 themselves, 20.19.2 parses it but gives `req.method` undefined. The native
 * engine parses it on every Node.
 */
export const queryRefused: string | false =
  engine === "node" && !nodeParsesQuery()
    ? `node:http on Node ${process.version} does not take QUERY requests (its parser refuses them before 20.19.2, and 20.19.2 loses the method): it does from 20.19.3 and 22.2`
    : false;

/** Whether node:http parses QUERY requests on this Node (see `queryRefused`). */
export function nodeParsesQuery(version = process.versions.node): boolean {
  const [major = 0, minor = 0, patch = 0] = version.split(".").map(Number);
  if (major === 20) return minor > 19 || (minor === 19 && patch >= 3);
  if (major === 22) return minor >= 2;
  return major > 22;
}

/** Builds an app, listens on a free port, and closes it when the test ends. */
export async function serve(t: { after(fn: () => unknown): void }, define: (app: Cog) => void, options: CogOptions = {}): Promise<Served> {
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
