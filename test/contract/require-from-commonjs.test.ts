// A CommonJS project uses cog-http with `require` on every supported Node (Node loads Cog's ES
// module through require(esm): docs/decisions/module-systems.md), and TypeScript types it.
// The package is linked into a temp project, as `npm install` of a path would.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, test } from "node:test";
import { nodeBinary } from "../../scripts/node-binary.mjs";
import { engine } from "../helpers.js";

const root = resolve(".");
const project = mkdtempSync(join(tmpdir(), "cog-cjs-"));
after(() => rmSync(project, { recursive: true, force: true }));
// No "type" field: .js files here are CommonJS, as in any project that predates ES modules.
writeFileSync(join(project, "package.json"), JSON.stringify({ name: "cjs-consumer", private: true }));
mkdirSync(join(project, "node_modules"));
symlinkSync(root, join(project, "node_modules", "cog-http"), "dir");

writeFileSync(
  join(project, "server.cjs"),
  `const { Cog, HttpError } = require("cog-http");
const app = new Cog({ engine: process.env.COG_ENGINE });
app.get("/users/:id", (req, res) => res.json({ id: req.params.id, engine: app.engine }));
app.get("/missing", () => { throw new HttpError(404, "no such thing"); });
app.listen(0, "127.0.0.1").then(async ({ port }) => {
  const user = await fetch("http://127.0.0.1:" + port + "/users/7");
  const missing = await fetch("http://127.0.0.1:" + port + "/missing");
  console.log(JSON.stringify({ user: [user.status, await user.json()], missing: missing.status }));
  await app.close();
});
`,
);

describe("require('cog-http') from a CommonJS project", () => {
  for (const major of [20, 22, 24, 26]) {
    test(`serves a request on Node ${major}, without warnings`, () => {
      const run = spawnSync(nodeBinary(major), ["server.cjs"], { cwd: project, encoding: "utf8", env: { ...process.env, COG_ENGINE: engine }, timeout: 30_000 });
      assert.equal(run.stderr, "", `Node ${major} wrote to stderr`);
      assert.equal(run.status, 0);
      assert.deepEqual(JSON.parse(run.stdout), { user: [200, { id: "7", engine }], missing: 404 });
    });
  }
});

// What TypeScript checks and what npm packs don't depend on the engine: once is enough.
const typesSkip = engine === "node" ? false : "type checks run once, on the node engine's pass";

test("the packed package holds every file its exports name", { skip: typesSkip }, () => {
  const packed = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, encoding: "utf8" })) as Array<{ files: Array<{ path: string }> }>;
  const files = new Set(packed[0]!.files.map((f) => f.path));
  const exported = JSON.stringify(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).exports["."]);
  const targets = [...exported.matchAll(/"\.\/([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(targets.includes("types/require.d.cts") && targets.includes("dist/index.js"), exported);
  for (const target of targets) assert.ok(files.has(target), `npm pack leaves out ${target}`);
});

describe("a CommonJS TypeScript project (.cts) gets cog-http's types", { skip: typesSkip }, () => {
  writeFileSync(
    join(project, "app.cts"),
    `import cog = require("cog-http");
const app = new cog.Cog();
app.get("/users/:id", (req, res) => {
  const id: string = req.params.id;
  // @ts-expect-error -- no such param in the path
  void req.params.idd;
  res.json({ id });
});
app.onError((err, _req, res) => res.status(err instanceof cog.HttpError ? err.status : 500).send(String(err)));
// Per-request state the project declares (in app.mts) is typed here too.
app.use((req, res, next) => {
  req.tenant = "acme";
  res.locals.user = { id: 1, name: req.tenant };
  // @ts-expect-error -- user is declared with an id and a name
  res.locals.user = { nom: "x" };
  next();
});
export = app;
`,
  );
  // The project's ES module declares the state its middleware adds, as a Fastify app would.
  writeFileSync(
    join(project, "app.mts"),
    `import { Cog, type Handler, type Request } from "cog-http";
interface User { id: number; name: string }
declare module "cog-http" {
  interface Locals { user: User }
  interface Request { tenant: string }
  interface Response { render(view: string): void }
}
const app = new Cog();
app.use((req, res, next) => {
  req.tenant = "acme";
  res.locals.user = { id: 1, name: "Ada" };
  res.render = (view) => void res.send(view);
  next();
});
app.get("/me/:id", (req, res) => {
  const tenant: string = req.tenant;
  const user: User = res.locals.user;
  // @ts-expect-error -- declared as a string
  const n: number = req.tenant;
  // @ts-expect-error -- a typo of declared state is caught
  void res.locals.user.nmae;
  void n;
  res.render(tenant + user.name + req.params.id);
});
const typed: Handler = (req: Request, res) => res.json({ tenant: req.tenant, user: res.locals.user });
app.get("/typed", typed);
export { app };
`,
  );
  const typeRoots = [join(root, "node_modules", "@types")];
  const compilers = { "TypeScript 7": "typescript", "TypeScript 5.9": "typescript-5.9" };
  // node16 treats the .cts's require as CommonJS-only: the package's CommonJS-format types entry answers it.
  const modules = { nodenext: {}, node16: { skipLibCheck: true } };
  for (const [label, pkg] of Object.entries(compilers)) {
    for (const [module, extra] of Object.entries(modules)) {
      test(`${label}, module ${module}`, () => {
        const config = join(project, `tsconfig.${module}.json`);
        writeFileSync(config, JSON.stringify({ compilerOptions: { module, strict: true, noEmit: true, types: ["node"], typeRoots, ...extra }, files: ["app.cts", "app.mts"] }));
        const tsc = join(root, "node_modules", pkg, "bin", "tsc");
        const version = JSON.parse(readFileSync(join(root, "node_modules", pkg, "package.json"), "utf8")).version as string;
        assert.match(version, label.endsWith("7") ? /^7\./ : /^5\.9\./);
        try {
          execFileSync(process.execPath, [tsc, "-p", config], { cwd: project, encoding: "utf8" });
        } catch (err) {
          assert.fail(`tsc ${version} (module ${module}) refused the CommonJS consumer:\n${(err as { stdout: string }).stdout}`);
        }
      });
    }
  }
});
