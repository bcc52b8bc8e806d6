// A server at its file limit: each connection takes a descriptor, and past RLIMIT_NOFILE the
// kernel's accept fails (EMFILE). The connections that wait then are closed unanswered, as
// libuv does for node:http, rather than left waiting while the accept loop wakes again and
// again (the native engine's busy loop, found holding thousands of connections:
// bench/arena/held.mjs). The app runs as a process of its own (test/fixtures/plain-app.ts) whose
// limit the test lowers with prlimit once it listens: a few descriptors above what it holds.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { test } from "node:test";
import { startChild, waitForOutput } from "../children.js";
import { engine, nativeSkip } from "../helpers.js";

/** Connections the app may still accept once its limit is lowered. */
const ROOM = 20;
/** Connections past the limit, each waited for in turn: the held period the CPU is read over. */
const PAST_LIMIT = 150;

const prlimit = (() => {
  try {
    execFileSync("prlimit", ["--version"], { stdio: "ignore" });
    return false;
  } catch {
    return "needs prlimit (util-linux) to lower the app's file limit";
  }
})();
const skip = process.platform !== "linux" ? "reads /proc and lowers limits with prlimit: Linux only" : engine === "native" && nativeSkip ? nativeSkip : prlimit;

/** The CPU time (ns) the process's main thread has run, which a busy accept loop would fill. */
const cpuNs = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);

type Outcome = "answered" | "closed";

/** A connection with one keep-alive request: "answered" once its 200 arrives (the socket stays open), "closed" if it ends first. */
function request(port: number): { socket: Socket; outcome: Promise<Outcome> } {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  const outcome = new Promise<Outcome>((resolve) => {
    let seen = "";
    socket.on("data", (chunk: Buffer) => {
      seen += chunk.toString("latin1");
      if (seen.includes("\r\n\r\nok")) resolve("answered");
    });
    socket.once("close", () => resolve("closed"));
  });
  socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  return { socket, outcome };
}

test(
  "at its file limit a server closes the connections it cannot take, without a busy loop, and serves again once some close",
  { skip, timeout: 120_000 },
  async (t) => {
    const app = startChild(t, process.execPath, ["--import", "tsx", "test/fixtures/plain-app.ts"], {
      // tsx writes its compile cache on libuv's pool after start-up: a file it opens or closes
      // while the limit holds would take or free a descriptor the test counts.
      env: { ...process.env, COG_ENGINE: engine, TSX_DISABLE_CACHE: "1" },
    });
    await waitForOutput(app, (out) => out.includes("\n"), "the app's port");
    const port = Number(app.stdout().trim());
    const pid = app.child.pid!;
    const open = readdirSync(`/proc/${pid}/fd`).length;
    execFileSync("prlimit", [`--pid=${pid}`, `--nofile=${open + ROOM}:${open + ROOM}`]);

    // Many more connections than descriptors (some the app had open as its limit was set may have
    // closed since: its start-up's files): those it has room for are answered, the rest closed.
    const first = Array.from({ length: ROOM * 10 }, () => request(port));
    const outcomes = await Promise.all(first.map((c) => c.outcome));
    const held = first.filter((_, i) => outcomes[i] === "answered");
    assert.ok(held.length > 0 && held.length < first.length, `${held.length} of ${first.length} answered with room for ${ROOM}`);
    assert.ok(outcomes.includes("closed"), "the connections past the limit are closed");

    // A descriptor the app still had as the first ones came (a start-up file closed late, as it
    // may be on a loaded machine) is room again: take it, so that the app is at its limit now.
    for (let c = request(port); (await c.outcome) === "answered"; c = request(port)) held.push(c);

    // Held at the limit: each connection past it is closed, none waits, and the main thread does
    // not spin meanwhile (its CPU time over the period, against the period's length).
    const [cpuBefore, wallBefore] = [cpuNs(pid), process.hrtime.bigint()];
    for (let i = 0; i < PAST_LIMIT; i++) assert.equal(await request(port).outcome, "closed", `connection ${i} past the limit`);
    const cpu = cpuNs(pid) - cpuBefore;
    const wall = Number(process.hrtime.bigint() - wallBefore);
    t.diagnostic(
      `${engine}: ${PAST_LIMIT} connections past the limit closed in ${(wall / 1e6).toFixed(0)} ms, the app's main thread ran ${(cpu / 1e6).toFixed(1)} ms`,
    );
    assert.ok(cpu < wall / 2, `the app's main thread ran ${(cpu / 1e6).toFixed(1)} ms of the ${(wall / 1e6).toFixed(0)} ms: a busy loop`);

    // Some held connections close: the server accepts and answers again.
    for (const { socket } of held) socket.destroy();
    let again: Outcome = "closed";
    // The app learns of the closes as its loop gets to them: a connection that came first is closed.
    while (again === "closed") {
      const c = request(port);
      again = await c.outcome;
      c.socket.destroy();
    }
    assert.equal(again, "answered");
    assert.equal(app.child.exitCode, null, "the app runs on");
    if (engine === "native") assert.match(app.stderr(), /COG_OUT_OF_DESCRIPTORS.*ran out of file descriptors/, "the native engine warns, once");
    assert.equal(app.stderr().match(/ran out of file descriptors/g)?.length ?? 0, engine === "native" ? 1 : 0, app.stderr());
  },
);
