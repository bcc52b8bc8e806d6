#!/usr/bin/env node
// `npm test` (after the build and type checks): the whole suite on the node
// engine, then the contract tests again on Cog's native engine (when its
// addon was built at install). An engine that can't run here is skipped with the
// reason in one line; COG_NATIVE_REQUIRED=1 (CI) makes a missing native
// engine a failure. test/engines/native/ checks the errors users get instead.
//
// Where a test file sits says how it runs (docs/README.md, "Source layout"):
// - test/contract/: what every engine must do alike: run once per engine (COG_ENGINE);
// - test/unit/ (pure units), test/system/ (the docs' code, the seed app, a soak that picks its
//   engines itself) and test/engines/<name>/ (one engine's own tests, which start the engine they
//   test themselves): run once.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

/** The test files under test/<dir>, sorted, as paths from the repository's root. */
function testFiles(dir) {
  return readdirSync(join("test", dir), { recursive: true })
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => join("test", dir, f))
    .sort();
}
const contract = testFiles("contract");
const once = [...testFiles("unit"), ...testFiles("system"), ...testFiles("engines")];

// Two test files at a time: most of a file's time is spent waiting (timeouts that must expire,
// servers and services starting, clients that stop reading), and every file owns its ports, temporary
// directories and services, so two share the machine's cores without meeting. One at a time (Node's
// default on two cores) took CI's four Node majors past half an hour.
const CONCURRENCY = 2;

function run(engine, files) {
  console.log(`\n# engine: ${engine} (${files.length} test files, ${CONCURRENCY} at a time)`);
  const result = spawnSync(process.execPath, ["--import", "tsx", "--test", `--test-concurrency=${CONCURRENCY}`, "--test-reporter=spec", ...files], {
    stdio: "inherit",
    env: { ...process.env, COG_ENGINE: engine },
  });
  return result.status ?? 1;
}

/** Whether an engine loads here, asked in a child process (so this one never loads it). */
function loads(script) {
  const probe = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  return { ok: probe.status === 0, reason: probe.stderr.trim().split("\n").pop() };
}
const nativeLoads = () =>
  loads('import { loadNative } from "./dist/engines/kit/addon.js"; try { loadNative(); } catch (err) { console.error(err.message); process.exit(1); }');

// Every part runs whatever an earlier one did, and the summary at the end says which failed: a
// failure on one engine must not hide the other's results.
const outcomes = [];
function record(name, status) {
  outcomes.push({ name, ok: status === 0 });
}
// ESLint's and Prettier's verdicts and the Rust crates' and the Go load generators' own tests don't change with
// Node's version: CI's other Node majors (COG_NODE_MATRIX=1) skip them, saying so, as the build from
// source does.
const matrix = process.env.COG_NODE_MATRIX === "1";
if (matrix) console.log("\n# lint, native and bench: eslint, prettier, cargo test, go test skipped (COG_NODE_MATRIX=1): checked on CI's first Node");
// ESLint over the TypeScript and JavaScript (eslint.config.mjs) and Prettier's layout of it
// (.prettierrc; `npm run format` fixes it): a rule broken is a failure like a test's.
if (!matrix) {
  console.log("\n# lint: eslint (eslint.config.mjs), prettier --check");
  record("eslint", spawnSync(process.execPath, ["node_modules/eslint/bin/eslint.js", "."], { stdio: "inherit" }).status ?? 1);
  record(
    "prettier --check",
    spawnSync(process.execPath, ["node_modules/prettier/bin/prettier.cjs", "--check", "--log-level=warn", "."], { stdio: "inherit" }).status ?? 1,
  );
}
// The native engine's crates have their own unit and property tests (Rust), run where cargo is.
if (!matrix && spawnSync("cargo", ["--version"], { stdio: "ignore" }).status === 0) {
  console.log("\n# native: cargo test (the request framing's unit and property tests, the addon's own, the engine's on a fake loop)");
  record(
    "cargo test",
    spawnSync("cargo", ["test", "--release", "--quiet", "--manifest-path", "native/Cargo.toml", "--workspace"], { stdio: "inherit" }).status ?? 1,
  );
  // The fuzz targets' checks over their seeds and mutations of them, on stable (libFuzzer runs
  // are scripts/fuzz.mjs's), and the formatting (a second; clippy, slower, is CI's).
  console.log("\n# native: the fuzz targets' checks over their seeds (native/fuzz), cargo fmt --check");
  record(
    "cargo test (native/fuzz)",
    spawnSync("cargo", ["test", "--release", "--quiet", "--no-default-features", "--manifest-path", "native/fuzz/Cargo.toml"], { stdio: "inherit" }).status ??
      1,
  );
  if (spawnSync("cargo", ["fmt", "--version"], { stdio: "ignore" }).status === 0) {
    record("cargo fmt --check", spawnSync("cargo", ["fmt", "--manifest-path", "native/Cargo.toml", "--all", "--check"], { stdio: "inherit" }).status ?? 1);
  }
}
// The bench's WebSocket load generator (Go) has its own tests, run where go is.
if (!matrix && spawnSync("go", ["version"], { stdio: "ignore" }).status === 0) {
  console.log("\n# bench: go test (the WebSocket load generator, bench/ws-load)");
  record("go test (bench/ws-load)", spawnSync("go", ["test", "./..."], { cwd: "bench/ws-load", stdio: "inherit" }).status ?? 1);
  console.log("\n# bench: go test (the fixed-rate load generator, bench/rate-load)");
  record("go test (bench/rate-load)", spawnSync("go", ["test", "./..."], { cwd: "bench/rate-load", stdio: "inherit" }).status ?? 1);
}
record("engine node (all tests)", run("node", [...once, ...contract]));
const native = nativeLoads();
if (native.ok) {
  record("engine native (contract tests)", run("native", contract));
} else if (process.env.COG_NATIVE_REQUIRED === "1") {
  console.log(`\n# engine: native is required (COG_NATIVE_REQUIRED=1) but does not load: ${native.reason}`);
  record("engine native (does not load)", 1);
} else {
  console.log(`\n# engine: native skipped on Node ${process.version}: ${native.reason}`);
}
console.log(`\n# summary (Node ${process.version})`);
for (const { name, ok } of outcomes) console.log(`#   ${ok ? "pass" : "FAIL"}: ${name}`);
process.exit(outcomes.every(({ ok }) => ok) ? 0 : 1);
