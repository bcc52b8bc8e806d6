// What a developer is told when their app goes wrong: every logged error names the method, path
// and route; a handler that never answers is warned of (outside production); next() misuse says
// what happened; a path Cog can't serve is refused when it is registered, with the reason.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { Readable } from "node:stream";
import { describe, test } from "node:test";
import { format } from "node:util";
import { Cog, type CogOptions } from "../../src/index.js";
import { engine, serve } from "../helpers.js";

/** Everything Cog logs (console.error and console.warn), one string per call, while the test runs. */
function captureLog(t: { after(fn: () => unknown): void }): string[] {
  const lines: string[] = [];
  const { error, warn } = console;
  console.error = (...args: unknown[]) => void lines.push(format(...args));
  console.warn = (...args: unknown[]) => void lines.push(format(...args));
  t.after(() => Object.assign(console, { error, warn }));
  return lines;
}

const logging: CogOptions = { logErrors: true };

/** A test per registration mistake: [what, the registering call, what the error says]. */
type Refusals = Array<[string, (app: Cog) => unknown, RegExp]>;
function testRefusals(refusals: Refusals): void {
  for (const [what, register, reason] of refusals) {
    test(what, () => {
      const app = new Cog({ engine });
      assert.throws(
        () => register(app),
        (err: Error) => {
          assert.match(String(err), reason);
          return true;
        },
      );
    });
  }
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("logged errors name the method, path and route", () => {
  test("a thrown string: 500, and a hint to throw an Error", async (t) => {
    const lines = captureLog(t);
    const { fetch } = await serve(t, (app) => app.get("/boom/:id", () => Promise.reject("boom string")), logging);
    assert.equal((await fetch("/boom/7")).status, 500);
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0]!, /^cog: GET \/boom\/7 \(route GET \/boom\/:id\): boom string/);
    assert.match(lines[0]!, /a string was thrown, which has no stack trace: throw an Error/);
  });

  test("ERR_HTTP_HEADERS_SENT: the route, when, and how to fix it; the client has its answer", async (t) => {
    const lines = captureLog(t);
    const { fetch } = await serve(
      t,
      (app) =>
        app.get("/late-header", (_req, res) => {
          res.send("done");
          res.setHeader("x-late", "1");
        }),
      logging,
    );
    const res = await fetch("/late-header");
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "done");
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(
      lines[0]!,
      /^cog: GET \/late-header \(route GET \/late-header\) \(after the response was sent\): Error( \[ERR_HTTP_HEADERS_SENT\])?: Cannot set headers after they are sent[^]*ERR_HTTP_HEADERS_SENT/,
    );
    assert.match(lines[0]!, /set headers and status before res\.send/);
  });

  test("an error thrown after the answer was sent", async (t) => {
    const lines = captureLog(t);
    const { fetch } = await serve(
      t,
      (app) =>
        app.post("/orders/:id", async (_req, res) => {
          res.send("ok");
          await sleep(1);
          throw new Error("audit failed");
        }),
      logging,
    );
    assert.equal(await (await fetch("/orders/3", { method: "POST" })).text(), "ok");
    await sleep(50);
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0]!, /^cog: POST \/orders\/3 \(route POST \/orders\/:id\) \(after the response was sent\): Error: audit failed/);
  });

  test("an upload cut off by its client: the body's error is logged as after the client left, not as after an answer", async (t) => {
    const lines = captureLog(t);
    let failed!: () => void;
    const handlerFailed = new Promise<void>((resolve) => (failed = resolve));
    const { port } = await serve(
      t,
      (app) =>
        app.post("/upload", { body: "stream" }, async (req, res) => {
          try {
            for await (const _ of req) void _;
          } finally {
            setImmediate(failed);
          }
          res.send("read");
        }),
      logging,
    );
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n" + "x".repeat(1000));
    await sleep(100);
    socket.destroy();
    await handlerFailed;
    await sleep(50);
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0]!, /^cog: POST \/upload \(route POST \/upload\) \(after the client closed the connection: no answer could be sent\): Error: aborted/);
  });

  for (const kind of ["throws", "rejects"]) {
    test(`an error handler that ${kind}: both errors logged with the route, the client gets the default 500`, async (t) => {
      const lines = captureLog(t);
      const { fetch } = await serve(
        t,
        (app) => {
          app.get("/users/:id", () => {
            throw new Error("db down");
          });
          app.onError(
            kind === "throws"
              ? () => {
                  throw new Error("handler bug");
                }
              : async () => {
                  throw new Error("handler bug");
                },
          );
        },
        logging,
      );
      const res = await fetch("/users/9");
      assert.equal(res.status, 500);
      assert.equal((await res.json()).statusCode, 500);
      assert.equal(lines.length, 2, lines.join("\n"));
      assert.match(lines[0]!, /^cog: GET \/users\/9 \(route GET \/users\/:id\) \(in the error handler\): Error: handler bug/);
      assert.match(lines[1]!, /^cog: GET \/users\/9 \(route GET \/users\/:id\): Error: db down/);
    });
  }
});

