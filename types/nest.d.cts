// Types for `require("cog-http/nest")` from CommonJS (see require.d.cts).
export * from "../dist/nest/index.js";
