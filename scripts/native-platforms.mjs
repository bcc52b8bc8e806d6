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
 * `machine` is the architecture as the binary's header names it (readelf's name for ELF; the
 * Mach-O CPU type's, for macOS). macOS binaries (`libc: null`, Mach-O) name the oldest macOS
 * they load on (`macos`, as Node's own floor: 10.15 for x64 on Node 20, 11.0 for arm64), which
 * the build passes as MACOSX_DEPLOYMENT_TARGET; they link Node's symbols at load
 * (`-undefined dynamic_lookup`, native/addon/build.rs, napi-rs's way). The Windows binary (PE, a
 * DLL) imports libuv's functions from node.exe by name (native/addon/src/uv.rs) and looks
 * Node-API's up in the running program when it loads (napi-sys): it loads into a program named
 * node.exe, Node for Windows.
 */
export const platforms = [
  { name: "linux-x64-gnu", os: "linux", cpu: "x64", libc: "glibc", target: "x86_64-unknown-linux-gnu.2.17", machine: "X86-64" },
  { name: "linux-x64-musl", os: "linux", cpu: "x64", libc: "musl", target: "x86_64-unknown-linux-musl", machine: "X86-64" },
  { name: "linux-arm64-gnu", os: "linux", cpu: "arm64", libc: "glibc", target: "aarch64-unknown-linux-gnu.2.17", machine: "AArch64" },
  { name: "darwin-x64", os: "darwin", cpu: "x64", libc: null, target: "x86_64-apple-darwin", machine: "x86_64", macos: "10.15" },
  { name: "darwin-arm64", os: "darwin", cpu: "arm64", libc: null, target: "aarch64-apple-darwin", machine: "arm64", macos: "11.0" },
  { name: "win32-x64", os: "win32", cpu: "x64", libc: null, target: "x86_64-pc-windows-gnu", machine: "x86-64" },
];

/** The file cargo makes for a platform's build (in native/target/<rust target>/release/). */
export function builtFileOf(platform) {
  return { darwin: "libcog_native.dylib", win32: "cog_native.dll" }[platform.os] ?? "libcog_native.so";
}

/** The oldest glibc a gnu binary may ask for. */
export const GLIBC_FLOOR = "2.17";
/**
 * Libraries a binary may need: the C library's own (musl's is the single libc.so); on macOS, the
 * system's (Rust's standard library links libiconv); on Windows, the system's DLLs (the Universal
 * C Runtime's api-ms-win-crt-* among them, part of Windows 10) and node.exe itself.
 */
const ALLOWED_NEEDED = {
  glibc: /^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libgcc_s\.so\.1|ld-linux[-\w.]*\.so\.\d)$/,
  musl: /^libc\.so$/,
  darwin: /^\/usr\/lib\/(libSystem\.B|libiconv\.2|libcharset\.1|libresolv\.9)\.dylib$/,
  win32: /^(kernel32|ntdll|ws2_32|bcrypt|bcryptprimitives|advapi32|userenv|api-ms-win-[a-z0-9-]+)\.dll$|^node\.exe$/i,
};

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

/** What the dynamic linker sees of a shared library (ELF read with binutils' readelf, which reads every architecture; Mach-O by `inspectMachO`). */
export function inspect(file) {
  const head = readFileSync(file).subarray(0, 4);
  if (head.readUInt32LE(0) === MH_MAGIC_64) return inspectMachO(file);
  if (head.toString("latin1", 0, 2) === "MZ") return inspectPE(file);
  const machine = /Machine:\s+(.*)/.exec(readelf("-h", file))?.[1].trim() ?? "";
  const needed = [...readelf("-d", file).matchAll(/\(NEEDED\)\s+Shared library: \[(.*)\]/g)].map((m) => m[1]);
  const interpreter = /program interpreter: (.*)\]/.exec(readelf("-l", file))?.[1] ?? null;
  const symbols = readelf("--dyn-syms", file)
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols.length >= 8 && /^\d+:$/.test(cols[0]))
    .map((cols) => ({ defined: cols[6] !== "UND", name: cols[7] }));
  const glibc =
    symbols
      .flatMap((s) => /@GLIBC_([\d.]+)/.exec(s.name)?.[1] ?? [])
      .sort(compareVersions)
      .at(-1) ?? null;
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

