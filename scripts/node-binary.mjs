#!/usr/bin/env node
// Prints the path of a Node.js binary of the given major version (and architecture, this
// machine's by default; and system: Linux, or win32 for Node for Windows), installing it from npm
// (package node-linux-ARCH@MAJOR, node-win-ARCH@MAJOR) into .cache/ on first use. Used by CI
// (tests on Node 22, 24 and 26), by `npm run bench -- --node 24`, for arm64 (run under qemu) by
// test/engines/native/native-without-compiler.test.ts, and for Windows (run under Wine) by
// test/engines/native/windows-wine.test.ts.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export function nodeBinary(major, arch = process.arch, os = process.platform) {
  if (String(process.versions.node.split(".")[0]) === String(major) && arch === process.arch && os === process.platform) return process.execPath;
  if (process.platform !== "linux" || !["x64", "arm64"].includes(arch) || !["linux", "win32"].includes(os)) {
    throw new Error(
      `Node ${major} is installed from npm only on Linux, for linux-x64, linux-arm64 and win32 (run under Wine); for ${os}-${arch} install it yourself and put it on PATH`,
    );
  }
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const prefix = join(root, ".cache", `node${major}${os === "linux" ? "" : `-${os}`}${arch === "x64" && os === "linux" ? "" : `-${arch}`}`);
  const name = os === "win32" ? `node-win-${arch}` : `node-linux-${arch}`;
  const binary = join(prefix, "node_modules", name, "bin", os === "win32" ? "node.exe" : "node");
  if (!existsSync(binary)) {
    // npm installs a package only for this machine's system and cpu unless forced: another's runs under an emulator.
    const force = arch === process.arch && os === process.platform ? [] : ["--force"];
    execFileSync("npm", ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", ...force, `${name}@${major}`], {
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [major, arch, os] = process.argv.slice(2);
  if (!/^\d+$/.test(major ?? "")) {
    console.error("usage: node scripts/node-binary.mjs MAJOR [ARCH [OS]]   (e.g. 24, or 20 arm64, or 22 x64 win32)");
    process.exit(2);
  }
  console.log(nodeBinary(major, arch, os));
}
