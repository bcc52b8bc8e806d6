// Every ```ts and ```js block in README.md and docs/**/*.md is type-checked against the built
// package (dist/, as a user imports it: "cog-http"), in one run of the repository's TypeScript;
// the README's hello world and its app.inject test are run for real; every relative link in
// those files resolves. Engine-independent: runs once per `npm test` (as all of test/system/, see scripts/test.mjs).
//
// Conventions for a block (see docs/README.md, "Writing docs"):
// - A first line `// name.ts` names the file, so blocks of one page can import each other
//   (`import { app } from "./app.js"`); other blocks get a name of their own.
// - ```ts fragment marks a block that is deliberately not a whole program; it is skipped and
//   counted. Keep them few.
import assert from "node:assert/strict";
import { spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { startChild, type Owner } from "../children.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CHECKED = new Set(["ts", "typescript", "js", "javascript", "mjs", "cjs"]);

interface Block {
  /** The Markdown file, relative to the repository. */
  readonly doc: string;
  /** The line of the block's first code line in that file (1-based). */
  readonly line: number;
  readonly lang: string;
  readonly fragment: boolean;
  readonly code: string;
  /** The name from a `// name.ts` first line, if any. */
  readonly name: string | undefined;
}

function markdownFiles(): string[] {
  const files = ["README.md"];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, entry);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (entry.endsWith(".md")) files.push(path);
    }
  };
  walk("docs");
  return files;
}

/** Fenced blocks of a Markdown file, with the line each starts on. */
function blocksOf(doc: string): Block[] {
  const lines = readFileSync(join(root, doc), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)(.*)$/.exec(lines[i]!);
    if (open === null) continue;
    const fence = open[2]!;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence)) end++;
    const lang = open[3]!.toLowerCase();
    const code = lines.slice(start, end).join("\n");
    const named = /^\/\/\s*([\w.-]+\.(?:ts|mts|cts|js|mjs|cjs))\s*$/.exec(lines[start] ?? "");
    blocks.push({ doc, line: start + 1, lang, fragment: /\bfragment\b/.test(open[4]!), code, name: named?.[1] });
    i = end;
  }
  return blocks;
}

const docs = markdownFiles();
const all = docs.flatMap(blocksOf);
const checked = all.filter((b) => CHECKED.has(b.lang));

/** The extension a block is checked as: its own name's, or by language (a js block using require is CommonJS). */
function fileName(block: Block, index: number): string {
  if (block.name !== undefined) return block.name;
  const js = block.lang !== "ts" && block.lang !== "typescript";
  return `block-${block.line}-${index}.${js ? (/\brequire\(/.test(block.code) ? "cjs" : "mjs") : "ts"}`;
}

const work = join(root, ".cache", "docs-code");

/** The folder a Markdown file's blocks are written to. */
const folderOf = (doc: string) => join(work, doc.replace(/\.md$/, "").replace(/[^\w]+/g, "_"));

/** Writes every checked block into a folder per Markdown file; returns where each file came from. */
function writeBlocks(): Map<string, Block> {
  rmSync(work, { recursive: true, force: true });
  const origin = new Map<string, Block>();
  checked.forEach((block, index) => {
    if (block.fragment) return;
    const folder = folderOf(block.doc);
    mkdirSync(folder, { recursive: true });
    const file = join(folder, fileName(block, index));
    assert.ok(!origin.has(file), `${block.doc}:${block.line}: a second block named ${block.name}; give each file one block`);
    writeFileSync(file, block.code + "\n");
    origin.set(file, block);
  });
  // The package as a user installs it: node_modules/cog-http is this repository, so "cog-http" is
  // dist/ through package.json's exports, for tsc and at run time alike. Other packages the docs
  // import (zod, typebox, express…) resolve from the repository's node_modules, above.
  mkdirSync(join(work, "node_modules"), { recursive: true });
  symlinkSync(root, join(work, "node_modules", "cog-http"), "dir");
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      moduleDetection: "force",
      lib: ["ES2022", "DOM"],
      types: ["node"],
      typeRoots: [join(root, "node_modules", "@types")],
      strict: true,
      noEmit: true,
      allowJs: true,
      checkJs: true,
      skipLibCheck: true,
    },
    include: ["**/*"],
    exclude: ["node_modules"],
  };
  writeFileSync(join(work, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
  writeFileSync(join(work, "package.json"), JSON.stringify({ type: "module", private: true }));
  return origin;
}

/** tsc's `file(line,col): error …` lines, pointed back at the Markdown file and line. */
function located(output: string, origin: Map<string, Block>): string {
  return output
    .split("\n")
    .map((line) => {
      const m = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line.trim());
      if (m === null) return line;
      const block = origin.get(resolve(work, m[1]!));
      if (block === undefined) return line;
      return `${block.doc}:${block.line + Number(m[2]) - 1}:${m[3]} (the block at line ${block.line}): ${m[4]}`;
    })
    .join("\n");
}

