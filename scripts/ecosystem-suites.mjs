#!/usr/bin/env node
// Runs the Express ecosystem's own test suites (express-session, multer, cors, morgan…) three
// ways: on Express 5 from npm (the baseline), and on cog-http/express on Cog's node and native
// engines; prints passed/failed per suite per way, and the tests that pass on Express but fail
// on Cog (the differences). Suites are fetched and run in a cache folder, never committed.
//
//   npm run build
//   node scripts/ecosystem-suites.mjs [suite…] [--way express|node|native]… [--cache <dir>]
//        [--source <git url or directory template>] [--json <file>] [--errors]
//
// Each suite is checked out at the commit in SUITES (below), from
// https://github.com/{owner}/{name}.git: --source changes that template (a local git directory
// such as /mirrors/{owner}+{name}.git is read with `git archive`), and `--source npm` takes the
// published tarball instead, for the suites that ship their tests (express-fileupload,
// express-http-proxy). It goes in <cache>/<suite> (default $TMPDIR/cog-ecosystem-suites: not
// under a dot-folder, whose files `send` refuses to serve), with its devDependencies installed
// by npm (Express pinned to 5.2.1; linters, formatters and coverage tools left out). Then, per
// way, node_modules/express is Express itself, or a package whose main loads cog-http/express
// (this repository's CommonJS build), and scripts/ecosystem-suites/serve.cjs is loaded in every
// process the runner starts: it serves each app a test hands to http.createServer (or
// app.listen) on the way's engine, and (per suite) mounts a plain listener in an app of that
// express first. Exit code 1 when there is a difference.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The suites: where each is, the commit run (its release's), how its tests run.
 * runner: mocha | jest | vitest | node-test; args: the runner's arguments (its own script's);
 * pin: devDependencies installed at another version than the suite's;
 * plain: mount the plain listeners its tests serve in an app (suites that test middleware on
 * bare node:http); setup: commands (or functions of the folder) run once after installing;
 * each: commands run before every way's run (the suite's own `pretest`: fixtures that a run
 * moves or deletes made fresh for the next); env: the runner's environment.
 */
