// The part of the ecosystem suites CI can run: express-fileupload's own tests, from its npm
// tarball (it ships them; most packages leave theirs out), run by scripts/ecosystem-suites.mjs
// on Express 5 and on cog-http/express on each engine here, with no test passing on Express and
// failing on Cog. The rest (express-session, multer, cors, morgan… from their repositories) is
// run by hand: docs/guide/express.md ("The ecosystem's own tests").
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { nativeSkip } from "../helpers.js";

// By hand (COG_ECOSYSTEM=1): it needs the registry and a fresh install each run, so CI holds what
// the suites found through the contract tests of each difference (test/contract/express-like-node-http.test.ts,
// test/contract/close-in-stages.test.ts).
const asked = process.env.COG_ECOSYSTEM === "1";
const built = asked && existsSync(join("dist", "cjs", "express", "index.js"));
const registry = built && spawnSync("npm", ["ping", "--loglevel=error"], { timeout: 20_000 }).status === 0;
const skip = !asked
  ? "the ecosystem's suites run by hand: COG_ECOSYSTEM=1 (docs/guide/express.md)"
  : !built
    ? "cog-http is not built (npm run build)"
    : !registry
      ? "the npm registry is not reachable (npm ping failed)"
      : false;
const out = mkdtempSync(join(tmpdir(), "cog-ecosystem-"));
after(() => rmSync(out, { recursive: true, force: true }));

test("express-fileupload's own tests that pass on Express 5 pass on cog-http/express", { skip, timeout: 20 * 60_000 }, () => {
  const engines = nativeSkip === false ? ["node", "native"] : ["node"];
  const report = join(out, "report.json");
  const ways = ["express", ...engines].flatMap((w) => ["--way", w]);
  const run = spawnSync(
    process.execPath,
    ["scripts/ecosystem-suites.mjs", "express-fileupload", "--source", "npm", "--cache", join(out, "cache"), "--json", report, ...ways],
    { encoding: "utf8", timeout: 19 * 60_000 },
  );
  assert.ok(existsSync(report), `no report:\n${run.stdout}\n${run.stderr}`);
  const [suite] = JSON.parse(readFileSync(report, "utf8")).suites;
  assert.ok(suite.ways.express.passed > 50, `Express 5 passed only ${suite.ways.express.passed} of express-fileupload's tests:\n${run.stdout}`);
  assert.deepEqual(suite.differences, Object.fromEntries(engines.map((e) => [e, []])), run.stdout);
});
