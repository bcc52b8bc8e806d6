// The native engine's per-request async contexts (src/engines/native/request-context.ts): what it
// reads from Node's version and flags agrees with what AsyncLocalStorage does here, the fast mode
// it uses on this Node isolates requests, and the fallback (an AsyncResource per request) does too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import { contextMode, proxyIsolates, storesInFrames, useContextMode } from "../../../src/engines/native/request-context.js";
import { assertIsolated, hammer } from "../../async-context.js";
import { nativeSkip } from "../../helpers.js";

test("AsyncLocalStorage keeps its stores in async context frames exactly where the engine reads that it does (canary)", () => {
  // Asked: a store entered in an AsyncResource's scope is kept on the resource, or left with the frame.
  const als = new AsyncLocalStorage<true>();
  const scope = new AsyncResource("CogProbe");
  scope.runInAsyncScope(() => als.enterWith(true));
  const inFrames = scope.runInAsyncScope(() => als.getStore()) !== true;
  als.disable();
  assert.equal(storesInFrames, inFrames, `Node ${process.version} ${inFrames ? "keeps" : "does not keep"} AsyncLocalStorage's stores in async context frames, which the native engine reads otherwise from its version and flags (src/engines/native/request-context.ts)`);
});

test("where AsyncLocalStorage keeps stores as async resources' properties, the batch resource's Proxy isolates requests (canary)", () => {
  if (storesInFrames) {
    assert.equal(contextMode, "frames");
    return;
  }
  assert.ok(
    proxyIsolates(),
    "AsyncLocalStorage no longer reads and writes its stores as plain properties of executionAsyncResource() on this Node, which the native " +
      "engine's batch resource (a Proxy that redirects them to the request being served) relies on: the engine falls back to an " +
      "AsyncResource per request, about 5% more instructions on a small request (src/engines/native/request-context.ts)",
  );
  assert.equal(contextMode, "resource properties");
});

for (const [how, enter] of [
  ["enterWith", (id: string, next: () => void, als: { enterWith(id: string): void }) => (als.enterWith(id), next())],
  ["run", (id: string, next: () => void, als: { run(id: string, fn: () => void): void }) => als.run(id, next)],
] as const) {
  test(`with an AsyncResource per request (the fallback), als.${how} in one request is never seen by another`, { skip: nativeSkip || (storesInFrames && "async context frames isolate requests without it") }, async (t) => {
    const before = contextMode;
    useContextMode("request resources");
    t.after(() => useContextMode(before));
    const sightings = await hammer(t, (als) => (id, next) => enter(id, next, als as never), false, { engine: "native" });
    assertIsolated(sightings);
  });
}
