// compress()'s default syncLimit follows the CPUs the process may run on: 8 KiB, or 64 KiB on one
// CPU, where libuv's thread pool shares the JavaScript thread's CPU (src/http/compress.ts,
// docs/decisions/compression.md). Each case runs in a child process pinned with taskset, and
// tells which way a 20 KiB body went: compressed on the JavaScript thread, the head is written
// before `res.json()` returns; on the thread pool, after.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

const index = fileURLToPath(new URL("../../src/index.ts", import.meta.url));
const script = `
import { Cog } from ${JSON.stringify(index)};
const app = new Cog({ engine: "node" });
let inline;
app.get("/big", { compress: true }, (_req, res) => {
  res.json({ text: "compressible ".repeat(1600) });
  inline = res.headersSent;
});
const answer = await app.inject({ url: "/big", headers: { "accept-encoding": "gzip" } });
console.log(JSON.stringify({ cpus: (await import("node:os")).availableParallelism(), inline, encoding: answer.headers["content-encoding"] }));
`;

function run(cpus: string, options = ""): { cpus: number; inline: boolean; encoding: string } {
  const out = execFileSync(
    "taskset",
    ["-c", cpus, process.execPath, "--import", "tsx", "--input-type=module", "-e", script.replace("{ compress: true }", `{ compress: ${options || "true"} }`)],
    { encoding: "utf8" },
  );
  return JSON.parse(out.trim().split("\n").pop()!);
}

const skip = process.platform !== "linux" ? "taskset is Linux's" : availableParallelism() < 2 ? "needs two CPUs to compare one with two" : false;

test(
  "a 20 KiB body is compressed on the JavaScript thread when the process has one CPU, on the thread pool when it has two, unless syncLimit says otherwise",
  { skip, timeout: 60_000 },
  () => {
    const one = run("0");
    assert.deepEqual(one, { cpus: 1, inline: true, encoding: "gzip" });
    const two = run("0,1");
    assert.deepEqual(two, { cpus: 2, inline: false, encoding: "gzip" });
    // An explicit syncLimit is kept as it is, whatever the CPUs.
    assert.deepEqual(run("0", "{ syncLimit: 8192 }"), { cpus: 1, inline: false, encoding: "gzip" });
    assert.deepEqual(run("0,1", "{ syncLimit: 65536 }"), { cpus: 2, inline: true, encoding: "gzip" });
  },
);
