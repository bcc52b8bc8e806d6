import assert from "node:assert/strict";
import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { get, load, sigtermUnderLoad, sigtermWithStream, start, type Served } from "../serving.js";

const linuxOnly = process.platform === "linux" ? false : "workers on the native engine share a port with SO_REUSEPORT (Linux)";
// CI runs the suite once per supported Node; when the primary gives up is Cog's own arithmetic, the same on each.
const onceInCi =
  process.env.COG_NODE_MATRIX === "1"
    ? "checked on CI's first Node (COG_NODE_MATRIX=1): the primary's own bookkeeping doesn't change with Node's version"
    : false;

describe("workers", { skip: linuxOnly }, () => {
  test("two workers share the port and both take load", async (t) => {
    const app = await start(t, { WORKERS: "2" });
    const pids = new Set<string>();
    let count = 0;
    const results = await load(app.port, "/pid", 8, (r) => {
      if ("status" in r) pids.add(r.body);
      return ++count >= 100;
    });
    assert.ok(
      results.every((r) => "status" in r && r.status === 200),
      `every request answered: ${JSON.stringify(results.filter((r) => !("status" in r)))}`,
    );
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
    assert.ok(
      [...pids].some((pid) => !first.has(pid)),
      `a new worker took the dead one's place: ${[...pids].join(", ")}`,
    );
    assert.ok(failed.length <= concurrency, `at most the dead worker's in-flight requests fail (${concurrency} clients): ${failed.length} failed`);
    assert.ok(results.filter((r) => "status" in r && r.status === 200).length > failed.length);
    app.child.kill("SIGTERM");
    assert.equal(await app.exited, 0);
  });

  for (const [workers, killed] of [
    [1, "the only worker"],
    [2, "every worker at once"],
  ] as const) {
    test(`${killed} killed with SIGKILL under light load: the primary stays up, replaces it and serves again`, async (t) => {
      const app = await start(t, { WORKERS: String(workers) });
      const victims = await workerPids(app, workers);
      const { after, results } = await killUnderLoad(app, victims);
      assert.equal(app.child.exitCode, null, `the primary is still running: ${app.errors()}`);
      assert.equal(after.size, workers, `${workers} new worker(s) answered: ${[...after].join(", ")}`);
      for (const pid of after) assert.ok(!victims.includes(Number(pid)) && pid !== String(app.child.pid), `${pid} is a new worker`);
      assert.deepEqual(results.slice(-10), Array(10).fill(200), "requests succeed again");
      assert.match(app.errors(), /cog: worker \d+ exited \(SIGKILL\); starting another in \d+ ms/);
      app.child.kill("SIGTERM");
      assert.equal(await app.exited, 0);
    });
  }

  test("workers that die at start-up five times in a row make the primary exit 1, saying why", { skip: onceInCi }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "cog-workers-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const broken = join(dir, "broken");
    const app = await start(t, { WORKERS: "2", CRASH_WHEN: broken });
    const victims = await workerPids(app, 2);
    writeFileSync(broken, "");
    for (const pid of victims) process.kill(pid, "SIGKILL");
    // Backoff 100 ms, 200 ms, … 1.6 s between the attempts, each a process that loads the app.
    const code = await Promise.race([app.exited, sleep(60_000, "still running")]);
    assert.equal(code, 1, app.errors());
    assert.match(
      app.errors(),
      /cog: giving up: 5 workers in a row died before they listened \(the last: exited \(code 1\)\); stopping and exiting with code 1/,
    );
    // Two workers died, so two chains of restarts run side by side: when the fifth attempt dies,
    // the other chain's next attempt may already be loading the app (it is stopped by the giving
    // up, after it printed its error or before).
    const ran = (app.errors().match(/Error: cannot start: the database is down/g) ?? []).length;
    assert.ok(ran === 5 || ran === 6, `each of the 5 attempts ran the app, and at most the one beside the last: ${ran}`);
  });

  test("a worker that dies before the first listen makes listen reject in the primary", { skip: onceInCi }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "cog-workers-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "broken"), "");
    await assert.rejects(start(t, { WORKERS: "2", CRASH_WHEN: join(dir, "broken") }), /it exited \(1\).*a worker exited \(code 1\) before it listened/s);
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

/** The pids of the app's `count` workers, from their answers. */
async function workerPids(app: Served, count: number): Promise<number[]> {
  const pids = new Set<number>();
  for (let i = 0; pids.size < count; i++) {
    assert.ok(i < 500, `${count} workers answer`);
    const r = await get(app.port, "/pid");
    if ("status" in r) pids.add(Number(r.body));
  }
  return [...pids];
}

/**
 * Two clients in a loop (a pause after each failure), `victims` killed with SIGKILL once both
 * have been answered; runs until every victim has a replacement that answered and the last ten
 * requests succeeded, or 30 s. Returns the pids that answered after the kill, and the outcomes
 * since (a status or an error code). A request times out after 2 s: on the node engine, a
 * connection node:cluster's primary was handing to a worker as it died is left unanswered.
 */
async function killUnderLoad(app: Served, victims: number[]): Promise<{ after: Set<string>; results: Array<number | string> }> {
  const after = new Set<string>();
  const results: Array<number | string> = [];
  let answered = 0;
  let killed = false;
  const deadline = Date.now() + 30_000;
  const done = (): boolean => Date.now() > deadline || (after.size >= victims.length && results.slice(-10).every((r) => r === 200) && results.length >= 10);
  await Promise.race(
    [0, 1].map(async () => {
      while (!done()) {
        const r = await get(app.port, "/pid", 2000);
        if (!killed) {
          if ("status" in r && ++answered >= 2) {
            killed = true;
            for (const pid of victims) process.kill(pid, "SIGKILL");
          }
          continue;
        }
        results.push("status" in r ? r.status : r.error);
        if ("status" in r && r.status === 200 && !victims.includes(Number(r.body))) after.add(r.body);
        if (!("status" in r)) await sleep(20);
      }
    }),
  );
  return { after, results };
}
