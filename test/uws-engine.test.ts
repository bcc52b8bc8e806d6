// The uws engine's loading rules: never loaded unless asked for, and never a
// silent fallback. (Its behaviour is tested by the whole suite, run again
// with COG_ENGINE=uws by `npm test` wherever a native build loads.)
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { test } from "node:test";
import { Cog } from "../src/index.js";

test("an app that doesn't ask for uWebSockets.js never loads it", async () => {
  const app = new Cog();
  app.get("/", (_req, res) => res.send("up"));
  const { port } = await app.listen(0, "127.0.0.1");
  assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "up");
  await app.close();
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => /uWebSockets|uws-js/i.test(path));
  assert.deepEqual(loaded, []);
});

test("asking for uws without a native build fails at listen, saying why and what to install", () => {
  // UWS_USE_FALLBACK makes the installed build choose its JavaScript fallback, as it does silently on an unsupported Node.
  const script = `import { Cog } from "./dist/index.js";
    new Cog({ engine: "uws" }).listen(0).then(() => { console.log("LISTENED"); process.exit(1); }, (err) => { console.log(err.message); process.exit(0); });`;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, UWS_USE_FALLBACK: "1" } });
  assert.equal(child.status, 0, child.stdout + child.stderr);
  assert.match(child.stdout, /engine "uws"/);
  assert.match(child.stdout, new RegExp(`Node ${process.version.replace(/\./g, "\\.")}`));
  assert.match(child.stdout, /npm install "uWebSockets\.js@github:uNetworking\/uWebSockets\.js#v[\d.]+"/);
  assert.match(child.stdout, /engine: "node"/);
});

test("an unknown engine is refused at construction", () => {
  assert.throws(() => new Cog({ engine: "bun" as "node" }), /engine must be one of "node", "native", "auto", "uws"; got bun/);
});
