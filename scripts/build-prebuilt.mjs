#!/usr/bin/env node
// Builds Cog's native engine for each platform it ships prebuilt for, into prebuilds/<platform>/
// (which cog-http's package carries: every install has the engine) and npm/<platform>/ (one npm
// package each, the slim option), cross-compiling with cargo-zigbuild (zig as the linker; see
// docs/decisions/prebuilt-binaries.md), then checks each binary (scripts/native-platforms.mjs:
// architecture, libraries, glibc or macOS floor, libuv left to Node).
//
//   node scripts/build-prebuilt.mjs              every platform
//   node scripts/build-prebuilt.mjs --host       only this machine's
//   node scripts/build-prebuilt.mjs linux-arm64-gnu ...
//   node scripts/build-prebuilt.mjs --pack       npm pack's and npm publish's prepack: every
//                                                platform where cargo-zigbuild is; without it, this
//                                                machine's build from source only (npm publish refuses)
//
// Needs rustup (the targets are added on first use) and cargo-zigbuild with zig:
// `pip install ziglang cargo-zigbuild`.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { builtFileOf, bundledOf, compareVersions, GLIBC_FLOOR, hostPlatform, inspect, packageOf, platforms, problems, root } from "./native-platforms.mjs";

const args = process.argv.slice(2);
const run = (command, argv, options = {}) => spawnSync(command, argv, { stdio: "inherit", ...options }).status === 0;
const zigbuild = () => run("cargo-zigbuild", ["--version"], { stdio: "ignore" });
const packing = args.includes("--pack");
if (packing && !zigbuild()) await packWithoutCrossBuilds();
let chosen = platforms;
if (packing) {
  // Every platform: what a release carries.
} else if (args.includes("--host")) {
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

if (!zigbuild()) fail("cargo-zigbuild is missing: pip install ziglang cargo-zigbuild (or cargo install cargo-zigbuild, with zig on PATH)");

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
  // The oldest macOS the binary loads on (zig's default is the newest it knows).
  if (platform.os === "darwin") env.MACOSX_DEPLOYMENT_TARGET = platform.macos;
  const manifest = join(root, "native", "Cargo.toml");
  if (!run("cargo", ["zigbuild", "--release", "--manifest-path", manifest, "-p", "cog-native", "--target", platform.target], { env }))
    fail(`${platform.name}: the build failed`);
  copyFileSync(join(root, "native", "target", rustTarget(platform), "release", builtFileOf(platform)), binary);
  const wrong = problems(platform, binary);
  if (wrong.length > 0) fail(`${platform.name}: ${relative(root, binary)} ${wrong.join("; ")}`);
  bundle(binary, platform);
  console.log(
    `[${i + 1}/${chosen.length}] ${platform.name}: ${relative(root, binary)} and ${relative(root, bundledOf(platform))}, ${Math.round(statSync(binary).size / 1024)} KiB, checked, in ${Math.round((Date.now() - began) / 1000)} s`,
  );
}
console.log(
  `\nbuild-prebuilt: ${chosen.length} platform(s) in ${Math.round((Date.now() - started) / 1000)} s; cog-http's package carries them (prebuilds/); the slim platform packages publish with: npm publish npm/<platform> --access public`,
);

/** Copies a checked binary to where cog-http's package carries it. */
function bundle(binary, platform) {
  mkdirSync(dirname(bundledOf(platform)), { recursive: true });
  copyFileSync(binary, bundledOf(platform));
}

/**
 * `npm pack` where cargo-zigbuild is missing: the package carries this machine's own build from
 * source (native/cog-native.node, which `npm install` made here) if it is a usable one, and no
 * other platform's binary (one left from an earlier build could be older than these sources). A
 * release must carry every platform: `npm publish` refuses.
 */
async function packWithoutCrossBuilds() {
  const missing = "cargo-zigbuild is missing (pip install ziglang cargo-zigbuild)";
  if (process.env.npm_command === "publish") fail(`${missing}: a release carries every platform's native engine, built and checked here`);
  rmSync(join(root, "prebuilds"), { recursive: true, force: true });
  const host = hostPlatform();
  const local = join(root, "native", "cog-native.node");
  const without = (why) => {
    console.warn(`build-prebuilt: ${missing} and ${why}: this package carries no native engine (engine "native" will need npx cog-build-native)`);
    process.exit(0);
  };
  if (host === null) without(`Cog ships no prebuilt engine for ${process.platform}-${process.arch}`);
  if (!existsSync(local)) without("there is no build from source here (node scripts/build-native.mjs)");
  // Every check but the glibc floor: a build on this machine asks for this machine's glibc.
  const wrong = problems(host, local).filter((problem) => !problem.startsWith("needs glibc"));
  if (wrong.length > 0) without(`${relative(root, local)} ${wrong.join("; ")}`);
  const addon = createRequire(import.meta.url)(local);
  // dist/ is built: prepack runs tsc first.
  const { INTERFACE_VERSION, interfaceVersionOf } = await import("../dist/engines/kit/addon.js");
  if (interfaceVersionOf(addon) !== INTERFACE_VERSION)
    without(`${relative(root, local)} is older than these sources (rebuild it: node scripts/build-native.mjs)`);
  bundle(local, host);
  const { glibc } = inspect(local);
  const floor =
    host.libc === "glibc" && glibc !== null && compareVersions(glibc, GLIBC_FLOOR) > 0
      ? `, which needs glibc ${glibc} or later (a release's needs ${GLIBC_FLOOR})`
      : "";
  console.warn(`build-prebuilt: ${missing}: this package carries ${host.name}'s native engine only, this machine's build from source${floor}`);
  process.exit(0);
}
