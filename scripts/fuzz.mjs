#!/usr/bin/env node
// Fuzzes the native engine's parsers (native/fuzz: the request head, chunked bodies, WebSocket
// frames, permessage-deflate, the HTTP/2 connection, HTTP/3's frame reader and QPACK) with
// cargo-fuzz, a few seconds each by default: `node scripts/fuzz.mjs [seconds] [target...]`
// (COG_FUZZ_SECONDS too). CI runs it for 5 s a target; run it by hand for longer (docs/decisions/rust-discipline.md). Each target starts
// from its seeds (native/fuzz/seeds/<target>/) and the corpus earlier runs grew
// (native/fuzz/corpus/<target>/, not committed); a crash is written to native/fuzz/artifacts/
// and fails the run.
//
// cargo-fuzz needs a nightly toolchain (`rustup toolchain install nightly`) and `cargo install
// cargo-fuzz`. Without them the same checks run on stable, over the seeds and mutations of them
// (`cargo test` in native/fuzz): weaker, but never nothing.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const native = join(dirname(dirname(fileURLToPath(import.meta.url))), "native");
const TARGETS = ["head", "chunked", "websocket", "deflate", "http2", "h3frames", "qpack"];
const args = process.argv.slice(2);
const seconds = Number(args.find((a) => /^\d+$/.test(a)) ?? process.env.COG_FUZZ_SECONDS ?? 5);
const targets = args.filter((a) => !/^\d+$/.test(a));
for (const target of targets) {
  if (!TARGETS.includes(target)) {
    console.error(`fuzz: no target "${target}" (there are: ${TARGETS.join(", ")})`);
    process.exit(2);
  }
}

const ok = (command, commandArgs) => spawnSync(command, commandArgs, { stdio: "ignore", cwd: native }).status === 0;
const run = (command, commandArgs) => spawnSync(command, commandArgs, { stdio: "inherit", cwd: native }).status ?? 1;

if (!ok("cargo", ["+nightly", "fuzz", "--version"])) {
  console.log(
    "fuzz: cargo-fuzz on nightly is not here (rustup toolchain install nightly; cargo install cargo-fuzz): running the targets' checks on stable over their seeds instead",
  );
  process.exit(run("cargo", ["test", "--release", "--quiet", "--no-default-features", "--manifest-path", join("fuzz", "Cargo.toml")]));
}

if (run("cargo", ["+nightly", "fuzz", "build"]) !== 0) process.exit(1);
let failed = 0;
for (const target of targets.length ? targets : TARGETS) {
  const corpus = join("fuzz", "corpus", target);
  mkdirSync(join(native, corpus), { recursive: true });
  console.log(`\n# fuzz ${target}: ${seconds} s`);
  // The grown corpus first (new inputs are written there), then the seeds, read only.
  const status = run("cargo", [
    "+nightly",
    "fuzz",
    "run",
    target,
    corpus,
    join("fuzz", "seeds", target),
    "--",
    `-max_total_time=${seconds}`,
    "-print_final_stats=1",
  ]);
  if (status !== 0) {
    console.log(`# fuzz ${target}: FAILED (the input is in native/fuzz/artifacts/${target}/)`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
