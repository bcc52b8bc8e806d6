#!/usr/bin/env node
// How long TypeScript takes to check an app of N routes (default 200): schema'd ones, and
// ones whose params are typed from their path, in groups too, so that typed handlers stay cheap
// for editors. Times TypeScript 7 (the `typescript` devDependency) and 5.9 (`typescript-5.9`):
// `node scripts/typecheck-200-routes.mjs [N]`.
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
  const kind = i % 5;
  if (kind === 0) {
    routes.push(
      `app.post("/r${i}/:id", { schema: { params: Type.Object({ id: Type.Integer() }), body: Type.Object({ name: Type.String(), n${i}: Type.Number(), tags: Type.Array(Type.String()) }), response: { 200: Type.Object({ id: Type.Integer(), name: Type.String() }) } } }, (req, res) => res.json({ id: req.params.id, name: req.body.name }));`,
    );
  } else if (kind === 1) {
    routes.push(
      `app.get("/r${i}", { schema: { query: Type.Object({ page: Type.Integer(), q${i}: Type.Optional(Type.String()) }) } }, (req, res) => res.json({ page: req.query.page }));`,
    );
  } else if (kind === 2) {
    routes.push(
      `app.put("/r${i}", { schema: { body: z.object({ title: z.string(), v${i}: z.number() }) } }, (req, res) => res.send({ title: req.body.title }));`,
    );
  } else if (kind === 3) {
    routes.push(`app.get("/r${i}/:slug/files/*", (req, res) => res.send(req.params.slug + req.params["*"]));`);
  } else {
    routes.push(`app.group("/g${i}/:org", (g) => g.get("/repos/:repo", (req, res) => res.send(req.params.org + req.params.repo)));`);
  }
}
// The app imports Cog as a user's project does, through its built declarations (run `npm run
// build` first), with the compiler options of Cog's own tsconfig (strict, NodeNext, skipLibCheck).
const app = (lines) =>
  `import { Type } from "@sinclair/typebox";\nimport { z } from "zod";\nimport { Cog } from "../../dist/index.js";\nconst app = new Cog();\n${lines.join("\n")}\nexport default app;\n`;
writeFileSync(join(dir, "app.ts"), app(routes));
writeFileSync(join(dir, "empty.ts"), app([]));
const config = (file) => ({ extends: "../../tsconfig.json", compilerOptions: { noEmit: true, rootDir: "../..", noUnusedLocals: false }, files: [file] });
writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config("app.ts")));
writeFileSync(join(dir, "tsconfig.empty.json"), JSON.stringify(config("empty.ts")));

/** tsc's own figures: the checking phase (not start-up, parsing or binding) in seconds, and its type instantiations (which load doesn't change). */
function diagnostics(tsc, project) {
  const out = execFileSync(process.execPath, [tsc, "-p", join(dir, project), "--extendedDiagnostics"], { encoding: "utf8" });
  return { check: Number(/Check time:\s+([\d.]+)s/.exec(out)[1]), instantiations: Number(/Instantiations:\s+(\d+)/.exec(out)[1]) };
}

// Median of 3 runs each: this machine's load makes single runs vary by 2x.
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const pkg of ["typescript", "typescript-5.9"]) {
  const tsc = join(root, "node_modules", pkg, "bin", "tsc");
  const tsVersion = execFileSync(process.execPath, [tsc, "--version"], { encoding: "utf8" }).trim();
  const walls = [];
  const checks = [];
  const empties = [];
  let instantiations = 0;
  let emptyInstantiations = 0;
  for (let run = 0; run < 3; run++) {
    const started = process.hrtime.bigint();
    execFileSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { stdio: "inherit" });
    walls.push(Number(process.hrtime.bigint() - started) / 1e9);
    const full = diagnostics(tsc, "tsconfig.json");
    const empty = diagnostics(tsc, "tsconfig.empty.json");
    checks.push(full.check);
    empties.push(empty.check);
    instantiations = full.instantiations;
    emptyInstantiations = empty.instantiations;
  }
  const [wall, check, empty] = [median(walls), median(checks), median(empties)];
  console.log(
    `${tsVersion}: ${count} routes: tsc -p in ${wall.toFixed(2)} s (start-up included); check time ${check.toFixed(2)} s, ` +
      `of which the routes ${(check - empty).toFixed(2)} s (the same app without routes: ${empty.toFixed(2)} s); medians of 3; ` +
      `${instantiations} type instantiations, ${instantiations - emptyInstantiations} for the routes`,
  );
}
