// `app.engine` says which engine serves the app, and `NODE_DEBUG=cog` says which one
// `engine: "auto"` picked, and why.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { Cog } from "../../src/index.js";
import { engine, nativeSkip, serve } from "../helpers.js";

test("app.engine: undefined before listen, then the engine that serves", async (t) => {
  let before: string | undefined = "unset";
  const { app, fetch } = await serve(t, (a) => {
    before = a.engine;
    a.get("/", (_req, res) => res.send(a.engine ?? "none"));
  });
  assert.equal(before, undefined);
  assert.equal(app.engine, engine);
  assert.equal(await (await fetch("/")).text(), engine);
});

test("app.engine after inject, without listening", async () => {
  const app = new Cog({ engine, logErrors: false });
  app.get("/", (_req, res) => res.send("ok"));
  assert.equal((await app.inject("/")).body, "ok");
  assert.equal(app.engine, engine);
});

test('engine "auto": app.engine names the engine it chose, and NODE_DEBUG=cog prints it with the reason', () => {
  // In a process of its own, so the debug setting is read afresh.
  const script = `
    import { Cog } from "./dist/index.js";
    const app = new Cog({ engine: "auto" });
    app.get("/", (_req, res) => res.send("ok"));
    await app.listen(0, "127.0.0.1");
    console.log(app.engine);
    await app.close();`;
  // Bounded: a server that failed to close would otherwise block this process for good.
  const run = (debug: string) =>
    spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, NODE_DEBUG: debug }, timeout: 60_000 });
  const chose = nativeSkip === false ? "native" : "node";
  const quiet = run("");
  assert.equal(quiet.stdout.trim(), chose);
  assert.equal(quiet.stderr, "");
  const debugged = run("cog");
  assert.equal(debugged.stdout.trim(), chose);
  const line =
    nativeSkip === false
      ? /^COG \d+: engine "auto" chose native: the native engine loads here$/m
      : /^COG \d+: engine "auto" chose node, because engine "native" is not available/m;
  assert.match(debugged.stderr, line);
});
