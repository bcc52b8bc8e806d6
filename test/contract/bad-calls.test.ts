// Bad calls on the response never hang and never crash, on every engine: an invalid status, a
// status message or header with CR/LF, a header name Node refuses, sending twice, next() twice.
// Each is a 500 with its own reason phrase, or (once the answer is out) a logged no-op; the
// log names the method and the route; the process lives and the next request is served. And
// the handlerTimeout limit: a handler that sends nothing gets a 503; one that has begun is not cut.
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { describe, test } from "node:test";
import { Cog, type CogOptions, type Handler } from "../../src/index.js";
import { engine, serve } from "../helpers.js";
import { captureErrors, exchange, fetchWithin, header, parseResponses, request, type WireResponse } from "../wire.js";

type Loose = Record<string, any>;
const loose = (x: unknown) => x as Loose;
const options = (o: Record<string, unknown>) => o as CogOptions;

/**
 * Sends `path` and, pipelined behind it on the same connection, GET /ok: returns the answer to
 * `path`, having checked that it is one well-formed response and that the server then answered
 * /ok (on that connection, or on a new one if the answer closed it).
 */
async function answerThenOk(port: number, path: string, boundMs?: number): Promise<WireResponse> {
  const ex = await exchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, boundMs);
  assert.equal(ex.timedOut, false, `${path}: the server neither answered both requests nor closed the connection: ${ex.bytes.toString("latin1")}`);
  const parsed = parseResponses(ex.bytes);
  assert.equal(parsed.malformed, null, `${path}: ${parsed.malformed}\n${ex.bytes.toString("latin1")}`);
  assert.equal(parsed.partial, null, `${path}: an answer cut short\n${ex.bytes.toString("latin1")}`);
  const [answer, ...rest] = parsed.responses;
  assert.ok(answer, `${path}: no answer at all`);
  if (header(answer, "connection") === "close") {
    assert.equal(rest.length, 0, `${path}: nothing may follow an answer that closes`);
    assert.equal((await request(port, "/ok")).text, "ok", `${path}: the next request is served`);
  } else {
    assert.equal(rest.length, 1, `${path}: exactly one answer, then /ok's\n${ex.bytes.toString("latin1")}`);
    assert.equal(rest[0]!.status, 200);
    assert.equal(rest[0]!.body.toString(), "ok", `${path}: the next request is served`);
  }
  return answer;
}

/** Asserts a 500 as Cog sends it: the right reason phrase, and no header the handler tried to inject. */
function assertInternalError(answer: WireResponse, path: string): void {
  assert.equal(`${answer.status} ${answer.reason}`, "500 Internal Server Error", path);
  assert.equal(header(answer, "x-injected"), undefined, `${path}: no injected header`);
}

/** Asserts the app logged an error naming the method and the route. */
function assertLogged(lines: string[], method: string, route: string): void {
  assert.ok(
    lines.some((line) => line.includes(method) && line.includes(route)),
    `a log line names ${method} ${route}; last logged: ${lines.length === 0 ? "(nothing)" : lines[lines.length - 1]!.split("\n")[0]}`,
  );
}

const BAD_STATUSES: Array<[string, unknown]> = [
  ["string", "201"],
  ["zero", 0],
  ["thousand", 1000],
  ["nan", NaN],
  ["fraction", 1.5],
  ["ninety-nine", 99],
];

