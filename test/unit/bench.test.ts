// The benchmark suite's own machinery: the conformance gate and the report builder.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createH2c } from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
// @ts-expect-error -- plain ESM modules without type declarations
import { checkArena, checkHttpArena } from "../../bench/arena/contract.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { renderSvg } from "../../bench/lib/charts.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { checkConformance } from "../../bench/lib/conformance.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { routeById } from "../../bench/lib/contract.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { SCENARIOS } from "../../bench/lib/scenarios.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { buildReport, median, summarize, unexpectedAnswers } from "../../bench/lib/report.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { startServer } from "../../bench/lib/server.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { checkServing } from "../../bench/serving/check.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { SERVING_ROUTES } from "../../bench/serving/scenarios.mjs";

describe("conformance check", () => {
  test("passes the bare node:http contender and names what a wrong one gets wrong", async (t) => {
    const server = await startServer({ runtime: process.execPath, file: "bench/contenders/node-http.mjs", cpu: null });
    t.after(() => server.stop());
    assert.deepEqual(await checkConformance("node-http", server.port), []);
    const problems: string[] = await checkConformance("impostor", server.port);
    assert.ok(problems.some((p) => p.includes('X-Powered-By is "node-http", expected "impostor"')));
  });

  test("refuses a server that answers wrongly", async (t) => {
    const bad = createServer((req, res) => {
      res.setHeader("x-powered-by", "bad");
      if (req.url === "/json") return res.end('{"hello":"wrong"}');
      // The authenticated /admin, right but for the cookie it should clear.
      if (req.url === "/admin" && req.headers.cookie === "token=my_token_12345") {
        res.setHeader("content-type", "application/json");
        return res.end('{"message":"Secret info"}');
      }
      res.statusCode = 500;
      res.end("nope");
    });
    await new Promise<void>((r) => bad.listen(0, "127.0.0.1", r));
    t.after(() => bad.close());
    const problems: string[] = await checkConformance("bad", (bad.address() as AddressInfo).port);
    assert.ok(problems.some((p) => p.startsWith("GET / (root): status 500, expected 200")));
    assert.ok(problems.some((p) => p.includes("GET /json (json): Content-Type")));
    assert.ok(problems.some((p) => p.includes('GET /json (json): body {"hello":"wrong"}')));
    assert.ok(problems.some((p) => p.includes("Set-Cookie")));
    const admin = problems.filter((p) => p.startsWith("GET /admin (admin-auth)"));
    assert.equal(admin.length, 1, admin.join("; "));
    assert.match(admin[0]!, /Set-Cookie \[\] does not match/);
  });

  test("every scenario's routes are in the contract; the seed times /admin on both branches", () => {
    for (const scenario of SCENARIOS) for (const id of scenario.routes) assert.equal(routeById(id).id, id);
    const seed = SCENARIOS.find((s: { id: string }) => s.id === "seed");
    assert.deepEqual(seed.routes, ["root", "deep", "query", "admin", "admin-auth", "set-token", "parse-body"]);
    const auth = routeById("admin-auth");
    assert.equal(auth.path, "/admin");
    assert.equal(auth.headers.cookie, "token=my_token_12345");
    assert.ok(auth.setCookie.test("token=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT"));
    assert.ok(!auth.setCookie.test("token=my_token_12345; Path=/"));
  });

  test("a server that never says ready is reported with its output", async () => {
    await assert.rejects(
      startServer({ runtime: process.execPath, file: "test/fixtures/crashing-server.mjs", cpu: null }),
      /exited \(1\) before it was ready[^]*the database is down/,
    );
  });
});

