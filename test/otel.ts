// OpenTelemetry for the tests of `cog-http/otel`: a tracer provider that keeps finished spans in
// memory, registered globally with the AsyncLocalStorage context manager and the W3C propagator.
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { registerInstrumentations, type Instrumentation } from "@opentelemetry/instrumentation";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { CogInstrumentation } from "../src/otel/index.js";

export interface Tracing {
  readonly exporter: InMemorySpanExporter;
  /** Finished spans, waiting (up to 2 s) until `count` of them match. */
  spans(count: number, match?: (span: ReadableSpan) => boolean): Promise<ReadableSpan[]>;
}

/** Registers a provider and the instrumentations (CogInstrumentation first), once per test file. */
export function setUpTracing(others: Instrumentation[] = []): Tracing {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register({ contextManager: new AsyncLocalStorageContextManager() });
  registerInstrumentations({ tracerProvider: provider, instrumentations: [new CogInstrumentation(), ...others] });
  return {
    exporter,
    async spans(count, match = () => true) {
      for (let i = 0; i < 200; i++) {
        const found = exporter.getFinishedSpans().filter(match);
        if (found.length >= count) return found;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return exporter.getFinishedSpans().filter(match);
    },
  };
}

export const SERVER = 1; // SpanKind.SERVER
export const CLIENT = 2; // SpanKind.CLIENT