const MH_MAGIC_64 = 0xfeedfacf;
const MACHO_CPU = { 0x01000007: "x86_64", 0x0100000c: "arm64" };

/**
 * A 64-bit Mach-O library's header, load commands and symbol table, read here (no macOS tools on
 * Linux): its CPU, the libraries it loads (LC_LOAD_DYLIB and kin), its own install name
 * (LC_ID_DYLIB), the oldest macOS it loads on (LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX), and
 * its external symbols, defined or left for the loader (Node's `napi_*` and `uv_*`).
 */
export function inspectMachO(file) {
  const b = readFileSync(file);
  const cpu = b.readUInt32LE(4);
  const filetype = b.readUInt32LE(12);
  const ncmds = b.readUInt32LE(16);
  const cstring = (at) => b.toString("latin1", at, b.indexOf(0, at));
  const version = (v) => `${v >>> 16}.${(v >>> 8) & 0xff}`;
  const needed = [];
  let id = null;
  let minos = null;
  const symbols = [];
  let at = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = b.readUInt32LE(at);
    const size = b.readUInt32LE(at + 4);
    // LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB
    if ([0xc, 0x80000018, 0x8000001f, 0x20, 0x80000023].includes(cmd)) needed.push(cstring(at + b.readUInt32LE(at + 8)));
    if (cmd === 0xd) id = cstring(at + b.readUInt32LE(at + 8));
    if (cmd === 0x32 && b.readUInt32LE(at + 8) === 1) minos = version(b.readUInt32LE(at + 12)); // LC_BUILD_VERSION, platform macOS
    if (cmd === 0x24) minos = version(b.readUInt32LE(at + 8)); // LC_VERSION_MIN_MACOSX
    if (cmd === 0x2) {
      // LC_SYMTAB: nlist_64 entries (n_strx, n_type, n_sect, n_desc, n_value): external ones only.
      const [symoff, nsyms, stroff] = [b.readUInt32LE(at + 8), b.readUInt32LE(at + 12), b.readUInt32LE(at + 16)];
      for (let s = 0; s < nsyms; s++) {
        const entry = symoff + s * 16;
        const type = b[entry + 4];
        if ((type & 0xe0) !== 0 || (type & 0x01) === 0) continue; // stabs, or not external
        symbols.push({ defined: (type & 0x0e) !== 0, name: cstring(stroff + b.readUInt32LE(entry)).replace(/^_/, "") });
      }
    }
    at += size;
  }
  const uv = symbols.filter((s) => s.name.startsWith("uv_"));
  return {
    machine: MACHO_CPU[cpu] ?? `cpu type 0x${cpu.toString(16)}`,
    needed,
    interpreter: filetype === 6 ? null : `Mach-O file type ${filetype}, not a dylib`,
    glibc: null,
    id,
    minos,
    uvUndefined: uv.filter((s) => !s.defined).length,
    uvDefined: uv.filter((s) => s.defined).map((s) => s.name),
    registersModule: symbols.some((s) => s.defined && s.name === "napi_register_module_v1"),
  };
}

const PE_MACHINE = { 0x8664: "x86-64", 0xaa64: "ARM64" };

/**
 * A 64-bit Windows DLL's headers, exports and imports, read here (PE32+, as Microsoft's PE format
 * document lays it out): its machine, whether it is a DLL, the libraries it imports from, its
 * exported names, and the functions it imports from node.exe (libuv's, Node's to provide).
 */
