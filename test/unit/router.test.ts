import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Router, joinPaths, normalizePattern, prefixCoverage, prefixMatcher } from "../../src/core/router.js";

function router(...patterns: string[]): Router<string> {
  const r = new Router<string>();
  for (const p of patterns) r.add("GET", p, p);
  return r;
}

describe("Router", () => {
  test("finds static paths, ignoring one trailing slash", () => {
    const r = router("/", "/a", "/a/b");
    assert.equal(r.find("GET", "/")?.data, "/");
    assert.equal(r.find("GET", "/a")?.data, "/a");
    assert.equal(r.find("GET", "/a/")?.data, "/a");
    assert.equal(r.find("GET", "/a/b")?.data, "/a/b");
    assert.equal(r.find("GET", "/a/b/c"), null);
    assert.equal(r.find("GET", "/A"), null, "paths are case-sensitive");
  });

  test("captures params and the wildcard rest", () => {
    const r = router("/users/:id", "/users/:id/posts/:post", "/files/*");
    assert.deepEqual(r.find("GET", "/users/42")?.values, ["42"]);
    assert.deepEqual(r.find("GET", "/users/42/posts/7")?.values, ["42", "7"]);
    assert.deepEqual(r.find("GET", "/files/a/b.txt")?.values, ["a/b.txt"]);
    assert.deepEqual(r.find("GET", "/files")?.values, [""]);
    assert.equal(r.find("GET", "/users"), null, "a param never matches an empty segment");
    assert.equal(r.find("GET", "/users//posts/1"), null);
  });

  test("prefers static over param over wildcard, backtracking when a branch fails", () => {
    const r = router("/u/me", "/u/:id", "/u/*", "/u/me/settings", "/u/:id/profile");
    assert.equal(r.find("GET", "/u/me")?.data, "/u/me");
    assert.equal(r.find("GET", "/u/7")?.data, "/u/:id");
    assert.equal(r.find("GET", "/u/me/settings")?.data, "/u/me/settings");
    assert.equal(r.find("GET", "/u/me/profile")?.data, "/u/:id/profile");
    assert.equal(r.find("GET", "/u/7/x/y")?.data, "/u/*");
  });

  test("answers path-without-method with the Allow list, and HEAD from GET", () => {
    const r = new Router<string>();
    r.add("GET", "/x", "get");
    r.add("POST", "/x", "post");
    const miss = r.find("DELETE", "/x");
    assert.equal(miss?.data, null);
    assert.equal(miss?.allow, "GET, HEAD, OPTIONS, POST");
    assert.equal(r.find("HEAD", "/x")?.data, "get");
  });

  test("an explicit HEAD route wins over GET, and ALL matches any method", () => {
    const r = new Router<string>();
    r.add("GET", "/x", "get");
    r.add("HEAD", "/x", "head");
    r.add("*", "/any/:p", "all");
    assert.equal(r.find("HEAD", "/x")?.data, "head");
    assert.equal(r.find("PURGE", "/any/1")?.data, "all");
  });

  test("a dynamic route serves a method a static twin lacks", () => {
    const r = new Router<string>();
    r.add("GET", "/users/me", "me");
    r.add("DELETE", "/users/:id", "delete");
    assert.equal(r.find("DELETE", "/users/me")?.data, "delete");
    assert.equal(r.find("PUT", "/users/me")?.data, null);
  });

  test("refuses duplicate routes, misplaced wildcards and bad param names", () => {
    const r = router("/a");
    assert.throws(() => r.add("GET", "/a", "again"), /registered twice/);
    assert.throws(() => r.add("GET", "/b/*/c", "x"), /last segment/);
    assert.throws(() => r.add("GET", "/b/:1x", "x"), /invalid param name/);
    assert.throws(() => r.add("GET", "/b/:id/:id", "x"), /appears twice/);
  });

  test("normalizes patterns and joins group prefixes", () => {
    assert.equal(normalizePattern(""), "/");
    assert.equal(normalizePattern("a//b/"), "/a/b");
    assert.equal(joinPaths("/admin", "/"), "/admin");
    assert.equal(joinPaths("/", "/x"), "/x");
    assert.equal(joinPaths("/api/", "v1/"), "/api/v1");
  });

  test("decides middleware prefix coverage at registration", () => {
    assert.equal(prefixCoverage("/", "/anything"), "all");
    assert.equal(prefixCoverage("/admin", "/admin"), "all");
    assert.equal(prefixCoverage("/admin", "/admin/x"), "all");
    assert.equal(prefixCoverage("/admin", "/adminx"), "none");
    assert.equal(prefixCoverage("/admin/x", "/admin"), "none");
    assert.equal(prefixCoverage("/admin", "/:section"), "some");
    assert.equal(prefixCoverage("/admin", "/*"), "some");
    assert.equal(prefixCoverage("/users/:id", "/users/:uid/posts"), "all");
  });

  test("checks prefixes per request by whole segments", () => {
    const admin = prefixMatcher("/admin");
    assert.equal(admin("/admin"), true);
    assert.equal(admin("/admin/users"), true);
    assert.equal(admin("/adminx"), false);
    assert.equal(admin("/"), false);
    assert.equal(prefixMatcher("/a.b")("/axb"), false, "literal dots are escaped");
    assert.equal(prefixMatcher("/u/:id")("/u/9/x"), true);
  });
});
