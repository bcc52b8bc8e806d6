// Cog's entries in HttpArena (github.com/MDA2AV/HttpArena): what its contribution guide asks of
// one (frameworks/<name>/ with meta.json, a Dockerfile, the launch), one per engine. Each entry's
// meta.json lists the profiles it enters; test/contract/arena.test.ts runs HttpArena's validation
// of those profiles (bench/arena/contract.mjs, checkHttpArena) against examples/arena.ts on the
// entry's engine, and test/unit/httparena-entry.test.ts checks the files agree with the app.
//
//   node bench/httparena/entries.mjs <HttpArena checkout>   writes frameworks/cog and frameworks/cog-native into it
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const root = resolve(here, "..", "..");

/** Each entry: its directory here, and the engine its Dockerfile runs examples/arena.ts on. */
export const ENTRIES = [
  { name: "cog", engine: "node" },
  { name: "cog-native", engine: "native" },
];

/** The files an entry's Dockerfile copies from the repository: the app, its data layer and its gRPC service. */
export const APP_FILES = ["examples/arena.ts", "examples/arena-store.ts", "examples/arena-grpc.ts"];

/** The packages the app imports, at the versions this repository uses (Cog's own is its version). */
export function entryPackage() {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const version = (name) => pkg.dependencies?.[name] ?? pkg.devDependencies?.[name];
  const dependencies = { "cog-http": pkg.version };
  for (const name of ["@sinclair/typebox", "postgres", "redis", "tsx", "@connectrpc/connect", "@connectrpc/connect-node", "@bufbuild/protobuf"])
    dependencies[name] = version(name);
  return { name: "httparena-cog", private: true, type: "module", dependencies };
}

export const readMeta = (name) => JSON.parse(readFileSync(join(here, name, "meta.json"), "utf8"));
export const readDockerfile = (name) => readFileSync(join(here, name, "Dockerfile"), "utf8");

/** Writes each entry's directory into an HttpArena checkout: meta.json, Dockerfile, package.json and the app. */
export function writeEntries(checkout) {
  for (const { name } of ENTRIES) {
    const dir = join(checkout, "frameworks", name);
    mkdirSync(dir, { recursive: true });
    for (const file of ["meta.json", "Dockerfile"]) copyFileSync(join(here, name, file), join(dir, file));
    for (const file of APP_FILES) copyFileSync(join(root, file), join(dir, file.slice(file.lastIndexOf("/") + 1)));
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(entryPackage(), null, 2)}\n`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!process.argv[2]) throw new Error("usage: node bench/httparena/entries.mjs <HttpArena checkout>");
  writeEntries(resolve(process.argv[2]));
  console.log(`wrote ${ENTRIES.map((e) => `frameworks/${e.name}`).join(", ")} into ${process.argv[2]}`);
}
