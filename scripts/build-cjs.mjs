#!/usr/bin/env node
// Cog's CommonJS build, dist/cjs/, from the same source as the ES module build (dist/), for the
// loaders that cannot require() an ES module: Jest's and ts-jest's CommonJS runtime, older
// bundlers, Node started with --no-experimental-require-module (docs/decisions/module-systems.md).
//
//   tsc -p tsconfig.cjs.json (module commonjs: `import()` of lazily loaded modules becomes a
//   lazy `require`), then, in each file:
//   - `import.meta.url` (which CommonJS lacks) becomes this file's own URL, from `__filename`;
//   - a module that exports "module.exports" (cog-http/express: the `express` function) gives
//     `require` that value, as Node's require(esm) does;
//   and every file must then parse as CommonJS.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileFunction } from "node:vm";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "cjs");
rmSync(out, { recursive: true, force: true });
const tsc = join(dirname(createRequire(join(root, "package.json")).resolve("typescript/package.json")), "bin", "tsc");
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.cjs.json")], { cwd: root, stdio: "inherit" });

// Set once at the top of the module, where `require` is CommonJS's own (a function may shadow it).
const OWN_URL = "__cogModuleUrl";
const OWN_URL_DECLARATION = 'const __cogModuleUrl = require("node:url").pathToFileURL(__filename).href;';
const files = readdirSync(out, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"));
for (const file of files) {
  const path = join(out, file);
  let code = readFileSync(path, "utf8");
  if (code.includes("import.meta.url")) {
    code = code.replaceAll("import.meta.url", OWN_URL).replace(/^"use strict";\n/, `$&${OWN_URL_DECLARATION}\n`);
    if (!code.includes(OWN_URL_DECLARATION)) throw new Error(`dist/cjs/${file}: no "use strict" prologue to declare its URL after`);
  }
  if (code.includes('exports["module.exports"] = '))
    code = code.replace(/(\n\/\/# sourceMappingURL=[^\n]*)?\n?$/, '\nmodule.exports = exports["module.exports"];$1\n');
  try {
    compileFunction(code, ["exports", "require", "module", "__filename", "__dirname"], { filename: path });
  } catch (err) {
    throw new Error(`dist/cjs/${file} is not CommonJS: ${err.message}`);
  }
  writeFileSync(path, code);
}
// The package is "type": "module"; this folder's files are CommonJS.
writeFileSync(join(out, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
console.log(`dist/cjs: ${files.length} CommonJS modules`);