test("every ts/js block in README.md and docs/ type-checks against the built package", { timeout: 180_000 }, (t) => {
  assert.ok(existsSync(join(root, "dist", "index.d.ts")), "dist/ is missing: run npm run build first");
  assert.ok(checked.length > 0, "no code blocks found");
  const origin = writeBlocks();
  const fragments = checked.filter((b) => b.fragment);
  t.diagnostic(
    `${origin.size} blocks from ${docs.length} Markdown files type-checked; ${fragments.length} marked fragment skipped (${fragments.map((b) => `${b.doc}:${b.line}`).join(", ") || "none"})`,
  );
  // The repository's TypeScript, through its package.json's bin (its exports don't list bin/tsc).
  const typescript = dirname(createRequire(join(root, "package.json")).resolve("typescript/package.json"));
  const tsc = join(typescript, (JSON.parse(readFileSync(join(typescript, "package.json"), "utf8")) as { bin: { tsc: string } }).bin.tsc);
  const run = spawnSync(process.execPath, [tsc, "-p", ".", "--pretty", "false"], { cwd: work, encoding: "utf8" });
  assert.equal(run.status, 0, `code blocks in the docs do not type-check:\n${located(run.stdout + run.stderr, origin)}`);
});

/** Runs a TypeScript file of the README's folder with tsx for the test `t` (stopped when it ends); resolves with its exit code and output. */
function runTs(
  t: Owner,
  args: string[],
  cwd: string,
  onOutput?: (text: string, child: ChildProcess) => void,
): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    // Without this test runner's NODE_TEST_CONTEXT, a child's `--test` runs its own tests.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const { child } = startChild(t, process.execPath, ["--import", "tsx", ...args], { cwd, env });
    let output = "";
    const take = (chunk: string) => {
      output += chunk;
      onOutput?.(output, child);
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    child.on("error", fail);
    child.on("close", (code) => done({ code, output }));
  });
}

test("the README's hello world serves GET /", { timeout: 60_000 }, async (t) => {
  const readme = folderOf("README.md");
  assert.ok(existsSync(join(readme, "server.ts")), "README.md must have a block named server.ts: the hello world");
  // The hello world as written, on a free port instead of 3000 (other servers may hold it).
  const server = readFileSync(join(readme, "server.ts"), "utf8");
  assert.match(server, /listen\(3000\)/);
  writeFileSync(join(readme, "server.run.ts"), server.replace("listen(3000)", "listen(0)"));
  let answered: string | undefined;
  const served = await runTs(t, ["server.run.ts"], readme, (output, child) => {
    const url = /Listening on (http:\/\/localhost:\d+)/.exec(output)?.[1];
    if (url === undefined || answered !== undefined) return;
    answered = "";
    fetch(url.replace("localhost", "127.0.0.1") + "/")
      .then((res) => res.text())
      .then(
        (text) => (answered = text),
        (err: Error) => (answered = `failed: ${err.message}`),
      )
      .finally(() => child.kill());
  });
  assert.equal(answered, "Hello, world!", `the hello world did not answer GET / as the README says:\n${served.output}`);
});