describe("bad calls are answered, logged, and survived", () => {
  test("a status that is not an integer in 100-999, given to res.status() or set as res.statusCode, is a 500 Internal Server Error", async (t) => {
    const logged = captureErrors(t);
    const { port } = await serve(
      t,
      (app) => {
        app.get("/ok", (_req, res) => res.send("ok"));
        for (const [name, status] of BAD_STATUSES) {
          app.get(`/status-${name}`, (_req, res) => res.status(status as number).send("never"));
          app.get(`/status-code-${name}`, (_req, res) => {
            res.statusCode = status as number;
            res.send("never");
          });
          app.get(`/status-json-${name}`, (_req, res) => res.json({ never: true }, status as number));
        }
      },
      { logErrors: true },
    );
    for (const [name, status] of BAD_STATUSES) {
      for (const path of [`/status-${name}`, `/status-code-${name}`, `/status-json-${name}`]) {
        await t.test(`${path} (${typeof status === "string" ? JSON.stringify(status) : status})`, async () => {
          const answer = await answerThenOk(port, path);
          assertInternalError(answer, path);
          assert.doesNotMatch(answer.body.toString(), /never/, path);
          assertLogged(logged.lines, "GET", path);
        });
      }
    }
  });

  test("a status message with CR/LF is a 500 Internal Server Error, and the process lives", async (t) => {
    const logged = captureErrors(t);
    const { port } = await serve(
      t,
      (app) => {
        app.get("/ok", (_req, res) => res.send("ok"));
        app.get("/message-send", (_req, res) => {
          loose(res).statusMessage = "OK\r\nX-Injected: 1";
          res.send("never");
        });
        app.get("/message-end", (_req, res) => {
          loose(res).statusMessage = "Fine\r\n\r\nHTTP/1.1 200 OK";
          loose(res).end("never");
        });
        app.get("/message-lf", async (_req, res) => {
          await Promise.resolve();
          loose(res).statusMessage = "Fine\nX-Injected: 1";
          res.json({ never: true });
        });
      },
      { logErrors: true },
    );
    for (const path of ["/message-send", "/message-end", "/message-lf"]) {
      await t.test(path, async () => {
        const answer = await answerThenOk(port, path);
        assertInternalError(answer, path);
        assertLogged(logged.lines, "GET", path);
      });
    }
  });

  test("a header value with CR/LF, or a name Node refuses, is a 500 Internal Server Error however it is set", async (t) => {
    const logged = captureErrors(t);
    const { port } = await serve(
      t,
      (app) => {
        app.get("/ok", (_req, res) => res.send("ok"));
        app.get("/value-set", (_req, res) => res.set("x-a", "v\r\nX-Injected: 1").send("never"));
        app.get("/value-setheader", (_req, res) => {
          res.setHeader("x-a", "v\r\nX-Injected: 1");
          res.send("never");
        });
        app.get("/value-writehead", (_req, res) => {
          loose(res).writeHead(200, { "x-a": "v\nX-Injected: 1" });
          loose(res).end("never");
        });
        app.get("/value-append", (_req, res) => res.append("x-a", "ok").append("x-a", "v\rX-Injected: 1").send("never"));
        app.get("/name-set", (_req, res) => res.set("bad name", "x").send("never"));
        app.get("/name-setheader", (_req, res) => {
          res.setHeader("bad:name", "x");
          res.send("never");
        });
        app.get("/name-writehead", (_req, res) => {
          loose(res).writeHead(200, { "x-\u00e9": "x" });
          loose(res).end("never");
        });
        app.get("/name-empty", (_req, res) => res.set("", "x").json({ never: true }));
        app.get("/value-then-throw", (_req, res) => {
          res.set("x-a", "v\r\nX-Injected: 1");
          throw new Error("the error response meets the bad header");
        });
        app.get("/value-then-next-error", (_req, res, next) => {
          res.append("vary", "ok").append("vary", "x\nX-Injected: 1");
          next(new Error("the error response meets the bad header"));
        });
      },
      { logErrors: true },
    );
    for (const path of [
      "/value-set",
      "/value-setheader",
      "/value-writehead",
      "/value-append",
      "/name-set",
      "/name-setheader",
      "/name-writehead",
      "/name-empty",
      "/value-then-throw",
      "/value-then-next-error",
    ]) {
      await t.test(path, async () => {
        const answer = await answerThenOk(port, path);
        assertInternalError(answer, path);
        assert.doesNotMatch(answer.body.toString(), /never/, path);
        assertLogged(logged.lines, "GET", path);
      });
    }
  });

  test("sending twice: the first answer stands, the second call is a logged no-op", async (t) => {
    const logged = captureErrors(t);
    const twice: Record<string, Handler> = {
      "/send-send": (_req, res) => {
        res.send("first");
        res.send("second");
      },
      "/send-json": (_req, res) => {
        res.send("first");
        res.json({ second: true });
      },
      "/json-redirect": (_req, res) => {
        res.json("first");
        res.redirect("/elsewhere");
      },
      "/send-write": (_req, res) => {
        res.send("first");
        loose(res).write("second");
      },
      "/end-end": (_req, res) => {
        loose(res).end("first");
        loose(res).end("second");
      },
      "/send-status-send": (_req, res) => {
        res.send("first");
        res.status(404).send("second");
      },
      "/send-later": async (_req, res) => {
        res.send("first");
        await new Promise((resolve) => setImmediate(resolve));
        res.send("second");
      },
      "/send-then-throw": (_req, res) => {
        res.send("first");
        throw new Error("after the answer");
      },
    };
    const { port } = await serve(
      t,
      (app) => {
        app.get("/ok", (_req, res) => res.send("ok"));
        for (const [path, handler] of Object.entries(twice)) app.get(path, handler);
      },
      { logErrors: true },
    );
    for (const path of Object.keys(twice)) {
      await t.test(path, async () => {
        const answer = await answerThenOk(port, path);
        assert.equal(answer.status, 200, path);
        assert.match(answer.body.toString(), /^"?first"?$/, path);
        // The second call may fail a tick later (a write after the end): let it.
        await new Promise((resolve) => setImmediate(resolve));
        assertLogged(logged.lines, "GET", path);
      });
    }
  });

  test("next() called twice runs nothing twice that could answer twice: one answer, the rest logged", async (t) => {
    const logged = captureErrors(t);
    const { port } = await serve(
      t,
      (app) => {
        app.get("/ok", (_req, res) => res.send("ok"));
        app.get(
          "/middleware-twice",
          (_req, _res, next) => {
            next();
            next();
          },
          (_req, res) => res.send("handled"),
        );
        app.get(
          "/middleware-later",
          (_req, _res, next) => {
            next();
            setImmediate(() => next());
          },
          async (_req, res) => {
            await Promise.resolve();
            res.send("handled");
          },
        );
        app.get("/last-twice", (_req, _res, next) => {
          next();
          next();
        });
        app.get("/error-twice", (_req, _res, next) => {
          next(new Error("first"));
          next(new Error("second"));
        });
      },
      { logErrors: true },
    );
    const expectations: Record<string, [number, RegExp]> = {
      "/middleware-twice": [200, /^handled$/],
      "/middleware-later": [200, /^handled$/],
      "/last-twice": [404, /Not Found/],
      "/error-twice": [500, /Internal Server Error/],
    };
    for (const [path, [status, body]] of Object.entries(expectations)) {
      await t.test(path, async () => {
        const answer = await answerThenOk(port, path);
        assert.equal(answer.status, status, path);
        assert.match(answer.body.toString(), body, path);
        if (status === 500) assertInternalError(answer, path);
        await new Promise((resolve) => setImmediate(resolve));
        // The second call met an answered response: that is logged, naming the route.
        assertLogged(logged.lines, "GET", path);
      });
    }
  });

  test("the error response of a handler that set its own status message has the error's reason phrase", async (t) => {
    const { port } = await serve(t, (app) => {
      app.get("/ok", (_req, res) => res.send("ok"));
      app.get("/custom-then-throw", (_req, res) => {
        loose(res).statusMessage = "All Good";
        throw new Error("boom");
      });
      app.get("/custom-then-bad-header", (_req, res) => {
        loose(res).statusMessage = "All Good";
        res.set("x-a", "a\r\nb").send("never");
      });
    });
    for (const path of ["/custom-then-throw", "/custom-then-bad-header"]) {
      await t.test(path, async () => assertInternalError(await answerThenOk(port, path), path));
    }
  });
});

