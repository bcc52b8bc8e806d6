#!/usr/bin/env node
// Prints the path of a Node.js binary of the given major version (and architecture, this
// machine's by default), installing it from npm (package node-linux-ARCH@MAJOR) into .cache/ on
// first use. Used by CI (tests on Node 22, 24 and 26), by `npm run bench -- --node 24`, and for
// arm64 (run under qemu) by test/engines/native/native-without-compiler.test.ts.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export function nodeBinary(major, arch = process.arch) {
  if (String(process.versions.node.split(".")[0]) === String(major) && arch === process.arch) return process.execPath;
  if (process.platform !== "linux" || !["x64", "arm64"].includes(arch)) {
    throw new Error(`Node ${major} is installed from npm only for linux-x64 and linux-arm64; for ${process.platform}-${arch} install it yourself and put it on PATH`);
  }
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const prefix = join(root, ".cache", arch === "x64" ? `node${major}` : `node${major}-${arch}`);
  const binary = join(prefix, "node_modules", `node-linux-${arch}`, "bin", "node");
  if (!existsSync(binary)) {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    // npm installs a package only for this machine's cpu unless forced: another's runs under an emulator.
    const force = arch === process.arch ? [] : ["--force"];
    execFileSync(npm, ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", ...force, `node-linux-${arch}@${major}`], { stdio: ["ignore", "ignore", "inherit"] });
  }
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [major, arch] = process.argv.slice(2);
  if (!/^\d+$/.test(major ?? "")) {
    console.error("usage: node scripts/node-binary.mjs MAJOR [ARCH]   (e.g. 24, or 20 arm64)");
    process.exit(2);
  }
  console.log(nodeBinary(major, arch));
}
