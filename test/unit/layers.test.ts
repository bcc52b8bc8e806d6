// Cog's layers as folders, and the one direction their imports go (docs/architecture.md): read
// from the real import graph of src/ (`import`, `import type`, `export … from`, and dynamic
// `import()`, in code and in types), so a rule broken by a type alone fails too. Two checks:
// every import goes where the table below lets its folder go, and no file sits in an import cycle.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const src = join(root, "src");

/** Every .ts file under src/, as a path relative to it ("/"-separated). */
function sourceFiles(dir = src): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [relative(src, path).split("\\").join("/")] : [];
  });
}

// `import … from "./x.js"`, `import type … from`, `export … from "./x.js"`, `import "./x.js"`, `import("./x.js")`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.[^"']+)["']/gm;

/** The source files a file imports, relative to src/. */
export function importsOf(file: string, text = readFileSync(join(src, file), "utf8")): string[] {
  const found = new Set<string>();
  for (const [, spec] of text.matchAll(SPECIFIER))
    found.add(
      relative(src, resolve(dirname(join(src, file)), spec!.replace(/\.js$/, ".ts")))
        .split("\\")
        .join("/"),
    );
  return [...found];
}

/**
 * The layers, each a folder of src/ (or a few files), and the layers each may import: its own
 * files, and those of the layers listed. Read top to bottom, a layer imports only layers above
 * it in this table; the same table is docs/architecture.md's ("The import table").
 */
export const LAYERS: readonly { layer: string; holds: string; imports: readonly string[] }[] = [
  { layer: "base", holds: "base/", imports: [] },
  { layer: "contract", holds: "engines/contract/", imports: ["base"] },
  { layer: "kit", holds: "engines/kit/", imports: ["base", "contract"] },
  { layer: "node", holds: "engines/node/", imports: ["base", "contract", "kit"] },
  { layer: "native", holds: "engines/native/", imports: ["base", "contract", "kit"] },
  { layer: "loader", holds: "engines/select.ts", imports: ["base", "contract", "kit", "node", "native"] },
  { layer: "http", holds: "http/", imports: ["base", "contract", "kit"] },
  { layer: "observe", holds: "observe/", imports: ["base", "contract", "http"] },
  { layer: "schema", holds: "schema/", imports: ["base", "contract", "http"] },
  { layer: "websocket", holds: "websocket/", imports: ["base", "contract", "http"] },
  { layer: "core", holds: "core/", imports: ["base", "contract", "kit", "loader", "http", "observe", "schema", "websocket"] },
  { layer: "facade", holds: "index.ts cog.ts", imports: ["base", "contract", "loader", "http", "observe", "schema", "websocket", "core"] },
  { layer: "express", holds: "express/", imports: ["base", "contract", "loader", "http", "core"] },
  { layer: "otel", holds: "otel/", imports: ["base", "http", "observe"] },
  { layer: "connect", holds: "connect/", imports: ["http"] },
  { layer: "nest", holds: "nest/", imports: ["express"] },
];

/** The layer a source file belongs to. */
export function layerOf(file: string): string {
  for (const { layer, holds } of LAYERS) {
    for (const part of holds.split(" ")) if (part.endsWith("/") ? file.startsWith(part) : file === part) return layer;
  }
  throw new Error(`${file} is in no layer: add its folder to LAYERS (and docs/architecture.md)`);
}

/** Every import that breaks the table, as "importer -> imported (layer -> layer)". */
export function violations(files: readonly string[], imports: (file: string) => string[]): string[] {
  const allowed = new Map(LAYERS.map(({ layer, imports }) => [layer, new Set([layer, ...imports])]));
  const found: string[] = [];
  for (const file of files) {
    for (const imported of imports(file)) {
      const from = layerOf(file);
      const to = layerOf(imported);
      if (!allowed.get(from)!.has(to)) found.push(`${file} -> ${imported} (${from} -> ${to})`);
    }
  }
  return found;
}

/** The files in import cycles: each strongly connected component of the graph with more than one file (or a file importing itself), sorted. */
export function cycles(files: readonly string[], imports: (file: string) => string[]): string[][] {
  const edges = new Map(files.map((file) => [file, imports(file).filter((f) => files.includes(f))]));
  let index = 0;
  const stack: string[] = [];
  const info = new Map<string, { index: number; low: number; onStack: boolean }>();
  const components: string[][] = [];
  // Tarjan's strongly connected components.
  const connect = (v: string): void => {
    const own = { index, low: index, onStack: true };
    info.set(v, own);
    index++;
    stack.push(v);
    for (const w of edges.get(v)!) {
      const seen = info.get(w);
      if (seen === undefined) {
        connect(w);
        own.low = Math.min(own.low, info.get(w)!.low);
      } else if (seen.onStack) own.low = Math.min(own.low, seen.index);
    }
    if (own.low === own.index) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        info.get(w)!.onStack = false;
        component.push(w);
      } while (w !== v);
      components.push(component.sort());
    }
  };
  for (const file of files) if (!info.has(file)) connect(file);
  return components.filter((c) => c.length > 1 || edges.get(c[0]!)!.includes(c[0]!));
}

test("every source file's imports follow the layers' table", () => {
  const files = sourceFiles();
  assert.ok(files.includes("engines/contract/engine.ts") && files.includes("cog.ts"), "the source files were found");
  assert.deepEqual(
    violations(files, (file) => importsOf(file)),
    [],
  );
});

test("no source file sits in an import cycle (type imports included)", () => {
  const files = sourceFiles();
  assert.deepEqual(
    cycles(files, (file) => importsOf(file)),
    [],
  );
});

test("docs/architecture.md shows the same import table", () => {
  const doc = readFileSync(join(root, "docs/architecture.md"), "utf8");
  for (const { layer, holds, imports } of LAYERS) {
    const row = `| ${layer} | ${holds
      .split(" ")
      .map((p) => `\`src/${p}\``)
      .join(" ")} | ${imports.length === 0 ? "nothing" : imports.join(", ")} |`;
    assert.ok(doc.includes(row), `docs/architecture.md lacks the row\n${row}`);
  }
});

test("the checks catch a planted violation and a planted cycle", () => {
  const planted: Record<string, string> = {
    "engines/contract/engine.ts": 'import type { Cog } from "../../cog.js";',
    "engines/node/response.ts": 'const log = await import("../../observe/access-log.js");',
    "engines/native/engine.ts": 'export { NodeEngine } from "../node/engine.js";',
    "http/response.ts": 'import type { NodeResponse } from "../engines/node/response.js";',
    "base/errors.ts": 'import { LIMITS } from "./limits.js";',
    "base/limits.ts": 'import type { HttpError } from "./errors.js";',
  };
  const imports = (file: string) => importsOf(file, planted[file] ?? "");
  assert.deepEqual(violations(Object.keys(planted), imports), [
    "engines/contract/engine.ts -> cog.ts (contract -> facade)",
    "engines/node/response.ts -> observe/access-log.ts (node -> observe)",
    "engines/native/engine.ts -> engines/node/engine.ts (native -> node)",
    "http/response.ts -> engines/node/response.ts (http -> node)",
  ]);
  assert.deepEqual(cycles(Object.keys(planted), imports), [["base/errors.ts", "base/limits.ts"]]);
});