describe("handlerTimeout", () => {
  test("a handler that has sent nothing in time gets a 503, logged with its route; a late answer is a no-op", async (t) => {
    const logged = captureErrors(t);
    let lateCall!: () => void;
    const late = new Promise<void>((resolve) => (lateCall = resolve));
    const { port } = await serve(
      t,
      (app) => {
        app.get("/ok", (_req, res) => res.send("ok"));
        app.get("/silent", () => undefined);
        app.get("/awaiting", async (_req, res) => {
          await late;
          res.send("too late");
        });
        app.get(
          "/middleware-silent",
          (_req, _res, _next) => undefined,
          (_req, res) => res.send("never reached"),
        );
      },
      options({ logErrors: true, handlerTimeout: 150 }),
    );
    for (const path of ["/silent", "/awaiting", "/middleware-silent"]) {
      await t.test(path, async () => {
        // The timeout is 150 ms: a second and a half is plenty for the 503.
        const answer = await answerThenOk(port, path, 1500);
        assert.equal(`${answer.status} ${answer.reason}`, "503 Service Unavailable", path);
        assertLogged(logged.lines, "GET", path);
      });
    }
    lateCall();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await request(port, "/ok")).text, "ok", "the late answer broke nothing");
  });

  test("a response that has begun is not cut: headers flushed, written chunks, SSE, a piped stream", async (t) => {
    // Each route keeps going past the timeout (150 ms) before it ends.
    const pause = () => new Promise((resolve) => setTimeout(resolve, 400));
    const { port, base } = await serve(
      t,
      (app) => {
        app.get("/flushed", async (_req, res) => {
          loose(res).flushHeaders();
          await pause();
          loose(res).end("flushed body");
        });
        app.get("/written", async (_req, res) => {
          res.setHeader("content-type", "text/plain");
          loose(res).write("a");
          await pause();
          loose(res).end("b");
        });
        app.get("/sse", async (_req, res) => {
          loose(res).writeHead(200, { "content-type": "text/event-stream" });
          loose(res).write("data: 1\n\n");
          await pause();
          loose(res).write("data: 2\n\n");
          loose(res).end();
        });
        app.get("/stream", (_req, res) => {
          let step = 0;
          res.send(
            new Readable({
              read() {
                if (step++ === 0) this.push("x");
                else setTimeout(() => (this.push("y"), this.push(null)), 400);
              },
            }),
          );
        });
      },
      options({ handlerTimeout: 150 }),
    );
    const [flushed, written, stream, sse] = await Promise.all([
      request(port, "/flushed"),
      request(port, "/written"),
      request(port, "/stream"),
      fetchWithin(base + "/sse"),
    ]);
    assert.equal(flushed.text, "flushed body");
    assert.equal(written.text, "ab");
    assert.equal(stream.text, "xy");
    assert.equal(sse.status, 200);
    assert.equal(await sse.text(), "data: 1\n\ndata: 2\n\n");
  });

  test("handlerTimeout is checked like every limit: a whole number of ms, 0 to disable", () => {
    assert.throws(() => new Cog(options({ engine, handlerTimeout: -1 })), RangeError);
    assert.throws(() => new Cog(options({ engine, handlerTimeout: 1.5 })), RangeError);
    assert.doesNotThrow(() => new Cog(options({ engine, handlerTimeout: 0 })));
  });
});
