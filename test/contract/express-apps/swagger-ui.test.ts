// swagger-ui-express, unchanged, on cog-http/express: the documentation page, its init script
// (the OpenAPI document inlined), the assets it serves from swagger-ui-dist with express.static,
// the redirect to the trailing slash, and a per-request document (serveFiles), the same on
// Express 5 from npm and on Cog's engine over real sockets (test/express-pair.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import swaggerUi from "swagger-ui-express";
import { same } from "../../express-pair.js";
import { engine, nativeSkip } from "../../helpers.js";

type Any = any;

const document = {
  openapi: "3.0.3",
  info: { title: "Cats", version: "1.0.0" },
  paths: {
    "/cats/{id}": {
      get: { parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }], responses: { 200: { description: "a cat" } } },
    },
  },
};

describe(`swagger-ui-express on cog-http/express (${engine} engine)`, { skip: engine === "native" && nativeSkip }, () => {
  test("the page, its init script and its assets answer as on Express 5", async () => {
    const answers = await same(
      (app) => {
        app.use(
          "/mine",
          (req: Any, _res: Any, next: () => void) => {
            req.swaggerDoc = { ...document, info: { title: `Cats for ${req.get("x-user")}`, version: "1.0.0" } };
            next();
          },
          swaggerUi.serveFiles(),
          swaggerUi.setup(),
        );
        // Last: swagger-ui-express keeps the init script of its latest `setup` for `serve`.
        app.use("/docs", swaggerUi.serve, swaggerUi.setup(document, { customSiteTitle: "Cats API" }));
      },
      [
        { path: "/docs" },
        { path: "/docs/" },
        { path: "/docs/swagger-ui-init.js" },
        { path: "/docs/swagger-ui.css" },
        { path: "/docs/swagger-ui-bundle.js", headers: { range: "bytes=0-99" } },
        { path: "/docs/favicon-32x32.png" },
        { path: "/docs/package.json" },
        { path: "/docs/nothing-here.js" },
        { path: "/mine/swagger-ui-init.js", headers: { "x-user": "tobi" } },
        { method: "HEAD", path: "/docs/swagger-ui.css" },
      ],
    );
    assert.equal(answers[0]!.status, 301);
    assert.ok(answers[1]!.body.includes("<title>Cats API</title>"));
    assert.ok(answers[2]!.body.includes('"title": "Cats"'));
    assert.ok(answers[3]!.body.includes(".swagger-ui"));
    assert.deepEqual([answers[4]!.status, answers[4]!.body.length], [206, 100]);
    assert.ok(answers[5]!.body.startsWith("\x89PNG"));
    assert.equal(answers[6]!.status, 404);
    assert.equal(answers[7]!.body, answers[1]!.body, "setup answers every other path with the page");
    assert.ok(answers[8]!.body.includes('"title": "Cats for tobi"'));
  });
});
