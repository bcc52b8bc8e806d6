// CogInstrumentation (cog-http/otel) alone, without @opentelemetry/instrumentation-http: Cog makes
// each request's SERVER span itself, on both engines, over real sockets.
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer } from "node:http";
import { trace, type SpanContext } from "@opentelemetry/api";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import WebSocketClient from "ws";
import { HttpError } from "../../src/index.js";
import { engine, serve } from "../helpers.js";
import { CLIENT, SERVER, setUpTracing } from "../otel.js";

// The handlers' own fetch calls are traced (they carry x-traced); the test's requests are not.
const tracing = setUpTracing([new UndiciInstrumentation({ ignoreRequestHook: (request) => !String(request.headers).includes("x-traced") })]);
const serverSpans = (count: number) => tracing.spans(count, (span) => span.kind === SERVER);

test(`one SERVER span per request, named by its route, with the stable HTTP attributes (${engine})`, async (t) => {
  tracing.exporter.reset();
  const { fetch, port } = await serve(t, (app) => {
    app.group("/users", (users) => users.get("/:id", (req, res) => res.json({ id: req.params.id })));
  });
  const answer = await fetch("/users/7?x=1", { headers: { "user-agent": "cog-test" } });
  assert.equal(answer.status, 200);
  const [span, ...others] = await serverSpans(1);
  assert.equal(others.length, 0);
  assert.equal(span!.name, "GET /users/:id");
  assert.equal(span!.kind, SERVER);
  assert.deepEqual(span!.attributes, {
    "http.request.method": "GET",
    "http.route": "/users/:id",
    "http.response.status_code": 200,
    "url.path": "/users/7",
    "url.query": "x=REDACTED",
    "url.scheme": "http",
    "server.port": port,
    "client.address": "127.0.0.1",
    "user_agent.original": "cog-test",
  });
  assert.equal(span!.status.code, 0); // UNSET
  assert.equal(span!.parentSpanContext, undefined);
  assert.equal(span!.ended, true);
});

test(`a 5xx is an ERROR span with the exception as an event; a 4xx is not; a 404 has no route (${engine})`, async (t) => {
  tracing.exporter.reset();
  const { fetch } = await serve(t, (app) => {
    app.get("/boom/:id", async () => {
      await new Promise((resolve) => setTimeout(resolve, 2));
      throw new TypeError("the query failed");
    });
    app.get("/teapot", () => {
      throw new HttpError(418, "short and stout");
    });
    app.onError((err, _req, res) => res.status(err instanceof HttpError ? err.status : 500).json({ error: "hidden" }));
  });
  assert.equal((await fetch("/boom/1")).status, 500);
  assert.equal((await fetch("/teapot")).status, 418);
  assert.equal((await fetch("/nowhere")).status, 404);
  const spans = await serverSpans(3);
  const byName = new Map(spans.map((span) => [span.name, span]));
  const boom = byName.get("GET /boom/:id")!;
  assert.equal(boom.status.code, 2); // ERROR
  assert.equal(boom.attributes["http.response.status_code"], 500);
  assert.equal(boom.attributes["error.type"], "500");
  assert.equal(boom.events.length, 1);
  assert.equal(boom.events[0]!.name, "exception");
  assert.equal(boom.events[0]!.attributes!["exception.type"], "TypeError");
  assert.equal(boom.events[0]!.attributes!["exception.message"], "the query failed");
  const teapot = byName.get("GET /teapot")!;
  assert.equal(teapot.status.code, 0);
  assert.equal(teapot.events.length, 0);
  assert.equal(teapot.attributes["error.type"], undefined);
  assert.equal(teapot.attributes["http.response.status_code"], 418);
  const missing = byName.get("GET")!;
  assert.equal(missing.attributes["http.route"], undefined);
  assert.equal(missing.attributes["http.response.status_code"], 404);
});

