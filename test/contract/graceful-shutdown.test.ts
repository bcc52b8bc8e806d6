import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Cog } from "../../src/index.js";
import { engine } from "../helpers.js";
import { startChild, waitForOutput } from "../children.js";
import { get, sigtermUnderLoad, sigtermWithStream, start } from "../serving.js";

describe("graceful shutdown of one process (listen({ signals: true }))", () => {
  test("SIGTERM under load: every request the server took is answered, then it exits 0", async (t) => {
    const app = await start(t);
    await sigtermUnderLoad(app);
  });

  test("SIGTERM runs the onClose hook once, and an open event stream ends cleanly before the process exits", async (t) => {
    const app = await start(t);
    assert.deepEqual(await sigtermWithStream(app), [app.child.pid]);
  });

  test("SIGTERM with a batch span processor: the onClose hook the observability guide gives exports every span before the process exits", async (t) => {
    const app = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/traced-shutdown-app.ts"], { env: { ...process.env, COG_ENGINE: engine } });
    await waitForOutput(app, (out) => out.includes("\n"), "the app to print its port");
    const port = Number(app.stdout().split("\n")[0]);
    for (let n = 0; n < 21; n++) assert.deepEqual(await get(port, `/traced/${n}`), { status: 200, body: "ok" });
    assert.equal(app.stdout().includes("span "), false, "the batch holds the spans until the shutdown");
    app.child.kill("SIGTERM");
    assert.equal(await app.exited, 0);
    const spans = app
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("span "));
    assert.deepEqual(
      spans,
      Array.from({ length: 21 }, () => "span GET /traced/:n"),
    );
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
