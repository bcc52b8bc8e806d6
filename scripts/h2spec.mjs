#!/usr/bin/env node
// Installs h2spec (the HTTP/2 conformance checker) from the Go module proxy into
// node_modules/.cache/h2spec, for test/contract/http2-conformance.test.ts and CI, and prints its path.
// Needs Go; without it, says so and exits 1 (the test then skips with that reason).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The newest release on the Go proxy (h2spec 2.x predates Go modules, hence "+incompatible").
const VERSION = "v2.2.1+incompatible";
const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".cache", "h2spec");
const binary = join(dir, "h2spec");

/** The h2spec binary, installed on first use; null (with the reason) when Go is missing or the install fails. */
export function h2spec() {
  if (existsSync(binary)) return { path: binary };
  if (spawnSync("go", ["version"], { stdio: "ignore" }).status !== 0)
    return { reason: "h2spec is not installed and Go is not there to install it (go install github.com/summerwind/h2spec/cmd/h2spec)" };
  mkdirSync(dir, { recursive: true });
  const install = spawnSync("go", ["install", `github.com/summerwind/h2spec/cmd/h2spec@${VERSION}`], { env: { ...process.env, GOBIN: dir }, encoding: "utf8" });
  if (install.status !== 0 || !existsSync(binary)) return { reason: `go install of h2spec failed: ${(install.stderr ?? "").trim().split("\n").pop()}` };
  return { path: binary };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = h2spec();
  if (found.path === undefined) {
    console.error(found.reason);
    process.exit(1);
  }
  console.log(found.path);
}