test("every block named *.test.ts in README.md and docs/ passes (the README's app.inject test first)", { timeout: 120_000 }, async (t) => {
  const tests = checked.filter((b) => b.name?.endsWith(".test.ts") && !b.fragment);
  assert.ok(
    tests.some((b) => b.doc === "README.md"),
    "README.md must have a block named app.test.ts: a test with app.inject",
  );
  for (const block of tests) {
    const run = await runTs(t, ["--test", "--test-reporter=tap", block.name!], folderOf(block.doc));
    const where = `${block.doc}:${block.line} (${block.name})`;
    assert.equal(run.code, 0, `${where} failed:\n${run.output}`);
    assert.match(run.output, /# pass [1-9]/, `${where} ran no test:\n${run.output}`);
    assert.match(run.output, /# fail 0/);
    t.diagnostic(`${where}: ${/# pass (\d+)/.exec(run.output)![1]} tests passed`);
  }
});

// GitHub's heading anchors: lower case, punctuation but "-" and "_" dropped, spaces to "-", repeats numbered.
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (/^\s*(`{3,}|~{3,})/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/**
 * Guide pages written alongside the features they document, on branches of their own: a link to
 * one is let through while the page is absent (and said so), and checked like any once it lands.
 * Drop an entry once its page is on main.
 */
const FORTHCOMING = new Set([
  "docs/guide/files.md",
  "docs/guide/uploads.md",
  "docs/guide/streaming.md",
  "docs/guide/websockets.md",
  "docs/guide/deployment.md",
]);

test("every relative link in README.md and docs/ resolves", (t) => {
  const broken: string[] = [];
  const waiting = new Set<string>();
  for (const doc of docs) {
    const lines = readFileSync(join(root, doc), "utf8").split("\n");
    let fenced = false;
    lines.forEach((line, i) => {
      if (/^\s*(`{3,}|~{3,})/.test(line)) fenced = !fenced;
      if (fenced) return;
      const text = line.replace(/`[^`]*`/g, "");
      for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s*(\S+)/g)) {
        const target = m[1] ?? m[2]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const file = path === "" ? join(root, doc) : resolve(join(root, dirname(doc)), decodeURIComponent(path));
        const where = `${doc}:${i + 1}: ${target}`;
        if (!file.startsWith(root + "/") && file !== root) broken.push(`${where} (outside the repository)`);
        else if (!existsSync(file) && FORTHCOMING.has(relative(root, file))) waiting.add(relative(root, file));
        else if (!existsSync(file)) broken.push(`${where} (no such file: ${relative(root, file)})`);
        else if (anchor !== undefined && anchor !== "" && file.endsWith(".md") && !anchorsOf(file).has(anchor))
          broken.push(`${where} (no heading #${anchor} in ${relative(root, file)})`);
      }
    });
  }
  if (waiting.size > 0) t.diagnostic(`links to pages not written yet, let through: ${[...waiting].join(", ")}`);
  assert.deepEqual(broken, [], `broken links:\n${broken.join("\n")}`);
});

test("docs/reference.md names every export of src/index.ts", () => {
  const index = readFileSync(join(root, "src", "index.ts"), "utf8");
  const exported = [...index.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
    m[1]!
      .split(",")
      .map((name) =>
        name
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)
          .pop()!,
      )
      .filter((name) => name !== ""),
  );
  assert.ok(exported.length > 10, "found too few exports in src/index.ts");
  // Named in the text (in `code`), not only in the import list at the top.
  const reference = readFileSync(join(root, "docs", "reference.md"), "utf8").replace(/^```[^]*?^```/gm, "");
  const missing = exported.filter((name) => !new RegExp(`\`[^\`]*\\b${name}\\b[^\`]*\``).test(reference));
  assert.deepEqual(missing, [], `docs/reference.md does not describe these exports of src/index.ts: ${missing.join(", ")}; add each, with its type`);
});

test("README.md stays a starting point of at most 200 lines (the rest belongs in docs/)", () => {
  const lines = readFileSync(join(root, "README.md"), "utf8").trimEnd().split("\n").length;
  assert.ok(lines <= 200, `README.md has ${lines} lines; move detail into docs/ and link to it`);
});
