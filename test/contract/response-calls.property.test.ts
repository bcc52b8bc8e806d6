// A property of every engine: whatever sequence of response calls a handler makes, with
// whatever arguments (valid and invalid statuses, headers with CR/LF or bytes Node refuses,
// writes, ends, sends, redirects, cookies, pipes, throws, next(), sync or across awaits), the
// request gets exactly one well-formed HTTP/1.1 answer, or (once the answer had begun) a clean
// close, within a bound; nothing a handler tried to inject reaches the wire; and the server
// goes on serving, the next request on the same connection included.
// COG_FUZZ_RUNS sets the number of runs; COG_FUZZ_SEED the seed ("random" for a fresh one).
import assert from "node:assert/strict";
import { STATUS_CODES } from "node:http";
import { Readable, type Writable } from "node:stream";
import { test } from "node:test";
import fc from "fast-check";
import type { CogOptions, CogRequest, CogResponse, Next } from "../../src/index.js";
import { serve } from "../helpers.js";
import { exchange, header, parseResponses, request, type WireResponse } from "../wire.js";

const runs = Number(process.env.COG_FUZZ_RUNS ?? 150);
const seedSetting = process.env.COG_FUZZ_SEED ?? "20240601";
const seed = seedSetting === "random" ? undefined : Number(seedSetting);
/** The most one exchange (the fuzzed request and a plain one behind it) may take. */
const BOUND_MS = 2000;

type Loose = Record<string, any>;

type Step =
  | { op: "status"; code: unknown }
  | { op: "statusCode"; code: unknown }
  | { op: "statusMessage"; value: string }
  | { op: "set" | "setHeader" | "append"; name: string; value: unknown }
  | { op: "setCookie"; name: string; value: string; signed: boolean }
  | { op: "writeHead"; code: unknown; headers: Record<string, unknown> }
  | { op: "flushHeaders" }
  | { op: "write"; chunk: string | Buffer }
  | { op: "end"; chunk: string | undefined }
  | { op: "send"; body: "text" | "object" | "buffer" | "empty" | "stream"; status: unknown }
  | { op: "json"; value: unknown; status: unknown }
  | { op: "redirect"; form: "url" | "url-status" | "status-url"; url: string; status: unknown }
  | { op: "pipe" }
  | { op: "throw" }
  | { op: "next"; error: boolean }
  | { op: "await"; kind: "microtask" | "immediate" };

type Call = Step & { swallow: boolean };

const STATUSES: unknown[] = [200, 201, 204, 301, 302, 304, 400, 404, 418, 500, 503, 599, 999, "201", "abc", 0, 99, 1000, -1, NaN, 1.5, null];
const HEADER_NAMES = ["x-a", "X-Mixed-Case", "content-type", "cache-control", "vary", "set-cookie", "bad name", "x-\u00e9", ""];
const HEADER_VALUES: unknown[] = [
  "v",
  "two words",
  "caf\u00e9",
  "\u65e5\u672c",
  "a\r\nX-Injected: 1",
  "a\nX-Injected: 1",
  "a\rb",
  42,
  ["l1", "l2"],
  ["ok", "x\r\nX-Injected: 1"],
  "",
];
const MESSAGES = ["Fine", "", "OK\r\nX-Injected: 1", "Bad\nX-Injected: 1", "Tab\there"];
const URLS = ["/next", "https://example.com/x?y=1", "//evil.example", "/\\evil.example", "/sp ace?q=\r\nX-Injected: 1"];

