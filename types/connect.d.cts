// Types for `require("cog-http/connect")` from CommonJS (see require.d.cts).
export * from "../dist/connect/index.js";
