// Shared by the suite hooks (express-suite/serve.cjs, ecosystem-suites/serve.cjs): makes
// `app.listen(...)` of cog-http/express build its server with `http.createServer(app)`, as real
// Express 5 does, so that a hook on createServer serves those apps on the engine under test too.
// Node's `server.listen` arguments pass through; a callback given last also hears a failure to
// listen, once, as in Express 5.
"use strict";
const http = require("node:http");

function listenThroughCreateServer(express) {
  express.application.listen = function listen(...args) {
    const server = http.createServer(this);
    const last = args.length - 1;
    if (typeof args[last] === "function") {
      const callback = args[last];
      let settled = false;
      const once = function (...results) {
        if (settled) return;
        settled = true;
        callback.apply(this, results);
      };
      args[last] = once;
      server.once("error", once);
    }
    return server.listen(...args);
  };
}

module.exports = { listenThroughCreateServer };
