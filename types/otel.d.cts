// Types for `require("cog-http/otel")` from CommonJS (see require.d.cts).
export * from "../dist/otel/index.js";
