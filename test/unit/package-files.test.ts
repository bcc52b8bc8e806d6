// packageFile finds a file of the package from any of the three roots one source runs from:
// src/ (tsx), dist/ (the ES module build) and dist/cjs/ (the CommonJS build, a folder deeper).
import assert from "node:assert/strict";
import { test } from "node:test";
import { packageFile } from "../../src/base/package-files.js";

test("a file of the package, from a module in src/, dist/ or dist/cjs/", () => {
  const root = "/app/node_modules/cog-http";
  for (const build of ["src", "dist", "dist/cjs"]) {
    assert.equal(packageFile(`file://${root}/${build}/engines/kit/addon.js`, 2, "native/cog-native.node"), `${root}/native/cog-native.node`, build);
    assert.equal(packageFile(`file://${root}/${build}/otel/instrumentation.js`, 1, "package.json"), `${root}/package.json`, build);
    assert.equal(packageFile(`file://${root}/${build}/index.js`, 0, "package.json"), `${root}/package.json`, build);
  }
});

test("a folder named dist or cjs above the package does not confuse it", () => {
  const root = "/srv/dist/cjs/node_modules/cog-http";
  assert.equal(packageFile(`file://${root}/dist/engines/kit/addon.js`, 2, "prebuilds/x/cog-native.node"), `${root}/prebuilds/x/cog-native.node`);
  assert.equal(packageFile(`file://${root}/dist/cjs/engines/kit/addon.js`, 2, "prebuilds/x/cog-native.node"), `${root}/prebuilds/x/cog-native.node`);
});

test("a path with spaces is a path, not a URL's escapes", () => {
  assert.equal(packageFile("file:///my%20apps/cog-http/dist/cjs/otel/instrumentation.js", 1, "package.json"), "/my apps/cog-http/package.json");
});