export function inspectPE(file) {
  const b = readFileSync(file);
  const pe = b.readUInt32LE(0x3c);
  if (b.toString("latin1", pe, pe + 4) !== "PE\0\0") throw new Error(`${file}: no PE signature`);
  const machine = b.readUInt16LE(pe + 4);
  const sections = b.readUInt16LE(pe + 6);
  const optional = pe + 24;
  const optionalSize = b.readUInt16LE(pe + 20);
  const isDll = (b.readUInt16LE(pe + 22) & 0x2000) !== 0;
  if (b.readUInt16LE(optional) !== 0x20b) throw new Error(`${file}: not PE32+ (64-bit)`);
  const directory = (i) => ({ rva: b.readUInt32LE(optional + 112 + i * 8), size: b.readUInt32LE(optional + 116 + i * 8) });
  const table = optional + optionalSize;
  // A relative virtual address to its place in the file, through the section that holds it.
  const offset = (rva) => {
    for (let i = 0; i < sections; i++) {
      const at = table + i * 40;
      const [virtualSize, virtualAddress, rawSize, rawAt] = [b.readUInt32LE(at + 8), b.readUInt32LE(at + 12), b.readUInt32LE(at + 16), b.readUInt32LE(at + 20)];
      if (rva >= virtualAddress && rva < virtualAddress + Math.max(virtualSize, rawSize)) return rva - virtualAddress + rawAt;
    }
    throw new Error(`${file}: address 0x${rva.toString(16)} is in no section`);
  };
  const cstring = (rva) => {
    const at = offset(rva);
    return b.toString("latin1", at, b.indexOf(0, at));
  };
  const exported = [];
  const exports = directory(0);
  if (exports.size > 0) {
    const at = offset(exports.rva);
    const [count, names] = [b.readUInt32LE(at + 24), b.readUInt32LE(at + 32)];
    for (let i = 0; i < count; i++) exported.push(cstring(b.readUInt32LE(offset(names + i * 4))));
  }
  const needed = [];
  const fromNode = [];
  const imports = directory(1);
  for (let at = imports.size > 0 ? offset(imports.rva) : -1; at >= 0 && b.readUInt32LE(at + 12) !== 0; at += 20) {
    const library = cstring(b.readUInt32LE(at + 12));
    needed.push(library);
    if (library.toLowerCase() !== "node.exe") continue;
    // The import lookup table (or, without one, the address table): 64-bit entries, by name unless the top bit says by ordinal.
    const thunks = offset(b.readUInt32LE(at) || b.readUInt32LE(at + 16));
    for (let t = thunks; b.readBigUInt64LE(t) !== 0n; t += 8) {
      const entry = b.readBigUInt64LE(t);
      fromNode.push(entry >> 63n ? `#${entry & 0xffffn}` : cstring(Number(entry & 0x7fffffffn) + 2));
    }
  }
  return {
    machine: PE_MACHINE[machine] ?? `machine 0x${machine.toString(16)}`,
    needed,
    interpreter: isDll ? null : "a PE program, not a DLL",
    glibc: null,
    fromNode,
    uvUndefined: fromNode.filter((name) => name.startsWith("uv_")).length,
    uvDefined: exported.filter((name) => name.startsWith("uv_")),
    registersModule: exported.includes("napi_register_module_v1"),
  };
}

/** What is wrong with `file` as the binary of `platform`: an empty list when nothing is. */
export function problems(platform, file) {
  const found = inspect(file);
  const wrong = [];
  if (platform.os === "darwin") {
    if (found.id !== null && found.id.startsWith("/")) wrong.push(`is named by the path it was built at (${found.id})`);
    if (found.minos === null || compareVersions(found.minos, platform.macos) > 0)
      wrong.push(`needs macOS ${found.minos ?? "(unknown)"}, newer than ${platform.macos}`);
  }
  if (!found.machine.includes(platform.machine)) wrong.push(`machine is ${found.machine}, not ${platform.machine}`);
  if (found.interpreter !== null) wrong.push(`asks for a program interpreter (${found.interpreter}): it is not a shared library`);
  if (!found.registersModule) wrong.push("exports no napi_register_module_v1: not a Node-API module");
  // libuv is Node's: the addon must leave every uv_* symbol for the node binary to provide at load.
  if (found.uvUndefined === 0) wrong.push("leaves no uv_* symbol to Node: the libuv calls were not linked as Node's");
  if (found.uvDefined.length > 0) wrong.push(`defines libuv symbols itself (${found.uvDefined.slice(0, 3).join(", ")}): it would not use Node's loop`);
  if (platform.os === "win32") {
    const other = found.fromNode.filter((name) => !name.startsWith("uv_"));
    if (other.length > 0) wrong.push(`imports ${other.slice(0, 3).join(", ")} from node.exe, which only libuv's functions are taken from`);
  }
  const allowed = ALLOWED_NEEDED[platform.libc ?? platform.os];
  const unexpected = found.needed.filter((lib) => !allowed.test(lib));
  if (unexpected.length > 0) wrong.push(`needs ${unexpected.join(", ")}, which a ${platform.libc ?? platform.os} system may not have`);
  if (platform.libc === "glibc" && found.glibc !== null && compareVersions(found.glibc, GLIBC_FLOOR) > 0)
    wrong.push(`needs glibc ${found.glibc}, newer than ${GLIBC_FLOOR}`);
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