describe("report builder", () => {
  const measurement = (contender: string, route: string, rps: number, extra: Record<string, unknown> = {}) => ({
    scenario: "seed",
    route,
    contender,
    round: 1,
    requests: rps * 5,
    rps,
    bytesPerSec: rps * 100,
    latencyAvg: 1000 / rps,
    latencyP99: 5000 / rps,
    errors: 0,
    timeouts: 0,
    resets: 0,
    statuses: { [route === "admin" ? "403" : "200"]: rps * 5 },
    serverPeakRss: 50 * 2 ** 20,
    serverCpu: 0.99,
    serverCpuSeconds: 5,
    generatorCpu: 0.5,
    rssSeries: [
      { t: 0, rss: 40 * 2 ** 20 },
      { t: 1, rss: 50 * 2 ** 20 },
    ],
    ...extra,
  });
  const results = {
    meta: {
      date: "2026-01-01T00:00:00Z",
      machine: "test machine",
      node: "v20.0.0",
      tool: "autocannon",
      rounds: 3,
      duration: 5,
      warmup: 2,
      pinning: "servers on CPU 0",
      command: "npm run bench",
      connectionsOverride: null,
    },
    scenarios: [{ id: "seed", title: "Cog's six routes", source: "seed 000", routes: ["root", "admin"], connections: 800, pipelining: 1 }],
    contenders: [
      { name: "node-http", engine: "node", version: "v20.0.0", about: "bare" },
      { name: "cog", engine: "node", version: "0.1.0", about: "this repo" },
    ],
    skipped: [{ name: "uws", reason: "no native build for this Node" }],
    measurements: [
      measurement("node-http", "root", 100),
      measurement("node-http", "root", 120, { round: 2 }),
      measurement("node-http", "root", 110, { round: 3 }),
      measurement("cog", "root", 99),
      measurement("cog", "root", 130, { round: 2, generatorCpu: 0.99 }),
      measurement("cog", "root", 105, { round: 3, generatorCpu: 0.99, errors: 2, timeouts: 1 }),
      measurement("node-http", "admin", 50),
      measurement("cog", "admin", 60, { statuses: { "403": 290, "500": 10 } }),
    ],
  };

  test("medians, ratios to the bare server, errors and unexpected statuses", () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.equal(median([]), null);
    const rows = summarize(results);
    const cogRoot = rows.find((r: { contender: string; route: string }) => r.contender === "cog" && r.route === "root");
    assert.equal(cogRoot.rps, 105);
    // Paired by round: 99/100, 130/120, 105/110 -> median 0.99 (the ratio of the medians would say 105/110).
    assert.equal(cogRoot.ratio, 99 / 100);
    assert.equal(cogRoot.errors, 3);
    assert.equal(cogRoot.generatorBound, true, "the generator used a whole core in most rounds");
    assert.equal(cogRoot.cpuMicrosPerRequest, (5 / (105 * 5)) * 1e6);
    // CPU per request against the bare server's, paired the same way: 100/99, 120/130, 110/105 -> 100/99.
    assert.ok(Math.abs(cogRoot.cpuRatio - 100 / 99) < 1e-12, `cpuRatio ${cogRoot.cpuRatio}`);
    const cogAdmin = rows.find((r: { contender: string; route: string }) => r.contender === "cog" && r.route === "admin");
    assert.equal(cogAdmin.unexpected, 10, "403 is what /admin should answer; only the 500s are unexpected");
    assert.equal(unexpectedAnswers({ route: "root", requests: 100, statuses: { "non-2xx/3xx": 4 } }), 4);
    assert.equal(unexpectedAnswers({ route: "admin", requests: 100, statuses: { "non-2xx/3xx": 100 } }), 0);
    // The authenticated /admin should answer 200: its 403s are unexpected.
    assert.equal(unexpectedAnswers({ route: "admin-auth", requests: 100, statuses: { "200": 96, "403": 4 } }), 4);
  });

  test("the markdown states the method and gives every contender a row, skipped ones a reason", () => {
    const report: string = buildReport(results, ["charts/requests.svg"]);
    assert.match(report, /\*\*Machine:\*\* test machine/);
    assert.match(report, /\*\*Command:\*\* `npm run bench`/);
    assert.match(report, /\| \*\*cog\*\* \| 105 \(0\.99×\)† \| 60 \(1\.20×\) \|/);
    assert.match(report, /\| node-http \| 110 \(1\.00×\) \| 50 \(1\.00×\) \|/);
    assert.match(report, /- \*\*uws\*\*: no native build for this Node/);
    assert.match(report, /!\[charts\/requests\.svg\]\(charts\/requests\.svg\)/);
    // Two routes on GET /admin: the authenticated one is told apart by its note.
    const both = buildReport({
      ...results,
      scenarios: [{ ...results.scenarios[0], routes: ["admin", "admin-auth"] }],
      measurements: [...results.measurements, measurement("node-http", "admin-auth", 40), measurement("cog", "admin-auth", 30)],
    });
    assert.match(both, /\| contender \| `\/admin` \| `\/admin` \(token\) \|/);
    assert.match(both, /\| \*\*cog\*\* \| 60 \(1\.20×\) \| 30 \(0\.75×\) \|/);
    assert.match(report, /† the load generator used a whole core/);
  });

  test("charts render to SVG without a browser", async () => {
    const svg: string = await renderSvg({
      data: { values: [{ a: "x", b: 1 }] },
      mark: "bar",
      encoding: { x: { field: "a", type: "nominal" }, y: { field: "b", type: "quantitative" } },
    });
    assert.match(svg, /^<svg[^>]*>/);
    assert.match(svg, /<\/svg>$/);
  });
});

