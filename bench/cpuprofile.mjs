#!/usr/bin/env node
// Where a profile's time went: self time of a `node --cpu-prof` profile, by package (or Node's
// own code, or Cog's) and by function, as shares of the samples taken.
//
//   node bench/cpuprofile.mjs FILE.cpuprofile [--top 25] [--skip SECONDS]
//
// For a server under load: start it with `node --cpu-prof --cpu-prof-dir=DIR server.mjs`, load
// it (wrk), and stop it so that it exits normally (process.exit on SIGTERM): Node writes the
// profile as it exits. --skip leaves out the profile's first seconds (the start and a warm-up).
// Each sample weighs the time it stands for; idle time ("(idle)": no JavaScript running, the
// loop waiting or native code called from it) is left out of the shares and given apart.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "25" }, skip: { type: "string", default: "0" } },
});
if (positionals.length !== 1) {
  console.error("usage: node bench/cpuprofile.mjs FILE.cpuprofile [--top 25] [--skip SECONDS]");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0], "utf8"));

/** What a frame's script is: a package under node_modules, Node's own code, Cog's, or a name. */
function ownerOf(url, name) {
  if (url === "") return name.startsWith("(") ? name : "(native or V8)";
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules !== null) return modules[1];
  if (url.startsWith("node:")) return "node (its own JavaScript)";
  if (/\/dist\//.test(url) || /\/src\//.test(url)) return "cog";
  return url.replace(/^file:\/\/.*\//, "");
}

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
// Microseconds each node was sampled for, after the first --skip seconds.
const hits = new Map();
const skip = Number(flags.skip) * 1e6;
let elapsed = 0;
for (let i = 0; i < profile.samples.length; i++) {
  elapsed += profile.timeDeltas[i];
  if (elapsed < skip) continue;
  hits.set(profile.samples[i], (hits.get(profile.samples[i]) ?? 0) + profile.timeDeltas[i]);
}
const byOwner = new Map();
const byFunction = new Map();
let total = 0;
let idle = 0;
for (const [id, time] of hits) {
  const { callFrame } = byId.get(id);
  if (callFrame.functionName === "(idle)") {
    idle += time;
    continue;
  }
  total += time;
  const owner = ownerOf(callFrame.url, callFrame.functionName);
  byOwner.set(owner, (byOwner.get(owner) ?? 0) + time);
  const where = `${callFrame.functionName || "(anonymous)"} ${callFrame.url === "" ? "" : `${callFrame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(dist|src|bench)\//, "$1/")}:${callFrame.lineNumber + 1}`}`;
  byFunction.set(where, (byFunction.get(where) ?? 0) + time);
}

const share = (count) => `${((100 * count) / total).toFixed(1).padStart(5)}%`;
console.log(`${(total / 1e6).toFixed(2)} s of JavaScript and V8 sampled, ${(idle / 1e6).toFixed(2)} s idle\n\nself time by owner:`);
for (const [owner, count] of [...byOwner].sort((a, b) => b[1] - a[1])) console.log(`${share(count)}  ${owner}`);
console.log(`\nself time by function (top ${flags.top}):`);
for (const [where, count] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(flags.top))) console.log(`${share(count)}  ${where}`);
