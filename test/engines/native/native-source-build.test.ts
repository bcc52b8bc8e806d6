// The native engine built from source, the fallback where no prebuilt engine fits: cog-http,
// packed with `npm pack`, installed alone into a fresh project on a machine with Rust, its
// prebuilds/ removed (as on a platform Cog ships no binary for), builds with `npx cog-build-native`
// and serves on engine "native", leaving no build folder in node_modules. The build goes to
// CARGO_TARGET_DIR, kept in .cache/ so that CI's runs on each Node recompile only Cog's own crates.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { install, type Installed, pack, repo, serveNative, warnings } from "../../packed.js";

const cargo = spawnSync("cargo", ["--version"]).status === 0;

/** Every folder under `dir` (node_modules included), relative to it. */
function folders(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}

// CI runs the suite once per supported Node; a build with cargo is the same on each, so it is checked on the first.
const skip = !cargo ? "cargo is not installed: the build from source needs Rust" : process.env.COG_NODE_MATRIX === "1" ? "checked on CI's first Node (COG_NODE_MATRIX=1): the build from source doesn't change with Node's version" : false;

describe("cog-http installed where no prebuilt engine fits, built from source", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "cog-source-build-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, CARGO_TARGET_DIR: join(repo, ".cache", "source-build-target") };
  delete env.COG_NATIVE_REQUIRED;
  let installed: Installed;
  const run = (file: string) => spawnSync(process.execPath, [file], { cwd: installed.project, env, encoding: "utf8", timeout: 300_000 });

  before(() => {
    installed = install(dir, [pack(repo, dir)], { env });
    rmSync(join(installed.project, "node_modules", "cog-http", "prebuilds"), { recursive: true, force: true });
  });

  test("npm install succeeds without a warning, the native engine absent", () => {
    assert.equal(installed.status, 0, installed.output);
    assert.deepEqual(warnings(installed.output), []);
    writeFileSync(join(installed.project, "absent.mjs"), 'import { Cog } from "cog-http";\nawait new Cog({ engine: "native" }).listen(0, "127.0.0.1");\n');
    const absent = run("absent.mjs");
    assert.notEqual(absent.status, 0);
    assert.match(absent.stderr, /engine "native" is not available .* npx cog-build-native/);
  });

  test("npx cog-build-native builds it with progress and leaves no build folder in node_modules", () => {
    const built = run(join("node_modules", ".bin", "cog-build-native"));
    assert.equal(built.status, 0, built.stdout + built.stderr);
    assert.match(built.stdout, /building the native engine from source/);
    assert.match(built.stdout, /native engine built in \d+ s/);
    const cog = join(installed.project, "node_modules", "cog-http");
    assert.ok(existsSync(join(cog, "native", "cog-native.node")));
    assert.deepEqual(folders(join(installed.project, "node_modules")).filter((folder) => /(^|\/)target$/.test(folder)), []);
  });

  test('it then serves on engine "native" from that build', () => {
    const answer = serveNative(installed.project, env);
    assert.deepEqual(answer, { status: 200, body: "hello installed", engine: "native", addons: [join(installed.project, "node_modules", "cog-http", "native", "cog-native.node")] });
  });
});
