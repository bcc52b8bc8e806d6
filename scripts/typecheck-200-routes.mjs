#!/usr/bin/env node
// How long TypeScript takes to check an app of N schema'd routes (default 200),
// so that typed handlers stay cheap for editors: `node scripts/typecheck-200-routes.mjs [N]`.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const count = Number(process.argv[2] ?? 200);
const dir = join(root, ".cache", "typecheck-routes");
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const routes = [];
for (let i = 0; i < count; i++) {
  const kind = i % 4;
  if (kind === 0) {
    routes.push(`app.post("/r${i}/:id", { schema: { params: Type.Object({ id: Type.Integer() }), body: Type.Object({ name: Type.String(), n${i}: Type.Number(), tags: Type.Array(Type.String()) }), response: { 200: Type.Object({ id: Type.Integer(), name: Type.String() }) } } }, (req, res) => res.json({ id: req.params.id, name: req.body.name }));`);
  } else if (kind === 1) {
    routes.push(`app.get("/r${i}", { schema: { query: Type.Object({ page: Type.Integer(), q${i}: Type.Optional(Type.String()) }) } }, (req, res) => res.json({ page: req.query.page }));`);
  } else if (kind === 2) {
    routes.push(`app.put("/r${i}", { schema: { body: z.object({ title: z.string(), v${i}: z.number() }) } }, (req, res) => res.send({ title: req.body.title }));`);
  } else {
    routes.push(`app.get("/r${i}/:slug", (req, res) => res.send(req.params.slug));`);
  }
}
writeFileSync(
  join(dir, "app.ts"),
  `import { Type } from "@sinclair/typebox";\nimport { z } from "zod";\nimport { Cog } from "../../src/index.js";\nconst app = new Cog();\n${routes.join("\n")}\nexport default app;\n`,
);
writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: "../../tsconfig.json", compilerOptions: { noEmit: true, rootDir: "../..", noUnusedLocals: false }, include: ["app.ts"] }));

const tsc = join(root, "node_modules", ".bin", "tsc");
const started = process.hrtime.bigint();
execFileSync(tsc, ["-p", join(dir, "tsconfig.json")], { stdio: "inherit" });
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const tsVersion = execFileSync(tsc, ["--version"], { encoding: "utf8" }).trim();
console.log(`${count} routes type-checked in ${seconds.toFixed(2)} s (${tsVersion}, including tsc start-up)`);
