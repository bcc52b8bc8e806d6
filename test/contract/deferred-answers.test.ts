// Requests answered on a later tick than their dispatch (a middleware that defers next(), a body
// parser) die young, as those answered at once do: nothing of Cog's holds one past its answer, so
// the old generation takes in little and V8 runs no full collections for them. Each app is its own
// process (test/fixtures/deferred-app.ts); the figures are what its old space took in over the
// requests, after a full collection (which is what used to set it off: a long-lived Map's table
// in the old generation, see docs/decisions/deferred-answers.md).
import assert from "node:assert/strict";
import { test } from "node:test";
import autocannon from "autocannon";
import { startChild, waitForOutput } from "../children.js";
import { engine, nativeSkip } from "../helpers.js";

const REQUESTS = 40_000;

interface Figures {
  counted: number;
  majors: number;
  grownMB: number;
}

async function load(port: number, path: string, amount: number, body?: string): Promise<void> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    connections: 10,
    amount,
    ...(body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body }),
  });
  assert.equal(result.errors, 0);
  assert.equal(result.non2xx, 0);
}

const cases = [
  { name: "Cog's API, a middleware that defers next() by a tick, outside production", face: "cog", env: { NODE_ENV: "development" }, path: "/deferred" },
  { name: "Cog's API, a middleware that defers next() by a tick, in production", face: "cog", env: { NODE_ENV: "production" }, path: "/deferred" },
  {
    name: "cog-http/express, a JSON body read by express.json()",
    face: "express",
    env: { NODE_ENV: "production" },
    path: "/body",
    body: '{"message":"Hello!"}',
  },
] as const;

for (const c of cases) {
  test(
    `${c.name}: the requests die young, the old generation takes in little, at most one full collection (${engine})`,
    { skip: engine === "native" && nativeSkip, timeout: 180_000 },
    async (t) => {
      const app = startChild(t, process.execPath, ["--expose-gc", "--import", "tsx", "test/fixtures/deferred-app.ts"], {
        env: { ...process.env, ...c.env, COG_ENGINE: engine, FACE: c.face },
      });
      await waitForOutput(app, (out) => out.includes("\n"), "the fixture to print its port");
      const port = Number(app.stdout().split("\n")[0]);
      const body = "body" in c ? c.body : undefined;
      await load(port, c.path, 3_000, body); // warm-up: compiled, and the tables grown to their size
      assert.equal((await fetch(`http://127.0.0.1:${port}/measure`)).status, 200);
      await load(port, c.path, REQUESTS, body);
      const figures = (await (await fetch(`http://127.0.0.1:${port}/figures`)).json()) as Figures;
      t.diagnostic(JSON.stringify(figures));
      assert.ok(figures.counted >= REQUESTS, `the app counted ${figures.counted} requests`);
      // Measured (40,000 requests): 0.2-1.1 MB and no full collection. While Cog held them (a Map's
      // dead tables, the unanswered-handler warning's second), 7-100 MB, and up to 4 collections.
      assert.ok(figures.grownMB < 4, `old space took in ${figures.grownMB} MB over ${REQUESTS} requests`);
      // V8 may run one full collection of its own over a run (the old generation's limit
      // reached by the app's own young objects, on a busy machine): more is the sign.
      assert.ok(figures.majors <= 1, `${figures.majors} full collections over ${REQUESTS} requests`);
    },
  );
}
