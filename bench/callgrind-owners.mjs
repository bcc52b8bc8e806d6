#!/usr/bin/env node
// Whose code a request's instructions ran, from a callgrind file kept by `--keep` (bench/instructions.mjs,
// bench/arena-instructions.mjs) of a server started with `--node-flags=--perf-basic-prof`: each
// JavaScript function is named from V8's perf map (/tmp/perf-PID.map) and given an owner (a package
// under node_modules, Node's own JavaScript, Cog's dist/, the app, code made with `new Function`), and what V8's builtins, runtime
// and C++ code cost is given to the JavaScript function that called them (through the call graph,
// in proportion to each caller's calls). What no JavaScript frame is under (the event loop, libuv,
// V8's threads: the garbage collector's and the optimizing compiler's) is given apart, the last two
// also as totals over every thread.
//
//   node bench/callgrind-owners.mjs DIR/cog.crud:read.callgrind --requests 2421 [--functions cog,node] [--map /tmp/perf-PID.map]
//
// --requests: how many requests the count was of (bench/arena-instructions.mjs prints it);
// --functions: also list those owners' functions (≥ 150 instructions a request). TurboFan inlines
// callees into their callers, so a function's cost can show under its caller's name: compare
// owners rather than functions between servers.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: "string" }, functions: { type: "string", default: "" }, map: { type: "string" } },
});
if (positionals.length !== 1 || flags.requests === undefined) {
  console.error("usage: node bench/callgrind-owners.mjs FILE.callgrind --requests N [--functions cog,node] [--map /tmp/perf-PID.map]");
  process.exit(2);
}
const text = readFileSync(positionals[0], "utf8");
const requests = Number(flags.requests);

// V8's perf map: start, size (hex) and name of each compiled function, sorted for a binary search.
const mapPath = flags.map ?? `/tmp/perf-${/^pid: (\d+)/m.exec(text)?.[1]}.map`;
const code = readFileSync(mapPath, "utf8")
  .split("\n")
  .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
  .filter(Boolean)
  .map(([, start, size, name]) => ({ start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), name }))
  .sort((a, b) => a.start - b.start);
function jitName(address) {
  let lo = 0;
  let hi = code.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (code[mid].start <= address) lo = mid + 1;
    else hi = mid - 1;
  }
  // The latest code object that covers the address (V8 reuses code space).
  for (let i = hi; i >= 0 && i > hi - 64; i--) if (address < code[i].end && address >= code[i].start) return code[i].name;
  return undefined;
}

// The file's functions (names compressed as "(id) name" the first time, "(id)" after), their own
// cost and their calls' inclusive costs.
const names = new Map();
const resolve = (token) => {
  const m = /^\((\d+)\)(?: (.*))?$/.exec(token);
  if (m === null) return token;
  if (m[2] !== undefined) {
    const address = /^0x([0-9a-f]+)$/.exec(m[2]);
    names.set(m[1], (address && jitName(parseInt(address[1], 16))) ?? m[2]);
  }
  return names.get(m[1]);
};
const own = new Map();
const calls = new Map();
let fn;
let callee;
let call = false;
for (const line of text.split("\n")) {
  if (line.startsWith("fn=")) fn = resolve(line.slice(3));
  else if (line.startsWith("cfn=")) callee = resolve(line.slice(4));
  else if (line.startsWith("calls=")) call = true;
  else if (/^[0-9+*-]/.test(line)) {
    const cost = Number(line.split(" ")[1] ?? NaN);
    if (Number.isNaN(cost)) continue;
    if (call) {
      if (!calls.has(fn)) calls.set(fn, new Map());
      calls.get(fn).set(callee, (calls.get(fn).get(callee) ?? 0) + cost);
      call = false;
    } else own.set(fn, (own.get(fn) ?? 0) + cost);
  }
}

