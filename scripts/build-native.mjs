#!/usr/bin/env node
// Builds Cog's native engine from source (native/, Rust) into native/cog-native.node.
// - In this repository it runs at `npm install` (the "dependencies" script, which npm runs for the
//   project itself when its node_modules changed, never for an app's dependency), building in
//   native/target, kept for fast incremental builds.
// - In an app, where no prebuilt engine fits (see prebuilds/ and docs/decisions/prebuilt-binaries.md),
//   it is the fallback, run by hand: `npx cog-build-native`. It builds outside node_modules (in
//   CARGO_TARGET_DIR when set, else in a temporary folder it removes), copies the .node in, and
//   does nothing when the prebuilt package loads (COG_NATIVE_FROM_SOURCE=1 builds anyway).
// Without cargo it says so in one line and leaves the node engine as it is: the native engine is
// optional. COG_NATIVE_REQUIRED=1 (CI) makes a missing or failing build an error.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { bundledOf, hostPlatform, root } from "./native-platforms.mjs";

const required = process.env.COG_NATIVE_REQUIRED === "1";
const manifest = join(root, "native", "Cargo.toml");
const installed = root.split(sep).includes("node_modules");

function skip(reason) {
  if (required) {
    console.error(`cog: the native engine is required (COG_NATIVE_REQUIRED=1) but ${reason}`);
    process.exit(1);
  }
  console.log(`cog: native engine not built (${reason}); engine "node" is unaffected.`);
  process.exit(0);
}

/**
 * The prebuilt engine for this platform that loads here and speaks this cog-http's interface
 * version: the one cog-http carries (prebuilds/), else the platform package; null when none does.
 */
async function prebuilt() {
  const platform = hostPlatform();
  if (platform === null) return null;
  const require = createRequire(join(root, "package.json"));
  const { INTERFACE_VERSION, interfaceVersionOf } = await import("../dist/engines/kit/addon.js");
  for (const [name, file] of [
    [`prebuilds/${platform.name}/cog-native.node`, bundledOf(platform)],
    [`@cog-http/native-${platform.name}`, `@cog-http/native-${platform.name}`],
  ]) {
    let addon;
    try {
      addon = require(file);
    } catch {
      continue;
    }
    const version = interfaceVersionOf(addon);
    if (version === INTERFACE_VERSION) return name;
    console.log(`cog: the prebuilt native engine (${name}) has interface version ${version ?? "none"}, and this cog-http needs ${INTERFACE_VERSION}.`);
  }
  return null;
}

if (installed && process.env.COG_NATIVE_FROM_SOURCE !== "1") {
  const name = await prebuilt();
  if (name !== null) {
    console.log(`cog: the prebuilt native engine (${name}) loads here: nothing to build (COG_NATIVE_FROM_SOURCE=1 builds it anyway).`);
    process.exit(0);
  }
}
if (!existsSync(manifest)) skip("its sources are not in this package");
if (spawnSync("cargo", ["--version"], { stdio: "ignore" }).status !== 0) skip("cargo is not installed: see https://rustup.rs");

// An app's build stays out of node_modules: a target folder of its own (about 100 MB) would be left in the package.
const ownTarget = installed && process.env.CARGO_TARGET_DIR === undefined ? mkdtempSync(join(tmpdir(), "cog-native-build-")) : null;
const target = ownTarget ?? process.env.CARGO_TARGET_DIR ?? join(root, "native", "target");
const cleanUp = () => ownTarget !== null && rmSync(ownTarget, { recursive: true, force: true });

const started = Date.now();
const seconds = () => Math.round((Date.now() - started) / 1000);
console.log(`cog: building the native engine from source (cargo build --release, about a minute the first time) in ${target}…`);
// cargo names each crate as it compiles it; the last one, linked with LTO, takes the longest in
// silence, so a line every 10 s says the build is alive.
const alive = setInterval(() => console.log(`cog: still building (${seconds()} s)…`), 10_000);
const status = await new Promise((resolve) => {
  const build = spawn("cargo", ["build", "--release", "--manifest-path", manifest, "-p", "cog-native"], {
    stdio: "inherit",
    env: { ...process.env, CARGO_TARGET_DIR: target },
  });
  build.on("error", () => resolve(-1));
  build.on("exit", (code) => resolve(code ?? -1));
});
clearInterval(alive);

const library = { linux: "libcog_native.so", darwin: "libcog_native.dylib", win32: "cog_native.dll" }[process.platform];
const built = library && join(target, "release", library);
if (status !== 0 || !built || !existsSync(built)) {
  cleanUp();
  skip(status !== 0 ? `cargo build failed (exit ${status})` : `no library was produced for ${process.platform}`);
}
copyFileSync(built, join(root, "native", "cog-native.node"));
cleanUp();
console.log(`cog: native engine built in ${seconds()} s: ${join(root, "native", "cog-native.node")}`);
