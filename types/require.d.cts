// Types for `require("cog-http")` from CommonJS. cog-http is an ES module that Node loads with
// require() (Node 20.19+, 22.12+: see docs/decisions/module-systems.md); this CommonJS-format
// entry lets TypeScript's `module: "node16"` accept the require too (with skipLibCheck), while
// `nodenext`, `node20`, `bundler` and `commonjs` resolve the same declarations directly.
export * from "../dist/index.js";
