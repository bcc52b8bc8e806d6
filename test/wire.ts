// What the tests of Cog's Node-compatible req/res (the middleware matrix, the response-call
// property, the regressions) share: a client that gives up instead of hanging, a strict reader
// of HTTP/1.1 responses off the wire, and a capture of what the app logs.
import { request as httpRequest, STATUS_CODES, type IncomingHttpHeaders } from "node:http";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { once } from "node:events";
import { connect } from "node:net";
import { format } from "node:util";
import type { Cog } from "../src/index.js";

/** How long any one request of these tests may take before it counts as a hang. */
export const HANG_MS = 3000;

export interface Answer {
  status: number;
  statusMessage: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Fails the request (rejects) after this many ms: a hang fails fast. */
  timeout?: number;
}

/**
 * One request over node:http's client, on a connection of its own (no agent), with the body as
 * sent (never decompressed) and every Set-Cookie line. Rejects on a hang or a cut connection.
 */
export function request(port: number, path: string, options: RequestOptions = {}): Promise<Answer> {
  const timeout = options.timeout ?? HANG_MS;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: options.headers, agent: false, signal: AbortSignal.timeout(timeout) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode!, statusMessage: res.statusMessage!, headers: res.headers, body, text: body.toString("utf8") });
        });
      },
    );
    req.on("error", (err) =>
      reject(err.name === "AbortError" ? new Error(`${options.method ?? "GET"} ${path}: no complete answer within ${timeout} ms`) : err),
    );
    req.end(options.body);
  });
}

/** `fetch` that fails after `HANG_MS` instead of waiting forever. */
export function fetchWithin(url: string, init: RequestInit = {}, timeout = HANG_MS): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(timeout) });
}

/** The `name=value` pairs of Set-Cookie lines, ready for a Cookie header. */
export function cookiesOf(headers: IncomingHttpHeaders): string {
  return (headers["set-cookie"] ?? []).map((line) => line.split(";")[0]!).join("; ");
}

export interface Exchange {
  /** Everything the server wrote. */
  bytes: Buffer;
  /** The server closed the connection (rather than the client giving up). */
  closed: boolean;
  /** Nothing closed the connection within the bound. */
  timedOut: boolean;
}

/** Writes raw bytes and reads until the server closes the connection, or `boundMs` passes. */
export function exchange(port: number, bytes: string | Buffer, boundMs = HANG_MS): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (closed: boolean, timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes: Buffer.concat(chunks), closed, timedOut });
    };
    const timer = setTimeout(() => finish(false, true), boundMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => finish(true, false));
    socket.on("close", () => finish(true, false));
    socket.on("error", () => finish(true, false));
    socket.on("connect", () => socket.write(bytes));
  });
}

export interface WireResponse {
  status: number;
  reason: string;
  /** Header lines in order, names in lower case. */
  headers: Array<[string, string]>;
  body: Buffer;
}

