// The timeouts' answers, the same on both engines: the handler timeout goes through the app's
// error format (a custom onError shapes it), and a route's own requestTimeout and bodyLimit
// apply to it alone. (Slow heads and bodies at the app's limits: test/contract/refusals.test.ts.)
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HttpError } from "../../src/index.js";
import { serve } from "../helpers.js";

describe("handlerTimeout's answer", () => {
  test("the default error format: 503, JSON naming handlerTimeout", async (t) => {
    const { fetch } = await serve(t, (app) => app.get("/silent", () => undefined), { handlerTimeout: 150, logErrors: false });
    const res = await fetch("/silent");
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
    assert.deepEqual(await res.json(), { statusCode: 503, error: "Service Unavailable", message: "The server did not answer within handlerTimeout (150 ms)" });
  });

  test("a custom onError shapes it", async (t) => {
    const { fetch } = await serve(
      t,
      (app) => {
        app.get("/silent", () => undefined);
        app.onError((err, _req, res) => {
          const status = err instanceof HttpError ? err.status : 500;
          res.status(status).type("application/problem+json").send(JSON.stringify({ title: "timed out", status, detail: (err as Error).message }));
        });
      },
      { handlerTimeout: 150, logErrors: false },
    );
    const res = await fetch("/silent");
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("content-type"), "application/problem+json");
    assert.deepEqual(await res.json(), { title: "timed out", status: 503, detail: "The server did not answer within handlerTimeout (150 ms)" });
  });
});
