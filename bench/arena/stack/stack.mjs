// production-stack as HttpArena specifies it, on one machine: nginx at the edge (HTTP/2 over TLS),
// the JWT sidecar it asks about every /api/ call, Redis as the app's second cache level, and the
// app itself (examples/arena.ts, or any server of the same routes) on Postgres. Each service on a
// free port; the caller gives the Postgres, the app's file and where to pin things.
//
//   node bench/arena/stack/stack.mjs      starts Postgres and the stack with examples/arena.ts
//                                         (COG_ENGINE=native for the native engine, WORKERS=…),
//                                         prints its URL and a token; Ctrl-C stops it all
import { rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { makeCertificate } from "../../lib/certificate.mjs";
import { freePort, startServer } from "../../lib/server.mjs";
import { hasRedis, startPostgres, startRedis } from "../database.mjs";
import { staticDir as arenaStaticDir } from "../static-files.mjs";
import { JWT_SECRET, TOKEN_CLAIMS, signToken } from "./authsvc.mjs";
import { hasNginx, startEdge } from "./edge.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..", "..");

/** Why the stack can't run here (nginx or redis-server missing), or undefined. */
export function stackMissing() {
  const missing = [!hasNginx() && "nginx", !hasRedis() && "redis-server"].filter(Boolean);
  return missing.length === 0 ? undefined : `production-stack needs ${missing.join(" and ")} (apt-get install ${missing.join(" ")})`;
}

/**
 * Starts Redis, the sidecar, the app and the edge. `app`: { runtime, args, file, env } for
 * startServer (the app gets PORT, DATABASE_URL and REDIS_URL besides); `cpu`: { app, services }
 * (the edge, the sidecar and Redis go on `services`), null each for no pinning. Resolves
 * { port (the edge's, HTTPS/2), appPort, redisUrl, token, pem (the edge's certificate), app
 * (startServer's handle: pid, sampler), stop() }.
 */
export async function startStack({
  databaseUrl,
  app,
  cpu = { app: null, services: null },
  staticDir = arenaStaticDir(),
  certificate = makeCertificate(),
  log = () => {},
}) {
  const missing = stackMissing();
  if (missing) throw new Error(missing);
  const stops = [() => rmSync(certificate.dir, { recursive: true, force: true })];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s();
  };
  try {
    const redis = await startRedis({ cpu: cpu.services });
    stops.push(redis.stop);
    const authsvc = await startServer({ runtime: process.execPath, file: join(here, "authsvc.mjs"), cpu: cpu.services, env: { JWT_SECRET } });
    stops.push(authsvc.stop);
    const appPort = await freePort();
    const server = await startServer({
      runtime: app.runtime ?? process.execPath,
      args: app.args ?? ["--import", "tsx"],
      file: app.file ?? join(root, "examples/arena.ts"),
      port: appPort,
      cpu: cpu.app,
      cwd: root,
      env: { ...app.env, DATABASE_URL: databaseUrl, REDIS_URL: redis.url, STATIC_DIR: staticDir },
    });
    stops.push(server.stop);
    const edge = await startEdge({
      port: await freePort(),
      appPort,
      authPort: authsvc.port,
      staticDir,
      cert: certificate.cert,
      key: certificate.key,
      cpu: cpu.services,
    });
    stops.push(edge.stop);
    log(`  stack: nginx :${edge.port} → app :${appPort} (pid ${server.pid}), authsvc :${authsvc.port}, ${redis.url}`);
    return { port: edge.port, appPort, redisUrl: redis.url, token: signToken(TOKEN_CLAIMS), pem: certificate.pem, app: server, edgePid: edge.pid, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const db = await startPostgres();
  let stack;
  try {
    stack = await startStack({
      databaseUrl: db.url,
      app: { env: { COG_ENGINE: process.env.COG_ENGINE ?? "node", ...(process.env.WORKERS && { WORKERS: process.env.WORKERS }) } },
    });
  } catch (err) {
    await db.stop();
    throw err;
  }
  console.log(`production-stack on https://127.0.0.1:${stack.port} (HTTP/2; a self-signed certificate: curl -k)`);
  console.log(`Authorization: Bearer ${stack.token}`);
  const quit = async () => {
    await stack.stop();
    await db.stop();
    process.exit(0);
  };
  process.on("SIGINT", quit);
  process.on("SIGTERM", quit);
}