test(`an incoming traceparent is continued, and work in the handler is the span's child (${engine})`, async (t) => {
  tracing.exporter.reset();
  const downstream = createServer((_req, res) => res.end("downstream"));
  await new Promise<void>((resolve) => downstream.listen(0, "127.0.0.1", resolve));
  t.after(() => downstream.close());
  const downstreamUrl = `http://127.0.0.1:${(downstream.address() as { port: number }).port}/`;
  const tracer = trace.getTracer("test");
  let activeInHandler: SpanContext | undefined;
  const { fetch } = await serve(t, (app) => {
    app.post("/orders", async (req, res) => {
      activeInHandler = trace.getActiveSpan()?.spanContext();
      // A buffered body arrived before the chain ran: the span is still active.
      const body = req.body as { item: string };
      await tracer.startActiveSpan("load order", async (span) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        span.end();
      });
      const text = await (await globalThis.fetch(downstreamUrl, { headers: { "x-traced": "1" } })).text();
      res.json({ item: body.item, text });
    });
  });
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const parentId = "00f067aa0ba902b7";
  const answer = await fetch("/orders", {
    method: "POST",
    headers: { traceparent: `00-${traceId}-${parentId}-01`, "content-type": "application/json" },
    body: '{"item":"tea"}',
  });
  assert.deepEqual(await answer.json(), { item: "tea", text: "downstream" });
  const [server] = await serverSpans(1);
  assert.equal(server!.spanContext().traceId, traceId);
  assert.equal(server!.parentSpanContext?.spanId, parentId);
  assert.equal(server!.parentSpanContext?.isRemote, true);
  assert.deepEqual(activeInHandler, server!.spanContext());
  const [child] = await tracing.spans(1, (span) => span.name === "load order");
  assert.equal(child!.spanContext().traceId, traceId);
  assert.equal(child!.parentSpanContext?.spanId, server!.spanContext().spanId);
  const [outgoing] = await tracing.spans(1, (span) => span.kind === CLIENT);
  assert.equal(outgoing!.spanContext().traceId, traceId);
  assert.equal(outgoing!.parentSpanContext?.spanId, server!.spanContext().spanId);
});

test(`200 concurrent requests: each its own trace, and each handler sees its own span (${engine})`, async (t) => {
  tracing.exporter.reset();
  const { fetch } = await serve(t, (app) => {
    app.get("/work/:n", async (req, res) => {
      const before = trace.getActiveSpan()?.spanContext().traceId;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
      const after = trace.getActiveSpan()?.spanContext().traceId;
      res.json({ n: req.params.n, before, after });
    });
  });
  const answers = await Promise.all(
    Array.from({ length: 200 }, async (_, n) => (await fetch(`/work/${n}`)).json() as Promise<{ n: string; before: string; after: string }>),
  );
  const spans = await serverSpans(200);
  assert.equal(spans.length, 200);
  const traceOf = new Map(spans.map((span) => [span.attributes["url.path"], span.spanContext().traceId]));
  assert.equal(new Set(traceOf.values()).size, 200, "200 distinct traces");
  for (const answer of answers) {
    assert.equal(answer.before, traceOf.get(`/work/${answer.n}`));
    assert.equal(answer.after, answer.before);
  }
  assert.ok(spans.every((span) => span.name === "GET /work/:n" && span.parentSpanContext === undefined));
});

test(`a response the client leaves before its head is an ERROR span with no status code (${engine})`, async (t) => {
  tracing.exporter.reset();
  let reached!: () => void;
  const handlerReached = new Promise<void>((resolve) => (reached = resolve));
  const { fetch } = await serve(t, (app) => {
    app.get("/slow", (_req, res) => {
      reached();
      setTimeout(() => res.send("late"), 200);
    });
  });
  const controller = new AbortController();
  const request = fetch("/slow", { signal: controller.signal }).catch(() => undefined);
  await handlerReached;
  controller.abort();
  await request;
  const [span] = await serverSpans(1);
  assert.equal(span!.name, "GET /slow");
  assert.equal(span!.status.code, 2);
  assert.equal(span!.attributes["http.response.status_code"], undefined);
  assert.equal(span!.attributes["error.type"], "_OTHER");
});

test(`a WebSocket upgrade is a SERVER span of its route, ended once the socket is accepted (${engine})`, async (t) => {
  tracing.exporter.reset();
  const { port } = await serve(t, (app) => {
    app.ws("/rooms/:room", {
      message: (ws, data) => ws.send(String(data)),
    });
  });
  const socket = new WebSocketClient(`ws://127.0.0.1:${port}/rooms/red`);
  await once(socket, "open");
  socket.send("hello");
  const [echo] = (await once(socket, "message")) as [Buffer];
  assert.equal(echo.toString(), "hello");
  const [span] = await serverSpans(1);
  assert.equal(span!.name, "GET /rooms/:room");
  assert.equal(span!.attributes["http.route"], "/rooms/:room");
  assert.equal(span!.attributes["http.response.status_code"], 101);
  assert.equal(span!.status.code, 0);
  socket.close();
  await once(socket, "close");
});
