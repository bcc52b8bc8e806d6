// Types for `require("cog-http/express")` from CommonJS: the module is the `express` function
// itself (see require.d.cts), typed as the ES build's default export. Named by a type import of
// the ES declarations: `import x = require()` of them would be read as require(esm) by some
// TypeScript versions (giving the "module.exports" export) and as the namespace by others.
type ExpressFactory = import("../dist/express/index.js", { with: { "resolution-mode": "import" } }).ExpressFactory;
declare const express: ExpressFactory;
export = express;
