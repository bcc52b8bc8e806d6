// The CVE history of this field, one class per test: open redirects, header
// and cookie-attribute injection, path confusion around group prefixes, and
// prototype pollution through every parser that turns input into objects.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { raw, serve, statuses } from "../helpers.js";

describe("redirects", () => {
  test("user input can't make a protocol-relative or header-breaking Location", async (t) => {
    const { fetch } = await serve(t, (app) => app.get("/go", (req, res) => res.redirect(String(req.query.next))));
    const go = (next: string) => fetch(`/go?next=${encodeURIComponent(next)}`, { redirect: "manual" });
    for (const next of ["//evil.example", "/\\evil.example", "\\\\evil.example", "\\/evil.example"]) {
      const res = await go(next);
      assert.equal(res.status, 400, next);
      assert.equal(res.headers.get("location"), null);
      assert.match((await res.json()).message, /Refusing to redirect to the protocol-relative location/);
    }
    // Control characters and spaces are percent-encoded, so no header can be split and no "/\t/" trick works.
    let res = await go("/a\r\nSet-Cookie: x=1");
    assert.equal(res.status, 302);
    assert.equal(res.headers.get("location"), "/a%0D%0ASet-Cookie:%20x=1");
    assert.equal(res.headers.get("set-cookie"), null);
    res = await go("/\t/evil.example");
    assert.equal(res.headers.get("location"), "/%09/evil.example");
    // Already-encoded input stays as it was.
    res = await go("/caf%C3%A9?q=a%20b");
    assert.equal(res.headers.get("location"), "/caf%C3%A9?q=a%20b");
  });
});

