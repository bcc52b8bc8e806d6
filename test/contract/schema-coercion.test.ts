// Params, query and headers arrive as strings: a route's schema gets them coerced to the types it
// declares, whether it is a JSON Schema (TypeBox) or a Standard Schema (zod) — the same route
// answers the same either way.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Type } from "@sinclair/typebox";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { z } from "zod";
import type { Cog } from "../../src/index.js";
import { serve } from "../helpers.js";

const schemas = {
  TypeBox: {
    params: Type.Object({ id: Type.Integer(), slug: Type.String() }),
    query: Type.Object({ page: Type.Optional(Type.Integer()), draft: Type.Optional(Type.Boolean()), ids: Type.Optional(Type.Array(Type.Number())) }),
    headers: Type.Object({ "x-version": Type.Number() }),
  },
  zod: {
    params: z.object({ id: z.number().int(), slug: z.string() }),
    query: z.object({ page: z.number().int().optional(), draft: z.boolean().optional(), ids: z.array(z.number()).optional() }),
    headers: z.object({ "x-version": z.number() }),
  },
};

function routes(app: Cog, schema: (typeof schemas)[keyof typeof schemas]): void {
  app.get("/items/:id/:slug", { schema }, (req, res) =>
    res.json({ params: req.params, query: req.query, version: (req.headers as Record<string, unknown>)["x-version"] }),
  );
}

for (const [kind, schema] of Object.entries(schemas)) {
  describe(`${kind} params, query and headers`, () => {
    test("are coerced to the declared types", async (t) => {
      const { fetch } = await serve(t, (app) => routes(app, schema));
      const res = await fetch("/items/7/tea?page=2&draft=true&ids=3&ids=4.5", { headers: { "x-version": "2" } });
      assert.equal(res.status, 200);
      const answer = await res.json();
      assert.deepEqual(answer.params, { id: 7, slug: "tea" });
      assert.deepEqual({ page: answer.query.page, draft: answer.query.draft, ids: answer.query.ids }, { page: 2, draft: true, ids: [3, 4.5] });
      assert.equal(answer.version, 2);
    });

    test("a single value becomes an array where an array is declared", async (t) => {
      const { fetch } = await serve(t, (app) => routes(app, schema));
      const answer = await (await fetch("/items/7/tea?ids=3", { headers: { "x-version": "1" } })).json();
      assert.deepEqual(answer.query.ids, [3]);
    });

    test("a value that is not of the declared type is refused with 400 naming the field, and the server goes on", async (t) => {
      const { fetch } = await serve(t, (app) => routes(app, schema));
      for (const [url, field] of [
        ["/items/7x/tea", "params /id"],
        ["/items/1.5/tea", "params /id"],
        ["/items/7/tea?page=two", "query /page"],
        ["/items/7/tea?draft=maybe", "query /draft"],
      ]) {
        const res = await fetch(url!, { headers: { "x-version": "1" } });
        assert.equal(res.status, 400, url);
        const answer = await res.json();
        assert.deepEqual(
          answer.validation.map((v: { in: string; path: string }) => `${v.in} ${v.path}`),
          [field],
          `${url}: only the bad field is listed`,
        );
      }
      const noVersion = await fetch("/items/7/tea");
      assert.equal(noVersion.status, 400);
      assert.equal((await noVersion.json()).validation[0].in, "headers");
      assert.equal((await fetch("/items/7/tea", { headers: { "x-version": "3" } })).status, 200);
    });
  });
}

describe("Standard Schemas without a JSON Schema of themselves", () => {
  test("see the strings, as sent: their own coercion applies", async (t) => {
    // A Standard Schema that only validates (no ~standard.jsonSchema), accepting digit strings.
    const digits: StandardSchemaV1<{ id: string }, { id: number }> = {
      "~standard": {
        version: 1,
        vendor: "hand-made",
        validate: (value) => {
          const id = (value as { id?: unknown }).id;
          return typeof id === "string" && /^\d+$/.test(id)
            ? { value: { id: Number(id) } }
            : { issues: [{ message: `expected digits, got ${typeof id}`, path: ["id"] }] };
        },
      },
    };
    const { fetch } = await serve(t, (app) => app.get("/n/:id", { schema: { params: digits } }, (req, res) => res.json(req.params)));
    assert.deepEqual(await (await fetch("/n/42")).json(), { id: 42 });
    assert.equal((await fetch("/n/4x")).status, 400);
  });

  test("zod's own coercion still works on top", async (t) => {
    const { fetch } = await serve(t, (app) =>
      app.get("/d/:when", { schema: { params: z.object({ when: z.coerce.date() }) } }, (req, res) => res.json({ year: req.params.when.getUTCFullYear() })),
    );
    assert.deepEqual(await (await fetch("/d/2024-02-29")).json(), { year: 2024 });
    assert.equal((await fetch("/d/not-a-date")).status, 400);
  });
});
