// The serving bench's HTTP/3 scenarios (baseline-h3, static-h3): bench/h3-load must fail a run
// whose answers are wrong, however fast they come, and the check before timing must ask over
// HTTP/3 and say what a server without it gets wrong. Against real listening apps on the native
// engine; skipped, saying why, without Go or the native engine.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { measure } from "../../bench/lib/load.mjs";
import { checkServing } from "../../bench/serving/check.mjs";
import { SERVING_ROUTES } from "../../bench/serving/scenarios.mjs";
import { Cog } from "../../src/index.js";
import { makeCertificates, opensslSkip } from "../certificates.js";
import { nativeSkip } from "../helpers.js";

const goSkip = spawnSync("go", ["version"]).status === 0 ? false : "go is not installed (https://go.dev/dl/): bench/h3-load is built with it";
const skip = nativeSkip || opensslSkip || goSkip;

describe("the serving bench over HTTP/3", { skip, timeout: 180_000 }, () => {
  const route = SERVING_ROUTES.find((r: { id: string }) => r.id === "serving-baseline-h3");
  let right: Cog;
  let wrong: Cog;
  let rightPort: number;
  let wrongPort: number;

  before(async () => {
    const tls = makeCertificates().issue("localhost");
    right = new Cog({ engine: "native", tls });
    right.get("/baseline2", (req, res) => res.send(String(Number(req.query.a) + Number(req.query.b))));
    // Fast and wrong: every fifth answer is off by one.
    let n = 0;
    wrong = new Cog({ engine: "native", tls });
    wrong.get("/baseline2", (req, res) => res.send(String(Number(req.query.a) + Number(req.query.b) + (++n % 5 === 0 ? 1 : 0))));
    ({ port: rightPort } = (await right.listen({ port: 0, host: "127.0.0.1", http3: true })) as { port: number });
    ({ port: wrongPort } = (await wrong.listen({ port: 0, host: "127.0.0.1", http3: true })) as { port: number });
  });
  after(async () => {
    await right?.close();
    await wrong?.close();
  });

  const load = (port: number) =>
    measure({
      tool: "h3-load",
      url: `https://127.0.0.1:${port}${route.path}`,
      method: "GET",
      headers: {},
      connections: 2,
      streams: 4,
      pipelining: 1,
      duration: 1,
      expectBody: "2",
      cpu: null,
    });

  test("h3-load times a server whose every answer is right, and fails the run of one that answers wrong", async () => {
    const timed = await load(rightPort);
    assert.ok(timed.requests > 0 && timed.rps > 0, JSON.stringify(timed));
    assert.equal(timed.errors, 0);
    assert.ok(timed.latencyP99 !== null && timed.latencyP99 > 0);
    await assert.rejects(load(wrongPort), /h3-load exited with 1: h3-load: \d+ wrong answers; the first: GET \S+: body "3", expected "2"/);
  });

  test("the check asks over HTTP/3: it passes the right server, and a server without HTTP/3 is a problem, not a hang", async () => {
    assert.deepEqual(await checkServing({ protocol: "h3", port: rightPort, route }), []);
    const tcpOnly = new Cog({ engine: "native", tls: makeCertificates().issue("localhost") });
    tcpOnly.get("/baseline2", (_req, res) => res.send("2"));
    const { port } = (await tcpOnly.listen({ port: 0, host: "127.0.0.1" })) as { port: number };
    try {
      const problems: string[] = await checkServing({ protocol: "h3", port, route });
      assert.equal(problems.length, 1, problems.join("\n"));
      assert.match(problems[0]!, /^GET \/baseline2\?a=1&b=1 over h3: no answer over HTTP\/3: /);
    } finally {
      await tcpOnly.close();
    }
  });
});
