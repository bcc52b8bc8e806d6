// OpenTelemetry for bench/otel-cost.mjs, loaded before the server (node --import ./tracing.mjs):
// the Node SDK with a BatchSpanProcessor over an exporter that drops what it is given (the cost
// is the spans' making and batching, not a collector's network), instrumentation-http (unless
// OTEL_HTTP=0), and the framework's own instrumentation (OTEL_FRAMEWORK: cog or fastify). On
// SIGUSR2 it flushes and prints how many spans it was handed, for the runner to check that each
// request was traced.
import { register } from "node:module";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";

// As OpenTelemetry's docs ask of an ES module app: its loader hook, so that instrumentation-http
// sees the node:http the app imports (without it, on the node engine Cog makes the span itself).
register("@opentelemetry/instrumentation/hook.mjs", import.meta.url);

let exported = 0;
const exporter = {
  export(spans, done) {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: async () => {},
};

const framework = process.env.OTEL_FRAMEWORK;
const own =
  framework === "cog"
    ? new (await import("../../dist/otel/index.js")).CogInstrumentation()
    : framework === "fastify"
      ? new (await import("@fastify/otel")).FastifyOtelInstrumentation()
      : null;
if (own === null) throw new Error(`OTEL_FRAMEWORK must be cog or fastify, not ${framework}`);
globalThis.benchOtelInstrumentation = own;

const processor = new BatchSpanProcessor(exporter);
new NodeSDK({
  spanProcessors: [processor],
  instrumentations: process.env.OTEL_HTTP === "0" ? [own] : [new HttpInstrumentation(), own],
  resourceDetectors: [],
}).start();

process.on("SIGUSR2", () => void processor.forceFlush().then(() => process.stdout.write(`spans ${exported}\n`)));
