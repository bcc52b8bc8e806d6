// A bounded run of Connect's conformance suite (connectrpc/conformance, server mode) against
// `cog-http/connect` on the engine under test: its Basic and Duplicate Metadata cases over HTTP/2
// (h2c and TLS), every protocol, codec, compression and stream type, about 570 cases in about
// 10 s. They hold the node engine's HTTP/2 fixes the suite found (a response ended as the
// request's body ends, or before it, losing its END_STREAM). The whole suite, HTTP/1.1 included,
// is `node scripts/connect-conformance.mjs` (docs/guide/grpc.md); its HTTP/1.1 cases are left out
// here, as some fail at times (see there). Needs Go, to install the runner: skipped without it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
// @ts-expect-error: a plain .mjs script, without types
import { connectConformance } from "../../scripts/connect-conformance.mjs";
import { engine, nativeSkip } from "../helpers.js";

const found = connectConformance() as { binary?: string; descriptors?: string; reason?: string };
const skip = found.binary === undefined ? found.reason! : engine === "native" && nativeSkip;
const suite = fileURLToPath(new URL("../connect-conformance/", import.meta.url));

test("Connect's conformance suite, Basic and Duplicate Metadata over HTTP/2: every case passes", { skip, timeout: 120_000 }, async () => {
  const args = [
    "--mode",
    "server",
    "--conf",
    `${suite}config.yaml`,
    "--max-servers",
    "1",
    "--parallel",
    "2",
    "--run",
    "Basic/HTTPVersion:2/**",
    "--run",
    "Duplicate Metadata/HTTPVersion:2/**",
    "--",
    process.execPath,
    "--import",
    "tsx",
    `${suite}server.ts`,
  ];
  const report = await new Promise<string>((resolve) => {
    execFile(
      found.binary!,
      args,
      { env: { ...process.env, COG_ENGINE: engine, CONFORMANCE_DESCRIPTORS: found.descriptors }, maxBuffer: 64 * 1024 * 1024 },
      (_err, stdout, stderr) => resolve(`${stdout}\n${stderr}`),
    );
  });
  const counts = /Total cases: (\d+)\n(\d+) passed, (\d+) failed/.exec(report);
  assert.ok(counts, `the runner's report has no summary:\n${report.slice(-2000)}`);
  const failed = report.split("\n").filter((line) => line.startsWith("FAILED: "));
  assert.deepEqual(failed, [], report.slice(0, 4000));
  assert.ok(Number(counts[1]) > 500, `${counts[1]} cases ran, where about 570 are expected`);
  assert.equal(counts[2], counts[1]);
});
