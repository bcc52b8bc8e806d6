// The platforms Cog's native engine ships prebuilt for (inside cog-http, prebuilds/<platform>/,
// and as one npm package each, npm/<platform>/, napi-rs's layout), and the checks every such
// binary must pass: built by scripts/build-prebuilt.mjs, checked again by
// test/engines/native/native-without-compiler.test.ts.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * `target` is what cargo-zigbuild builds: a glibc target names the oldest glibc the binary may
 * need (2.17, CentOS 7's, as napi-rs's gnu builds), so it loads on old distributions too.
 * `machine` is readelf's name for the architecture.
 */
export const platforms = [
  { name: "linux-x64-gnu", os: "linux", cpu: "x64", libc: "glibc", target: "x86_64-unknown-linux-gnu.2.17", machine: "X86-64" },
  { name: "linux-x64-musl", os: "linux", cpu: "x64", libc: "musl", target: "x86_64-unknown-linux-musl", machine: "X86-64" },
  { name: "linux-arm64-gnu", os: "linux", cpu: "arm64", libc: "glibc", target: "aarch64-unknown-linux-gnu.2.17", machine: "AArch64" },
];

/** The oldest glibc a gnu binary may ask for. */
export const GLIBC_FLOOR = "2.17";
/** Libraries a binary may need: the C library's own (musl's is the single libc.so). */
const ALLOWED_NEEDED = { glibc: /^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libgcc_s\.so\.1|ld-linux[-\w.]*\.so\.\d)$/, musl: /^libc\.so$/ };

/** The running Node's platform, as the loader names it (src/engines/kit/addon.ts), or null when none is prebuilt. */
export function hostPlatform() {
  const glibc = process.report?.getReport()?.header?.glibcVersionRuntime;
  const name = `${process.platform}-${process.arch}${process.platform === "linux" ? (glibc ? "-gnu" : "-musl") : ""}`;
  return platforms.find((p) => p.name === name) ?? null;
}

/** Where cog-http carries a platform's binary itself (in its package "files"; src/engines/kit/addon.ts loads it). */
export function bundledOf(platform) {
  return join(root, "prebuilds", platform.name, "cog-native.node");
}

/** A platform's package folder, its package.json and the binary's file name in it. */
export function packageOf(platform) {
  const dir = join(root, "npm", platform.name);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  return { dir, manifest, binary: join(dir, manifest.main) };
}

const readelf = (...args) => execFileSync("readelf", ["-W", ...args], { encoding: "utf8", maxBuffer: 16 << 20 });

/** What the dynamic linker sees of a shared library (read with binutils' readelf, which reads every architecture). */
export function inspect(file) {
  const machine = /Machine:\s+(.*)/.exec(readelf("-h", file))?.[1].trim() ?? "";
  const needed = [...readelf("-d", file).matchAll(/\(NEEDED\)\s+Shared library: \[(.*)\]/g)].map((m) => m[1]);
  const interpreter = /program interpreter: (.*)\]/.exec(readelf("-l", file))?.[1] ?? null;
  const symbols = readelf("--dyn-syms", file)
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols.length >= 8 && /^\d+:$/.test(cols[0]))
    .map((cols) => ({ defined: cols[6] !== "UND", name: cols[7] }));
  const glibc = symbols.flatMap((s) => /@GLIBC_([\d.]+)/.exec(s.name)?.[1] ?? []).sort(compareVersions).at(-1) ?? null;
  const uv = symbols.filter((s) => s.name.startsWith("uv_"));
  return {
    machine,
    needed,
    interpreter,
    glibc,
    uvUndefined: uv.filter((s) => !s.defined).length,
    uvDefined: uv.filter((s) => s.defined).map((s) => s.name),
    registersModule: symbols.some((s) => s.defined && s.name === "napi_register_module_v1"),
  };
}

/** What is wrong with `file` as the binary of `platform`: an empty list when nothing is. */
export function problems(platform, file) {
  const found = inspect(file);
  const wrong = [];
  if (!found.machine.includes(platform.machine)) wrong.push(`machine is ${found.machine}, not ${platform.machine}`);
  if (found.interpreter !== null) wrong.push(`asks for a program interpreter (${found.interpreter}): it is not a shared library`);
  if (!found.registersModule) wrong.push("exports no napi_register_module_v1: not a Node-API module");
  // libuv is Node's: the addon must leave every uv_* symbol for the node binary to provide at load.
  if (found.uvUndefined === 0) wrong.push("leaves no uv_* symbol to Node: the libuv calls were not linked as Node's");
  if (found.uvDefined.length > 0) wrong.push(`defines libuv symbols itself (${found.uvDefined.slice(0, 3).join(", ")}): it would not use Node's loop`);
  const unexpected = found.needed.filter((lib) => !ALLOWED_NEEDED[platform.libc].test(lib));
  if (unexpected.length > 0) wrong.push(`needs ${unexpected.join(", ")}, which a ${platform.libc} system may not have`);
  if (platform.libc === "glibc" && found.glibc !== null && compareVersions(found.glibc, GLIBC_FLOOR) > 0) wrong.push(`needs glibc ${found.glibc}, newer than ${GLIBC_FLOOR}`);
  if (platform.libc === "musl" && found.glibc !== null) wrong.push(`asks for glibc ${found.glibc} symbols, which musl does not have`);
  return wrong;
}

/** Orders dotted version numbers ("2.17" < "2.34"). */
export function compareVersions(a, b) {
  const x = a.split(".").map(Number);
  const y = b.split(".").map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
