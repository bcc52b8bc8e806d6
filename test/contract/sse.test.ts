import { test } from "node:test";
import assert from "node:assert/strict";
import { createReadStream } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { serve } from "../helpers.js";
import { eventually, within } from "../wire.js";
import type { EventStream } from "../../src/http/sse.js";

/** Opens a GET and resolves with the response as soon as its head arrives. */
function open(port: number, path: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, host: "127.0.0.1", path, headers }, resolve);
    req.on("error", reject);
    req.end();
  });
}

/** The next `count` events' raw text from an event stream. */
function nextEvents(res: IncomingMessage, count: number): Promise<string[]> {
  return new Promise((resolve) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const events = text.split("\n\n");
      if (events.length > count) {
        res.off("data", onData);
        resolve(events.slice(0, count));
      }
    };
    res.on("data", onData);
  });
}

test("res.sse() frames events (event, id, retry, multi-line data, JSON) and each reaches the client at once", async (t) => {
  let stream: EventStream | undefined;
  const { port } = await serve(t, (app) => {
    app.get("/events", (_req, res) => {
      stream = res.sse({ heartbeat: 0 });
    });
  });
  const res = await open(port, "/events");
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers["content-type"], "text/event-stream; charset=utf-8");
  assert.equal(res.headers["cache-control"], "no-cache");
  await eventually(() => stream !== undefined, "the stream");
  const first = nextEvents(res, 1);
  stream!.send({ event: "greeting", id: 7, retry: 2000, data: "line one\nline two" });
  assert.deepEqual(await within(first, "the first event, without another write behind it"), [
    "event: greeting\nid: 7\nretry: 2000\ndata: line one\ndata: line two",
  ]);
  const second = nextEvents(res, 2);
  stream!.send({ data: { n: 1 } });
  stream!.send("plain");
  assert.deepEqual(await within(second, "two more events"), ['data: {"n":1}', "data: plain"]);
  const ended = new Promise((resolve) => res.on("end", resolve));
  stream!.close();
  await within(ended, "the end of the stream");
  assert.equal(stream!.closed, true);
  assert.equal(stream!.send("late"), false);
});

test("heartbeat comments keep an idle event stream alive", async (t) => {
  const { port } = await serve(t, (app) => {
    app.get("/events", (_req, res) => void res.sse({ heartbeat: 50 }));
  });
  const res = await open(port, "/events");
  const beats = await within(nextEvents(res, 2), "two heartbeats");
  assert.deepEqual(beats, [":", ":"]);
  res.destroy();
});

test("bad calls to the event stream throw a TypeError naming the field", async (t) => {
  const errors: string[] = [];
  const { port } = await serve(t, (app) => {
    app.get("/events", (_req, res) => {
      const stream = res.sse({ heartbeat: 0 });
      for (const bad of [{ event: "a\nb" }, { id: "1\r" }, { retry: -1 }, {}]) {
        try {
          stream.send(bad);
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
      stream.close();
    });
    app.get("/bad-heartbeat", (_req, res) => void res.sse({ heartbeat: -5 }));
  });
  const res = await open(port, "/events");
  res.resume();
  await new Promise((r) => res.on("end", r));
  assert.equal(errors.length, 4);
  assert.match(errors[0]!, /the event "a\\nb" holds a line break/);
  assert.match(errors[1]!, /the id "1\\r" holds a line break/);
  assert.match(errors[2]!, /retry must be a whole number/);
  assert.match(errors[3]!, /an event needs data, event, id or retry/);
  const bad = await fetch(`http://127.0.0.1:${port}/bad-heartbeat`);
  assert.equal(bad.status, 500);
});

test("req.signal fires when the client goes away mid-stream, and the stream reports closed", async (t) => {
  let stream: EventStream | undefined;
  let aborted = false;
  let answeredSignal: AbortSignal | undefined;
  const { port, fetch } = await serve(t, (app) => {
    app.get("/events", (req, res) => {
      stream = res.sse({ heartbeat: 0 });
      req.signal.addEventListener("abort", () => (aborted = true));
    });
    app.get("/answered", (req, res) => {
      answeredSignal = req.signal;
      res.send("done");
    });
  });
  const res = await open(port, "/events");
  await eventually(() => stream !== undefined, "the stream");
  res.destroy();
  await eventually(() => aborted, "req.signal's abort");
  assert.equal(stream!.closed, true);
  // A request answered normally never aborts, even when its connection later closes.
  assert.equal(await (await fetch("/answered", { headers: { connection: "close" } })).text(), "done");
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(answeredSignal!.aborted, false);
});

test("res.write streams each chunk as it is written", async (t) => {
  let write: ((text: string) => void) | undefined;
  const { port } = await serve(t, (app) => {
    app.get("/chunks", (_req, res) => {
      res.set("content-type", "text/plain");
      write = (text) => void res.write(text);
      res.write("first;");
    });
  });
  const res = await open(port, "/chunks");
  const seen: string[] = [];
  res.on("data", (chunk: Buffer) => seen.push(chunk.toString()));
  await eventually(() => seen.join("") === "first;", "the first chunk");
  write!("second;");
  await eventually(() => seen.join("") === "first;second;", "the second chunk, alone");
  res.destroy();
});

test("a stream that fails before its first byte becomes the app's error response: a missing file is a 404", async (t) => {
  const { fetch } = await serve(t, (app) => {
    app.get("/missing", (_req, res) => res.send(createReadStream("/nonexistent/cog-test-file")));
    app.get("/broken", (_req, res) =>
      res.send(
        new Readable({
          read() {
            this.destroy(new Error("the source broke"));
          },
        }),
      ),
    );
    app.get("/custom", (_req, res) => res.send(createReadStream("/nonexistent/cog-test-file")));
    app.get("/file", (_req, res) => res.type("text").send(createReadStream(new URL(import.meta.url).pathname)));
    app.onError((err, _req, res) => res.status((err as { status?: number }).status ?? 500).json({ custom: true, message: (err as Error).message }));
  });
  const missing = await fetch("/missing");
  assert.equal(missing.status, 404);
  const body = (await missing.json()) as { custom: boolean; message: string };
  assert.equal(body.custom, true);
  assert.equal(body.message, "The file sent as the body was not found");
  assert.equal((await fetch("/broken")).status, 500);
  const file = await fetch("/file");
  assert.equal(file.status, 200);
  assert.match(await file.text(), /a stream that fails before its first byte/);
});

test("a stream that fails after its first byte cuts the connection", async (t) => {
  const { fetch } = await serve(t, (app) => {
    app.get("/late", (_req, res) => {
      let sent = false;
      res.send(
        new Readable({
          read() {
            if (!sent) {
              sent = true;
              this.push("some of it");
            } else setTimeout(() => this.destroy(new Error("broke half-way")), 10);
          },
        }),
      );
    });
  });
  const res = await fetch("/late");
  assert.equal(res.status, 200);
  await assert.rejects(res.text());
});
