// Loaded by mocha (--require) when scripts/express-suite.mjs runs Express's own tests: every
// Express app a test hands to `http.createServer` (as supertest does with `request(app)`) is
// served by Cog's engine named in COG_EXPRESS_ENGINE instead ("node" or "native"), through
// `express.createServer(app, { engine })`; and `app.listen()` is Express 5's own, which makes its
// server with `http.createServer(this)`: so the apps a test starts with `app.listen()` are served
// on the engine named too (cog-http/express's own `listen` serves on the engine the app was made
// with, node:http for `express()`).
"use strict";
const http = require("node:http");
const express = require("cog-http/express");

const engine = process.env.COG_EXPRESS_ENGINE;
if (engine !== "node" && engine !== "native") throw new Error(`COG_EXPRESS_ENGINE must be "node" or "native", got ${engine}`);

const createServer = http.createServer;
http.createServer = function (...args) {
  const handler = args[args.length - 1];
  // An app (or a mounted-style app object) rather than a plain request listener.
  if (typeof handler === "function" && typeof handler.handle === "function" && typeof handler.set === "function" && args.length === 1) {
    return express.createServer(handler, { engine });
  }
  return createServer.apply(this, args);
};

require("./listen.cjs").listenThroughCreateServer(express);
