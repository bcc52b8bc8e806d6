#!/usr/bin/env node
// Counts the source files that sit in an import cycle, type-only imports included
// (`import type`, `export … from`, `import("…")` in types and code): the knot that makes a
// layer impossible to read on its own. `node scripts/import-cycles.mjs [dir]` prints each
// cycle (a strongly connected component of the import graph) and the total.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(process.argv[2] ?? "src");
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith(".ts")) files.push(path);
  }
})(root);

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.[^"']+)["']/gm;
const edges = new Map();
for (const file of files) {
  const targets = new Set();
  for (const [, spec] of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
    const target = resolve(dirname(file), spec.replace(/\.js$/, ".ts"));
    if (files.includes(target)) targets.add(target);
  }
  edges.set(file, [...targets]);
}

// Tarjan's strongly connected components.
let index = 0;
const stack = [];
const info = new Map();
const components = [];
function connect(v) {
  info.set(v, { index, low: index, onStack: true });
  index++;
  stack.push(v);
  for (const w of edges.get(v)) {
    if (!info.has(w)) {
      connect(w);
      info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
    } else if (info.get(w).onStack) info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
  }
  if (info.get(v).low === info.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      info.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    components.push(component);
  }
}
for (const file of files) if (!info.has(file)) connect(file);

const cycles = components.filter((c) => c.length > 1 || edges.get(c[0]).includes(c[0]));
let inCycles = 0;
for (const cycle of cycles) {
  inCycles += cycle.length;
  console.log(`cycle of ${cycle.length}: ${cycle.map((f) => relative(root, f)).sort().join(" ")}`);
}
console.log(`${inCycles} of ${files.length} source files are in an import cycle (type imports included)`);
