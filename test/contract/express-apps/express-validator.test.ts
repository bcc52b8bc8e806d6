// express-validator, unchanged, on cog-http/express: validation chains on the body, query, params,
// headers and cookies, sanitizers, checkSchema, validationResult and matchedData, the same
// answers on Express 5 from npm and on Cog's engine over real sockets (test/express-pair.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import cookieParser from "cookie-parser";
import { body, checkSchema, cookie, header, matchedData, param, query, validationResult } from "express-validator";
import { same } from "../../express-pair.js";
import { engine, nativeSkip } from "../../helpers.js";

type Any = any;

/** Answers 422 with the errors, or 200 with what was validated. */
function answer(req: Any, res: Any) {
  const result = validationResult(req);
  if (!result.isEmpty()) return res.status(422).json({ errors: result.array() });
  res.json({ data: matchedData(req) });
}

describe(`express-validator on cog-http/express (${engine} engine)`, { skip: engine === "native" && nativeSkip }, () => {
  test("chains, sanitizers, schemas and results answer as on Express 5", async () => {
    const json = { "content-type": "application/json" };
    const answers = await same(
      (app, e) => {
        app.use(e.json());
        app.use(cookieParser());
        app.post(
          "/users",
          body("email").isEmail().normalizeEmail(),
          body("age").isInt({ min: 0, max: 150 }).toInt(),
          body("name").trim().escape().notEmpty().withMessage("a name is needed"),
          answer,
        );
        app.get(
          "/users/:id",
          param("id").isUUID(4),
          query("fields").optional().isIn(["short", "long"]),
          header("x-tenant").isAlphanumeric(),
          cookie("session").optional().isLength({ min: 4 }),
          answer,
        );
        app.put(
          "/items",
          checkSchema({
            title: { in: ["body"], isString: true, isLength: { options: { max: 10 } }, errorMessage: "a short title" },
            tags: { in: ["body"], isArray: { options: { min: 1 } } },
            "tags.*": { in: ["body"], toUpperCase: true },
          }),
          answer,
        );
      },
      [
        { method: "POST", path: "/users", headers: json, body: JSON.stringify({ email: "Tobi@Example.COM", age: "7", name: "  <Tobi>  " }) },
        { method: "POST", path: "/users", headers: json, body: JSON.stringify({ email: "not an email", age: -1, name: "   " }) },
        { path: "/users/0f8fad5b-d9cb-469f-a165-70867728950e?fields=short", headers: { "x-tenant": "acme1", cookie: "session=abcdef" } },
        { path: "/users/42?fields=everything", headers: { "x-tenant": "a-b", cookie: "session=ab" } },
        { method: "PUT", path: "/items", headers: json, body: JSON.stringify({ title: "short", tags: ["a", "b"] }) },
        { method: "PUT", path: "/items", headers: json, body: JSON.stringify({ title: "far too long a title", tags: [] }) },
      ],
    );
    assert.deepEqual(JSON.parse(answers[0]!.body), { data: { email: "tobi@example.com", age: 7, name: "&lt;Tobi&gt;" } });
    assert.equal(answers[1]!.status, 422);
    assert.deepEqual(
      JSON.parse(answers[1]!.body).errors.map((error: Any) => error.path),
      ["email", "age", "name"],
    );
    assert.deepEqual(JSON.parse(answers[2]!.body), {
      data: { id: "0f8fad5b-d9cb-469f-a165-70867728950e", fields: "short", "x-tenant": "acme1", session: "abcdef" },
    });
    assert.deepEqual(
      JSON.parse(answers[3]!.body).errors.map((error: Any) => `${error.location}:${error.path}`),
      ["params:id", "query:fields", "headers:x-tenant", "cookies:session"],
    );
    assert.deepEqual(JSON.parse(answers[4]!.body), { data: { title: "short", tags: ["A", "B"] } });
    assert.equal(answers[5]!.status, 422);
  });
});
