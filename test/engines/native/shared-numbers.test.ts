// The numbers the addon and its JavaScript side both speak (request flags, answer flags, event
// kinds, the interface version) are written on each side of the seam, Rust and TypeScript: this
// test reads both sources and holds them to each other, so a number changed on one side only fails
// here rather than as a request misread at run time. Engine-independent: it reads files, loads
// nothing.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));
/** The prefixes of the names both sides share. */
const SHARED = "(?:FLAG|RESPONSE|EVENT|SOCKET|TUNNEL)_[A-Z0-9_]+|INTERFACE_VERSION";
const RUST = new RegExp(`^\\s*(?:pub(?:\\([a-z]+\\))? )?const (${SHARED}): u32 = (\\d+);`, "gm");
const TYPESCRIPT = new RegExp(`^(?:export )?const (${SHARED}) = (\\d+);`, "gm");

/** Every shared number a side defines, by name, from the files under `dir` ending in `ext`. */
function numbersIn(dir: string, ext: string, pattern: RegExp): Map<string, { value: number; file: string }> {
  const found = new Map<string, { value: number; file: string }>();
  for (const name of readdirSync(join(root, dir), { recursive: true }) as string[]) {
    if (!name.endsWith(ext)) continue;
    const file = join(dir, name);
    for (const [, key, value] of readFileSync(join(root, file), "utf8").matchAll(pattern)) {
      const seen = found.get(key!);
      // One name, one number on each side too (a name may be written in more than one file).
      if (seen !== undefined) assert.equal(Number(value), seen.value, `${key} is ${seen.value} in ${seen.file} and ${value} in ${file}`);
      found.set(key!, { value: Number(value), file });
    }
  }
  return found;
}

test("the addon (Rust) and the native engine (TypeScript) define the same shared numbers, with the same values", () => {
  const rust = numbersIn("native/addon/src", ".rs", RUST);
  const typescript = numbersIn("src/engines", ".ts", TYPESCRIPT);
  // The test reads what it means to: each family is found on both sides.
  for (const family of ["FLAG_", "RESPONSE_", "EVENT_", "SOCKET_", "TUNNEL_", "INTERFACE_VERSION"]) {
    assert.ok([...rust.keys()].some((k) => k.startsWith(family)), `no ${family} number found in native/addon/src`);
    assert.ok([...typescript.keys()].some((k) => k.startsWith(family)), `no ${family} number found in src/engines`);
  }
  const onlyRust = [...rust.keys()].filter((k) => !typescript.has(k));
  const onlyTypeScript = [...typescript.keys()].filter((k) => !rust.has(k));
  assert.deepEqual(onlyRust, [], `defined in Rust only (add them to the TypeScript side, src/engines/): ${onlyRust.join(", ")}`);
  assert.deepEqual(onlyTypeScript, [], `defined in TypeScript only (add them to the addon, native/addon/src/): ${onlyTypeScript.join(", ")}`);
  for (const [name, { value, file }] of rust) {
    const other = typescript.get(name)!;
    assert.equal(other.value, value, `${name} is ${value} in ${file} and ${other.value} in ${other.file}`);
  }
});
