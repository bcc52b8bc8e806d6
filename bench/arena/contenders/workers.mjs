// Runs a Node arena contender (ARENA_APP, a server file that listens on PORT and prints "ready")
// in WORKERS worker processes sharing its port, as node:cluster shares it (the primary accepts and
// hands connections round-robin to the workers), for the scenarios served from a worker per core
// (api-4, api-16). Cog's app starts its own workers (`listen({ workers })`). Prints "ready" once
// every worker listens; SIGTERM stops them.
import cluster from "node:cluster";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

if (cluster.isWorker) {
  await import(pathToFileURL(resolve(process.env.ARENA_APP)).href);
} else {
  const count = Number(process.env.WORKERS);
  // Each worker's own "ready" stays here (silent: its output is piped to this process): the one
  // the bench waits for is this process's, once all of them listen.
  cluster.setupPrimary({ silent: true });
  const workers = Array.from({ length: count }, () => {
    const worker = cluster.fork();
    worker.process.stdout.resume();
    worker.process.stderr.pipe(process.stderr);
    return worker;
  });
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise((done, fail) => {
          worker.once("listening", done);
          worker.once("exit", (code) => fail(new Error(`a worker exited (${code}) before it listened`)));
        }),
    ),
  );
  const stop = () => {
    for (const worker of workers) worker.process.kill("SIGTERM");
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  console.log("ready");
}
