// Installing Cog as an app does: `npm pack`ed tarballs installed into a fresh project in a
// temporary folder, with npm's user configuration replaced by a plain one (the machine's own
// settings are not Cog's to warn about). Packages come from npm's cache (--prefer-offline): no
// network once the repository's own install has filled it.
import { execFileSync, spawnSync } from "node:child_process";
import { accessSync, constants, cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repo = join(dirname(fileURLToPath(import.meta.url)), "..");

/** npm's own script, to run it on another Node binary (npm checks engines against the Node it runs on). */
export const npmCli = join(dirname(realpathSync(execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim())), "npm-cli.js");

/** A temporary folder, removed when the test ends. */
export function scratch(t: { after(fn: () => unknown): void }, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `cog-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `npm pack`s a package folder into `into`; the tarball's path. Scripts don't run: the tests run after `npm run build`. */
export function pack(folder: string, into: string): string {
  const name = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", into], { cwd: folder, encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  return join(into, name);
}

/** A copy of a platform package's folder with `binary` as its .node file (the package's `main`). */
export function platformFolder(dir: string, packageDir: string, main: string, binary: string): string {
  const copy = join(dir, "platform-package");
  cpSync(join(packageDir, "package.json"), join(copy, "package.json"));
  cpSync(binary, join(copy, main));
  return copy;
}

/** PATH without any folder that has cargo or rustc in it: a machine without Rust. */
export function pathWithoutRust(): string {
  const runnable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  return (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !runnable(join(dir, "cargo")) && !runnable(join(dir, "rustc")))
    .join(delimiter);
}

export interface Installed {
  project: string;
  /** Everything npm printed, stdout then stderr. */
  output: string;
  status: number | null;
}

/** Installs tarballs into a new project in `dir` with `node` running npm, under `env`. */
export function install(dir: string, tarballs: string[], options: { node?: string; env?: NodeJS.ProcessEnv; flags?: string[] } = {}): Installed {
  const project = join(dir, "app");
  const npmrc = join(dir, "npmrc");
  writeFileSync(npmrc, "fund=false\naudit=false\nupdate-notifier=false\n");
  mkdirSync(project, { recursive: true });
  // A project as `npm init` makes it: no allowScripts, so npm 11 warns about any install script a
  // tarball carries (preinstall, install, postinstall, and prepare for a non-registry source).
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  const result = spawnSync(
    options.node ?? process.execPath,
    [npmCli, "install", "--prefer-offline", "--userconfig", npmrc, ...(options.flags ?? []), ...tarballs],
    {
      cwd: project,
      encoding: "utf8",
      // As from a user's shell: not the npm_config_* settings an enclosing `npm test` passes down.
      env: Object.fromEntries(Object.entries(options.env ?? process.env).filter(([name]) => !/^npm_/i.test(name))),
    },
  );
  return { project, output: `${result.stdout}${result.stderr}`, status: result.status };
}

/** The package.json inside a tarball. */
export function manifestOf(tarball: string): { scripts?: Record<string, string>; [field: string]: unknown } {
  return JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }));
}

/** npm's warnings in its output, one string each. */
export function warnings(output: string): string[] {
  return output.split("\n").filter((line) => /^npm warn/i.test(line));
}

export interface Answer {
  status: number;
  body: string;
  engine: string;
  /** The Node-API addons the serving process had loaded (from /proc/self/maps). */
  addons: string[];
}

/**
 * Runs an app on engine "native" in `project` (with `node`, which may be a command such as an
 * emulator and a Node binary) and answers one request to GET /hello/installed over a real socket.
 * `loads`: "import" (Cog's ES module build) or "require" (its CommonJS build, from a .cjs file).
 */
export function serveNative(project: string, env: NodeJS.ProcessEnv, node: string[] = [process.execPath], loads: "import" | "require" = "import"): Answer {
  const app = `const app = new Cog({ engine: "native" });
app.get("/hello/:name", (req, res) => res.send("hello " + req.params.name));
const { port } = await app.listen(0, "127.0.0.1");
const response = await fetch("http://127.0.0.1:" + port + "/hello/installed");
const addons = readFileSync("/proc/self/maps", "utf8").split("\\n").map((line) => line.split(/\\s+/)[5] ?? "").filter((file) => file.endsWith(".node"));
console.log(JSON.stringify({ status: response.status, body: await response.text(), engine: app.engine, addons: [...new Set(addons)] }));
await app.close();
`;
  const file = loads === "import" ? "serve.mjs" : "serve.cjs";
  writeFileSync(
    join(project, file),
    loads === "import"
      ? `import { Cog } from "cog-http";\nimport { readFileSync } from "node:fs";\n${app}`
      : `const { Cog } = require("cog-http");\nconst { readFileSync } = require("node:fs");\n(async () => {\n${app}})();\n`,
  );
  const served = spawnSync(node[0]!, [...node.slice(1), file], { cwd: project, env, encoding: "utf8", timeout: 120_000 });
  if (served.status !== 0) throw new Error(`${file} failed (${served.status}): ${served.stderr}`);
  return JSON.parse(served.stdout) as Answer;
}
