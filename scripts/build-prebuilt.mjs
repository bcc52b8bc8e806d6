#!/usr/bin/env node
// Builds Cog's native engine for each platform it ships prebuilt for, into npm/<platform>/ (one
// npm package each, listed in cog-http's optionalDependencies), cross-compiling with
// cargo-zigbuild (zig as the linker; see docs/decisions/prebuilt-binaries.md), then checks each
// binary (scripts/native-platforms.mjs: architecture, libraries, glibc floor, libuv left to Node).
//
//   node scripts/build-prebuilt.mjs              every platform
//   node scripts/build-prebuilt.mjs --host       only this machine's
//   node scripts/build-prebuilt.mjs linux-arm64-gnu ...
//
// Needs rustup (the targets are added on first use) and cargo-zigbuild with zig:
// `pip install ziglang cargo-zigbuild`.
import { spawnSync } from "node:child_process";
import { copyFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { hostPlatform, packageOf, platforms, problems, root } from "./native-platforms.mjs";

const args = process.argv.slice(2);
let chosen = platforms;
if (args.includes("--host")) {
  const host = hostPlatform();
  if (host === null) fail(`no prebuilt package is made for ${process.platform}-${process.arch}; build from source with scripts/build-native.mjs`);
  chosen = [host];
} else if (args.length > 0) {
  chosen = args.map((name) => platforms.find((p) => p.name === name) ?? fail(`unknown platform ${name}; known: ${platforms.map((p) => p.name).join(", ")}`));
}

function fail(message) {
  console.error(`build-prebuilt: ${message}`);
  process.exit(1);
}

const run = (command, argv, options = {}) => spawnSync(command, argv, { stdio: "inherit", ...options }).status === 0;
if (!run("cargo-zigbuild", ["--version"], { stdio: "ignore" })) fail("cargo-zigbuild is missing: pip install ziglang cargo-zigbuild (or cargo install cargo-zigbuild, with zig on PATH)");

// The Rust target, without the glibc version cargo-zigbuild takes after it.
const rustTarget = (platform) => platform.target.replace(/\.[\d.]+$/, "");
const installed = spawnSync("rustup", ["target", "list", "--installed"], { encoding: "utf8" });
if (installed.status !== 0) fail("rustup is missing: the cross targets are added with it (https://rustup.rs)");
const missing = [...new Set(chosen.map(rustTarget))].filter((t) => !installed.stdout.split("\n").includes(t));
if (missing.length > 0 && !run("rustup", ["target", "add", ...missing])) fail(`rustup target add ${missing.join(" ")} failed`);

const started = Date.now();
for (const [i, platform] of chosen.entries()) {
  const { binary } = packageOf(platform);
  console.log(`\n[${i + 1}/${chosen.length}] ${platform.name}: cargo zigbuild --target ${platform.target}`);
  const began = Date.now();
  const env = { ...process.env };
  // Rust links musl statically by default, and a static binary can't be a shared library: the
  // addon links to musl's libc.so dynamically, as Alpine's Node does.
  if (platform.libc === "musl") env[`CARGO_TARGET_${rustTarget(platform).toUpperCase().replaceAll("-", "_")}_RUSTFLAGS`] = "-C target-feature=-crt-static";
  const manifest = join(root, "native", "Cargo.toml");
  if (!run("cargo", ["zigbuild", "--release", "--manifest-path", manifest, "-p", "cog-native", "--target", platform.target], { env })) fail(`${platform.name}: the build failed`);
  copyFileSync(join(root, "native", "target", rustTarget(platform), "release", "libcog_native.so"), binary);
  const wrong = problems(platform, binary);
  if (wrong.length > 0) fail(`${platform.name}: ${relative(root, binary)} ${wrong.join("; ")}`);
  console.log(`[${i + 1}/${chosen.length}] ${platform.name}: ${relative(root, binary)}, ${Math.round(statSync(binary).size / 1024)} KiB, checked, in ${Math.round((Date.now() - began) / 1000)} s`);
}
console.log(`\nbuild-prebuilt: ${chosen.length} platform(s) in ${Math.round((Date.now() - started) / 1000)} s; publish each with: npm publish npm/<platform> --access public`);
