#!/usr/bin/env node
// Runs Connect's own conformance suite (github.com/connectrpc/conformance, server mode) against
// `cog-http/connect`, on each engine: its runner, `connectconformance`, starts the server under
// test (test/connect-conformance/server.ts) and drives it over gRPC, gRPC-Web and Connect's
// protocol, on HTTP/1.1 and HTTP/2, in the cases test/connect-conformance/config.yaml declares.
//
//   node scripts/connect-conformance.mjs [--engine node|native]... [-- runner flags, e.g. --run 'Connect Unexpected Responses/**']
//
// Needs Go (the runner is installed from the Go module proxy into node_modules/.cache, and the
// suite's .proto files come from the same module in Go's module cache) and npx (`buf`, from npm,
// builds the protos into the descriptor set the server reads). Prints the runner's report per
// engine, then a summary; exits 1 when a case failed that neither test/connect-conformance/known-failing.txt
// nor the engine's known-flaky-<engine>.txt lists (or when a case known-failing.txt lists passed).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The newest releases when this was written: the runner (and its protos) and buf.
export const VERSION = "v1.0.7";
const BUF_VERSION = "1.75.0";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, "node_modules", ".cache", "connect-conformance", VERSION);
const binary = join(dir, "connectconformance");
const descriptors = join(dir, "conformance.binpb");
const suite = join(root, "test", "connect-conformance");

/** The runner and the suite's descriptor set, made on first use; the reason when they can't be. */
export function connectConformance() {
  if (existsSync(binary) && existsSync(descriptors)) return { binary, descriptors };
  if (spawnSync("go", ["version"], { stdio: "ignore" }).status !== 0)
    return {
      reason: `Connect's conformance runner is not installed and Go is not there to install it (go install connectrpc.com/conformance/cmd/connectconformance@${VERSION})`,
    };
  mkdirSync(dir, { recursive: true });
  if (!existsSync(binary)) {
    const install = spawnSync("go", ["install", `connectrpc.com/conformance/cmd/connectconformance@${VERSION}`], {
      env: { ...process.env, GOBIN: dir },
      encoding: "utf8",
    });
    if (install.status !== 0 || !existsSync(binary)) return { reason: `go install of connectconformance failed: ${lastLine(install.stderr)}` };
  }
  // The suite's protos, from the module the runner was built from (`go install` put it in the module cache).
  const download = spawnSync("go", ["mod", "download", "-json", `connectrpc.com/conformance@${VERSION}`], { cwd: dir, encoding: "utf8" });
  if (download.status !== 0) return { reason: `go mod download of connectrpc.com/conformance failed: ${lastLine(download.stderr || download.stdout)}` };
  const protos = join(JSON.parse(download.stdout).Dir, "proto");
  // buf compiles them with the well-known types they import, with no protoc needed.
  const build = spawnSync("npx", ["--yes", `@bufbuild/buf@${BUF_VERSION}`, "build", protos, "-o", descriptors], { cwd: dir, encoding: "utf8" });
  if (build.status !== 0 || !existsSync(descriptors)) return { reason: `buf build of the suite's protos failed: ${lastLine(build.stderr)}` };
  return { binary, descriptors };
}

const lastLine = (text) => (text ?? "").trim().split("\n").pop();

/** One run of the suite on one engine: the runner's output passed through, its counts parsed. */
function run(engine, runnerArgs, found) {
  const args = [
    "--mode",
    "server",
    "--conf",
    join(suite, "config.yaml"),
    "--known-failing",
    `@${join(suite, "known-failing.txt")}`,
    // Cases one engine fails at times, not always (each diagnosed in its file): allowed to fail.
    ...(existsSync(join(suite, `known-flaky-${engine}.txt`)) ? ["--known-flaky", `@${join(suite, `known-flaky-${engine}.txt`)}`] : []),
    // Low, for a small machine; the suite's own defaults are 4 servers and 8 RPCs at a time.
    "--max-servers",
    "1",
    "--parallel",
    "2",
    ...runnerArgs,
    "--",
    process.execPath,
    "--import",
    "tsx",
    join(suite, "server.ts"),
  ];
  console.log(`\n== Connect conformance ${VERSION}, COG_ENGINE=${engine}`);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(found.binary, args, {
      cwd: root,
      env: { ...process.env, COG_ENGINE: engine, CONFORMANCE_DESCRIPTORS: found.descriptors },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const forward = (stream) => (chunk) => {
      output += chunk;
      stream.write(chunk);
    };
    child.stdout.on("data", forward(process.stdout));
    child.stderr.on("data", forward(process.stderr));
    child.on("close", (code) => {
      const counts = /Total cases: (\d+)\n(\d+) passed, (\d+) failed/.exec(output);
      const expected = /Another (\d+) failed as expected/.exec(output);
      resolve({
        engine,
        code,
        seconds: Math.round((Date.now() - started) / 1000),
        total: counts ? Number(counts[1]) : undefined,
        passed: counts ? Number(counts[2]) : undefined,
        failed: counts ? Number(counts[3]) : undefined,
        knownFailing: expected ? Number(expected[1]) : 0,
      });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const runnerArgs = dash === -1 ? [] : argv.slice(dash + 1);
  const engines = [];
  for (let i = 0; i < own.length; i++) {
    if (own[i] === "--engine" && (own[i + 1] === "node" || own[i + 1] === "native")) engines.push(own[++i]);
    else {
      console.error(`unknown argument ${own[i]}: usage: node scripts/connect-conformance.mjs [--engine node|native]... [-- runner flags]`);
      process.exit(2);
    }
  }
  const found = connectConformance();
  if (found.binary === undefined) {
    console.error(found.reason);
    process.exit(1);
  }
  const results = [];
  for (const engine of engines.length > 0 ? engines : ["node", "native"]) results.push(await run(engine, runnerArgs, found));
  console.log(`\n== Summary (connectrpc/conformance ${VERSION}, server mode)`);
  for (const r of results) {
    const counts =
      r.total === undefined
        ? `no report (runner exited ${r.code})`
        : `${r.total} cases: ${r.passed} passed, ${r.failed} failed, ${r.knownFailing} failed as known (flaky)`;
    console.log(`COG_ENGINE=${r.engine.padEnd(6)} ${counts} (${r.seconds} s)`);
  }
  process.exit(results.every((r) => r.code === 0) ? 0 : 1);
}
