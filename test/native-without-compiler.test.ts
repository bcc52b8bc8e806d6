// The native engine on a machine without Rust: cog-http and this platform's prebuilt package,
// packed with `npm pack`, installed into a fresh project with no cargo on PATH, serve a request on
// engine "native", from the prebuilt binary. The other platforms' binaries, when
// scripts/build-prebuilt.mjs has built them here, are checked as files (architecture, libraries,
// glibc floor, libuv left to Node): this machine can't run them.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import { hostPlatform, packageOf, platforms, problems } from "../scripts/native-platforms.mjs";
import { nodeBinary } from "../scripts/node-binary.mjs";
import { install, type Installed, manifestOf, pack, pathWithoutRust, platformFolder, repo, serveNative, warnings } from "./packed.js";

const host = hostPlatform();
const musl = platforms.find((p) => p.name === "linux-x64-musl")!;
const muslSkip = !existsSync(packageOf(musl).binary)
  ? "the linux-x64-musl binary is not built here (node scripts/build-prebuilt.mjs builds it)"
  : process.platform !== "linux" || process.arch !== "x64"
    ? "loads the x64 musl binary on linux-x64 only"
    : spawnSync("musl-gcc", ["--version"]).status !== 0
      ? "musl-gcc is not installed (apt-get install musl-tools)"
      : false;
const arm64 = platforms.find((p) => p.name === "linux-arm64-gnu")!;
/** Debian's arm64 C and C++ libraries (libc6-arm64-cross, libstdc++6-arm64-cross), which qemu-aarch64 runs an arm64 Node with. */
const arm64Libraries = "/usr/aarch64-linux-gnu";
const arm64Skip = !existsSync(packageOf(arm64).binary)
  ? "the linux-arm64-gnu binary is not built here (node scripts/build-prebuilt.mjs builds it)"
  : process.platform !== "linux" || process.arch !== "x64"
    ? "runs an arm64 Node under qemu on linux-x64 only"
    : spawnSync("qemu-aarch64", ["--version"]).status !== 0 || !existsSync(join(arm64Libraries, "lib", "libstdc++.so.6"))
      ? "qemu-aarch64 or the arm64 libraries are not installed (apt-get install qemu-user libc6-arm64-cross libstdc++6-arm64-cross)"
      : process.env.COG_NODE_MATRIX === "1"
        ? "checked on CI's first Node (COG_NODE_MATRIX=1): 20 s under emulation for what Node-API keeps the same on every Node"
        : false;
const rootManifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));

test("each platform package is listed in optionalDependencies with cog-http's exact version", () => {
  for (const platform of platforms) {
    const { manifest } = packageOf(platform);
    assert.equal(manifest.name, `@cog-http/native-${platform.name}`);
    assert.equal(manifest.version, rootManifest.version, `${manifest.name}'s version`);
    assert.equal(rootManifest.optionalDependencies[manifest.name], rootManifest.version, `cog-http's optionalDependencies["${manifest.name}"]`);
    assert.deepEqual([manifest.os, manifest.cpu, manifest.libc], [[platform.os], [platform.cpu], [platform.libc]]);
    assert.deepEqual(manifest.files, [manifest.main]);
  }
  assert.deepEqual(Object.keys(rootManifest.optionalDependencies).sort(), platforms.map((p) => `@cog-http/native-${p.name}`).sort());
});

for (const platform of platforms) {
  const { binary } = packageOf(platform);
  test(`the ${platform.name} binary is a Node-API module for ${platform.machine}, ${platform.libc}, leaving libuv to Node`, { skip: !existsSync(binary) && `${relative(repo, binary)} is not built here (node scripts/build-prebuilt.mjs builds it)` }, () => {
    assert.deepEqual(problems(platform, binary), []);
  });
}

