// A Mocha reporter for scripts/ecosystem-suites.mjs: each test's full title and its state, as
// JSON lines in the file COG_ECOSYSTEM_REPORT names (written as they finish, so that a run cut
// short still reports what it ran). Works with the Mocha versions the suites pin (9 to 11).
"use strict";
const { appendFileSync } = require("node:fs");

module.exports = function CogReporter(runner) {
  const out = process.env.COG_ECOSYSTEM_REPORT;
  const write = (test, state, err) =>
    appendFileSync(
      out,
      JSON.stringify({
        name: test.fullTitle(),
        state,
        error: err
          ? String(err.message ?? err)
              .split("\n")[0]
              .slice(0, 300)
          : undefined,
      }) + "\n",
    );
  runner.on("pass", (test) => write(test, "passed"));
  runner.on("fail", (test, err) => write(test, "failed", err));
  runner.on("pending", (test) => write(test, "skipped"));
};
