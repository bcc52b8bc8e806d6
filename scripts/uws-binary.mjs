#!/usr/bin/env node
// Makes the installed uWebSockets.js load on another Node major, for the bench
// (`npm run bench -- --node 24` with uws contenders) and the uws-engine tests.
//
// Why: uWebSockets.js ships one binary per Node ABI. The build this repo
// installs (@trufflesuite/uws-js-unofficial 20.30) has Node 20's only; the
// newest npm build with Node 22/24 binaries (@btc-vision/uwebsockets.js 20.57)
// is linked against glibc 2.38 for exactly three C23 functions
// (__isoc23_sscanf, __isoc23_strtol, __isoc23_strtoul). On an older glibc
// (Debian 12 has 2.36) this script points those three imports at their C99
// twins (__isoc99_sscanf, strtol, strtoul: they differ only in reading
// "0b" binary literals, which uWS never parses) and makes the binary's
// GLIBC_2.38 requirement optional. Nothing else in the binary changes.
// The result is copied beside the Node 20 binary, where uWS.js's loader
// (`uws_<platform>_<arch>_<abi>.node`) finds it.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeBinary } from "./node-binary.mjs";

const SOURCE = "@btc-vision/uwebsockets.js@20.57.0";
/** C23 imports and the C99 functions glibc < 2.38 has for them (same arguments, same results). */
const C99_TWINS = new Map([
  ["__isoc23_sscanf", "__isoc99_sscanf"],
  ["__isoc23_strtol", "strtol"],
  ["__isoc23_strtoul", "strtoul"],
]);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Ensures uWebSockets.js has a binary for Node `major`. Returns its path and which build it is
 * (the installed package's version, or SOURCE's when this script supplied it). Throws saying why
 * when it can't.
 */
export function uwsForNode(major) {
  if (process.platform !== "linux" || process.arch !== "x64") throw new Error(`uWebSockets.js for Node ${major} is set up here only on linux-x64`);
  const node = nodeBinary(major);
  const abi = execFileSync(node, ["-p", "process.versions.modules"], { encoding: "utf8" }).trim();
  const entry = createRequire(join(root, "package.json")).resolve("uWebSockets.js");
  // The official package keeps its binaries beside its entry file; the build this repo installs, in ../binaries.
  const binaries = [dirname(entry), join(dirname(entry), "..", "binaries")].find((dir) => existsSync(join(dir, "uws_linux_x64_115.node")));
  if (binaries === undefined) throw new Error(`no uWebSockets.js binaries found beside ${entry}`);
  const name = `uws_linux_x64_${abi}.node`;
  const target = join(binaries, name);
  const pkg = join(root, ".cache", "uws-builds", "node_modules", "@btc-vision", "uwebsockets.js");
  const source = join(pkg, name);
  if (!existsSync(target)) {
    if (!existsSync(pkg)) {
      execFileSync("npm", ["install", "--prefix", join(root, ".cache", "uws-builds"), "--no-save", "--no-audit", "--no-fund", "--loglevel=error", SOURCE], {
        stdio: ["ignore", "ignore", "inherit"],
      });
    }
    if (!existsSync(source)) throw new Error(`${SOURCE} has no binary for Node ${major} (ABI ${abi})`);
    const glibc = process.report.getReport().header.glibcVersionRuntime;
    if (glibc !== undefined && compareVersions(glibc, "2.38") < 0) {
      writeFileSync(target, withC99Imports(readFileSync(source), "GLIBC_2.38"));
    } else {
      copyFileSync(source, target);
    }
  }
  // Load it once in the target Node, so a failure shows here and not as a bench contender that never starts.
  execFileSync(node, ["-e", `require(${JSON.stringify(target)}).App()`], { stdio: ["ignore", "ignore", "inherit"] });
  const supplied = existsSync(source) && statSync(source).size === statSync(target).size;
  const packageDir = binaries === dirname(entry) ? binaries : join(binaries, "..");
  const version = supplied ? SOURCE.slice(SOURCE.lastIndexOf("@") + 1) : JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")).version;
  return { binary: target, version };
}

function compareVersions(a, b) {
  const [x, y] = [a, b].map((v) => v.split(".").map(Number));
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/**
 * A copy of an ELF64 shared object whose imports of `version` (say GLIBC_2.38) are renamed to
 * their C99 twins as unversioned imports (which bind to glibc's default version), with the
 * requirement on `version` itself marked weak so the loader no longer refuses the file.
 * Throws if the object imports anything else at that version.
 */
export function withC99Imports(elf, version) {
  const out = Buffer.from(elf);
  if (out.readUInt32BE(0) !== 0x7f454c46 || out[4] !== 2 || out[5] !== 1) throw new Error("not a little-endian ELF64 file");
  const sections = new Map();
  const shoff = Number(out.readBigUInt64LE(0x28));
  const shentsize = out.readUInt16LE(0x3a);
  const shnum = out.readUInt16LE(0x3c);
  const names = Number(out.readBigUInt64LE(shoff + out.readUInt16LE(0x3e) * shentsize + 0x18));
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize;
    const name = cString(out, names + out.readUInt32LE(at));
    sections.set(name, { offset: Number(out.readBigUInt64LE(at + 0x18)), size: Number(out.readBigUInt64LE(at + 0x20)) });
  }
  const [dynsym, dynstr, versym, verneed] = [".dynsym", ".dynstr", ".gnu.version", ".gnu.version_r"].map((name) => {
    const section = sections.get(name);
    if (section === undefined) throw new Error(`no ${name} section`);
    return section;
  });

  // Elf64_Verneed entries, each with a chain of Elf64_Vernaux: mark the requirement weak.
  let index = -1;
  for (let need = verneed.offset, more = true; more;) {
    for (let aux = need + out.readUInt32LE(need + 8), count = out.readUInt16LE(need + 2); count > 0; count--) {
      if (cString(out, dynstr.offset + out.readUInt32LE(aux + 8)) === version) {
        out.writeUInt16LE(out.readUInt16LE(aux + 4) | 0x2 /* VER_FLG_WEAK */, aux + 4);
        index = out.readUInt16LE(aux + 6);
      }
      aux += out.readUInt32LE(aux + 12);
    }
    const next = out.readUInt32LE(need + 12);
    more = next !== 0;
    need += next;
  }
  if (index === -1) return out;

  // Each symbol imported at that version: write its twin's name over the start of its own (the
  // twins are no longer, and a name another symbol shares as a suffix is left intact), unversioned.
  for (let i = 0; i < dynsym.size / 24; i++) {
    if ((out.readUInt16LE(versym.offset + 2 * i) & 0x7fff) !== index) continue;
    const at = dynstr.offset + out.readUInt32LE(dynsym.offset + 24 * i);
    const name = cString(out, at);
    const twin = C99_TWINS.get(name);
    if (twin === undefined) throw new Error(`${name} needs ${version} and has no known older twin`);
    out.write(`${twin}\0`, at, "latin1");
    out.writeUInt16LE(1 /* VER_NDX_GLOBAL */, versym.offset + 2 * i);
  }
  return out;
}

function cString(buffer, at) {
  return buffer.toString("latin1", at, buffer.indexOf(0, at));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const major = process.argv[2];
  if (!/^\d+$/.test(major ?? "")) {
    console.error("usage: node scripts/uws-binary.mjs MAJOR   (e.g. 24)");
    process.exit(2);
  }
  const { binary, version } = uwsForNode(major);
  console.log(`${binary} (uWebSockets.js ${version})`);
}
