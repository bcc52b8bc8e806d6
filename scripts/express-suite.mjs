#!/usr/bin/env node
// Runs Express 5's own test suite (test/ and test/acceptance/) against cog-http/express, on
// Cog's engines. The suite is fetched, never committed: see docs/guide/express.md ("Express's own
// tests") for how to get it. Usage:
//
//   node scripts/express-suite.mjs <express checkout> [--engine node|native|plain]... [--failures]
//
// The checkout's `require("..")` (index.js) and lib/express.js are pointed at cog-http/express
// (this repository's built dist/, linked as node_modules/cog-http), and each app a test serves
// is served by the engine named: "node" and "native" are Cog's engines (scripts/express-suite/
// serve.cjs), "plain" is node:http's own server with the app as its listener (as Express runs
// it). Without --engine: node, then native. test/utils.js is left out: it tests Express's private
// helpers (lib/utils.js), which the tests also use and which stay Express's own.
// --exit: a failing test can leave its server open (supertest closes it only after its asserts).
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const suite = args.find((a) => !a.startsWith("--") && !["node", "native", "plain"].includes(a));
if (suite === undefined) {
  console.error("usage: node scripts/express-suite.mjs <express checkout> [--engine node|native|plain]... [--failures]");
  process.exit(2);
}
const dir = resolve(suite);
const engines = args.flatMap((a, i) => (a === "--engine" ? [args[i + 1]] : []));
if (engines.length === 0) engines.push("node", "native");
const showFailures = args.includes("--failures");

const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
if (pkg.name !== "express") throw new Error(`${dir} is not an Express checkout`);
if (!existsSync(join(dir, "node_modules", "mocha"))) throw new Error(`run npm install in ${dir} first (the suite's devDependencies)`);
if (!existsSync(join(root, "dist", "express", "index.js"))) throw new Error("build first: npm run build");

// The checkout's express is cog-http/express.
const link = join(dir, "node_modules", "cog-http");
if (existsSync(link) || isLink(link)) rmSync(link, { recursive: true, force: true });
mkdirSync(dirname(link), { recursive: true });
symlinkSync(root, link, "dir");
const pointer = "'use strict';\n// Express's own tests, run against Cog (scripts/express-suite.mjs).\nmodule.exports = require('cog-http/express');\n";
writeFileSync(join(dir, "index.js"), pointer);
writeFileSync(join(dir, "lib", "express.js"), pointer);

const results = {};
for (const engine of engines) {
  const mocha = [
    join(dir, "node_modules", "mocha", "bin", "mocha.js"),
    "--require",
    "test/support/env",
    "--reporter",
    "json",
    "--check-leaks",
    "--exit",
    "--exclude",
    "test/utils.js",
    "test/",
    "test/acceptance/",
  ];
  if (engine !== "plain") mocha.splice(3, 0, "--require", join(root, "scripts", "express-suite", "serve.cjs"));
  const run = spawnSync(process.execPath, mocha, { cwd: dir, encoding: "utf8", maxBuffer: 1 << 28, env: { ...process.env, COG_EXPRESS_ENGINE: engine } });
  const start = run.stdout.indexOf("{\n");
  if (start === -1) {
    console.error(run.stdout, run.stderr);
    throw new Error(`mocha printed no report on the ${engine} engine`);
  }
  const report = JSON.parse(run.stdout.slice(start));
  results[engine] = report;
  const { tests, passes, failures, pending } = report.stats;
  console.log(`${engine}: ${passes} passing, ${failures} failing, ${pending} pending (of ${tests}), Express ${pkg.version}`);
  if (showFailures) {
    for (const f of report.failures) console.log(`  ✗ ${f.fullTitle}\n      ${(f.err.message ?? "").split("\n")[0]}`);
  }
}
process.exitCode = Object.values(results).some((r) => r.stats.failures > 0) ? 1 : 0;

function isLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
