// The loader refuses an addon built for another interface version (a prebuilt platform package
// older than the JavaScript) with a message that says which file, which versions and how to fix
// it, and goes on to the next candidate. Engine-independent: it loads files, serves nothing.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { firstUsable, interfaceMismatch, INTERFACE_VERSION } from "../../../src/engines/kit/addon.js";

const built = fileURLToPath(new URL("../../../native/cog-native.node", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "cog-interface-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A module standing in for an addon: `exports` is its source's export object. */
function standIn(name: string, exports: string): string {
  const file = join(dir, name);
  writeFileSync(file, `module.exports = ${exports};\n`);
  return file;
}

describe("the native addon's interface version", () => {
  test("an addon of another version is refused, saying which file, which version it has and needs, and how to fix it", () => {
    const older = standIn("older.cjs", `{ interfaceVersion: () => ${INTERFACE_VERSION - 1}, uvVersion: () => 0x10000 }`);
    const { addon, failures } = firstUsable([older]);
    assert.equal(addon, null);
    assert.equal(failures.length, 1);
    assert.ok(failures[0]!.startsWith(older), failures[0]);
    assert.match(failures[0]!, new RegExp(`has interface version ${INTERFACE_VERSION - 1}, and this cog-http needs interface version ${INTERFACE_VERSION}`));
    assert.match(failures[0]!, /npx cog-build-native/);
  });

  test("an addon from before interface versions is refused too", () => {
    const ancient = standIn("ancient.cjs", "{ uvVersion: () => 0x10000 }");
    const { addon, failures } = firstUsable([ancient]);
    assert.equal(addon, null);
    assert.match(failures[0]!, /has no interface version \(it predates them\)/);
  });

  test("a prebuilt package's mismatch says to reinstall it or build from source", () => {
    const message = interfaceMismatch({ interfaceVersion: () => INTERFACE_VERSION + 1 }, "/x/node_modules/@cog-http/native-linux-x64-gnu/cog-native.linux-x64-gnu.node", true);
    assert.match(message!, /^\/x\/node_modules\/@cog-http\/native-linux-x64-gnu\/cog-native\.linux-x64-gnu\.node has interface version \d+/);
    assert.match(message!, /reinstall cog-http \(npm install\), so that its prebuilt engine is the same version as its JavaScript, or build the addon from source: npx cog-build-native/);
    assert.equal(interfaceMismatch({ interfaceVersion: () => INTERFACE_VERSION }, "/x.node", true), null);
  });

  test("a binary carried in cog-http's prebuilds/ that doesn't match is a prebuilt one: reinstall, not rebuild", () => {
    const carried = join(dir, "prebuilds", "linux-x64-gnu");
    mkdirSync(carried, { recursive: true });
    writeFileSync(join(carried, "cog-native.node.cjs"), `module.exports = { interfaceVersion: () => ${INTERFACE_VERSION + 1} };\n`);
    const { addon, failures } = firstUsable([join(carried, "cog-native.node.cjs")]);
    assert.equal(addon, null);
    assert.match(failures[0]!, /prebuilds\/linux-x64-gnu\/cog-native\.node\.cjs has interface version \d+, and this cog-http needs interface version \d+: reinstall cog-http \(npm install\)/);
  });

  test("the loader goes on past a refused candidate to the next, and the addon built here speaks this version", { skip: !existsSync(built) && "native/cog-native.node is not built here (node scripts/build-native.mjs)" }, () => {
    const older = standIn("older-first.cjs", `{ interfaceVersion: () => ${INTERFACE_VERSION - 1} }`);
    const { addon, failures } = firstUsable([older, join(dir, "absent.node"), built]);
    assert.ok(addon !== null, `the built addon loads: ${failures.join("; ")}`);
    assert.equal(addon.interfaceVersion!(), INTERFACE_VERSION, "native/addon/src/exports.rs and engines/kit/addon.ts agree");
    assert.equal(typeof addon.respond, "function");
    assert.equal(failures.length, 1, "an absent candidate is no failure");
    assert.ok(failures[0]!.startsWith(older));
  });
});
