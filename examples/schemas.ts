// Route schemas: one declaration validates the input, types the handler,
// serializes the output and documents the route (GET /openapi.json).
// Run: npx tsx examples/schemas.ts
import { Type } from "@sinclair/typebox";
import { Cog } from "cog-http";

export const app = new Cog();

const users = new Map([[1, { id: 1, name: "Ada", email: "ada@example.com", password: "hunter2" }]]);

app.put(
  "/users/:id",
  {
    schema: {
      summary: "Update a user",
      params: Type.Object({ id: Type.Integer() }),
      body: Type.Object({ name: Type.String({ minLength: 1 }), email: Type.String({ format: "email" }) }),
      response: { 200: Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() }) },
    },
  },
  (req, res) => {
    const id = req.params.id; // number, coerced from the path
    const user = { ...users.get(id), id, ...req.body, password: "kept on the server" };
    users.set(id, user);
    res.json(user); // the response schema writes id, name and email only: the password never leaves
  },
);

app.get("/openapi.json", (_req, res) => res.json(app.openapi({ title: "Users", version: "1.0.0" })));

if (process.argv[1]?.endsWith("schemas.ts")) {
  await app.listen(3000, "127.0.0.1");
  console.log("Listening on http://127.0.0.1:3000 (try GET /openapi.json)");
}
