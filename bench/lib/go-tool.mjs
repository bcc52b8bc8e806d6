// The bench's load generators written in Go (bench/rate-load, bench/ws-load, bench/h3-load), built on first use
// into .cache/ and rebuilt when a source file is newer than the binary, so a changed generator is
// never run from a stale build.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The built binary of bench/<name>; throws why it can't be built (Go 1.22 or later needed). */
export function goTool(name) {
  const source = join(root, "bench", name);
  const binary = join(root, ".cache", name);
  const newest = Math.max(
    ...readdirSync(source)
      .filter((f) => f.endsWith(".go") || f === "go.mod")
      .map((f) => statSync(join(source, f)).mtimeMs),
  );
  if (!existsSync(binary) || statSync(binary).mtimeMs < newest) {
    mkdirSync(dirname(binary), { recursive: true });
    try {
      execFileSync("go", ["build", "-o", binary, "."], { cwd: source, stdio: ["ignore", "ignore", "pipe"] });
    } catch (err) {
      throw new Error(
        `could not build bench/${name} (it needs Go 1.22 or later): ${
          String(err.stderr ?? err.message)
            .trim()
            .split("\n")[0]
        }`,
      );
    }
  }
  return binary;
}
