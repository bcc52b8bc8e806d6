// Memory and descriptors over many requests with connection churn: the short
// form of `npm run soak` (which runs 1M requests), on the node engine and on
// the native engine where it loads (its connections and requests live in Rust).
import assert from "node:assert/strict";
import { test } from "node:test";
import { RSS_SETTLED, soak } from "../../scripts/soak.mjs";
import { nativeSkip } from "../helpers.js";

for (const engine of ["node", "native"] as const) {
  test(
    `engine ${engine}: a soak of keep-alive requests with connection churn: heap flat, descriptors back to baseline, no errors`,
    { timeout: 900_000, skip: engine === "native" && nativeSkip },
    async () => {
      const report = await soak({ requests: Number(process.env.COG_SOAK_REQUESTS ?? 60_000), samples: 12, engine });
      console.log(`# soak (${engine}): ${JSON.stringify(report)}`);
      assert.equal(report.errors, 0);
      assert.equal(report.non2xx, 0);
      assert.ok(report.heapDrift <= 0.05, `heap grew ${(report.heapDrift * 100).toFixed(1)}% from the middle third to the last`);
      if (report.requests >= RSS_SETTLED)
        assert.ok(report.rssDrift <= 0.1, `resident set grew ${(report.rssDrift * 100).toFixed(1)}% from the middle third to the last`);
      assert.ok(report.fdsAfter <= report.fdsBaseline, `${report.fdsAfter} descriptors open after the run, ${report.fdsBaseline} before`);
      assert.equal(report.ok, true);
    },
  );
}