describe("cookies", () => {
  test("setCookie refuses names, attributes and options that would inject attributes", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/set", (req, res) => {
        const { name = "n", value = "v", path, domain, sameSite } = req.query as Record<string, string>;
        res.setCookie(name, value, { path, domain, sameSite: sameSite as "lax" | undefined }).send("set");
      });
    });
    const set = (q: string) => fetch(`/set?${q}`);
    // Values are percent-encoded: a ";" can't start an attribute.
    let res = await set(`value=${encodeURIComponent("x; Domain=evil.example")}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("set-cookie"), "n=x%3B%20Domain%3Devil.example; Path=/");
    for (const q of [
      `name=${encodeURIComponent("a;b")}`,
      `name=${encodeURIComponent("a=b")}`,
      `path=${encodeURIComponent("/; Domain=evil.example")}`,
      `domain=${encodeURIComponent("a.example; Secure")}`,
      "sameSite=sideways",
    ]) {
      res = await set(q);
      assert.equal(res.status, 500, q);
      assert.equal(res.headers.get("set-cookie"), null, q);
    }
  });

  test("a malformed or hostile Cookie header never fails a request", async (t) => {
    const { port } = await serve(t, (app) => app.get("/", (req, res) => res.json(req.cookies)));
    for (const header of ["a=%E0%A4%A", "=; ;=;", "__proto__=x; constructor=y", `${"a".repeat(8000)}=1`, 'a="unterminated', "a=1; a=2"]) {
      const answer = await raw(port, `GET / HTTP/1.1\r\nHost: x\r\nCookie: ${header}\r\n\r\n`);
      assert.deepEqual(statuses(answer), [200], header);
    }
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });
});

describe("path confusion", () => {
  test("a group /admin guards exactly its own paths, however the path is spelled", async (t) => {
    const { port, fetch } = await serve(t, (app) => {
      app.use("/admin", (req, res, next) => (req.get("x-admin") === undefined ? res.status(401).send("login first") : next()));
      app.group("/admin", (admin) => admin.get("/secret", (_req, res) => res.send("secret")));
      app.get("/adminx", (_req, res) => res.send("public adminx"));
      app.get("/public/*", (req, res) => res.send(`public ${req.params["*"]}`));
    });
    assert.equal((await fetch("/admin/secret")).status, 401);
    assert.equal(await (await fetch("/adminx")).text(), "public adminx");
    // Whatever reaches the secret must go through the guard; nothing may reach it another way.
    for (const target of [
      "/public/../admin/secret",
      "/public/%2e%2e/admin/secret",
      "/admin/./secret",
      "/public/..%2fadmin%2fsecret",
      "/admin%2fsecret",
      "//admin/secret",
      "/ADMIN/secret",
      "/admin/secret%00",
      "/admin;/secret",
    ]) {
      const answer = await raw(port, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.doesNotMatch(answer, /\r\n\r\nsecret$/, target);
      const status = statuses(answer)[0]!;
      assert.ok(status >= 400 && status < 500, `${target}: ${status}`);
    }
  });

  test("req.ip believes X-Forwarded-For only through trustProxy", async (t) => {
    const route = (app: import("../../src/index.js").Cog) => app.get("/", (req, res) => res.send(req.ip ?? ""));
    const spoofed = { headers: { "x-forwarded-for": "6.6.6.6" } };
    assert.equal(await (await (await serve(t, route)).fetch("/", spoofed)).text(), "127.0.0.1");
    assert.equal(await (await (await serve(t, route, { trustProxy: 1 })).fetch("/", spoofed)).text(), "6.6.6.6");
  });
});

describe("prototype pollution", () => {
  test("JSON, forms, query strings and cookies never reach Object.prototype", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.post("/body", (req, res) => res.json({ type: typeof req.body, keys: Object.keys(req.body ?? {}) }));
      app.get("/query", (req, res) => res.json(Object.keys(req.query)));
      app.get("/cookies", (req, res) => res.json(Object.keys(req.cookies)));
    });
    const json = (body: string) => fetch("/body", { method: "POST", headers: { "content-type": "application/json" }, body });
    assert.equal((await json('{"__proto__":{"polluted":1}}')).status, 400);
    assert.equal((await json('{"a":{"constructor":{"prototype":{"polluted":1}}}}')).status, 400);
    assert.equal((await json('{"a":{"\\u005f_proto__":{"polluted":1}}}')).status, 400);
    assert.equal((await json('[{"\\u0063onstructor":{"prototype":{"polluted":1}}}]')).status, 400);
    assert.equal((await json('\ufeff{"__proto__":{"polluted":1}}')).status, 400);
    // The words alone, as values or inside other keys, are harmless and accepted.
    const harmless = await json('{"protocol":"constructor","\\u0061":"__proto__"}');
    assert.equal(harmless.status, 200);
    assert.deepEqual(await harmless.json(), { type: "object", keys: ["protocol", "a"] });
    const form = await fetch("/body", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "__proto__[polluted]=1&__proto__=1&constructor[prototype][polluted]=1",
    });
    assert.equal(form.status, 200);
    assert.equal((await fetch("/query?__proto__[polluted]=1&__proto__=1&constructor[prototype][polluted]=1")).status, 200);
    assert.equal((await fetch("/cookies", { headers: { cookie: "__proto__=1; constructor=2" } })).status, 200);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, "polluted"), false);
  });
});

describe("content types", () => {
  test("every spelling of a JSON Content-Type is parsed as JSON, so a schema can't be skipped", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.post("/typed", { schema: { body: { type: "object", required: ["n"], properties: { n: { type: "integer" } } } } }, (req, res) => res.json(req.body));
    });
    const post = (type: string, body: string) => fetch("/typed", { method: "POST", headers: { "content-type": type }, body });
    for (const type of [
      "application/json",
      "Application/JSON",
      "application/json; charset=utf-8",
      "application/json;charset=UTF-8",
      "application/json\t; charset=utf-8",
      'application/json; charset="utf-8"',
      "application/problem+json",
    ]) {
      assert.equal((await post(type, '{"n":1}')).status, 200, type);
      assert.equal((await post(type, '{"n":"x"}')).status, 400, type);
    }
    // Anything else either fails the schema (text, forms, octets) or is refused outright.
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/octet-stream",
      "application/json, text/plain",
      "application /json",
      "application/json; charset=latin1",
    ]) {
      const res = await post(type, '{"n":1}');
      assert.ok(res.status === 400 || res.status === 415, `${type}: ${res.status}`);
    }
  });
});
