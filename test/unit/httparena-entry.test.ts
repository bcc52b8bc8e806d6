// Cog's HttpArena entries (bench/httparena/): the files its contribution guide asks for agree with
// the app they launch (examples/arena.ts). No Docker here: the files are read. That the app passes
// HttpArena's validation of each entry's profiles is test/contract/arena.test.ts's.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
// @ts-expect-error -- plain ESM modules without type declarations
import { HTTPARENA_PROFILES } from "../../bench/arena/contract.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { APP_FILES, ENTRIES, entryPackage, readDockerfile, readMeta } from "../../bench/httparena/entries.mjs";

const appSource = APP_FILES.map((f: string) => readFileSync(f, "utf8")).join("\n");
const rootPackage = JSON.parse(readFileSync("package.json", "utf8"));

/** The route (or mount) each profile needs, as examples/arena.ts registers it. */
const PROFILE_ROUTES: Record<string, string[]> = {
  baseline: ['"/baseline11"'],
  "limited-conn": ['"/baseline11"'],
  pipelined: ['"/pipeline"'],
  json: ['"/json/:count"'],
  "json-comp": ['"/json/:count"', "compress: true"],
  "json-tls": ['"/json/:count"'],
  upload: ['"/upload"'],
  "api-4": ['"/baseline11"', '"/json/:count"', '"/async-db"'],
  "api-16": ['"/baseline11"', '"/json/:count"', '"/async-db"'],
  static: ['"/static"', "precompressed: true"],
  "static-h2": ['"/static"'],
  "async-db": ['"/async-db"'],
  crud: ['"/crud/items"'],
  "baseline-h2": ['"/baseline2"'],
  "baseline-h2c": ['"/baseline2"'],
  "baseline-h3": ['"/baseline2"', "http3"],
  "static-h3": ['"/static"', "http3"],
  "json-h2c": ['"/json/:count"'],
  "echo-ws": ['app.ws("/ws"'],
  async: ['"/delay/:ms"'],
  "echo-10k": ['"/echo"', "echo(server)"],
  "echo-100k": ['"/echo"', "echo(server)"],
  "8gbit": ['"/echo"', "echo(server)"],
  "static-tls": ['"/static"', "staticFiles(server)"],
  "echo-ws-pipeline": ['app.ws("/ws"'],
  "echo-ws-limited": ['app.ws("/ws"'],
  "latency-10k": ['"/baseline11"'],
  "latency-1m": ['"/baseline11"'],
  "unary-grpc": ["grpc(app)", '"GetSum"'],
  "stream-grpc": ["grpc(app)", '"StreamSum"', "serverStreaming: true"],
  "unary-grpc-tls": ["grpc(server)", '"GetSum"'],
  "stream-grpc-tls": ["grpc(server)", '"StreamSum"', "serverStreaming: true"],
};
/** The port variable (and HttpArena's port) a profile needs besides PORT=8080. */
const PROFILE_PORTS: Record<string, [string, string]> = {
  "json-tls": ["TLS_PORT", "8081"],
  "echo-10k": ["TLS_PORT", "8081"],
  "echo-100k": ["TLS_PORT", "8081"],
  "8gbit": ["TLS_PORT", "8081"],
  "static-tls": ["TLS_PORT", "8081"],
  "baseline-h2": ["H2_PORT", "8443"],
  "static-h2": ["H2_PORT", "8443"],
  "baseline-h3": ["H2_PORT", "8443"],
  "static-h3": ["H2_PORT", "8443"],
  "baseline-h2c": ["H2C_PORT", "8082"],
  "json-h2c": ["H2C_PORT", "8082"],
  "unary-grpc-tls": ["H2_PORT", "8443"],
  "stream-grpc-tls": ["H2_PORT", "8443"],
};
const HTTP2_PROFILES = ["baseline-h2", "static-h2", "baseline-h2c", "json-h2c"];
const HTTP3_PROFILES = ["baseline-h3", "static-h3"];
const GRPC_PROFILES = ["unary-grpc", "unary-grpc-tls", "stream-grpc", "stream-grpc-tls"];

/** The Dockerfile's ENV settings, as name → value. */
function envOf(dockerfile: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of dockerfile.split("\n").filter((l) => l.startsWith("ENV ")))
    for (const [, name, value] of line.slice(4).matchAll(/(\w+)=(\S+)/g)) env[name!] = value!;
  return env;
}