const status = fc.constantFrom(...STATUSES);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant("status" as const), code: status }),
  fc.record({ op: fc.constant("statusCode" as const), code: status }),
  fc.record({ op: fc.constant("statusMessage" as const), value: fc.constantFrom(...MESSAGES) }),
  fc.record({
    op: fc.constantFrom("set" as const, "setHeader" as const, "append" as const),
    name: fc.constantFrom(...HEADER_NAMES),
    value: fc.constantFrom(...HEADER_VALUES),
  }),
  fc.record({ op: fc.constant("setCookie" as const), name: fc.constantFrom("c", "bad;name"), value: fc.constantFrom("v", "a b", "x;y"), signed: fc.boolean() }),
  fc.record({
    op: fc.constant("writeHead" as const),
    code: status,
    headers: fc.dictionary(fc.constantFrom(...HEADER_NAMES), fc.constantFrom(...HEADER_VALUES), { maxKeys: 2 }),
  }),
  fc.record({ op: fc.constant("flushHeaders" as const) }),
  fc.record({ op: fc.constant("write" as const), chunk: fc.oneof(fc.constantFrom("chunk", "\u00e9t\u00e9", ""), fc.constant(Buffer.from("bytes"))) }),
  fc.record({ op: fc.constant("end" as const), chunk: fc.constantFrom(undefined, "the end") }),
  fc.record({
    op: fc.constant("send" as const),
    body: fc.constantFrom("text" as const, "object" as const, "buffer" as const, "empty" as const, "stream" as const),
    status: fc.constantFrom(undefined, ...STATUSES),
  }),
  fc.record({
    op: fc.constant("json" as const),
    value: fc.constantFrom<unknown>({ a: 1 }, [1, "two"], "s", null, 1n),
    status: fc.constantFrom(undefined, ...STATUSES),
  }),
  fc.record({
    op: fc.constant("redirect" as const),
    form: fc.constantFrom("url" as const, "url-status" as const, "status-url" as const),
    url: fc.constantFrom(...URLS),
    status: fc.constantFrom(301, 302, 303, 307, 308, 0, "301"),
  }),
  fc.record({ op: fc.constant("pipe" as const) }),
  fc.record({ op: fc.constant("throw" as const) }),
  fc.record({ op: fc.constant("next" as const), error: fc.boolean() }),
  fc.record({ op: fc.constant("await" as const), kind: fc.constantFrom("microtask" as const, "immediate" as const) }),
);
const program = fc.array(
  fc.tuple(step, fc.boolean()).map(([s, swallow]) => ({ ...s, swallow }) as Call),
  { minLength: 1, maxLength: 8 },
);

/** Makes one call on the response, as a handler would. */
function perform(call: Call, req: CogRequest, res: CogResponse, next: Next, started: { piped: boolean }): void {
  const r = res as unknown as Loose;
  switch (call.op) {
    case "status":
      res.status(call.code as number);
      return;
    case "statusCode":
      res.statusCode = call.code as number;
      return;
    case "statusMessage":
      r.statusMessage = call.value;
      return;
    case "set":
      res.set(call.name, call.value as string);
      return;
    case "setHeader":
      res.setHeader(call.name, call.value as string);
      return;
    case "append":
      res.append(call.name, call.value as string);
      return;
    case "setCookie":
      (res.setCookie as (n: string, v: string, o: object) => unknown)(call.name, call.value, call.signed ? { signed: true } : {});
      return;
    case "writeHead":
      r.writeHead(call.code, call.headers);
      return;
    case "flushHeaders":
      r.flushHeaders();
      return;
    case "write":
      r.write(call.chunk);
      return;
    case "end":
      r.end(call.chunk);
      return;
    case "send": {
      const bodies = { text: "text body", object: { o: true }, buffer: Buffer.from("buffer body"), empty: undefined, stream: null };
      if (call.body === "stream") {
        res.send(Readable.from(["stream ", "body"]), call.status as number | undefined);
        // Only once send took the stream (it throws when it can't): the stream ends the response.
        started.piped = true;
      } else res.send(bodies[call.body], call.status as number | undefined);
      return;
    }
    case "json":
      res.json(call.value, call.status as number | undefined);
      return;
    case "redirect":
      if (call.form === "url") res.redirect(call.url);
      else if (call.form === "url-status") res.redirect(call.url, call.status as number);
      else (res.redirect as unknown as (s: unknown, u: string) => unknown)(call.status, call.url);
      return;
    case "pipe":
      started.piped = true;
      Readable.from(["piped ", "body"]).pipe(res as unknown as Writable);
      return;
    case "throw":
      throw new Error("thrown by the handler");
    case "next":
      next(call.error ? new Error("passed to next") : undefined);
      return;
    case "await":
      return;
  }
  void req;
}

/** Runs a program as a route handler: sync unless it awaits; ends the response if the program left it open. */
function handlerFor(calls: Call[]) {
  const isAsync = calls.some((c) => c.op === "await");
  const finish = (res: CogResponse, started: { piped: boolean }) => {
    // A program that left its response open and streams nothing: end it, as a handler's last line would.
    const r = res as unknown as Loose;
    if (!started.piped && !r.writableEnded && !r.destroyed) r.end();
  };
  if (!isAsync) {
    return (req: CogRequest, res: CogResponse, next: Next) => {
      const started = { piped: false };
      for (const call of calls) performOrSwallow(call, req, res, next, started);
      finish(res, started);
    };
  }
  return async (req: CogRequest, res: CogResponse, next: Next) => {
    const started = { piped: false };
    for (const call of calls) {
      if (call.op === "await") {
        await (call.kind === "microtask" ? Promise.resolve() : new Promise((resolve) => setImmediate(resolve)));
        continue;
      }
      performOrSwallow(call, req, res, next, started);
    }
    finish(res, started);
  };
}