describe("a handler that returns without answering or calling next()", () => {
  test("is warned of with its route, once nothing has answered for a second; handlerTimeout still answers", async (t) => {
    const lines = captureLog(t);
    const { fetch } = await serve(
      t,
      (app) => {
        app.get("/forgot/:id", (_req, res) => void res.status(201));
        app.get("/returns-value", async () => ({ hello: "world" }));
        app.onError((_err, _req, res) => res.status(503).send("timed out"));
      },
      { ...logging, handlerTimeout: 2000 },
    );
    const [forgot, returned] = await Promise.all([fetch("/forgot/5"), fetch("/returns-value")]);
    assert.equal(forgot.status, 503);
    assert.equal(returned.status, 503);
    const warnings = lines.filter((line) => line.startsWith("cog: warning:"));
    assert.equal(warnings.length, 2, lines.join("\n"));
    const forgotLine = warnings.find((line) => line.includes("/forgot/5"))!;
    assert.match(
      forgotLine,
      /^cog: warning: GET \/forgot\/5 \(route GET \/forgot\/:id\): the handler \(anonymous\) returned without answering or calling next\(\)/,
    );
    assert.doesNotMatch(forgotLine, /returned a value/, "returning res is not returning a value");
    const returnedLine = warnings.find((line) => line.includes("/returns-value"))!;
    assert.match(returnedLine, /\(route GET \/returns-value\): .*It returned a value, which Cog does not send: answer with res\.json\(value\)/);
  });

  test("is not warned of when it answers later: on the next tick, after a timer, from a callback, through a piped stream, or next() later", async (t) => {
    const lines = captureLog(t);
    const { fetch } = await serve(
      t,
      (app) => {
        app.get("/tick", (_req, res) => void process.nextTick(() => res.send("tick")));
        app.get("/timer", (_req, res) => void setTimeout(() => res.send("timer"), 300));
        app.get("/async-timer", async (_req, res) => void setTimeout(() => res.send("async-timer"), 300));
        app.get("/stream", (_req, res) => {
          // A source that produces nothing for longer than the warning waits, then its answer.
          const source = new Readable({ read() {} });
          setTimeout(() => source.push("stream"), 1400);
          setTimeout(() => source.push(null), 1450);
          source.pipe(res);
        });
        app.get(
          "/later-next",
          (_req, _res, next) => void setTimeout(next, 300),
          (_req, res) => res.send("later-next"),
        );
        app.get("/slow", async (_req, res) => {
          await sleep(1300); // the promise is pending: nothing to say yet
          res.send("slow");
        });
      },
      logging,
    );
    const bodies = await Promise.all(["/tick", "/timer", "/async-timer", "/stream", "/later-next", "/slow"].map(async (path) => (await fetch(path)).text()));
    assert.deepEqual(bodies, ["tick", "timer", "async-timer", "stream", "later-next", "slow"]);
    await sleep(1300); // past any check the watch could still make
    assert.deepEqual(lines, []);
  });

  test('is not warned of when NODE_ENV is "production"', async (t) => {
    const lines = captureLog(t);
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    t.after(() => (previous === undefined ? delete process.env.NODE_ENV : (process.env.NODE_ENV = previous)));
    const { fetch } = await serve(t, (app) => app.get("/forgot", () => {}), { ...logging, handlerTimeout: 1600 });
    assert.equal((await fetch("/forgot")).status, 503);
    assert.deepEqual(
      lines.filter((line) => line.startsWith("cog: warning:")),
      [],
    );
    assert.match(lines.join("\n"), /\(route GET \/forgot\): Error: The handler did not answer within handlerTimeout/);
  });
});

