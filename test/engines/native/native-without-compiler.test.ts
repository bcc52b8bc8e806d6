// The native engine on a machine without Rust: cog-http, packed with `npm pack` and installed
// alone into a fresh project with no cargo on PATH (no platform package: none is published, and
// none is needed), serves a request on engine "native" from the binary it carries in prebuilds/.
// Without that binary, engine "native" names the cause, "auto" says once that it falls back, and
// a platform package (the slim option) serves instead. The other platforms' binaries, when
// scripts/build-prebuilt.mjs has built them here, are checked as files (architecture, libraries,
// glibc floor, libuv left to Node), and served under qemu (arm64) or loaded under musl.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import { PREBUILT_PLATFORMS } from "../../../src/engines/kit/addon.js";
import { bundledOf, hostPlatform, packageOf, platforms, problems } from "../../../scripts/native-platforms.mjs";
import { nodeBinary } from "../../../scripts/node-binary.mjs";
import { install, type Installed, manifestOf, pack, pathWithoutRust, platformFolder, repo, serveNative, warnings } from "../../packed.js";

const host = hostPlatform();
const musl = platforms.find((p) => p.name === "linux-x64-musl")!;
const muslSkip = !existsSync(bundledOf(musl))
  ? "the linux-x64-musl binary is not built here (node scripts/build-prebuilt.mjs builds it)"
  : process.platform !== "linux" || process.arch !== "x64"
    ? "loads the x64 musl binary on linux-x64 only"
    : spawnSync("musl-gcc", ["--version"]).status !== 0
      ? "musl-gcc is not installed (apt-get install musl-tools)"
      : false;
const arm64 = platforms.find((p) => p.name === "linux-arm64-gnu")!;
/** Debian's arm64 C and C++ libraries (libc6-arm64-cross, libstdc++6-arm64-cross), which qemu-aarch64 runs an arm64 Node with. */
const arm64Libraries = "/usr/aarch64-linux-gnu";
const arm64Skip = !existsSync(bundledOf(arm64))
  ? "the linux-arm64-gnu binary is not built here (node scripts/build-prebuilt.mjs builds it)"
  : process.platform !== "linux" || process.arch !== "x64"
    ? "runs an arm64 Node under qemu on linux-x64 only"
    : spawnSync("qemu-aarch64", ["--version"]).status !== 0 || !existsSync(join(arm64Libraries, "lib", "libstdc++.so.6"))
      ? "qemu-aarch64 or the arm64 libraries are not installed (apt-get install qemu-user libc6-arm64-cross libstdc++6-arm64-cross)"
      : process.env.COG_NODE_MATRIX === "1"
        ? "checked on CI's first Node (COG_NODE_MATRIX=1): 20 s under emulation for what Node-API keeps the same on every Node"
        : false;
const rootManifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));

test("cog-http carries every platform's binary itself and names no package the registry lacks", () => {
  // Optional dependencies on packages not yet published were skipped without a word, leaving the engine out.
  assert.equal(rootManifest.optionalDependencies, undefined);
  assert.ok(rootManifest.files.includes("prebuilds"), "prebuilds/ is in the package");
  assert.deepEqual([...PREBUILT_PLATFORMS], platforms.map((p) => p.name), "the loader knows the platforms that are built");
  // The slim option: one package per platform, at cog-http's version.
  for (const platform of platforms) {
    const { manifest } = packageOf(platform);
    assert.equal(manifest.name, `@cog-http/native-${platform.name}`);
    assert.equal(manifest.version, rootManifest.version, `${manifest.name}'s version`);
    assert.deepEqual([manifest.os, manifest.cpu, manifest.libc], [[platform.os], [platform.cpu], platform.libc === null ? undefined : [platform.libc]]);
    assert.deepEqual(manifest.files, [manifest.main]);
  }
});

