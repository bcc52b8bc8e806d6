#!/usr/bin/env node
// `npm test` (after the build and type checks): the whole suite on the node
// engine, then the integration tests again on uWebSockets.js when a native
// build of it loads on this Node. Where none does (e.g. Node 24 with the build
// this repo installs), test/uws-engine.test.ts still checks that asking for it
// fails with an error that says what to install.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";

// Files with no server in them, or that run a fixed engine themselves: once is enough.
const ENGINE_INDEPENDENT = new Set(["bench.test.ts", "router.test.ts", "seed-app.test.ts", "leaks.test.ts", "uws-engine.test.ts"]);
const all = readdirSync("test").filter((f) => f.endsWith(".test.ts")).sort();

function run(engine, files) {
  console.log(`\n# engine: ${engine} (${files.length} test files)`);
  const result = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=spec", ...files.map((f) => `test/${f}`)], {
    stdio: "inherit",
    env: { ...process.env, COG_ENGINE: engine },
  });
  return result.status ?? 1;
}

function uwsLoads() {
  const script = 'import { loadUws } from "./dist/engines/uws-load.js"; import { DEFAULT_LIMITS } from "./dist/limits.js"; try { loadUws(DEFAULT_LIMITS); } catch (err) { console.error(err.message); process.exit(1); }';
  const probe = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  return { ok: probe.status === 0, reason: probe.stderr.trim().split("\n").pop() };
}

let failed = run("node", all);
const uws = uwsLoads();
if (uws.ok) {
  failed ||= run("uws", all.filter((f) => !ENGINE_INDEPENDENT.has(f)));
} else {
  console.log(`\n# engine: uws skipped on Node ${process.version}: ${uws.reason}`);
}
process.exit(failed);
