// Jest loads cog-http. Its CommonJS runtime cannot require an ES module (before Node 24.9), and
// most Express apps test with it: an app's Jest tests (test/fixtures/jest-app: CommonJS, Jest's
// default settings) require cog-http and cog-http/express, which give them Cog's CommonJS build,
// and serve real requests on this pass's engine, also while a test fakes timers
// (fake-timers.test.js). The package is linked into a copy of the app, as `npm install` of a path
// would. Three test files run in one process (--runInBand), each with its own copy of Cog, as
// Jest gives each file; Jest must exit by itself (nothing left open).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { engine } from "../helpers.js";

const root = resolve(".");
const project = mkdtempSync(join(tmpdir(), "cog-jest-"));
after(() => rmSync(project, { recursive: true, force: true }));
cpSync(join(root, "test", "fixtures", "jest-app"), project, { recursive: true });
mkdirSync(join(project, "node_modules"));
symlinkSync(root, join(project, "node_modules", "cog-http"), "dir");
const jest = createRequire(join(root, "package.json")).resolve("jest/bin/jest");

test(`Jest runs an app's tests that require cog-http and cog-http/express, on the ${engine} engine`, () => {
  const run = spawnSync(process.execPath, [jest, "--ci", "--runInBand", "--cacheDirectory", join(project, ".jest-cache")], {
    cwd: project,
    encoding: "utf8",
    env: { ...process.env, COG_ENGINE: engine },
    timeout: 120_000,
  });
  assert.equal(run.status, 0, `Jest failed:\n${run.stderr}${run.stdout}`);
  // Jest reports on stderr.
  assert.match(run.stderr, /PASS \.\/express\.test\.js/);
  assert.match(run.stderr, /PASS \.\/cog\.test\.js/);
  assert.match(run.stderr, /PASS \.\/fake-timers\.test\.js/);
  assert.match(run.stderr, /Tests: +9 passed, 9 total/);
  assert.doesNotMatch(run.stderr, /did not exit|open handle/i);
});