for (const platform of platforms) {
  const binary = bundledOf(platform);
  test(`the ${platform.name} binary is a Node-API module for ${platform.machine}, ${platform.libc ?? platform.os}, leaving libuv to Node`, { skip: !existsSync(binary) && `${relative(repo, binary)} is not built here (node scripts/build-prebuilt.mjs builds it)` }, () => {
    assert.deepEqual(problems(platform, binary), []);
    assert.ok(readFileSync(binary).equals(readFileSync(packageOf(platform).binary)), "the platform package holds the same binary");
  });
}

const hostSkip = host === null ? `no prebuilt engine for ${process.platform}-${process.arch}` : !existsSync(bundledOf(host)) && process.env.COG_NATIVE_REQUIRED !== "1" ? `${relative(repo, bundledOf(host))} is not built here (node scripts/build-prebuilt.mjs --host builds it)` : false;

describe("a fresh project without cargo, installing the packed cog-http alone", { skip: hostSkip }, () => {
  const env = { ...process.env, PATH: pathWithoutRust() };
  delete env.COG_NATIVE_REQUIRED;
  const dir = mkdtempSync(join(tmpdir(), "cog-prebuilt-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let installed: Installed;
  let bundled: string;
  let tarball: string;

  before(() => {
    assert.ok(existsSync(bundledOf(host!)), `${relative(repo, bundledOf(host!))} is missing: run node scripts/build-prebuilt.mjs`);
    tarball = pack(repo, dir);
    // No script runs at an app's install: npm 11 warns about each one (and will skip them).
    assert.deepEqual(Object.keys(manifestOf(tarball).scripts ?? {}).filter((name) => /^((pre|post)?install|prepare)$/.test(name)), []);
    assert.notEqual(spawnSync("cargo", ["--version"], { env }).status, 0, "cargo is still on PATH");
    installed = install(dir, [tarball], { env });
    bundled = join(installed.project, "node_modules", "cog-http", "prebuilds", host!.name, "cog-native.node");
  });

  // CI runs the suite on each supported Node (20 to 26): this checks the install on each.
  test(`npm install succeeds without a warning on Node ${process.version}`, () => {
    assert.equal(installed.status, 0, installed.output);
    assert.deepEqual(warnings(installed.output), []);
  });

  // From Cog's ES module build and from its CommonJS build (dist/cjs, a folder deeper): both find the binary.
  for (const loads of ["import", "require"] as const) {
    test(`it serves on engine "native" from the binary cog-http carries, nothing built from source (${loads})`, () => {
      const { project } = installed;
      assert.ok(!existsSync(join(project, "node_modules", "cog-http", "native", "cog-native.node")), "a build from source was made");
      const answer = serveNative(project, env, undefined, loads);
      assert.deepEqual([answer.status, answer.body, answer.engine], [200, "hello installed", "native"]);
      // The one addon in the process is the carried file.
      assert.deepEqual(answer.addons, [bundled]);
    });
  }

  test("npx cog-build-native, the fallback, has nothing to do", () => {
    const build = spawnSync(process.execPath, [join("node_modules", ".bin", "cog-build-native")], { cwd: installed.project, env, encoding: "utf8", timeout: 300_000 });
    assert.equal(build.status, 0, build.stderr);
    assert.match(build.stdout, new RegExp(`the prebuilt native engine \\(prebuilds/${host!.name}/cog-native\\.node\\) loads here: nothing to build`));
  });

  test('without that binary, "native" names the cause, and "auto" serves on "node" saying why, once', (t) => {
    const { project } = installed;
    const carried = join(project, "node_modules", "cog-http", "prebuilds");
    renameSync(carried, `${carried}.removed`);
    t.after(() => renameSync(`${carried}.removed`, carried));
    writeFileSync(
      join(project, "fallback.mjs"),
      `import { Cog } from "cog-http";
const error = await new Cog({ engine: "native" }).listen(0, "127.0.0.1").then(() => null, (err) => err.message);
const app = new Cog({ engine: "auto" });
app.get("/", (_req, res) => res.send("on " + app.engine));
const { port } = await app.listen(0, "127.0.0.1");
const body = await (await fetch("http://127.0.0.1:" + port + "/")).text();
await app.close();
await app.listen(0, "127.0.0.1");
await app.close();
console.log(JSON.stringify({ error, body }));
`,
    );
    const run = spawnSync(process.execPath, ["fallback.mjs"], { cwd: project, env, encoding: "utf8", timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    const { error, body } = JSON.parse(run.stdout) as { error: string; body: string };
    const cause = `engine "native" is not available on Node ${process.version} (${host!.name}): this copy of cog-http has no binary for ${host!.name} (prebuilds/${host!.name}/cog-native.node is missing: it was packed without it, or removed), no @cog-http/native-${host!.name} is installed, and nothing was built from source. Reinstall cog-http from the registry, or build it from source with Rust`;
    assert.ok(error.startsWith(cause), error);
    assert.equal(body, "on node");
    // One line per listen, on stderr: the app listened twice.
    assert.deepEqual(run.stderr.trim().split("\n"), [`cog: engine "auto" serves on "node", because ${error}`, `cog: engine "auto" serves on "node", because ${error}`]);
  });

  // Which file the loader picks doesn't change with Node's version: checked on CI's first Node.
  test("the platform's own package, the slim option, serves when cog-http carries no binary", { skip: process.env.COG_NODE_MATRIX === "1" && "checked on CI's first Node (COG_NODE_MATRIX=1)" }, (t) => {
    const slim = join(dir, "slim");
    mkdirSync(slim);
    t.after(() => rmSync(slim, { recursive: true, force: true }));
    const { dir: packageDir, manifest } = packageOf(host!);
    const project = install(slim, [tarball, pack(platformFolder(slim, packageDir, manifest.main, bundledOf(host!)), slim)], { env });
    assert.equal(project.status, 0, project.output);
    assert.deepEqual(warnings(project.output), []);
    rmSync(join(project.project, "node_modules", "cog-http", "prebuilds"), { recursive: true });
    const answer = serveNative(project.project, env);
    assert.deepEqual(answer, { status: 200, body: "hello installed", engine: "native", addons: [join(project.project, "node_modules", "@cog-http", `native-${host!.name}`, manifest.main)] });
  });
});

test('on an arm64 Node (under qemu), the linux-arm64-gnu binary cog-http carries serves on engine "native"', { skip: arm64Skip }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), "cog-arm64-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { project, status, output } = install(dir, [pack(repo, dir)]);
  assert.equal(status, 0, output);
  const node = nodeBinary(process.versions.node.split(".")[0], "arm64");
  const answer = serveNative(project, process.env, ["qemu-aarch64", "-L", arm64Libraries, node]);
  assert.deepEqual(answer, { status: 200, body: "hello installed", engine: "native", addons: [join(project, "node_modules", "cog-http", "prebuilds", arm64.name, "cog-native.node")] });
});

// No Node for musl can be had here (none on npm, and Bun's musl build needs a musl libstdc++ that
// Debian lacks), so musl's own dynamic loader loads the binary into a small musl program that
// defines the napi_* and uv_* functions Node would (never called: loading runs no Node-API code).
// What this proves that reading the file does not: every C library function the binary needs is
// in this musl (1.2.3, Alpine 3.17's), and its relocations and initializers run under musl.
test("the linux-x64-musl binary loads under musl's dynamic loader", { skip: muslSkip }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), "cog-musl-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const binary = bundledOf(musl);
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
  const glibc = bundledOf(platforms.find((p) => p.name === "linux-x64-gnu")!);
  if (existsSync(glibc)) assert.match(spawnSync(join(dir, "load"), [glibc], { encoding: "utf8" }).stdout, /ld-linux-x86-64\.so\.2/);
});
