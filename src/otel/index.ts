// `cog-http/otel`: OpenTelemetry for Cog. Loads @opentelemetry/api and
// @opentelemetry/instrumentation (optional peer dependencies), so it is an entry of its own:
// an app that does not trace never loads them.
export { CogInstrumentation, type CogInstrumentationConfig } from "./instrumentation.js";