for (const { name, engine } of ENTRIES as { name: string; engine: string }[]) {
  describe(`the ${name} entry`, () => {
    const meta = readMeta(name);
    const dockerfile: string = readDockerfile(name);
    const env = envOf(dockerfile);

    test("meta.json has every field HttpArena's guide lists, named after the entry", () => {
      assert.deepEqual(Object.keys(meta).sort(), ["description", "display_name", "enabled", "engine", "language", "maintainers", "repo", "tests", "type"]);
      assert.equal(meta.display_name, name);
      assert.ok(["production", "tuned", "engine"].includes(meta.type), meta.type);
      assert.equal(meta.type, "production", "Cog's entries use documented APIs and defaults only");
      assert.equal(meta.enabled, true);
      assert.equal(meta.repo, rootPackage.homepage.replace(/#readme$/, ""));
      assert.ok(Array.isArray(meta.maintainers));
    });

    test("lists only profiles HttpArena's validation covers here, each once, served by its engine", () => {
      assert.ok(meta.tests.length > 0);
      assert.equal(new Set(meta.tests).size, meta.tests.length, "no profile twice");
      for (const profile of meta.tests) assert.ok(HTTPARENA_PROFILES.includes(profile), `${profile} is a profile checkHttpArena runs`);
      // Both engines serve HTTP/2 (docs/engines.md): each entry enters the four HTTP/2 profiles.
      assert.deepEqual(
        meta.tests.filter((p: string) => HTTP2_PROFILES.includes(p)),
        HTTP2_PROFILES,
      );
      // Both serve gRPC (cog-http/connect, docs/guide/grpc.md): each enters the four gRPC profiles.
      assert.deepEqual(
        meta.tests.filter((p: string) => GRPC_PROFILES.includes(p)),
        GRPC_PROFILES,
      );
    });

    test("enters the HTTP/3 profiles where its engine serves HTTP/3 (native), with HTTP3=1 and UDP on 8443 exposed", () => {
      const h3 = engine === "native";
      assert.deepEqual(
        meta.tests.filter((p: string) => HTTP3_PROFILES.includes(p)),
        h3 ? HTTP3_PROFILES : [],
      );
      assert.equal(env.HTTP3, h3 ? "1" : undefined);
      assert.equal(/^EXPOSE .*\b8443\/udp\b/m.test(dockerfile), h3, "EXPOSE 8443/udp");
    });

    test("every listed profile's routes are registered by the app", () => {
      for (const profile of meta.tests)
        for (const route of PROFILE_ROUTES[profile] ?? [`(no route known for ${profile})`])
          assert.ok(appSource.includes(route), `${profile} needs ${route} in examples/arena.ts`);
    });

    test("the Dockerfile builds on an official Node image the package supports and launches the app with a worker per core", () => {
      const from = /^FROM node:(\d+)(-[a-z]+)?$/m.exec(dockerfile);
      assert.ok(from, "FROM node:<major>[-variant]");
      assert.ok(Number(from[1]) >= 22, `Node ${from[1]} is one package.json's engines (${rootPackage.engines.node}) allows`);
      assert.match(dockerfile, /^CMD \["node", "--import", "tsx", "arena\.ts"\]$/m);
      const copied = [...dockerfile.matchAll(/^COPY (.+) \.\/$/gm)].flatMap((m) => m[1]!.split(" "));
      assert.deepEqual(copied.sort(), ["package.json", ...APP_FILES.map((f: string) => f.slice(f.lastIndexOf("/") + 1))].sort());
      assert.equal(env.COG_ENGINE, engine);
      assert.equal(env.WORKERS, "auto");
      assert.equal(env.HOST, "0.0.0.0");
      assert.equal(env.PORT, "8080");
    });

    test("sets the port of every listed profile's listener, and the app reads every variable it sets", () => {
      for (const profile of meta.tests) {
        const needs = PROFILE_PORTS[profile];
        if (needs) assert.equal(env[needs[0]], needs[1], `${profile} listens on ${needs[0]}=${needs[1]}`);
      }
      for (const variable of Object.keys(env).filter((v) => v !== "NODE_ENV"))
        assert.ok(appSource.includes(`process.env.${variable}`), `examples/arena.ts reads ${variable}`);
    });
  });
}

test("the entries' package.json has every package the app imports, at this repository's versions", () => {
  const { dependencies } = entryPackage();
  const specifiers = [...appSource.matchAll(/from "([^"]+)"/g)].map((m) => m[1]!).filter((s) => !s.startsWith("node:") && !s.startsWith("."));
  // A subpath ("cog-http/connect", "@bufbuild/protobuf/wkt") is its package's.
  const imported = new Set(
    specifiers.map((s) =>
      s
        .split("/")
        .slice(0, s.startsWith("@") ? 2 : 1)
        .join("/"),
    ),
  );
  for (const name of imported) assert.ok(name! in dependencies, `${name} is a dependency`);
  assert.equal(dependencies["cog-http"], rootPackage.version);
  for (const [name, version] of Object.entries(dependencies)) if (name !== "cog-http") assert.equal(version, rootPackage.devDependencies[name], name);
  assert.ok("tsx" in dependencies, "the Dockerfile's CMD runs the app through tsx");
});
