// The bench's load generators written in Go (bench/rate-load, bench/h3-load), each built on first
// use into .cache/<name>, and again when one of its sources is newer than the binary.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The built binary of bench/`name` (a Go module); throws why it can't be built. */
export function goBinary(name) {
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