export const SUITES = [
  {
    name: "express-session",
    repo: "expressjs/session",
    version: "1.19.0",
    commit: "2c9512fb790e4bf80b3b62305eb8078028607785",
    runner: "mocha",
    args: ["--require", "test/support/env", "--check-leaks", "--exit", "test/"],
    plain: true,
    setup: [["sh", "test/support/gencert.sh"]],
  },
  {
    name: "multer",
    repo: "expressjs/multer",
    version: "2.1.1",
    commit: "0adb21d0294fe7315344feb6ddee00b0666d9e8a",
    runner: "mocha",
    args: ["--exit", "--check-leaks", "test/"],
    plain: true,
  },
  {
    name: "cors",
    repo: "expressjs/cors",
    version: "2.8.6",
    commit: "5317ebe670db2aaebc1d496eb5d33493deefb3ed",
    runner: "mocha",
    args: ["--require", "test/support/env", "--exit"],
    plain: true,
  },
  {
    name: "express-rate-limit",
    repo: "express-rate-limit/express-rate-limit",
    version: "8.6.2",
    commit: "3828a5b61c90e3134451ab32e88e61072dbf19f5",
    runner: "jest",
    args: [],
    plain: true,
    env: { NODE_OPTIONS: "--experimental-vm-modules" },
    // ES modules out of ts-jest (the tsconfig it extends says so only in a version npm lacks), compiled file by file.
    setup: [(dir) => editJson(join(dir, "tsconfig.json"), (t) => Object.assign(t.compilerOptions, { module: "es2022", isolatedModules: true }))],
  },
  {
    name: "http-proxy-middleware",
    repo: "chimurai/http-proxy-middleware",
    version: "4.2.0",
    commit: "014a19804c2f55fefdbe6c336d4be510ba64b073",
    runner: "vitest",
    args: [],
    plain: false,
  },
  {
    name: "express-http-proxy",
    repo: "villadora/express-http-proxy",
    version: "2.1.2",
    commit: "e2aeb522d734645cd9a13eaee3b80795d46f3d14",
    runner: "mocha",
    args: ["test", "--recursive", "--exit"],
    plain: false,
  },
  {
    name: "morgan",
    repo: "expressjs/morgan",
    version: "1.10.1",
    commit: "203c75852adadcc5e3a9ba23b0ef07a8e81c5af7",
    runner: "mocha",
    args: ["--check-leaks", "--exit"],
    plain: true,
  },
  {
    name: "connect-timeout",
    repo: "expressjs/timeout",
    version: "1.9.1",
    commit: "7377defb5b7b5a9c3d50fabd42c4dd46ad175d13",
    runner: "mocha",
    args: ["--check-leaks", "--exit", "test/"],
    plain: true,
  },
  {
    name: "express-fileupload",
    repo: "richardgirges/express-fileupload",
    version: "1.5.2",
    commit: "20269154bb9aab9672e7ff7ca500349e5d23fb5c",
    runner: "mocha",
    args: ["--exit"],
    plain: true,
    each: [["node", "test/pretests.js"]],
  },
  {
    name: "helmet",
    repo: "helmetjs/helmet",
    version: "8.3.0",
    commit: "15250cfb1f22334582ed77e1e1b1e580ce2d7134",
    runner: "node-test",
    args: ["test/*.test.ts"],
    plain: true,
  },
  {
    name: "express-openapi-validator",
    repo: "cdimascio/express-openapi-validator",
    version: "5.6.2",
    commit: "c17d005f1e467bac1461e91c535a37a34bb10e32",
    runner: "mocha",
    args: ["-r", "source-map-support/register", "-r", "ts-node/register", "--files", "--recursive", "--exit", "test/**/*.spec.ts", "test/*.spec.ts"],
    plain: false,
    env: { TS_NODE_TRANSPILE_ONLY: "true" },
    // Its tests read YAML with js-yaml 3, which came with the coverage tools left out.
    pin: { "js-yaml": "^3.14.1" },
  },
  {
    name: "json-server",
    repo: "typicode/json-server",
    version: "0.17.4",
    commit: "78ea71375666d49145734689c097654c54f90686",
    ref: "v0.17.4",
    runner: "jest",
    args: [],
    plain: false,
    env: { NODE_ENV: "test" },
    // Jest 26 knows no "node:" modules, which cog-http's CommonJS build requires (as Express 5's own packages do).
    pin: { jest: "^29.7.0" },
    setup: [["node", "node_modules/@babel/cli/bin/babel.js", "src", "-d", "lib"]],
  },
];

const WAYS = ["express", "node", "native"];
const EXPRESS_VERSION = "5.2.1";
// What a test run needs none of: linters, formatters, coverage, release and docs tools.
const LEFT_OUT =
  /^(eslint|@eslint\/|eslint-|typescript-eslint|prettier|@express-rate-limit\/prettier|@biomejs\/|oxfmt|standard$|husky|lint-staged|@commitlint\/|commitizen|nyc|coveralls|@istanbuljs\/|@vitest\/coverage|mintlify|pkg-pr-new|markdown-toc|dts-bundle-generator|del-cli|rollup|@rollup\/|node-zopfli|@types\/node-zopfli|nodemon|cspell)/;
const RUN_TIMEOUT = 20 * 60_000;

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const here = join(root, "scripts", "ecosystem-suites");