describe("serving scenarios", () => {
  const route = SERVING_ROUTES.find((r: { id: string }) => r.id === "serving-json-h2c");

  test("the check passes the bare node:http2 server and names what a wrong one gets wrong", async (t) => {
    const bare = await startServer({ runtime: process.execPath, file: "bench/serving/node-http.mjs", cpu: null, env: { PROTO: "h2c" } });
    t.after(() => bare.stop());
    assert.deepEqual(await checkServing({ protocol: "h2c", port: bare.port, route }), []);
    const wrong = createH2c((_req, res) => {
      res.setHeader("content-type", "text/plain");
      res.end('{"message":"Hello"}');
    });
    await new Promise<void>((r) => wrong.listen(0, "127.0.0.1", r));
    t.after(() => wrong.close());
    const problems: string[] = await checkServing({ protocol: "h2c", port: (wrong.address() as AddressInfo).port, route });
    assert.ok(
      problems.some((p) => p.startsWith('GET /json over h2c: Content-Type "text/plain"')),
      problems.join("\n"),
    );
    assert.ok(
      problems.some((p) => p.startsWith('GET /json over h2c: body {"message":"Hello"}')),
      problems.join("\n"),
    );
    // An HTTP/1.1 server asked for h2c gives no HTTP/2 answer: a problem, not a hang.
    const http1 = await checkServing({ protocol: "h2c", port: (await listening(createServer((_req, res) => res.end()))).port, route });
    assert.equal(http1.length, 1, http1.join("\n"));
  });

  test(
    "npm run bench -- --scenarios json-h2c times the contenders and lists the one that can't run it",
    { skip: hasCommand("h2load") ? false : "h2load is not installed (apt-get install nghttp2-client)" },
    (t) => {
      const out = mkdtempSync(join(tmpdir(), "cog-bench-serving-"));
      t.after(() => rmSync(out, { recursive: true, force: true }));
      const run = spawnSync(
        process.execPath,
        ["bench/run.mjs", "--scenarios", "json-h2c", "--contenders", "node-http,cog,uws", "--rounds", "1", "--duration", "1", "--warmup", "0", "--out", out],
        { encoding: "utf8", timeout: 60_000 },
      );
      assert.equal(run.status, 0, run.stderr + run.stdout);
      assert.match(run.stdout, /\[1\/2[^\]]*\] json-h2c\/serving-json-h2c round 1\/1 (cog|node-http): [\d,]+ req\/s/);
      const report = readFileSync(join(out, "report.md"), "utf8");
      assert.match(report, /### json-h2c: JSON over cleartext HTTP\/2/);
      assert.match(report, /\| \*\*cog\*\* \| [^|]+ \| [\d,]+ \| [\d.]+× \| [\d.]+× \|/);
      assert.match(report, /\| node-http \| v\d+[^|]* \| [\d,]+ \| 1\.00× \| 1\.00× \|/);
      assert.match(report, /- \*\*uws\*\*: uWebSockets\.js has no HTTP\/2/);
    },
  );

  test(
    "npm run bench -- --scenarios unary-grpc checks and times the arena app and grpc-js's server, and writes grpc.md",
    { skip: hasCommand("h2load") ? false : "h2load is not installed (apt-get install nghttp2-client)" },
    (t) => {
      const out = mkdtempSync(join(tmpdir(), "cog-bench-grpc-"));
      t.after(() => rmSync(out, { recursive: true, force: true }));
      const run = spawnSync(
        process.execPath,
        ["bench/run.mjs", "--scenarios", "unary-grpc", "--contenders", "cog,grpc-js", "--rounds", "1", "--duration", "1", "--warmup", "0", "--out", out],
        { encoding: "utf8", timeout: 120_000 },
      );
      assert.equal(run.status, 0, run.stderr + run.stdout);
      assert.match(run.stdout, /ok {3}cog \(gRPC\) passes HttpArena's unary-grpc and stream-grpc checks/);
      const report = readFileSync(join(out, "grpc.md"), "utf8");
      assert.match(report, /### unary-grpc: unary gRPC: GetSum over h2c/);
      for (const name of ["cog", "grpc-js"]) assert.match(report, new RegExp(`\\| ${name} \\| [\\d,]+ \\| [\\d.]+ µs \\| [^|]* \\| 0 \\|`), report);
    },
  );
});

function hasCommand(command: string): boolean {
  try {
    execFileSync(command, ["--version"], { stdio: "ignore" });
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

async function listening(server: ReturnType<typeof createServer>): Promise<AddressInfo> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  after(() => server.close());
  return server.address() as AddressInfo;
}

/**
 * A port nothing listens on, from the kernel. A fixed one can collide: ports from 32768 up are
 * also handed out to outgoing connections, of which the other test files open thousands.
 */
describe("arena checks", () => {
  test("name what a server that cuts corners gets wrong", async (t) => {
    // Ignores POST bodies, answers one pipelined request per connection, drops the totals,
    // and reports an upload's Content-Length instead of counting it (a chunked one has none).
    const cheat = createServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      res.setHeader("content-type", url.pathname.startsWith("/json") ? "application/json" : "text/plain");
      res.setHeader("connection", "close");
      if (url.pathname === "/baseline11") return res.end(String(Number(url.searchParams.get("a")) + Number(url.searchParams.get("b"))));
      if (url.pathname === "/pipeline") return res.end("ok");
      if (url.pathname.startsWith("/json/")) return res.end(JSON.stringify({ items: [], count: Number(url.pathname.slice(6)) }));
      if (url.pathname === "/upload") {
        req.resume();
        return req.on("end", () => res.end(String(req.headers["content-length"])));
      }
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => cheat.listen(0, "127.0.0.1", r));
    t.after(() => cheat.close());
    const problems: string[] = await checkArena({ port: (cheat.address() as AddressInfo).port, scenarios: ["baseline", "pipelined", "json", "upload"] });
    for (const expected of [
      "POST /baseline11 (Content-Length)",
      "POST /baseline11 (chunked)",
      "16 pipelined GET /pipeline",
      "GET /json/50?m=",
      "POST /upload (chunked",
    ]) {
      assert.ok(
        problems.some((p) => p.startsWith(expected)),
        `no problem starting "${expected}" in:\n${problems.join("\n")}`,
      );
    }
    assert.ok(!problems.some((p) => p.startsWith("GET /baseline11:")), "the GET it answers right is not blamed");
  });

  test("HttpArena's validation names what validate.sh would fail", async (t) => {
    // Sums the query only (the POST body ignored), as JSON; made-up items of the right shape whose
    // totals add up (validate.sh compares them with the dataset now); an h2c "port" that is plain
    // HTTP/1.1.
    const cheat = createServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      if (url.pathname === "/baseline11" || url.pathname === "/baseline2") {
        res.setHeader("content-type", "application/json");
        req.resume();
        return req.on("end", () => res.end(String(Number(url.searchParams.get("a")) + Number(url.searchParams.get("b")))));
      }
      if (url.pathname.startsWith("/json/")) {
        const count = Number(url.pathname.slice(6));
        const m = Number(url.searchParams.get("m"));
        const item = (id: number) => ({
          id,
          name: "made up",
          category: "tools",
          price: 2,
          quantity: 3,
          total: 6 * m,
          tags: [],
          active: true,
          rating: { score: 4, count: 1 },
        });
        res.setHeader("content-type", "application/json");
        return res.end(JSON.stringify({ items: Array.from({ length: count }, (_, i) => item(i + 1)), count }));
      }
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => cheat.listen(0, "127.0.0.1", r));
    t.after(() => cheat.close());
    const port = (cheat.address() as AddressInfo).port;
    const problems: string[] = await checkHttpArena({ ports: { port, h2cPort: port }, profiles: ["baseline", "json", "baseline-h2c", "production-stack"] });
    for (const expected of [
      "POST /baseline11?a=13&b=42 body=20:",
      "POST /baseline11?a=13&b=42 chunked body=20:",
      "GET /baseline11 Content-Type",
      "/baseline11 — split headers/body",
      "/baseline11 — lower-cased content-length",
      "GET /json/",
      "baseline-h2c:",
      "production-stack: not a profile",
    ]) {
      assert.ok(
        problems.some((p) => p.startsWith(expected)),
        `no problem starting "${expected}" in:\n${problems.join("\n")}`,
      );
    }
    assert.ok(
      problems.filter((p) => p.startsWith("GET /json/")).every((p) => p.endsWith("the items are not the dataset's first " + /\/json\/(\d+)/.exec(p)![1])),
      "the made-up items are told apart from the dataset's",
    );
    assert.ok(!problems.some((p) => p.startsWith("GET /baseline11?a=13&b=42:")), "the GET it answers right is not blamed");
  });
});
