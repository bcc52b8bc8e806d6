import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { closeHookPids, get, load, sigtermUnderLoad, sigtermWithStream, start } from "../serving.js";

const linuxOnly = process.platform === "linux" ? false : "workers on the native engine share a port with SO_REUSEPORT (Linux)";

describe("workers", { skip: linuxOnly }, () => {
  test("two workers share the port and both take load", async (t) => {
    const app = await start(t, { WORKERS: "2" });
    const pids = new Set<string>();
    let count = 0;
    const results = await load(app.port, "/pid", 8, (r) => {
      if ("status" in r) pids.add(r.body);
      return ++count >= 100;
    });
    assert.ok(results.every((r) => "status" in r && r.status === 200), `every request answered: ${JSON.stringify(results.filter((r) => !("status" in r)))}`);
    assert.equal(pids.size, 2, `both workers answered: ${[...pids].join(", ")}`);
    assert.ok(!pids.has(String(app.child.pid)), "the primary serves nothing itself");
    app.child.kill("SIGTERM");
    assert.equal(await app.exited, 0);
  });

  test("a worker killed under load is restarted; only its in-flight requests fail", async (t) => {
    const app = await start(t, { WORKERS: "2" });
    const first = new Set<string>();
    while (first.size < 2) {
      const r = await get(app.port, "/pid");
      if ("status" in r) first.add(r.body);
    }
    const victim = Number([...first][0]);
    const concurrency = 8;
    const pids = new Set<string>();
    let killed = false;
    const deadline = Date.now() + 20_000;
    const results = await load(app.port, "/slow", concurrency, (r) => {
      if ("status" in r) pids.add(r.body);
      if (!killed && pids.size >= 2) {
        killed = true;
        process.kill(victim, "SIGKILL");
      }
      // Done once a worker that wasn't there before has answered (the replacement).
      return [...pids].some((pid) => !first.has(pid)) || Date.now() > deadline;
    });
    const failed = results.filter((r) => !("status" in r));
    assert.ok([...pids].some((pid) => !first.has(pid)), `a new worker took the dead one's place: ${[...pids].join(", ")}`);
    assert.ok(failed.length <= concurrency, `at most the dead worker's in-flight requests fail (${concurrency} clients): ${failed.length} failed`);
    assert.ok(results.filter((r) => "status" in r && r.status === 200).length > failed.length);
    app.child.kill("SIGTERM");
    assert.equal(await app.exited, 0);
  });

  test("SIGTERM under load drains every worker: each request a worker took is answered, and the primary exits 0", async (t) => {
    const app = await start(t, { WORKERS: "2" });
    await sigtermUnderLoad(app);
  });

  test("SIGTERM: each worker runs its onClose hook once (the primary none), and an open event stream ends cleanly first", async (t) => {
    const app = await start(t, { WORKERS: "2" });
    const pids = await sigtermWithStream(app);
    assert.equal(pids.length, 2, `one hook per worker: ${app.output()}`);
    assert.equal(new Set(pids).size, 2, "in two processes");
    assert.ok(!pids.includes(app.child.pid!), "not in the primary");
  });
});