describe("next() misuse says what happened", () => {
  test("a route whose last handler calls next(): 404, and a warning that names the route", async (t) => {
    const lines = captureLog(t);
    const { fetch } = await serve(t, (app) => app.get("/passes/:id", (_req, _res, next) => next()), logging);
    assert.equal((await fetch("/passes/1")).status, 404);
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(
      lines[0]!,
      /^cog: warning: GET \/passes\/1 \(route GET \/passes\/:id\): the last handler of route GET \/passes\/:id called next\(\) without answering/,
    );
  });

  test("next() called twice: logged as such, with the middleware's name and the route; the client gets one answer", async (t) => {
    const lines = captureLog(t);
    const { fetch } = await serve(
      t,
      (app) => {
        app.use(function twice(_req, _res, next) {
          next();
          next();
        });
        app.get("/items/:id", (req, res) => res.send(`item ${req.params.id}`));
      },
      logging,
    );
    const res = await fetch("/items/4");
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "item 4");
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(
      lines[0]!,
      /^cog: GET \/items\/4 \(route GET \/items\/:id\) \(after the response was sent\): Error: next\(\) was called twice by the middleware "twice"; call it once/,
    );
    assert.doesNotMatch(lines[0]!, /not found/);
  });
});

describe("a path Cog can't serve is refused at registration, with the reason", () => {
  const refusals: Refusals = [
    ["no leading slash", (app) => app.get("users", () => {}), /^TypeError: GET users: a path must start with "\/": write "\/users"$/],
    [
      "a number",
      (app) => app.get(42 as unknown as string, () => {}),
      /^TypeError: GET 42: a path must be a string that starts with "\/", got number \(write "\/42"\)$/,
    ],
    ["not a string", (app) => app.post({} as unknown as string, () => {}), /a path must be a string that starts with "\/", got object/],
    [
      "a regex constraint",
      (app) => app.get("/users/:id(\\d+)", () => {}),
      /regex constraints on params \(":id\(\\d\+\)"\) are not supported: validate the param with a params schema/,
    ],
    ["an optional param", (app) => app.get("/users/:id?", () => {}), /optional params \(":id\?"\) are not supported: register the path with and without it/],
    ["a repeating param", (app) => app.get("/files/:path*", () => {}), /repeating params .* end the path with "\*"/],
    ["a wildcard inside a segment", (app) => app.get("/files/*.js", () => {}), /"\*" matches the rest of the path as a segment of its own/],
    ["a param inside a segment", (app) => app.get("/files/:name.:ext", () => {}), /invalid param name "name\.:ext": a param is a whole segment/],
    ["a query string", (app) => app.get("/search?q", () => {}), /"\?" starts the query string/],
    ["braces", (app) => app.get("/users/{id}", () => {}), /"\{id\}" looks like another router's syntax; Cog's params are ":name" segments/],
    ["the same param twice", (app) => app.get("/a/:id/b/:id", () => {}), /param "id" appears twice/],
    [
      "the same param in a group and its route",
      (app) => app.group("/users/:id", (g) => g.get("/posts/:id", () => {})),
      /Route \/users\/:id\/posts\/:id: param "id" appears twice \(a group's prefix counts too\)/,
    ],
    [
      "use() without a leading slash",
      (app) => app.use("api", (_req, _res, next) => next()),
      /^TypeError: use\(\): a path must start with "\/": write "\/api"$/,
    ],
    ["group() without a leading slash", (app) => app.group("admin", () => {}), /^TypeError: group\(\): a path must start with "\/": write "\/admin"$/],
  ];
  testRefusals(refusals);

  test("the forms Cog serves are accepted, and an app with a refused route still serves the others", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/", (_req, res) => res.send("root"));
      app.get("/users/:id/files/*", (req, res) => res.send(`${req.params.id}:${req.params["*"]}`));
      app.get("/c++/$price", (_req, res) => res.send("literal"));
      assert.throws(() => app.get("nope", () => {}));
      app.use("*", (_req, _res, next) => next());
    });
    assert.equal(await (await fetch("/")).text(), "root");
    assert.equal(await (await fetch("/users/7/files/a/b.txt")).text(), "7:a/b.txt");
    assert.equal(await (await fetch("/c++/$price")).text(), "literal");
    assert.equal((await fetch("/nope")).status, 404);
  });
});

