#!/usr/bin/env node
// Builds Cog's native engine (native/, Rust) into native/cog-native.node, at `npm install`.
// Without cargo it says so in one line and leaves the node engine as it is: the native
// engine is optional. COG_NATIVE_REQUIRED=1 (CI) makes a missing or failing build an error.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const required = process.env.COG_NATIVE_REQUIRED === "1";
const manifest = join(root, "native", "Cargo.toml");

function skip(reason) {
  if (required) {
    console.error(`cog: the native engine is required (COG_NATIVE_REQUIRED=1) but ${reason}`);
    process.exit(1);
  }
  console.log(`cog: native engine not built (${reason}); engine "node" is unaffected.`);
  process.exit(0);
}

if (!existsSync(manifest)) skip("its sources are not in this package");
if (spawnSync("cargo", ["--version"], { stdio: "ignore" }).status !== 0) skip("cargo is not installed: see https://rustup.rs");

console.log("cog: building the native engine (cargo build --release)…");
const build = spawnSync("cargo", ["build", "--release", "--quiet", "--manifest-path", manifest, "-p", "cog-native"], { stdio: "inherit" });
if (build.status !== 0) skip(`cargo build failed (exit ${build.status})`);

const library = { linux: "libcog_native.so", darwin: "libcog_native.dylib", win32: "cog_native.dll" }[process.platform];
const built = library && join(root, "native", "target", "release", library);
if (!built || !existsSync(built)) skip(`no library was produced for ${process.platform}`);
copyFileSync(built, join(root, "native", "cog-native.node"));
console.log("cog: native engine built: native/cog-native.node");
