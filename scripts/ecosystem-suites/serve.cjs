// Loaded first in every process of an ecosystem suite run by scripts/ecosystem-suites.mjs (by
// NODE_OPTIONS=--require, and by Jest's setupFiles inside its module registry): every request
// listener a test hands to `http.createServer` is served by the way under test.
//
//   COG_ECOSYSTEM_WAY      "express" (Express 5 from npm, on node:http), "node" or "native"
//                          (cog-http/express on that engine)
//   COG_ECOSYSTEM_EXPRESS  the module the suite's `express` is in this way (an absolute path)
//   COG_ECOSYSTEM_PLAIN    "1": a plain listener (not an app) is mounted in an app of that express
//                          first (`app.use(listener)`), so that middleware tested on bare node:http
//                          (morgan, helmet, connect-timeout…) meets that express's req and res
//
// On Cog's ways an app given to `http.createServer(app)` (supertest's `request(app)`) is served
// by `express.createServer(app, { engine })`, and `app.listen()` is Express's own listen, which
// makes its server with `http.createServer(this)`: so every app a suite serves is on the engine
// named, whichever way it starts listening. (Plain "http", not "node:http": Jest 26 knows no "node:".)
"use strict";
const http = require("http");
const { syncBuiltinESMExports } = require("module");

const way = process.env.COG_ECOSYSTEM_WAY;
const expressPath = process.env.COG_ECOSYSTEM_EXPRESS;
const wrapPlain = process.env.COG_ECOSYSTEM_PLAIN === "1";
if (way !== undefined && expressPath !== undefined) serve();

function serve() {
  if (!["express", "node", "native"].includes(way)) throw new Error(`COG_ECOSYSTEM_WAY must be express, node or native; got ${way}`);
  // The first loaded keeps node:http's own (Jest loads this again in each test file's registry).
  const kOriginal = Symbol.for("cog.ecosystem.createServer");
  const original = http[kOriginal] ?? (http[kOriginal] = http.createServer);
  const express = require(expressPath);
  const isApp = (fn) => typeof fn === "function" && typeof fn.handle === "function" && typeof fn.set === "function";

  http.createServer = function createServer(...args) {
    let listener = args[args.length - 1];
    if (args.length !== 1 || typeof listener !== "function") return original.apply(this, args);
    if (!isApp(listener)) {
      if (!wrapPlain) return original.apply(this, args);
      const plain = listener;
      listener = express();
      listener.use((req, res) => plain(req, res));
    }
    return way === "express" ? original.call(this, listener) : express.createServer(listener, { engine: way });
  };
  syncBuiltinESMExports();

  if (way !== "express") {
    require("../express-suite/listen.cjs").listenThroughCreateServer(express);
  }
}
