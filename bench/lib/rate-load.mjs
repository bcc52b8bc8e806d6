// bench/rate-load (Go), built on first use into .cache/: the load generator of the arena's
// fixed-rate scenarios (latency-10k and its kin, idle) and of bench/arena/held.mjs.
import { goBinary } from "./go-binary.mjs";

/** The built binary's path (rebuilt when a source file is newer); throws why it can't be built. */
export const rateLoadBinary = () => goBinary("rate-load");

/** rate-load's arguments for a fixed-rate run (rate 0: an idle run; connections 0: none opened). */
export function rateLoadArgs({ url, rate, connections, duration, method = "GET", bodySize = 0, checkEcho = false }) {
  const args = ["-url", url, "-rate", String(rate), "-c", String(connections), "-d", `${duration}s`];
  if (method !== "GET") args.push("-method", method);
  if (bodySize > 0) args.push("-body-size", String(bodySize));
  if (checkEcho) args.push("-check-echo");
  return args;
}

/** rate-load's JSON line in the shape bench/lib/load.mjs gives every tool's figures (latencies in ms). */
export function parseRateLoad(stdout) {
  const line = stdout
    .trim()
    .split("\n")
    .findLast((l) => l.startsWith("{"));
  if (line === undefined) throw new Error(`rate-load printed no result:\n${stdout}`);
  const r = JSON.parse(line);
  const ms = (us) => (r.requests > 0 ? us / 1000 : null);
  return {
    requests: r.requests,
    rps: r.requests > 0 ? r.rps : 0,
    bytesPerSec: null,
    latencyAvg: ms(r.meanUs),
    latencyP99: ms(r.p99Us),
    latencyP999: ms(r.p999Us),
    offered: r.offered,
    rateRatio: r.requests > 0 ? r.rateRatio : null,
    unsent: r.unsent,
    errors: r.errors,
    timeouts: r.unsent,
    resets: 0,
    statuses: r.statuses ?? {},
    firstError: r.firstError,
  };
}
