// cog-http/express's router matches a layer whose path is plain text without its path-to-regexp
// expression (src/express/router.ts, `matchStatic`): held here to router's own layer, which
// matches with that expression, for every kind of layer and many paths.
import assert from "node:assert/strict";
import { test } from "node:test";
import Layer from "router/lib/layer.js";
import { matchStatic, staticPathOf } from "../../src/express/router.js";

type AnyLayer = any;
const LayerClass = Layer as unknown as new (path: string, options: object, fn: () => void) => AnyLayer;

test("a plain-text path matches as router's layer matches it: case, trailing slashes, strict and case-sensitive routing, routes and middleware", () => {
  const paths = ["/", "/a", "/abc", "/abc/", "/abc//", "/a-b.c~d", "/A/Bc", "/users/list", "/x%20y", "//"];
  const pieces = ["", "/", "//", "a", "A", "abc", "ABC", "aBc/", "bc", "/x", "x", "-b.c~d", "/Bc", "%20y", "users", "/LIST", "é", "K", "\u212a", "?q", "/abc"];
  let seed = 11;
  const pick = <T>(list: readonly T[]): T => list[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % list.length]!;
  const inputs = new Set<string>();
  for (const path of paths) {
    inputs.add(path);
    for (const piece of pieces) inputs.add(path + piece).add(path.toUpperCase() + piece);
  }
  for (let i = 0; i < 3000; i++) inputs.add("/" + pick(pieces) + pick(pieces) + pick(pieces));
  let compared = 0;
  for (const path of paths) {
    for (const end of [true, false]) {
      for (const sensitive of [false, true]) {
        for (const strict of end ? [false, true] : [false]) {
          const layer = new LayerClass(path, { sensitive, strict, end }, () => {});
          const at = staticPathOf(layer, end, sensitive, strict);
          // "/" as middleware is router's own shortcut; "//" loosened is empty: both left to router.
          if (at === undefined) {
            assert.ok(layer.slash || path === "//", `${path} is marked static`);
            continue;
          }
          for (const input of inputs) {
            const theirs = layer.match(input) as { path: string } | false;
            assert.equal(
              matchStatic(at, input),
              theirs === false ? null : theirs.path,
              `${JSON.stringify(path)} ${JSON.stringify({ end, sensitive, strict })} on ${JSON.stringify(input)}`,
            );
            compared++;
          }
        }
      }
    }
  }
  assert.ok(compared > 50_000);
});

test("paths with params, wildcards, groups, escapes or characters past ASCII are left to router", () => {
  for (const path of ["/:id", "/*rest", "/a{/b}", "/a\\:b", "/caf\u00e9", "/a(b)"]) {
    let layer: AnyLayer;
    try {
      layer = new LayerClass(path, { sensitive: false, strict: false, end: true }, () => {});
    } catch {
      continue; // path-to-regexp refuses it: router refuses it too
    }
    assert.equal(staticPathOf(layer, true, false, false), undefined, path);
  }
});