describe("a route option or schema part Cog doesn't know is refused at registration, with a hint", () => {
  const noop = () => {};
  const refusals: Refusals = [
    [
      "Fastify's schema.querystring",
      (app) => app.get("/search", { schema: { querystring: { type: "object" } } } as never, noop),
      /^TypeError: Route GET \/search: unknown schema key "querystring": Cog calls it query \(schema keys are params, query, headers, body, response, summary, description, tags, operationId, deprecated, security\)$/,
    ],
    [
      "a typo in schema",
      (app) => app.get("/users/:id", { schema: { respone: {} } } as never, noop),
      /^TypeError: Route GET \/users\/:id: unknown schema key "respone": did you mean response\?/,
    ],
    [
      "Fastify's responses",
      (app) => app.get("/a", { schema: { responses: {} } } as never, noop),
      /unknown schema key "responses": Cog calls it response: \{ response: \{ 200: schema \} \}/,
    ],
    [
      "a key nothing is close to",
      (app) => app.put("/a", { schema: { consumes: ["application/json"] } } as never, noop),
      /^TypeError: Route PUT \/a: unknown schema key "consumes" \(schema keys are /,
    ],
    [
      "a JSON Schema given as the schema itself",
      (app) => app.post("/a", { schema: { type: "object", properties: {} } } as never, noop),
      /^TypeError: Route POST \/a: unknown schema keys "type", "properties": schema holds the request's parts \(\{ params, query, headers, body, response \}\): put this schema under one of them, e.g. \{ schema: \{ body \} \}/,
    ],
    [
      "a schema that is not an object",
      (app) => app.get("/a", { schema: "query" } as never, noop),
      /^TypeError: Route GET \/a: schema must be an object of \{ params, query, headers, body, response \}, got string$/,
    ],
    [
      "a handler in the options",
      (app) => app.get("/a", { handler: noop } as never, noop),
      /^TypeError: Route GET \/a: unknown route option "handler": the handlers follow the options: app\.get\(path, \{ schema \}, handler\) \(route options are schema, bodyLimit, requestTimeout, body, compress\)$/,
    ],
    [
      "a schema part beside schema",
      (app) => app.get("/a", { query: {} } as never, noop),
      /^TypeError: Route GET \/a: unknown route option "query": it belongs in schema: \{ schema: \{ query \} \}/,
    ],
    [
      "a body schema as the body option",
      (app) => app.post("/a", { body: { type: "object" } } as never, noop),
      /^RangeError: Route POST \/a: body must be "buffer" or "stream", got an object \(a body schema belongs in schema: \{ schema: \{ body \} \}\)$/,
    ],
    [
      "a Fastify hook",
      (app) => app.get("/a", { preHandler: noop } as never, noop),
      /unknown route option "preHandler": Cog's hooks are middleware, given before the handler/,
    ],
    [
      "a typo in the options, in a group",
      (app) => app.group("/api", (api) => api.post("/up", { bodyLimt: 10 } as never, noop)),
      /^TypeError: Route POST \/api\/up: unknown route option "bodyLimt": did you mean bodyLimit\?/,
    ],
    [
      "tags that are not a list",
      (app) => app.get("/a", { schema: { tags: "users" } } as never, noop),
      /^TypeError: Route GET \/a: schema\.tags must be an array of strings$/,
    ],
    [
      "security that is not a list",
      (app) => app.get("/a", { schema: { security: { bearer: [] } } } as never, noop),
      /schema\.security must be an array of requirements, e\.g\. \[\{ bearer: \[\] \}\]/,
    ],
    [
      "a WebSocket handler Cog doesn't call",
      (app) => app.ws("/live", { onMessage: noop } as never),
      /^TypeError: WebSocket route \/live: unknown handler "onMessage": did you mean message\? \(handlers are upgrade, open, message, drain, close\)$/,
    ],
    [
      "a WebSocket option among the handlers",
      (app) => app.ws("/live", { message: noop, maxPayload: 10 } as never),
      /unknown handler "maxPayload": options are app\.ws's third argument/,
    ],
    [
      "uWebSockets' compression option",
      (app) => app.ws("/live", { message: noop }, { compression: 1 } as never),
      /^TypeError: WebSocket route \/live: unknown option "compression": Cog calls it perMessageDeflate: true/,
    ],
    [
      "a WebSocket handler among the options",
      (app) => app.ws("/live", {}, { close: noop } as never),
      /unknown option "close": handlers are app\.ws's second argument/,
    ],
  ];
  testRefusals(refusals);

  test("a refused route is not served; the known keys are taken and validate", async (t) => {
    const { fetch } = await serve(t, (app) => {
      assert.throws(() =>
        app.get("/search", { schema: { querystring: { type: "object", required: ["q"] } } } as never, (_req, res) => res.send("unvalidated")),
      );
      app.get(
        "/find",
        {
          bodyLimit: 10,
          body: "buffer",
          compress: false,
          schema: { query: { type: "object", required: ["q"] }, summary: "Find", tags: ["x"], operationId: "find", deprecated: true, security: [] },
        },
        (_req, res) => res.send("found"),
      );
    });
    assert.equal((await fetch("/search")).status, 404);
    assert.equal((await fetch("/find")).status, 400);
    assert.equal(await (await fetch("/find?q=1")).text(), "found");
  });
});

describe("an option Cog doesn't know is refused when the app is made or listens, naming it and the nearest known one", () => {
  test(`new Cog(), listen() and express() refuse a mistyped or misplaced option (${engine})`, async () => {
    assert.throws(() => new Cog({ engine, htpp2: true } as CogOptions), /^TypeError: new Cog\(\): unknown option "htpp2": did you mean http2\?/);
    assert.throws(() => new Cog({ engine, port: 3000 } as CogOptions), /unknown option "port": the port is listen\(\)'s: app\.listen\(\{ port \}\)/);
    assert.throws(
      () => new Cog({ engine, http3: true } as CogOptions),
      /unknown option "http3": HTTP\/3 is listen\(\)'s: app\.listen\(\{ port, http3: true \}\)/,
    );
    const app = new Cog({ engine });
    await assert.rejects(app.listen({ prot: 0 } as never), /^TypeError: app\.listen\(\): unknown option "prot": did you mean port\?/);
    await assert.rejects(app.listen({ port: 0, tls: {} } as never), /unknown option "tls": tls is an option of the app: new Cog\(\{ tls \}\)/);
    // Refused before anything listened: the same app can still listen.
    const { port } = await app.listen({ port: 0, host: "127.0.0.1" });
    assert.ok(port > 0);
    await app.close(100);
    const { default: express } = await import("../../src/express/index.js");
    assert.throws(() => express({ engine, bodylimit: 10 } as never), /^TypeError: express\(\): unknown option "bodylimit": did you mean bodyLimit\?/);
  });
});
