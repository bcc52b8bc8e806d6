import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Cog } from "../../src/index.js";
import { engine } from "../helpers.js";
import { sigtermUnderLoad, sigtermWithStream, start } from "../serving.js";

describe("graceful shutdown of one process (listen({ signals: true }))", () => {
  test("SIGTERM under load: every request the server took is answered, then it exits 0", async (t) => {
    const app = await start(t);
    await sigtermUnderLoad(app);
  });

  test("SIGTERM runs the onClose hook once, and an open event stream ends cleanly before the process exits", async (t) => {
    const app = await start(t);
    assert.deepEqual(await sigtermWithStream(app), [app.child.pid]);
  });

  test("close() removes the signal handlers; bad worker counts are refused with what to pass", async () => {
    const app = new Cog({ engine });
    const before = process.listenerCount("SIGTERM");
    await app.listen({ port: 0, host: "127.0.0.1", signals: true });
    assert.equal(process.listenerCount("SIGTERM"), before + 1);
    await app.close(100);
    assert.equal(process.listenerCount("SIGTERM"), before);
    await assert.rejects(new Cog({ engine }).listen({ port: 0, workers: 0 }), /whole number of processes \(1 or more\) or "auto"; got 0/);
    await assert.rejects(new Cog({ engine }).listen({ port: 0, workers: 1.5 }), /got 1.5/);
  });
});
