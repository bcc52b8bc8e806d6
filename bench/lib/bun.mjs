// Bun for the Bun contenders, installed from npm (@oven/bun-linux-x64) into
// .cache/ on first use. Returns {path:null, reason} where it can't be had.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let cached;

export function bunBinary() {
  if (cached) return cached;
  const onPath = tryVersion("bun");
  if (onPath) return (cached = { path: "bun", version: onPath });
  if (process.platform !== "linux" || process.arch !== "x64") {
    return (cached = { path: null, reason: `Bun is installed from npm only on linux-x64 here; install it yourself to include the Bun contenders` });
  }
  const prefix = join(dirname(fileURLToPath(import.meta.url)), "..", "..", ".cache", "bun");
  const binary = join(prefix, "node_modules", "@oven", "bun-linux-x64", "bin", "bun");
  if (!existsSync(binary)) {
    try {
      execFileSync("npm", ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", "@oven/bun-linux-x64"], {
        stdio: ["ignore", "ignore", "pipe"],
      });
    } catch (err) {
      return (cached = {
        path: null,
        reason: `could not install @oven/bun-linux-x64 from npm: ${
          String(err.stderr ?? err.message)
            .trim()
            .split("\n")[0]
        }`,
      });
    }
  }
  const version = tryVersion(binary);
  if (!version) return (cached = { path: null, reason: `${binary} does not run on this machine (CPU or libc not supported)` });
  return (cached = { path: binary, version });
}

function tryVersion(binary) {
  try {
    return execFileSync(binary, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}
