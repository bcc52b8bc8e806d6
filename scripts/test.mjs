#!/usr/bin/env node
// `npm test` (after the build and type checks): the whole suite on the node
// engine, then the integration tests again on Cog's native engine (when its
// addon was built at install). An engine that can't run here is skipped with the
// reason in one line; COG_NATIVE_REQUIRED=1 (CI) makes a missing native
// engine a failure. test/*-engine.test.ts check the errors users get instead.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";

// Files with no server in them (docs-code: the docs' code blocks and links), or that run a fixed
// engine themselves (node-internals: the node engine's canaries, on plain node:http servers;
// native-*: installed apps on engine "native"): once is enough.
const ENGINE_INDEPENDENT = new Set(["bench.test.ts", "docs-code.test.ts", "router.test.ts", "seed-app.test.ts", "leaks.test.ts", "native-engine.test.ts", "node-internals.test.ts", "native-without-compiler.test.ts", "native-source-build.test.ts"]);
const all = readdirSync("test").filter((f) => f.endsWith(".test.ts")).sort();

function run(engine, files) {
  console.log(`\n# engine: ${engine} (${files.length} test files)`);
  const result = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=spec", ...files.map((f) => `test/${f}`)], {
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
const nativeLoads = () => loads('import { loadNative } from "./dist/engines/native/load.js"; try { loadNative(); } catch (err) { console.error(err.message); process.exit(1); }');

let failed = 0;
// The native engine's crates have their own unit and property tests (Rust), run where cargo is.
if (spawnSync("cargo", ["--version"], { stdio: "ignore" }).status === 0) {
  console.log("\n# native: cargo test (the request framing's unit and property tests, the addon's own)");
  failed ||= spawnSync("cargo", ["test", "--release", "--quiet", "--manifest-path", "native/Cargo.toml", "--workspace"], { stdio: "inherit" }).status ?? 1;
}
// The bench's WebSocket load generator (Go) has its own tests, run where go is.
if (spawnSync("go", ["version"], { stdio: "ignore" }).status === 0) {
  console.log("\n# bench: go test (the WebSocket load generator, bench/ws-load)");
  failed ||= spawnSync("go", ["test", "./..."], { cwd: "bench/ws-load", stdio: "inherit" }).status ?? 1;
}
failed ||= run("node", all);
const native = nativeLoads();
if (native.ok) {
  failed ||= run("native", all.filter((f) => !ENGINE_INDEPENDENT.has(f)));
} else if (process.env.COG_NATIVE_REQUIRED === "1") {
  console.log(`\n# engine: native is required (COG_NATIVE_REQUIRED=1) but does not load: ${native.reason}`);
  failed = 1;
} else {
  console.log(`\n# engine: native skipped on Node ${process.version}: ${native.reason}`);
}
process.exit(failed);
