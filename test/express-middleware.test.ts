// Express-style middleware runs unchanged because req/res are Node's own objects.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import cors from "cors";
import helmet from "helmet";
import { serve } from "./helpers.js";

describe("Express middleware", () => {
  test("cors answers preflights and decorates responses, errors included", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.use(cors({ origin: "https://app.example", credentials: true }));
      app.get("/data", (_req, res) => res.json({ ok: true }));
      app.get("/fail", () => {
        throw new Error("x");
      });
    });
    const preflight = await fetch("/data", {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "GET" },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "https://app.example");
    assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /GET/);
    const res = await fetch("/data", { headers: { origin: "https://app.example" } });
    assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example");
    assert.equal(res.headers.get("access-control-allow-credentials"), "true");
    assert.deepEqual(await res.json(), { ok: true });
    const failed = await fetch("/fail", { headers: { origin: "https://app.example" } });
    assert.equal(failed.status, 500);
    assert.equal(failed.headers.get("access-control-allow-origin"), "https://app.example");
  });

  test("helmet sets its security headers beside Cog's own", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.use(helmet());
      app.use((_req, res, next) => {
        res.set("X-Powered-By", "Cog");
        next();
      });
      app.get("/", (_req, res) => res.html("<p>hi</p>"));
    });
    const res = await fetch("/");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'self'/);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(res.headers.get("x-frame-options"), "SAMEORIGIN");
    assert.equal(res.headers.get("x-powered-by"), "Cog");
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(await res.text(), "<p>hi</p>");
  });
});