export interface WireParse {
  /** The complete responses, in order. */
  responses: WireResponse[];
  /** What follows them when it is not a complete response: a response cut short (head or body). */
  partial: { head?: WireResponse; bytes: number } | null;
  /** The first thing that is not HTTP/1.1, if any: a broken status line, header line or framing. */
  malformed: string | null;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;

export function header(response: WireResponse, name: string): string | undefined {
  return response.headers.find(([n]) => n === name)?.[1];
}

/**
 * Reads a byte stream of HTTP/1.1 responses as a strict client would: a status line, header
 * lines of tokens and field values, then a body framed by Content-Length or chunked coding (or
 * none, for 1xx/204/304 and answers to HEAD). A body framed by neither is read to the end.
 */
export function parseResponses(bytes: Buffer, head = false): WireParse {
  const text = bytes.toString("latin1");
  const responses: WireResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf("\r\n\r\n", at);
    if (end === -1) return { responses, partial: { bytes: text.length - at }, malformed: null };
    const lines = text.slice(at, end).split("\r\n");
    const statusLine = /^HTTP\/1\.1 (\d{3}) (.*)$/.exec(lines[0]!);
    if (statusLine === null || /[\r\n]/.test(statusLine[2]!)) return { responses, partial: null, malformed: `status line ${JSON.stringify(lines[0])}` };
    const response: WireResponse = { status: Number(statusLine[1]), reason: statusLine[2]!, headers: [], body: Buffer.alloc(0) };
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon);
      const value = line.slice(colon + 1).trim();
      if (colon <= 0 || !TOKEN.test(name) || BAD_VALUE.test(value)) return { responses, partial: null, malformed: `header line ${JSON.stringify(line)}` };
      response.headers.push([name.toLowerCase(), value]);
    }
    at = end + 4;
    const lengths = response.headers.filter(([n]) => n === "content-length").map(([, v]) => v);
    const codings = response.headers.filter(([n]) => n === "transfer-encoding").map(([, v]) => v.toLowerCase());
    const status = response.status;
    if (lengths.length > 0 && codings.length > 0) return { responses, partial: null, malformed: "both Content-Length and Transfer-Encoding" };
    if (head || status < 200 || status === 204 || status === 304) {
      if (status === 204 && (lengths.length > 0 || codings.length > 0)) return { responses, partial: null, malformed: "a 204 that frames a body" };
      responses.push(response);
      continue;
    }
    if (codings.length > 0) {
      if (!/(?:^|,)\s*chunked\s*$/.test(codings.join(","))) return { responses, partial: null, malformed: `Transfer-Encoding ${codings.join(",")}` };
      const chunks: Buffer[] = [];
      for (;;) {
        const lineEnd = text.indexOf("\r\n", at);
        if (lineEnd === -1) return { responses, partial: { head: response, bytes: text.length - at }, malformed: null };
        const size = /^([0-9a-fA-F]+)(?:;.*)?$/.exec(text.slice(at, lineEnd));
        if (size === null) return { responses, partial: null, malformed: `chunk size line ${JSON.stringify(text.slice(at, lineEnd))}` };
        const length = parseInt(size[1]!, 16);
        at = lineEnd + 2;
        if (length === 0) {
          // Trailers (none expected), then the blank line.
          const trailerEnd = text.indexOf("\r\n", at);
          if (trailerEnd === -1) return { responses, partial: { head: response, bytes: text.length - at }, malformed: null };
          if (trailerEnd !== at) return { responses, partial: null, malformed: "trailers after the last chunk" };
          at += 2;
          break;
        }
        if (text.length < at + length + 2) return { responses, partial: { head: response, bytes: text.length - at }, malformed: null };
        if (text.slice(at + length, at + length + 2) !== "\r\n") return { responses, partial: null, malformed: "a chunk longer than its size" };
        chunks.push(Buffer.from(text.slice(at, at + length), "latin1"));
        at += length + 2;
      }
      response.body = Buffer.concat(chunks);
      responses.push(response);
      continue;
    }
    if (lengths.length > 0) {
      if (new Set(lengths).size !== 1 || !/^\d+$/.test(lengths[0]!)) return { responses, partial: null, malformed: `Content-Length ${lengths.join(",")}` };
      const length = Number(lengths[0]);
      if (text.length < at + length) return { responses, partial: { head: response, bytes: text.length - at }, malformed: null };
      response.body = Buffer.from(text.slice(at, at + length), "latin1");
      at += length;
      responses.push(response);
      continue;
    }
    // Neither: the body runs to the end of the connection.
    response.body = Buffer.from(text.slice(at), "latin1");
    at = text.length;
    responses.push(response);
  }
  return { responses, partial: null, malformed: null };
}

/** The reason phrase Node sends for a status. */
export function reasonOf(status: number): string | undefined {
  return STATUS_CODES[status];
}

/** Collects what the app writes with console.error (its logErrors output) while a test runs. */
export function captureErrors(t: { after(fn: () => unknown): void }): { lines: string[]; text(): string } {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => {
    lines.push(format(...args));
  };
  t.after(() => {
    console.error = original;
  });
  return { lines, text: () => lines.join("\n") };
}

/** `promise`, or a rejection naming `what` after `ms`; the timer never outlives it. */
export async function within<T>(promise: Promise<T>, what: string, ms = HANG_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `ready()` holds, checking every few ms; rejects after `ms`. For logs written after the answer. */
export async function eventually(ready: () => boolean, what: string, ms = HANG_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** An open connection's bytes so far, and how it ended: "end" (the server's FIN) or the error's code. */
export function openStream(port: number, path: string): { text(): string; ended: Promise<string> } {
  const socket = connect(port, "127.0.0.1");
  let text = "";
  socket.setEncoding("latin1").on("data", (chunk: string) => (text += chunk));
  const ended = new Promise<string>((resolve) => {
    socket.once("end", () => resolve("end"));
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  return { text: () => text, ended };
}

/**
 * The drain's pipelining case: `app` answers GET /slow only when told; a connection sends one,
 * and once its handler runs, the caller begins the drain and `lateRequestArrived` pipelines a second on the
 * same connection, resolving once the engine has taken that one in (Node's
 * `http.server.request.start`, on both engines). `release` answers the first.
 */
export async function slowConnection(app: Cog): Promise<{
  release(): void;
  received(): string;
  ended: Promise<unknown>;
  lateRequestArrived(): Promise<void>;
}> {
  let release = (): void => {};
  let started = (): void => {};
  const handling = new Promise<void>((resolve) => (started = resolve));
  app.get("/slow", (_req, res) => {
    release = () => void res.send("done");
    started();
  });
  const { port } = await app.listen(0, "127.0.0.1");
  const socket = connect(port, "127.0.0.1");
  let received = "";
  socket.setEncoding("latin1").on("data", (chunk: string) => (received += chunk));
  const ended = once(socket, "close");
  socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  await handling;
  return {
    release: () => release(),
    received: () => received,
    ended,
    lateRequestArrived: () => {
      const arrived = new Promise<void>((resolve) => {
        const onStart = (): void => {
          unsubscribe("http.server.request.start", onStart);
          resolve();
        };
        subscribe("http.server.request.start", onStart);
      });
      socket.write("GET /slow?late HTTP/1.1\r\nHost: x\r\n\r\n");
      return arrived;
    },
  };
}