/** A JavaScript function's owner, or undefined for V8's and Node's native code. */
function ownerOf(name) {
  if (name === undefined || !name.startsWith("JS:")) return name?.startsWith("RegExp:") ? "(regular expressions)" : undefined;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(name);
  if (pkg !== null) return pkg[1];
  if (name.includes("/dist/")) return "cog";
  if (name.includes("node:")) return "node (its own JavaScript)";
  // Made with `new Function`, so named without a file: ajv's validators, fast-json-stringify's serializers.
  if (!name.includes("/")) return "(generated: ajv's validators, fast-json-stringify's serializers)";
  return "the app";
}

const inclusive = (f) => (own.get(f) ?? 0) + [...(calls.get(f)?.values() ?? [])].reduce((a, b) => a + b, 0);
// The part of a native function's inclusive cost spent in native code only (its calls back into JavaScript are their own).
const nativeOnly = new Map();
function nativeCost(f, depth = 0) {
  if (nativeOnly.has(f)) return nativeOnly.get(f);
  nativeOnly.set(f, own.get(f) ?? 0); // cycles: the own cost so far
  let total = own.get(f) ?? 0;
  if (depth < 60)
    for (const [g, cost] of calls.get(f) ?? []) {
      if (g === f || ownerOf(g) !== undefined) continue;
      const all = inclusive(g);
      if (all > 0) total += cost * (nativeCost(g, depth + 1) / all);
    }
  nativeOnly.set(f, total);
  return total;
}

const byOwner = new Map();
const byFunction = new Map();
for (const f of new Set([...own.keys(), ...calls.keys()])) {
  const owner = ownerOf(f);
  if (owner === undefined) continue;
  let cost = own.get(f) ?? 0;
  for (const [g, c] of calls.get(f) ?? []) {
    if (ownerOf(g) !== undefined) continue;
    const all = inclusive(g);
    if (all > 0) cost += c * (nativeCost(g) / all);
  }
  byOwner.set(owner, (byOwner.get(owner) ?? 0) + cost);
  byFunction.set(f, cost);
}
const total = [...own.values()].reduce((a, b) => a + b, 0);
const attributed = [...byOwner.values()].reduce((a, b) => a + b, 0);
byOwner.set("(under no JavaScript frame: the loop, libuv, V8's threads)", total - attributed);
const threads = {
  "(of which, on any thread: the garbage collector)":
    /Scaveng|MarkCompact|ConcurrentMarking|Sweeper|Heap::Collect|MinorMC|Evacuat|MarkingVisitor|IncrementalMarking/,
  "(of which, on any thread: the optimizing compiler)": /compiler::|OptimizingCompileDispatcher|Maglev|Turbofan/,
};
for (const [label, pattern] of Object.entries(threads))
  byOwner.set(
    label,
    [...own].filter(([f]) => f !== undefined && pattern.test(f)).reduce((a, [, c]) => a + c, 0),
  );

const background = [...Object.keys(threads)].reduce((a, label) => a + byOwner.get(label), 0);
const line = (cost, label) =>
  `${Math.round(cost / requests)
    .toLocaleString("en-US")
    .padStart(9)}  ${((100 * cost) / total).toFixed(1).padStart(5)}%  ${label}`;
// The collector's and the compiler's work comes in bursts that a count of a few thousand requests
// catches or misses: the rest is the steadier figure to compare.
console.log(
  `${Math.round(total / requests).toLocaleString("en-US")} instructions a request (${requests} requests); without the garbage collector's and the optimizing compiler's: ${Math.round((total - background) / requests).toLocaleString("en-US")}. By owner:`,
);
for (const [owner, cost] of [...byOwner].sort((a, b) => b[1] - a[1])) console.log(line(cost, owner));
const listed = flags.functions.split(",").filter(Boolean);
if (listed.length > 0) {
  console.log(`\nfunctions of ${listed.join(", ")}:`);
  for (const [f, cost] of [...byFunction].sort((a, b) => b[1] - a[1])) {
    const owner = ownerOf(f);
    if (cost / requests >= 150 && listed.some((o) => owner.startsWith(o))) console.log(line(cost, `${owner}: ${f.replace(/^JS:/, "")}`));
  }
}
