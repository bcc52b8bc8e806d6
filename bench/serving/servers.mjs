// Starts each serving contender once per scenario it runs (a server speaks the one protocol its
// scenario times), on a certificate made for the run, and checks its answer over that protocol
// before anything is timed: a contender that cannot start or answers wrong is not timed there,
// and the report says why.
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { unableReason } from "../arena/contenders.mjs";
import { staticDir } from "../arena/static-files.mjs";
import { makeCertificate } from "../lib/certificate.mjs";
import { startServer } from "../lib/server.mjs";
import { checkServing } from "./check.mjs";
import { servingEntries } from "./contenders.mjs";
import { SERVING_ROUTES } from "./scenarios.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * @param {object} o
 * @param {object[]} o.scenarios serving scenarios to run
 * @param {object[]} o.contenders serving contenders wanted
 * @param {(c: object) => {path: string|null, reason?: string}} o.runtimeOf
 * @param {string|null} o.serverCpu core for the servers (scenarios with workers run unpinned)
 */
export async function startServing({ scenarios, contenders, runtimeOf, serverCpu, log }) {
  const running = [];
  const skipped = [];
  const certs = scenarios.some((s) => s.protocol === "tls" || s.protocol === "h2" || s.protocol === "h3") ? makeCertificate() : null;
  for (const scenario of scenarios) {
    const route = SERVING_ROUTES.find((r) => r.id === `serving-${scenario.id}`);
    for (const contender of servingEntries(scenario, contenders)) {
      const skip = (reason) => {
        skipped.push({ name: contender.name, scenario: scenario.id, reason });
        log(`  skip ${contender.name} on ${scenario.id}: ${reason}`);
      };
      const reason = unableReason(contender, scenario);
      if (reason) {
        skip(reason);
        continue;
      }
      const runtime = runtimeOf(contender);
      if (runtime.path === null) {
        skip(runtime.reason);
        continue;
      }
      const env = { ...contender.env, PROTO: scenario.protocol, STATIC_DIR: staticDir(), ...(certs && { TLS_KEY: certs.key, TLS_CERT: certs.cert }) };
      if (contender.workers !== undefined) env.WORKERS = String(contender.workers);
      let server;
      try {
        server = await startServer({ runtime: runtime.path, file: join(here, contender.file), cpu: scenario.workers ? null : serverCpu, env });
      } catch (err) {
        skip(`could not start: ${startFailure(err.message)}`);
        continue;
      }
      const problems = await checkServing({ protocol: scenario.protocol, port: server.port, route, ca: certs?.pem });
      if (problems.length > 0) {
        await server.stop();
        skip(`answered wrong: ${problems.join("; ")}`);
        continue;
      }
      running.push({ contender, server, scenarios: [scenario.id] });
      log(`  ok   ${contender.name} answers ${scenario.id} (${scenario.protocol}) right (pid ${server.pid}, port ${server.port})`);
    }
  }
  return {
    running,
    skipped,
    async stop() {
      await Promise.all(running.map(({ server }) => server.stop()));
      if (certs) rmSync(certs.dir, { recursive: true, force: true });
    },
  };
}

/** The line of a server's output that says why it did not start (a thrown error's message), else its last lines. */
function startFailure(output) {
  const lines = output.split("\n").filter(Boolean);
  return lines.find((line) => /^[A-Z]\w*Error\b.*: /.test(line)) ?? lines.slice(-3).join(" / ");
}
