// A CommonJS project uses cog-http with `require` on every supported Node, with and without
// require(esm) (--no-experimental-require-module: as Jest's loader, older bundlers and tools that
// patch `require` see it), and gets Cog's CommonJS build (dist/cjs: docs/decisions/module-systems.md);
// TypeScript types it. The package is linked into a temp project, as `npm install` of a path would.
// test/contract/jest.test.ts runs Jest itself over an app that requires it.
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
const express = require("cog-http/express");
const { CogInstrumentation } = require("cog-http/otel");
new CogInstrumentation().disable();
const { connect } = require("cog-http/connect");
// Nest 12 is ES modules only: cog-http/nest loads where require(esm) does (or with a CommonJS Nest, 11).
let nest;
try {
  nest = typeof require("cog-http/nest").CogExpressAdapter;
} catch (err) {
  nest = err.code + (err.message.includes("@nestjs/") ? " (@nestjs)" : "");
}
const build = require("node:path").relative(require("node:fs").realpathSync("node_modules/cog-http"), require.resolve("cog-http"));
const app = new Cog({ engine: process.env.COG_ENGINE });
app.get("/users/:id", (req, res) => res.json({ id: req.params.id, engine: app.engine }));
app.get("/missing", () => { throw new HttpError(404, "no such thing"); });
const expressApp = express({ engine: process.env.COG_ENGINE });
const users = express.Router();
users.get("/:id", (req, res) => res.json({ user: req.params.id }));
// content-disposition 2 marks its exports __esModule: a default import of it has no create() here.
expressApp.get("/report", (req, res) => res.attachment("report 1.csv").send("a,b"));
expressApp.use(express.json());
expressApp.use("/users", users);
app.listen(0, "127.0.0.1").then(async ({ port }) => {
  const user = await fetch("http://127.0.0.1:" + port + "/users/7");
  const missing = await fetch("http://127.0.0.1:" + port + "/missing");
  await app.close();
  const server = expressApp.listen(0, "127.0.0.1", async () => {
    const viaExpress = await fetch("http://127.0.0.1:" + server.address().port + "/users/8");
    const report = await fetch("http://127.0.0.1:" + server.address().port + "/report");
    const attachment = [report.status, report.headers.get("content-disposition"), report.headers.get("content-type"), await report.text()];
    console.log(JSON.stringify({ build, nest, connect: typeof connect, user: [user.status, await user.json()], missing: missing.status, express: [viaExpress.status, await viaExpress.json()], attachment }));
    server.close();
  });
});
`,
);

describe("require('cog-http') from a CommonJS project", () => {
  for (const major of [20, 22, 24, 26]) {
    for (const requireEsm of [true, false]) {
      const flags = requireEsm ? [] : ["--no-experimental-require-module"];
      test(`serves a request on Node ${major}${requireEsm ? "" : ", without require(esm)"}, without warnings`, () => {
        const run = spawnSync(nodeBinary(major), [...flags, "server.cjs"], {
          cwd: project,
          encoding: "utf8",
          env: { ...process.env, COG_ENGINE: engine },
          timeout: 30_000,
        });
        assert.equal(run.stderr, "", `Node ${major} wrote to stderr`);
        assert.equal(run.status, 0);
        assert.deepEqual(JSON.parse(run.stdout), {
          build: join("dist", "cjs", "index.js"),
          nest: requireEsm ? "function" : "ERR_REQUIRE_ESM (@nestjs)",
          connect: "function",
          user: [200, { id: "7", engine }],
          missing: 404,
          express: [200, { user: "8" }],
          attachment: [200, 'attachment; filename="report 1.csv"', "text/csv; charset=utf-8", "a,b"],
        });
      });
    }
  }
});

// A process that both imports and requires cog-http loads both builds: two copies of Cog (the
// dual package hazard, docs/decisions/module-systems.md). An app answers the other copy's
// HttpError as its own (status, headers, data), on every engine.
writeFileSync(
  join(project, "mixed.mjs"),
  `import { createRequire } from "node:module";
import { Cog, HttpError } from "cog-http";
const required = createRequire(import.meta.url)("cog-http");
const app = new Cog({ engine: process.env.COG_ENGINE, logErrors: false });
app.get("/other-copy", () => { throw new required.HttpError(405, "not here", { headers: { allow: "GET" }, data: { hint: "x" } }); });
const { port } = await app.listen(0, "127.0.0.1");
const res = await fetch("http://127.0.0.1:" + port + "/other-copy");
console.log(JSON.stringify({ sameCog: required.Cog === Cog, sameHttpError: required.HttpError === HttpError, answer: [res.status, res.headers.get("allow"), await res.json()] }));
await app.close();
`,
);

test("a process that imports and requires cog-http has two copies, and each answers the other's HttpError", () => {
  const run = spawnSync(process.execPath, ["mixed.mjs"], { cwd: project, encoding: "utf8", env: { ...process.env, COG_ENGINE: engine }, timeout: 30_000 });
  assert.equal(run.stderr, "");
  assert.deepEqual(JSON.parse(run.stdout), {
    sameCog: false,
    sameHttpError: false,
    answer: [405, "GET", { statusCode: 405, error: "Method Not Allowed", message: "not here", hint: "x" }],
  });
});

// What TypeScript checks and what npm packs don't depend on the engine: once is enough.
const typesSkip = engine === "node" ? false : "type checks run once, on the node engine's pass";

test("the packed package holds every file its exports name", { skip: typesSkip }, () => {
  const packed = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, encoding: "utf8" })) as Array<{
    files: Array<{ path: string }>;
  }>;
  const files = new Set(packed[0]!.files.map((f) => f.path));
  const exported = JSON.stringify(Object.values(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).exports));
  const targets = [...exported.matchAll(/"\.\/([^"]+)"/g)].map((m) => m[1]!);
  for (const entry of ["types/require.d.cts", "dist/cjs/index.js", "dist/index.js", "types/otel.d.cts", "dist/otel/index.js", "dist/cjs/express/index.js"])
    assert.ok(targets.includes(entry), exported);
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
import otel = require("cog-http/otel");
new otel.CogInstrumentation({ enabled: false });
export = app;
`,
  );
  // require("cog-http/express") is the express function, typed (not `any`): its apps' handlers too.
  writeFileSync(
    join(project, "express.cts"),
    `import express = require("cog-http/express");
const app = express();
app.use(express.json());
app.get("/users/:id", (req, res) => {
  const id: string = req.params.id;
  // @ts-expect-error -- no such method on a response
  res.jsonn({ id });
  res.json({ id });
});
const router = express.Router();
router.post("/", (req, res, next) => (req.body ? res.status(201).end() : next()));
app.use("/things", router);
// @ts-expect-error -- a function, not a number
const wrong: number = express;
void wrong;
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
        writeFileSync(
          config,
          JSON.stringify({
            compilerOptions: { module, strict: true, noEmit: true, types: ["node"], typeRoots, ...extra },
            files: ["app.cts", "app.mts", "express.cts"],
          }),
        );
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
