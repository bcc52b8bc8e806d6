// A shutdown as docs/guide/deployment.md orders it: app.onClose hooks (once, awaited) and open
// event streams ended cleanly (the final event, then the chunked terminator; req.signal aborts)
// rather than held until drainMs and cut. In one process here; per worker in workers.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Cog } from "../../src/index.js";
import { engine, statuses } from "../helpers.js";
import { eventually, openStream, slowConnection, within } from "../wire.js";

describe("shutdown: onClose hooks and event streams", () => {
  test("onClose runs once, in order, awaited before close resolves; a second close awaits the first", async () => {
    const app = new Cog({ engine, logErrors: false });
    app.get("/", (_req, res) => res.send("up"));
    const ran: string[] = [];
    app.onClose(async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      ran.push("first");
    });
    app.onClose(() => void ran.push("second"));
    const { port } = await app.listen(0, "127.0.0.1");
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "up");
    const closing = app.close(5000);
    const again = app.close(5000);
    assert.deepEqual(ran, [], "the first hook is still waiting");
    await closing;
    assert.deepEqual(ran, ["first", "second"], "close resolved after every hook, each once");
    await again;
    await app.close();
    assert.deepEqual(ran, ["first", "second"], "closing again runs no hook again");
    assert.throws(() => app.onClose("nope" as never), /app\.onClose takes a function, got string/);
  });

  test("a hook that awaits closing.drained sees in-flight requests finished; new requests got 503 meanwhile", async () => {
    const app = new Cog({ engine, logErrors: false });
    let finished = false;
    let reached = (): void => {};
    const handling = new Promise<void>((resolve) => (reached = resolve));
    app.get("/slow", (_req, res) => {
      reached();
      setTimeout(() => ((finished = true), res.send("done")), 300);
    });
    const seen: Array<[string, boolean]> = [];
    app.onClose(async ({ drained }) => {
      seen.push(["hook began", finished]);
      await drained;
      seen.push(["drained", finished]);
    });
    const { port } = await app.listen(0, "127.0.0.1");
    const inFlight = fetch(`http://127.0.0.1:${port}/slow`).then((r) => r.text());
    await handling;
    await app.close(10_000);
    assert.equal(await inFlight, "done");
    assert.deepEqual(seen, [
      ["hook began", false],
      ["drained", true],
    ]);
  });

  test("a hook that throws fails close, after the drain", async () => {
    const app = new Cog({ engine, logErrors: false });
    let later = false;
    app.onClose(() => {
      throw new Error("pool would not close");
    });
    app.onClose(() => void (later = true));
    const { port } = await app.listen(0, "127.0.0.1");
    await assert.rejects(app.close(1000), /pool would not close/);
    assert.equal(later, true, "the other hooks still ran");
    await assert.rejects(fetch(`http://127.0.0.1:${port}/`), "the server is closed");
  });

  test("an open event stream gets its final event and a clean end, and req.signal aborts, as the drain begins", async () => {
    const app = new Cog({ engine, logErrors: false });
    let aborted: unknown = null;
    let streamEndedBeforeHook: boolean | null = null;
    let opened = false;
    let stream: { closed: boolean } | null = null;
    app.get("/events", (req, res) => {
      req.signal.addEventListener("abort", () => (aborted = req.signal.reason));
      stream = res.sse({ heartbeat: 0, finalEvent: { event: "bye", retry: 2000, data: "shutting down" } });
      opened = true;
    });
    app.get("/plain", (_req, res) => res.sse({ heartbeat: 0 }).send("hello"));
    app.onClose(() => void (streamEndedBeforeHook = stream!.closed));
    const { port } = await app.listen(0, "127.0.0.1");
    const withFinal = openStream(port, "/events");
    const plain = openStream(port, "/plain");
    await eventually(() => opened && plain.text().includes("data: hello\n\n"), "both streams open");
    // A drain that waited for the streams would hold close() for the whole minute.
    await within(app.close(60_000), "close, with event streams open", 10_000);
    assert.equal(await within(withFinal.ended, "the stream's end"), "end", "the connection ended with a FIN, not a reset");
    assert.equal(await within(plain.ended, "the other stream's end"), "end");
    assert.match(withFinal.text(), /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(
      withFinal.text().endsWith("event: bye\nretry: 2000\ndata: shutting down\n\n\r\n0\r\n\r\n"),
      `the final event, then the chunked terminator: ${JSON.stringify(withFinal.text().slice(-80))}`,
    );
    assert.ok(plain.text().endsWith("data: hello\n\n\r\n0\r\n\r\n"), `a stream without a final event just ends: ${JSON.stringify(plain.text().slice(-60))}`);
    assert.ok(
      aborted instanceof DOMException && aborted.name === "AbortError" && /shutting down/.test(aborted.message),
      `req.signal aborted for the shutdown: ${String(aborted)}`,
    );
    assert.equal(streamEndedBeforeHook, true, "the streams ended before the hooks ran");
  });

  test("a stream opened by a request in flight once the drain has begun ends as it opens", async () => {
    const app = new Cog({ engine, logErrors: false });
    let arrived = false;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    app.get("/late", async (_req, res) => {
      arrived = true;
      await released;
      res.sse({ heartbeat: 0, finalEvent: "late bye" }).send("hello");
    });
    const { port } = await app.listen(0, "127.0.0.1");
    const late = openStream(port, "/late");
    await eventually(() => arrived, "the request in flight");
    const closed = app.close(60_000);
    release();
    await within(closed, "close, with a stream opened during the drain", 10_000);
    assert.equal(await within(late.ended, "the stream's end"), "end");
    assert.ok(
      /data: hello\n\n[\s\S]*data: late bye\n\n\r\n0\r\n\r\n$/.test(late.text()),
      `its event, then the final one, then the chunked terminator: ${JSON.stringify(late.text().slice(-90))}`,
    );
  });

  test("a bad final event is refused when the stream opens, not at shutdown", async () => {
    const app = new Cog({ engine, logErrors: false });
    app.get("/events", (_req, res) => void res.sse({ finalEvent: { event: "a\nb" } }));
    const { port } = await app.listen(0, "127.0.0.1");
    const res = await fetch(`http://127.0.0.1:${port}/events`);
    assert.equal(res.status, 500);
    await app.close(1000);
  });
  test("an answer finished in the turn a pipelined request behind it is refused for the drain still reaches the client, before the 503", async () => {
    const app = new Cog({ engine });
    const connection = await slowConnection(app);
    const closing = app.close(2000);
    // The first answer is finished in the same turn as the engine takes in (and refuses) the
    // second: the drain ends there, and the connections left are cut (on the native engine,
    // inside the batch of requests whose answers it writes at the batch's end).
    await connection.lateRequestArrived();
    connection.release();
    await closing;
    await connection.ended;
    const received = connection.received();
    assert.deepEqual(statuses(received), [200, 503]);
    assert.match(received, /\r\n\r\ndoneHTTP\/1\.1 503 /, "the first answer whole, then the refusal");
  });
});