function main() {
  const args = process.argv.slice(2);
  const option = (name) => args.flatMap((a, i) => (a === name ? [args[i + 1]] : []));
  const valued = new Set(["--way", "--cache", "--source", "--json"]);
  const names = args.filter((a, i) => !a.startsWith("--") && !valued.has(args[i - 1]));
  if (args.includes("--help")) {
    const lines = readFileSync(fileURLToPath(import.meta.url), "utf8")
      .split("\n")
      .slice(1);
    console.log(
      lines
        .slice(
          0,
          lines.findIndex((l) => !l.startsWith("//")),
        )
        .map((l) => l.replace(/^\/\/ ?/, ""))
        .join("\n"),
    );
    console.log(`suites: ${SUITES.map((s) => s.name).join(", ")}`);
    return;
  }
  const unknown = names.filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`no suite named ${unknown.join(", ")}; the suites: ${SUITES.map((s) => s.name).join(", ")}`);
  const ways = option("--way");
  for (const w of ways) if (!WAYS.includes(w)) throw new Error(`--way is one of ${WAYS.join(", ")}; got ${w}`);
  if (ways.length === 0) ways.push(...WAYS);
  // Not under a folder whose name starts with a dot: `send` (res.sendFile, static) refuses such paths.
  const cache = resolve(option("--cache")[0] ?? join(tmpdir(), "cog-ecosystem-suites"));
  const source = option("--source")[0] ?? "https://github.com/{owner}/{name}.git";
  const showErrors = args.includes("--errors");
  if (!existsSync(join(root, "dist", "cjs", "express", "index.js"))) throw new Error("build first: npm run build");

  const summary = [];
  for (const suite of SUITES.filter((s) => names.length === 0 || names.includes(s.name))) {
    const dir = join(cache, source === "npm" ? `${suite.name}-npm` : suite.name);
    try {
      checkout(suite, dir, source, cache);
      install(suite, dir);
    } catch (err) {
      console.log(`${suite.name}: not run: ${err.message.split("\n").slice(0, 6).join(" ")}`);
      continue;
    }
    const results = {};
    for (const way of ways) {
      results[way] = runWay(suite, dir, way);
      const c = count(results[way]);
      console.log(
        `${suite.name} ${suite.version} on ${label(way)}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped${results[way].note ? ` (${results[way].note})` : ""}`,
      );
    }
    const differences = {};
    if (results.express !== undefined) {
      for (const way of ways.filter((w) => w !== "express")) {
        differences[way] = Object.keys(results.express.tests).filter(
          (name) => results.express.tests[name].state === "passed" && results[way].tests[name]?.state !== "passed",
        );
        for (const name of differences[way]) {
          const t = results[way].tests[name];
          console.log(`  ✗ ${way}: ${name}${t === undefined ? " (not run)" : showErrors && t.error ? `\n      ${t.error}` : ""}`);
        }
      }
    }
    summary.push({
      suite: suite.name,
      version: suite.version,
      commit: suite.commit,
      ways: Object.fromEntries(Object.entries(results).map(([w, r]) => [w, { ...count(r), note: r.note }])),
      differences,
      tests: Object.fromEntries(Object.entries(results).map(([w, r]) => [w, r.tests])),
    });
  }

  console.log(`\n| suite | ${ways.map(label).join(" | ")} | differences |`);
  console.log(`| ----- | ${ways.map(() => "---").join(" | ")} | --- |`);
  for (const s of summary) {
    const cells = ways.map((w) => `${s.ways[w].passed} / ${s.ways[w].failed}`);
    const diffs = Object.entries(s.differences)
      .map(([w, d]) => `${w} ${d.length}`)
      .join(", ");
    console.log(`| ${s.suite} ${s.version} | ${cells.join(" | ")} | ${diffs} |`);
  }
  console.log("(passed / failed)");
  const json = option("--json")[0];
  if (json !== undefined) writeFileSync(json, JSON.stringify({ date: new Date().toISOString().slice(0, 10), node: process.version, suites: summary }, null, 2));
  process.exitCode = summary.some((s) => Object.values(s.differences).some((d) => d.length > 0)) ? 1 : 0;
}

function label(way) {
  return way === "express" ? `Express ${EXPRESS_VERSION}` : `cog ${way}`;
}

function count(result) {
  const c = { passed: 0, failed: 0, skipped: 0 };
  for (const t of Object.values(result.tests)) c[t.state]++;
  return c;
}

