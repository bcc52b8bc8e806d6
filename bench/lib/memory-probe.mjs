// Preloaded into a server by bench/arena/held-breakdown.mjs (`node --expose-gc --import` this):
// on SIGUSR2 the server collects its garbage, then writes, to the file COG_MEMORY_PROBE names, its
// memory figures after that collection; with COG_MEMORY_SNAPSHOT set, a heap snapshot to
// `${COG_MEMORY_SNAPSHOT}-<n>.heapsnapshot` first. The figures file is written last: its
// existence says both are done.
import { writeFileSync } from "node:fs";
import v8 from "node:v8";

let snapshots = 0;
process.on("SIGUSR2", () => {
  // Twice: what a finalizer of the first collection let go is collected by the second.
  globalThis.gc?.();
  globalThis.gc?.();
  const snapshot = process.env.COG_MEMORY_SNAPSHOT ? v8.writeHeapSnapshot(`${process.env.COG_MEMORY_SNAPSHOT}-${++snapshots}.heapsnapshot`) : null;
  writeFileSync(process.env.COG_MEMORY_PROBE, JSON.stringify({ ...process.memoryUsage(), snapshot }));
});
