// For tests that hold cog-http/express to Express 5 from npm: the same app served by both (Express
// on node:http, as Express serves itself; Cog's on the engine under test), the same requests sent
// to each over a real socket, and status, headers and body compared. Left out of the comparison:
// Date (the clock), and Connection/Keep-Alive, which say how each server keeps the connection,
// not what the app answered (docs/engines.md).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import cogExpress from "../src/express/index.js";
import { engine } from "./helpers.js";

export interface Sent {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Answer {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

/** What a listening server (node:http's, or cog-http/express's CogServer) offers a test. */
export interface Listening {
  readonly listening: boolean;
  address(): AddressInfo | string | null;
  once(event: "listening", fn: () => void): unknown;
  close(callback?: (err?: Error) => void): unknown;
  closeAllConnections?(): void;
}

const IGNORED = new Set(["date", "connection", "keep-alive"]);

/** Sends `sent` to 127.0.0.1:`port`; the answer with its headers in order (Set-Cookie each apart), `ignored` left out. */
export async function ask(port: number, sent: Sent, ignored: ReadonlySet<string> = IGNORED): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}${sent.path}`, {
    method: sent.method ?? "GET",
    headers: sent.headers,
    body: sent.body,
    redirect: "manual",
  });
  const headers: Array<[string, string]> = [];
  for (const [name, value] of response.headers) if (!ignored.has(name) && name !== "set-cookie") headers.push([name, value]);
  if (!ignored.has("set-cookie")) for (const cookie of response.headers.getSetCookie()) headers.push(["set-cookie", cookie]);
  return { status: response.status, headers, body: Buffer.from(await response.arrayBuffer()).toString("latin1") };
}

/** The port `server` listens on, once it does. */
export function portOf(server: Listening): Promise<number> {
  if (server.listening) return Promise.resolve((server.address() as AddressInfo).port);
  return new Promise((resolve) => server.once("listening", () => resolve((server.address() as AddressInfo).port)));
}

/** Closes `server`, cutting its idle connections (node:http's keeps them otherwise). */
export function closed(server: Listening): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

/** Sends each of `requests` to both ports and asserts the answers are the same; returns Cog's answers. */
export async function sameAnswers(theirPort: number, ourPort: number, requests: readonly Sent[], ignored?: ReadonlySet<string>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const sent of requests) {
    const [expected, actual] = await Promise.all([ask(theirPort, sent, ignored), ask(ourPort, sent, ignored)]);
    assert.deepEqual(actual, expected, `${sent.method ?? "GET"} ${sent.path}`);
    answers.push(actual);
  }
  return answers;
}

/** `IGNORED` and more: for answers that carry something made per server (a session's id). */
export function ignoring(...names: string[]): ReadonlySet<string> {
  return new Set([...IGNORED, ...names]);
}

type AnyExpress = any;

export interface Pair {
  /** Express 5 from npm, on node:http. */
  theirs: number;
  /** cog-http/express, on the engine under test. */
  ours: number;
  close(): Promise<void>;
}

/**
 * Builds the same app twice with `define` (given the app and its `express`: Express 5 from npm,
 * then cog-http/express on the engine under test) and serves both on 127.0.0.1.
 */
export async function servePair(define: (app: AnyExpress, e: AnyExpress) => void | Promise<void>): Promise<Pair> {
  const theirs = express();
  await define(theirs, express);
  const reference = createServer(theirs).listen(0, "127.0.0.1");
  const ours = cogExpress({ engine });
  await define(ours, cogExpress);
  const served = ours.listen(0, "127.0.0.1");
  const close = () => Promise.all([closed(reference), closed(served)]).then(() => undefined);
  try {
    const [theirPort, ourPort] = await Promise.all([portOf(reference), portOf(served)]);
    return { theirs: theirPort, ours: ourPort, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Serves both apps `define` builds, sends each of `requests` to both and compares the answers; returns Cog's. */
export async function same(
  define: (app: AnyExpress, e: AnyExpress) => void | Promise<void>,
  requests: readonly Sent[],
  ignored?: ReadonlySet<string>,
): Promise<Answer[]> {
  const pair = await servePair(define);
  try {
    return await sameAnswers(pair.theirs, pair.ours, requests, ignored);
  } finally {
    await pair.close();
  }
}
