// The timeouts' answers, the same on both engines: the handler timeout goes through the app's
// error format (a custom onError shapes it), and a route's own requestTimeout and bodyLimit
// apply to it alone. (Slow heads and bodies at the app's limits: test/contract/refusals.test.ts.)
import assert from "node:assert/strict";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { Cog, HttpError } from "../../src/index.js";
import { engine, serve, statuses } from "../helpers.js";

/** A POST whose body comes in two parts, `pauseMs` apart; resolves with all the server wrote until it closed or went quiet. */
function slowUpload(port: number, path: string, pauseMs: number): Promise<string> {
  return slowExchange(port, path, pauseMs).then(({ text }) => text);
}

/** `slowUpload`, and whether the server closed the connection (rather than going quiet for a second). */
function slowExchange(port: number, path: string, pauseMs: number): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    let quiet: NodeJS.Timeout | undefined;
    const done = (closed = true): void => {
      clearTimeout(quiet);
      socket.destroy();
      resolve({ text, closed });
    };
    socket.setEncoding("latin1").on("data", (chunk: string) => {
      text += chunk;
      clearTimeout(quiet);
      quiet = setTimeout(() => done(false), 1000);
    });
    socket.once("close", () => done());
    socket.once("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" || err.code === "EPIPE" ? done() : reject(err)));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhello`);
    setTimeout(() => socket.writable && socket.write("world"), pauseMs);
  });
}

/** The JSON body of the one response in `text`. */
const bodyOf = (text: string): unknown => JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));

describe("handlerTimeout's answer", () => {
  test("the default error format: 503, JSON naming handlerTimeout", async (t) => {
    const { fetch } = await serve(t, (app) => app.get("/silent", () => undefined), { handlerTimeout: 150, logErrors: false });
    const res = await fetch("/silent");
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
    assert.deepEqual(await res.json(), { statusCode: 503, error: "Service Unavailable", message: "The server did not answer within handlerTimeout (150 ms)" });
  });

  test("a custom onError shapes it", async (t) => {
    const { fetch } = await serve(
      t,
      (app) => {
        app.get("/silent", () => undefined);
        app.onError((err, _req, res) => {
          const status = err instanceof HttpError ? err.status : 500;
          res
            .status(status)
            .type("application/problem+json")
            .send(JSON.stringify({ title: "timed out", status, detail: (err as Error).message }));
        });
      },
      { handlerTimeout: 150, logErrors: false },
    );
    const res = await fetch("/silent");
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("content-type"), "application/problem+json");
    assert.deepEqual(await res.json(), { title: "timed out", status: 503, detail: "The server did not answer within handlerTimeout (150 ms)" });
  });
});

describe("a body too slow, its request routed", () => {
  test("a custom onError shapes the 408 (the app's and a route's own requestTimeout), and the connection closes after it", async (t) => {
    const { port } = await serve(
      t,
      (app) => {
        app.post("/app", (req, res) => res.send(`got ${req.body as string}`));
        app.post("/own", { requestTimeout: 400 }, (req, res) => res.send(`got ${req.body as string}`));
        app.onError((err, _req, res) => {
          const status = err instanceof HttpError ? err.status : 500;
          res
            .status(status)
            .type("application/problem+json")
            .send(JSON.stringify({ title: "too slow", status, detail: (err as Error).message }));
        });
      },
      { headersTimeout: 300, requestTimeout: 600, timeoutCheckInterval: 100 },
    );
    const [app, own] = await Promise.all([slowExchange(port, "/app", 3000), slowExchange(port, "/own", 3000)]);
    for (const [{ text: answer, closed }, ms] of [
      [app, 600],
      [own, 400],
    ] as const) {
      assert.ok(closed, "the connection closed after the 408");
      assert.deepEqual(statuses(answer), [408], answer);
      assert.match(answer, /\r\ncontent-type: application\/problem\+json\r\n/i);
      assert.match(answer, /\r\nconnection: close\r\n/i);
      assert.deepEqual(bodyOf(answer), {
        title: "too slow",
        status: 408,
        detail: `The request body did not arrive within requestTimeout (${ms} ms); raise the requestTimeout option for slower clients`,
      });
    }
  });
});

describe("a route's own requestTimeout", () => {
  test("a route with a longer requestTimeout accepts a slow upload the others refuse with 408", async (t) => {
    const { port } = await serve(
      t,
      (app) => {
        app.post("/upload", { requestTimeout: 10_000 }, (req, res) => res.send(`got ${req.body as string}`));
        app.post("/other", (req, res) => res.send(`got ${req.body as string}`));
        app.post("/streamed", { requestTimeout: 10_000, body: "stream" }, async (req, res) => {
          let text = "";
          for await (const chunk of req) text += String(chunk);
          res.send(`streamed ${text}`);
        });
      },
      { headersTimeout: 300, requestTimeout: 600, timeoutCheckInterval: 100 },
    );
    // The body's second half comes 1.5 s after the first: past the app's 600 ms, within the route's 10 s.
    const [upload, streamed, other] = await Promise.all([
      slowUpload(port, "/upload", 1500),
      slowUpload(port, "/streamed", 1500),
      slowUpload(port, "/other", 1500),
    ]);
    assert.deepEqual(statuses(upload), [200], upload);
    assert.ok(upload.endsWith("got helloworld"), upload);
    assert.deepEqual(statuses(streamed), [200], streamed);
    assert.ok(streamed.endsWith("streamed helloworld"), streamed);
    assert.deepEqual(statuses(other), [408], other);
    assert.deepEqual(bodyOf(other), {
      statusCode: 408,
      error: "Request Timeout",
      message: "The request body did not arrive within requestTimeout (600 ms); raise the requestTimeout option for slower clients",
    });
  });

  test("a route with a shorter requestTimeout refuses sooner, naming its own value; the app's routes still get the app's", async (t) => {
    const { port } = await serve(
      t,
      (app) => {
        app.post("/quick", { requestTimeout: 400 }, (req, res) => res.send(`got ${req.body as string}`));
        app.post("/other", (req, res) => res.send(`got ${req.body as string}`));
      },
      { headersTimeout: 300, requestTimeout: 5_000, timeoutCheckInterval: 100 },
    );
    const [quick, other] = await Promise.all([slowUpload(port, "/quick", 1500), slowUpload(port, "/other", 1500)]);
    assert.deepEqual(statuses(quick), [408], quick);
    assert.equal(
      (bodyOf(quick) as { message: string }).message,
      "The request body did not arrive within requestTimeout (400 ms); raise the requestTimeout option for slower clients",
    );
    assert.deepEqual(statuses(other), [200], other);
  });

  test("is checked at registration: a whole number of ms >= 0", () => {
    const app = new Cog({ engine });
    assert.throws(
      () => app.post("/x", { requestTimeout: -1 }, () => {}),
      /Route POST \/x: requestTimeout must be a whole number of ms >= 0 \(0: no limit\), got -1/,
    );
    assert.throws(() => app.post("/y", { requestTimeout: 1.5 }, () => {}), /got 1\.5/);
    assert.doesNotThrow(() => app.post("/z", { requestTimeout: 0 }, () => {}));
  });
});
