// quic-go's HTTP/3 client (http3.Transport), a client nobody here wrote, for the tests of the native
// engine's HTTP/3: quic-go-client/ is built with `go build` on first use (Go's build cache makes
// later builds quick) and run against a listening server, all requests over one QUIC connection.
import { execFile, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const SOURCE = fileURLToPath(new URL("./quic-go-client/", import.meta.url));
const CACHE = fileURLToPath(new URL("../.cache/", import.meta.url));
const CLIENT = `${CACHE}quic-go-client`;

/** Why the quic-go tests are skipped here, or false. */
export const quicGoSkip: string | false =
  spawnSync("go", ["version"]).status === 0 ? false : "go is not installed (https://go.dev/dl/): these HTTP/3 tests use quic-go's client";

export interface QuicGoSpec {
  method: string;
  path: string;
  /** A string, or `size` bytes of "x". */
  body?: string | { size: number };
  /** Sent as they are; without `accept-encoding`, quic-go asks for gzip and inflates the answer itself. */
  headers?: Record<string, string>;
  /** Cancel the request once its answer's head and first byte have come. */
  cancel?: boolean;
  /** Read the answer as an event stream, GETting this path after each event before reading on. */
  sseAck?: string;
}
export interface QuicGoAnswer {
  status: number;
  proto: string;
  /** Header and trailer fields, lower-case. */
  headers: Record<string, string>;
  length: number;
  allX: boolean;
  /** The body, when 4 KiB or less. */
  body?: string;
  cancelled?: true;
  /** quic-go asked for gzip, got it, and inflated the body. */
  uncompressed?: true;
  /** With `sseAck`: the events, each with its blank line. */
  events?: string[];
  error?: string;
}

let built: Promise<unknown> | undefined;

/** Runs quic-go's client against 127.0.0.1:`port`: each phase's requests at once, on one connection. */
export async function quicGo(port: number, ...phases: QuicGoSpec[][]): Promise<QuicGoAnswer[][]> {
  built ??= (mkdirSync(CACHE, { recursive: true }), promisify(execFile)("go", ["build", "-o", CLIENT, "."], { cwd: SOURCE }));
  await built;
  const { stdout } = await promisify(execFile)(CLIENT, [String(port), JSON.stringify(phases)], { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as QuicGoAnswer[][];
}