describe("a fresh project without cargo, installing cog-http and this platform's prebuilt package", { skip: host === null && `no prebuilt package for ${process.platform}-${process.arch}` }, () => {
  const env = { ...process.env, PATH: pathWithoutRust() };
  delete env.COG_NATIVE_REQUIRED;
  const dir = mkdtempSync(join(tmpdir(), "cog-prebuilt-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let installed: Installed;

  before(() => {
    const { dir: packageDir, manifest, binary } = packageOf(host!);
    // This platform's binary from scripts/build-prebuilt.mjs, else the one the repository's install built.
    const built = existsSync(binary) ? binary : join(repo, "native", "cog-native.node");
    assert.ok(existsSync(built), "no native binary to pack: run node scripts/build-prebuilt.mjs --host (or npm install)");
    const tarballs = [pack(repo, dir), pack(platformFolder(dir, packageDir, manifest.main, built), dir)];
    // Install scripts are for approved packages only (npm 11 warns about the others, and will skip them).
    assert.deepEqual(Object.keys(manifestOf(tarballs[0]!).scripts ?? {}).filter((name) => /^(pre|post)?install$/.test(name)), []);
    assert.notEqual(spawnSync("cargo", ["--version"], { env }).status, 0, "cargo is still on PATH");
    installed = install(dir, tarballs, { env });
  });

  // CI runs the suite on each supported Node (20 to 26): this checks the install on each.
  test(`npm install succeeds without a warning on Node ${process.version}`, () => {
    assert.equal(installed.status, 0, installed.output);
    assert.deepEqual(warnings(installed.output), []);
  });

  test('it serves on engine "native" from the prebuilt binary, nothing built from source', () => {
    const { project } = installed;
    assert.ok(!existsSync(join(project, "node_modules", "cog-http", "native", "cog-native.node")), "a build from source was made");
    const answer = serveNative(project, env);
    assert.deepEqual([answer.status, answer.body, answer.engine], [200, "hello installed", "native"]);
    // The one addon in the process is the platform package's file.
    assert.deepEqual(answer.addons, [join(project, "node_modules", "@cog-http", `native-${host!.name}`, packageOf(host!).manifest.main)]);
  });

  test("npx cog-build-native, the fallback, has nothing to do", () => {
    const build = spawnSync(process.execPath, [join("node_modules", ".bin", "cog-build-native")], { cwd: installed.project, env, encoding: "utf8", timeout: 300_000 });
    assert.equal(build.status, 0, build.stderr);
    assert.match(build.stdout, new RegExp(`the prebuilt native engine \\(@cog-http/native-${host!.name}\\) loads here: nothing to build`));
  });
});

test('on an arm64 Node (under qemu), the linux-arm64-gnu package serves on engine "native"', { skip: arm64Skip }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), "cog-arm64-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // npm installs a package only for the machine's own cpu; --force puts the arm64 one here for the arm64 Node to load.
  const { project, status, output } = install(dir, [pack(repo, dir), pack(packageOf(arm64).dir, dir)], { flags: ["--force"] });
  assert.equal(status, 0, output);
  const node = nodeBinary(process.versions.node.split(".")[0], "arm64");
  const answer = serveNative(project, process.env, ["qemu-aarch64", "-L", arm64Libraries, node]);
  assert.deepEqual(answer, { status: 200, body: "hello installed", engine: "native", addons: [join(project, "node_modules", "@cog-http", `native-${arm64.name}`, packageOf(arm64).manifest.main)] });
});

// No Node for musl can be had here (none on npm, and Bun's musl build needs a musl libstdc++ that
// Debian lacks), so musl's own dynamic loader loads the binary into a small musl program that
// defines the napi_* and uv_* functions Node would (never called: loading runs no Node-API code).
// What this proves that reading the file does not: every C library function the binary needs is
// in this musl (1.2.3, Alpine 3.17's), and its relocations and initializers run under musl.
test("the linux-x64-musl binary loads under musl's dynamic loader", { skip: muslSkip }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), "cog-musl-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { binary } = packageOf(musl);
  const node = spawnSync("readelf", ["-W", "--dyn-syms", binary], { encoding: "utf8" })
    .stdout.split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[6] === "UND" && /^(napi|uv)_\w+$/.test(cols[7] ?? ""))
    .map((cols) => `void ${cols[7]}(void) {}`);
  assert.ok(node.length > 40, "the binary names Node's functions");
  writeFileSync(
    join(dir, "load.c"),
    `#include <dlfcn.h>
#include <stdio.h>
${node.join("\n")}
int main(int argc, char **argv) {
  void *addon = dlopen(argv[1], RTLD_NOW);
  if (addon == NULL) { printf("%s\\n", dlerror()); return 1; }
  printf("%s\\n", dlsym(addon, "napi_register_module_v1") != NULL ? "loaded" : "no napi_register_module_v1");
  return 0;
}
`,
  );
  const compiled = spawnSync("musl-gcc", ["-rdynamic", "-o", join(dir, "load"), join(dir, "load.c")], { encoding: "utf8" });
  assert.equal(compiled.status, 0, compiled.stderr);
  const loaded = spawnSync(join(dir, "load"), [binary], { encoding: "utf8" });
  assert.equal(loaded.stdout.trim(), "loaded", loaded.stderr);
  // The glibc binary does not load there: the check can fail.
  const glibc = packageOf(platforms.find((p) => p.name === "linux-x64-gnu")!).binary;
  if (existsSync(glibc)) assert.match(spawnSync(join(dir, "load"), [glibc], { encoding: "utf8" }).stdout, /ld-linux-x86-64\.so\.2/);
});