/** Makes the call; one marked `swallow` has its throw caught by the handler, which goes on. */
function performOrSwallow(call: Call, req: CogRequest, res: CogResponse, next: Next, started: { piped: boolean }): void {
  if (!call.swallow) return perform(call, req, res, next, started);
  try {
    perform(call, req, res, next, started);
  } catch {
    // Swallowed.
  }
}

/** Whether the program may have put a status line on the wire before failing (so a cut connection is a fair answer). */
function mayHaveBegun(calls: Call[]): boolean {
  return calls.some((c) => c.op === "write" || c.op === "pipe" || c.op === "flushHeaders" || c.op === "writeHead" || (c.op === "send" && c.body === "stream"));
}

/** Checks the reason phrase: the status's own, one the program set, or for an error Cog answered, the error's own. */
function checkReason(answer: WireResponse, calls: Call[]): void {
  const own = STATUS_CODES[answer.status];
  let cogError = false;
  try {
    const body = JSON.parse(answer.body.toString("utf8")) as { statusCode?: unknown; error?: unknown };
    cogError = body !== null && typeof body === "object" && body.statusCode === answer.status && body.error === own;
  } catch {
    // Not Cog's error body.
  }
  if (cogError) {
    assert.equal(answer.reason, own, `Cog's ${answer.status} has its reason phrase`);
    return;
  }
  if (own === undefined) return;
  const set = calls.flatMap((c) => (c.op === "statusMessage" && c.value !== "" && !/[\r\n]/.test(c.value) ? [c.value] : []));
  assert.ok([own, ...set].includes(answer.reason), `reason phrase "${answer.reason}" for ${answer.status}`);
}

test("any sequence of response calls gets one well-formed HTTP/1.1 answer (or a clean close once begun), and the server goes on", async (t) => {
  const programs = new Map<number, Call[]>();
  let nextId = 0;
  const { port } = await serve(
    t,
    (app) => {
      app.get("/plain", (_req, res) => res.send("plain"));
      app.get("/fuzz/:id", (req, res, next) => handlerFor(programs.get(Number(req.params.id))!)(req, res, next));
    },
    { secret: "fuzz secret" } as CogOptions,
  );

  await fc.assert(
    fc.asyncProperty(program, async (calls) => {
      const id = nextId++;
      programs.set(id, calls);
      const ex = await exchange(port, `GET /fuzz/${id} HTTP/1.1\r\nHost: x\r\n\r\nGET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, BOUND_MS);
      programs.delete(id);
      const wire = ex.bytes.toString("latin1");
      const context = `\n--- on the wire:\n${JSON.stringify(wire.slice(0, 1500))}`;
      assert.equal(ex.timedOut, false, `no answer and no close within ${BOUND_MS} ms${context}`);
      const parsed = parseResponses(ex.bytes);
      assert.equal(parsed.malformed, null, `${parsed.malformed}${context}`);
      assert.doesNotMatch(wire, /\r\nX-Injected:/i, `an injected header${context}`);
      const [answer, ...rest] = parsed.responses;
      if (answer === undefined) {
        // Nothing whole: acceptable only as the cut of a response that had begun.
        assert.ok(mayHaveBegun(calls), `no answer, for a program that never began one${context}`);
        return;
      }
      assert.ok(answer.status >= 200, `a final answer, not ${answer.status}${context}`);
      checkReason(answer, calls);
      if (header(answer, "connection")?.toLowerCase() === "close") {
        assert.deepEqual([rest.length, parsed.partial], [0, null], `nothing after an answer that closes${context}`);
      } else {
        assert.equal(parsed.partial, null, `a second answer cut short${context}`);
        assert.equal(rest.length, 1, `exactly one answer to the fuzzed request, then /plain's${context}`);
        assert.equal(`${rest[0]!.status} ${rest[0]!.body.toString()}`, "200 plain", `the next request on the connection is served${context}`);
      }
    }),
    { numRuns: runs, seed, interruptAfterTimeLimit: 20_000, markInterruptAsFailure: false },
  );
  const after = await request(port, "/plain");
  assert.equal(after.text, "plain", "the server still answers a plain request afterwards");
});