function run(cmd, args, options) {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "pipe"], ...options });
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(" ")} (in ${options?.cwd ?? "."}) exited ${r.status ?? r.signal}:\n${r.stdout?.slice(-3000)}\n${r.stderr?.slice(-3000)}`,
    );
  return r.stdout;
}

/** The suite's files at its commit, in `dir` (kept while the commit is the same). */
function checkout(suite, dir, source, cache) {
  const stamp = join(dir, ".cog-ecosystem-commit");
  const want = source === "npm" ? `npm:${suite.version}` : suite.commit;
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === want) return;
  if (source === "npm") {
    // The published tarball: its tests, where it ships them (express-fileupload and
    // express-http-proxy do; most leave them out).
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const packed = run("npm", ["pack", `${suite.name}@${suite.version}`, "--pack-destination", dir, "--loglevel=error"], { cwd: dir })
      .trim()
      .split("\n")
      .pop();
    run("tar", ["-xzf", join(dir, packed), "-C", dir, "--strip-components=1"]);
    rmSync(join(dir, packed));
    if (!existsSync(join(dir, "test")))
      throw new Error(`${suite.name}@${suite.version} on npm has no tests: fetch its repository instead (without --source npm)`);
    writeFileSync(stamp, want);
    return;
  }
  const [owner, name] = suite.repo.split("/");
  const where = source.replaceAll("{owner}", owner).replaceAll("{name}", name);
  let gitDir = where;
  if (!existsSync(where)) {
    gitDir = join(cache, ".git", `${owner}+${name}.git`);
    if (!existsSync(gitDir)) run("git", ["clone", "--bare", "--filter=blob:none", where, gitDir]);
    else run("git", ["--git-dir", gitDir, "fetch", "--tags", "origin"]);
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync("git", ["--git-dir", gitDir, "archive", "--format=tar", suite.commit], { maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${suite.commit} of ${suite.repo}: ${archive.stderr}`);
  spawnSync("tar", ["-x", "-C", dir], { input: archive.stdout });
  writeFileSync(stamp, suite.commit);
}

/** The suite's devDependencies (Express 5 as `express`), and the two packages each way swaps in. */
function install(suite, dir) {
  const stamp = join(dir, ".cog-ecosystem-installed");
  if (existsSync(stamp)) return;
  const pkgPath = join(dir, "package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  for (const field of ["dependencies", "devDependencies"]) {
    for (const dep of Object.keys(pkg[field] ?? {})) if (LEFT_OUT.test(dep)) delete pkg[field][dep];
  }
  if (pkg.dependencies?.express !== undefined) pkg.dependencies.express = EXPRESS_VERSION;
  else (pkg.devDependencies ??= {}).express = EXPRESS_VERSION;
  for (const [dep, version] of Object.entries(suite.pin ?? {})) (pkg.devDependencies ??= {})[dep] = version;
  delete pkg.scripts?.prepare;
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
  console.log(`${suite.name}: npm install…`);
  // A version the suite pins that the registry does not serve (yet): its latest instead.
  for (let tries = 0; ; tries++) {
    try {
      run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--legacy-peer-deps", "--loglevel=error"], { cwd: dir });
      break;
    } catch (err) {
      const missing = /No matching version found for (@?[^@\s]+)@/.exec(err.message)?.[1];
      if (missing === undefined || tries === 5) throw err;
      for (const field of ["dependencies", "devDependencies"]) if (pkg[field]?.[missing] !== undefined) pkg[field][missing] = "latest";
      console.log(`${suite.name}: ${missing} as pinned is not on the registry; its latest instead`);
      writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
    }
  }
  for (const step of suite.setup ?? []) {
    if (typeof step === "function") step(dir);
    else run(step[0], step.slice(1), { cwd: dir });
  }
  // The two expresses: Express's own package, and one that is cog-http/express.
  const keep = join(dir, "node_modules", ".cog-ecosystem");
  rmSync(keep, { recursive: true, force: true });
  mkdirSync(keep, { recursive: true });
  renameSync(join(dir, "node_modules", "express"), join(keep, "express"));
  const shim = join(keep, "cog");
  mkdirSync(shim);
  writeFileSync(join(shim, "package.json"), JSON.stringify({ name: "express", version: `${EXPRESS_VERSION}-cog`, main: "index.js" }, null, 2));
  writeFileSync(stamp, "");
}

