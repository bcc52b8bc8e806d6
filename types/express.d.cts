// Types for `require("cog-http/express")` from CommonJS: the module is the `express` function itself.
import express = require("../dist/express/index.js");
export = express.default;
