// CogInstrumentation beside @opentelemetry/instrumentation-http: still one SERVER span per
// request. On the node engine it is instrumentation-http's, named by Cog's route; on the native
// engine (which instrumentation-http does not see) Cog's. A handler's http.get is its child.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { engine, serve } from "../helpers.js";
import { CLIENT, SERVER, setUpTracing } from "../otel.js";

// The handlers' own requests are traced (they carry x-traced); the test's are not.
const tracing = setUpTracing([new HttpInstrumentation({ ignoreOutgoingRequestHook: (request) => request.headers?.["x-traced"] === undefined })]);
// instrumentation-http patches node:http when it is required after it is enabled.
const http = createRequire(import.meta.url)("node:http") as typeof import("node:http");
const serverSpans = (count: number) => tracing.spans(count, (span) => span.kind === SERVER);

test(`one SERVER span per request beside instrumentation-http, named by the route, with a handler's http.get as its child (${engine})`, async (t) => {
  tracing.exporter.reset();
  const downstream = http.createServer((_req, res) => res.end("downstream"));
  await new Promise<void>((resolve) => downstream.listen(0, "127.0.0.1", resolve));
  t.after(() => downstream.close());
  const downstreamPort = (downstream.address() as { port: number }).port;
  const { fetch } = await serve(t, (app) => {
    app.get("/users/:id", async (req, res) => {
      const text = await new Promise<string>((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port: downstreamPort, path: "/", headers: { "x-traced": "1" } }, (answer) => {
            let body = "";
            answer.on("data", (chunk: Buffer) => (body += chunk));
            answer.on("end", () => resolve(body));
          })
          .on("error", reject);
      });
      res.json({ id: req.params.id, text });
    });
    app.get("/boom", () => {
      throw new Error("failed");
    });
  });
  const traceId = "0af7651916cd43dd8448eb211c80319c";
  const answer = await fetch("/users/7", { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
  assert.deepEqual(await answer.json(), { id: "7", text: "downstream" });
  assert.equal((await fetch("/boom")).status, 500);
  // Three SERVER spans: the two requests' and the downstream server's (instrumentation-http's, "GET").
  const ours = (await serverSpans(3)).filter((span) => span.name.startsWith("GET /"));
  assert.deepEqual(ours.map((span) => span.name).sort(), ["GET /boom", "GET /users/:id"]);
  const users = ours.find((span) => span.name === "GET /users/:id")!;
  // Exactly one SERVER span for the request to /users/7.
  const forUsers = (await serverSpans(3)).filter((span) => span.attributes["url.path"] === "/users/7");
  assert.equal(forUsers.length, 1, `one SERVER span for /users/7, got ${forUsers.map((s) => s.name).join(", ")}`);
  assert.equal(users.spanContext().traceId, traceId);
  assert.equal(users.parentSpanContext?.spanId, "b7ad6b7169203331");
  assert.equal(users.attributes["http.route"], "/users/:id");
  assert.equal(users.attributes["http.request.method"], "GET");
  assert.equal(users.attributes["http.response.status_code"], 200);
  const [outgoing] = await tracing.spans(1, (span) => span.kind === CLIENT);
  assert.equal(outgoing!.spanContext().traceId, traceId);
  assert.equal(outgoing!.parentSpanContext?.spanId, users.spanContext().spanId);
  const boom = ours.find((span) => span.name === "GET /boom")!;
  assert.equal(boom.status.code, 2);
  assert.equal(boom.events.filter((event) => event.name === "exception").length, 1);
  // On the node engine the span is instrumentation-http's (its scope), on native Cog's.
  assert.equal(users.instrumentationScope.name, engine === "node" ? "@opentelemetry/instrumentation-http" : "cog-http");
});
