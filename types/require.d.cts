// Types for `require("cog-http")` from CommonJS, which loads Cog's CommonJS build (dist/cjs: see
// docs/decisions/module-systems.md). Both builds have the same exports, and this CommonJS-format
// entry re-exports the ES build's declarations, so that an app's `declare module "cog-http"`
// augments both; it lets TypeScript's `module: "node16"` accept the require (with skipLibCheck), while
// `nodenext`, `node20`, `bundler` and `commonjs` resolve the same declarations directly.
export * from "../dist/index.js";