/** One way's run: node_modules/express swapped in, the runner started with the serving hook. */
function runWay(suite, dir, way) {
  const target = join(dir, "node_modules", "express");
  rmSync(target, { recursive: true, force: true });
  cpSync(join(dir, "node_modules", ".cog-ecosystem", way === "express" ? "express" : "cog"), target, { recursive: true });
  // Written for each run: the cache may have been installed by another checkout of cog-http.
  if (way !== "express")
    writeFileSync(
      join(target, "index.js"),
      `'use strict';\n// cog-http/express in Express's place (scripts/ecosystem-suites.mjs).\nmodule.exports = require(${JSON.stringify(join(root, "dist", "cjs", "express", "index.js"))});\n`,
    );
  const report = join(dir, `.cog-ecosystem-${way}.json`);
  rmSync(report, { force: true });
  const hook = join(here, "serve.cjs");
  const env = {
    ...process.env,
    ...suite.env,
    NODE_OPTIONS: [suite.env?.NODE_OPTIONS, `--require ${hook}`].filter(Boolean).join(" "),
    COG_ECOSYSTEM_WAY: way,
    COG_ECOSYSTEM_EXPRESS: way === "express" ? join(target, "index.js") : join(root, "dist", "cjs", "express", "index.js"),
    COG_ECOSYSTEM_PLAIN: suite.plain ? "1" : "0",
    COG_ECOSYSTEM_REPORT: report,
  };
  for (const step of suite.each ?? []) run(step[0], step.slice(1), { cwd: dir });
  let cmd;
  if (suite.runner === "mocha") cmd = [bin(dir, "mocha"), "--reporter", join(here, "mocha-reporter.cjs"), ...suite.args];
  else if (suite.runner === "jest")
    cmd = [bin(dir, "jest"), "--runInBand", "--ci", "--coverage=false", "--json", `--outputFile=${report}`, `--setupFiles=${hook}`, ...suite.args];
  else if (suite.runner === "vitest") cmd = [bin(dir, "vitest"), "run", "--maxWorkers=1", "--reporter=json", `--outputFile=${report}`, ...suite.args];
  else
    cmd = [
      bin(dir, "tsx"),
      "--test",
      `--test-reporter=${join(here, "node-test-reporter.mjs")}`,
      `--test-reporter-destination=${report}`,
      ...expand(dir, suite.args),
    ];
  const r = spawnSync(process.execPath, cmd, { cwd: dir, env, encoding: "utf8", maxBuffer: 1 << 28, timeout: RUN_TIMEOUT, killSignal: "SIGKILL" });
  const tests = {};
  let note;
  if (r.error?.code === "ETIMEDOUT" || r.signal === "SIGKILL") note = `stopped after ${RUN_TIMEOUT / 60_000} minutes`;
  if (existsSync(report)) {
    if (suite.runner === "jest" || suite.runner === "vitest") {
      const json = JSON.parse(readFileSync(report, "utf8"));
      for (const file of json.testResults) {
        const rel = file.name.slice(dir.length + 1);
        for (const a of file.assertionResults) {
          const state = a.status === "passed" ? "passed" : a.status === "failed" ? "failed" : "skipped";
          tests[`${rel}: ${a.fullName ?? [...a.ancestorTitles, a.title].join(" ")}`] = { state, error: a.failureMessages?.[0]?.split("\n")[0].slice(0, 300) };
        }
        // A file that failed to load has no tests to list: it counts as one failure.
        if (file.assertionResults.length === 0 && file.status === "failed")
          tests[`${rel}: (the file)`] = {
            state: "failed",
            error: (file.message ?? file.failureMessage ?? "")
              .split("\n")
              .find((l) => l.trim())
              ?.slice(0, 300),
          };
      }
    } else {
      for (const line of readFileSync(report, "utf8").split("\n")) {
        if (line.trim() === "") continue;
        const t = JSON.parse(line);
        let name = t.name;
        for (let i = 2; tests[name] !== undefined; i++) name = `${t.name} (${i})`;
        tests[name] = { state: t.state, error: t.error };
      }
    }
  } else {
    note = `no report: exit ${r.status ?? r.signal}`;
    console.error(r.stdout?.slice(-4000), r.stderr?.slice(-4000));
  }
  return { tests, note };
}

function editJson(path, edit) {
  const json = JSON.parse(readFileSync(path, "utf8"));
  edit(json);
  writeFileSync(path, JSON.stringify(json, null, 2));
}

/** The file a package's command of its own name runs (its package.json's "bin"). */
function bin(dir, name) {
  const pkgDir = join(dir, "node_modules", name);
  const { bin } = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  return join(pkgDir, typeof bin === "string" ? bin : bin[name]);
}

/** `test/*.test.ts`-style arguments, expanded (a runner started without a shell). */
function expand(dir, patterns) {
  return patterns.flatMap((p) => {
    const m = /^(.*)\/\*(\.[^/]+)$/.exec(p);
    if (m === null) return [p];
    return readdirSync(join(dir, m[1]))
      .filter((f) => f.endsWith(m[2]))
      .sort()
      .map((f) => `${m[1]}/${f}`);
  });
}

main();
