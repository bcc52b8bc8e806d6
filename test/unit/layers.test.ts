// The import rules that keep Cog's layers one-way (docs/README.md, "Source layout"): an engine
// talks to the app only through the contract (src/engines/engine.ts) and its EngineHost; the
// contract imports no module of the app; the core reaches an engine only through the contract and
// the engine loader (src/engines/select.ts). Read from the source's import lines (type imports
// and dynamic `import()` included), so a rule broken by a type alone fails too.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const src = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

/** Every .ts file under src/, as a path relative to it. */
function sourceFiles(dir = src): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [relative(src, path)] : [];
  });
}

// `import … from "./x.js"`, `export … from "./x.js"`, `import "./x.js"`, `import("./x.js")`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.[^"']+)["']/gm;

/** The source files a file imports, relative to src/. */
export function importsOf(file: string, text = readFileSync(join(src, file), "utf8")): string[] {
  return [...text.matchAll(SPECIFIER)].map(([, spec]) => relative(src, resolve(dirname(join(src, file)), spec!.replace(/\.js$/, ".ts"))));
}

const isEngineFile = (file: string) => file.startsWith("engines/");
/** What the contract may import: the leaf vocabularies every layer shares (they import nothing of src/). */
const CONTRACT_MAY_IMPORT = new Set(["errors.ts", "limits.ts", "tls.ts"]);
/** What files outside src/engines/ may import of it: the contract, the rules engines share, and the engine loader. */
const ENGINES_SEEN_FROM_OUTSIDE = new Set(["engines/engine.ts", "engines/compat.ts", "engines/select.ts"]);
/** The app's core and faces, which no engine imports. */
const isCoreFile = (file: string) => file === "cog.ts" || file === "index.ts" || file.startsWith("core/") || file === "access-log.ts";

/** Every import that breaks a rule, as "importer -> imported: rule". */
export function violations(files: readonly string[], imports: (file: string) => string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    for (const imported of imports(file)) {
      if (file === "engines/engine.ts" && !CONTRACT_MAY_IMPORT.has(imported)) found.push(`${file} -> ${imported}: the contract imports no module of the app`);
      else if (isEngineFile(file) && isCoreFile(imported)) found.push(`${file} -> ${imported}: an engine talks to the app through its EngineHost only`);
      else if (!isEngineFile(file) && isEngineFile(imported) && !ENGINES_SEEN_FROM_OUTSIDE.has(imported)) found.push(`${file} -> ${imported}: outside src/engines/, only the contract, compat and the loader are imported`);
    }
  }
  return found;
}

test("no source file breaks the layers' import rules", () => {
  const files = sourceFiles();
  assert.ok(files.includes("engines/engine.ts") && files.includes("cog.ts"), "the source files were found");
  assert.deepEqual(violations(files, (file) => importsOf(file)), []);
});

test("the rules catch a planted violation of each kind", () => {
  const planted: Record<string, string> = {
    "engines/engine.ts": 'import type { Cog } from "../cog.js";',
    "engines/node/response.ts": 'const log = await import("../../access-log.js");',
    "engines/native/engine.ts": 'export { Cog } from "../../cog.js";',
    "response.ts": 'import type { NodeResponse } from "./engines/node/response.js";',
    "request.ts": 'import { engineHelpers } from "./engines/node/engine.js";\nimport { NO_BODY } from "./engines/engine.js";',
  };
  const found = violations(Object.keys(planted), (file) => importsOf(file, planted[file]));
  assert.deepEqual(found, [
    "engines/engine.ts -> cog.ts: the contract imports no module of the app",
    "engines/node/response.ts -> access-log.ts: an engine talks to the app through its EngineHost only",
    "engines/native/engine.ts -> cog.ts: an engine talks to the app through its EngineHost only",
    "response.ts -> engines/node/response.ts: outside src/engines/, only the contract, compat and the loader are imported",
    "request.ts -> engines/node/engine.ts: outside src/engines/, only the contract, compat and the loader are imported",
  ]);
});
