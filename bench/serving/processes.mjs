// How a serving contender (other than Cog, which has `listen({ workers })`) runs as one process or
// as WORKERS processes on one port, and says "ready" once all of them listen. Workers are
// node:cluster's (on Node, the primary shares its listening socket; uWS.js and Bun listen with
// SO_REUSEPORT in each worker instead). The primary stops its workers when it is stopped.
import cluster from "node:cluster";
import { readFileSync } from "node:fs";

/** PROTO: "http" (HTTP/1.1), "tls" (HTTPS/1.1), "h2" (HTTP/2 over TLS with ALPN, HTTP/1.1 allowed) or "h2c" (cleartext prior-knowledge HTTP/2). */
export const PROTO = process.env.PROTO ?? "http";
export const PORT = Number(process.env.PORT);
export const HOST = "127.0.0.1";

/** The key and certificate (PEM) the bench made for this run, for PROTO tls or h2. */
export function tlsFiles() {
  return { key: readFileSync(process.env.TLS_KEY), cert: readFileSync(process.env.TLS_CERT) };
}

/** Runs `listen` (resolves once this process listens) in this process, or in WORKERS worker processes. */
export async function serve(listen) {
  const workers = process.env.WORKERS === undefined ? 0 : Number(process.env.WORKERS);
  if (workers === 0) {
    await listen();
    console.log("ready");
    return;
  }
  if (cluster.isWorker) {
    await listen();
    process.send("ready");
    return;
  }
  const forked = Array.from({ length: workers }, () => cluster.fork());
  await Promise.all(
    forked.map(
      (worker) =>
        new Promise((resolve, reject) => {
          worker.once("message", resolve);
          worker.once("exit", (code) => reject(new Error(`a worker exited (${code}) before it listened`)));
        }),
    ),
  );
  const stop = () => {
    for (const worker of forked) worker.process.kill("SIGTERM");
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  console.log("ready");
}
