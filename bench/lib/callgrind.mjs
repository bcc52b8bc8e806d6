// A server under valgrind's callgrind, and the instructions it runs while a load is sent to it:
// what bench/instructions.mjs and bench/arena-instructions.mjs count. Instrumentation is off until a count starts, so start-up and warm-up cost
// nothing but time.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

function run(command, args) {
  return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * Starts `node [nodeArgs] file` under callgrind, resolving once it prints "ready". `keep`: a
 * directory where each count's callgrind output is kept (see `count`), or undefined.
 */
export async function startUnderCallgrind({ node, nodeArgs = [], file, env, cwd, keep }) {
  const dir = mkdtempSync(join(tmpdir(), "cog-callgrind-"));
  if (keep) mkdirSync(keep, { recursive: true });
  const child = spawn(
    "valgrind",
    ["--tool=callgrind", "--instr-atstart=no", "--smc-check=all-non-file", `--callgrind-out-file=${dir}/cg.%p`, node, ...nodeArgs, file],
    {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  await new Promise((resolve, reject) => {
    const timer = setInterval(() => /^ready$/m.test(output) && (clearInterval(timer), resolve()), 100);
    child.on("exit", () => reject(new Error(`server exited:\n${output}`)));
  });
  return {
    /**
     * The instructions every thread of the server runs while `send` (sync or async) loads it; kept
     * as `keep`/`name`.callgrind (plus the thread's suffix) when `keep` was given.
     */
    async count(name, send) {
      run("callgrind_control", ["-z", String(child.pid)]);
      run("callgrind_control", ["-i", "on", String(child.pid)]);
      const sent = await send();
      // Dump before switching instrumentation off: switching off first leaves an empty dump.
      run("callgrind_control", ["-d", String(child.pid)]);
      let total = 0;
      // The dump is written by the server process itself: wait until it is there.
      for (let tries = 0; total === 0 && tries < 100; tries++) {
        await new Promise((r) => setTimeout(r, 100));
        for (const file of readdirSync(dir)) {
          const line = /^summary: (\d+)/m.exec(readFileSync(join(dir, file), "utf8"));
          if (line) {
            total += Number(line[1]);
            if (keep) renameSync(join(dir, file), join(keep, `${name}.callgrind${file.replace(/^cg\.\d+(\.\d+)?/, "")}`));
            else rmSync(join(dir, file));
          }
        }
      }
      run("callgrind_control", ["-i", "off", String(child.pid)]);
      return { instructions: total, sent };
    },
    stop() {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port nothing listens on, from the kernel: a fixed one collides with another run of these scripts. */
export async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
