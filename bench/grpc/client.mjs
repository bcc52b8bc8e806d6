// The load for bench/grpc-unary.mjs: @grpc/grpc-js unary calls to 127.0.0.1:PORT, CONCURRENCY in
// flight on one channel (one HTTP/2 connection) for SECONDS; prints the calls made and failed as JSON.
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const [port, seconds, concurrency] = process.argv.slice(2).map(Number);
const definition = protoLoader.loadSync(fileURLToPath(new URL("../../test/fixtures/grpc/echo.proto", import.meta.url)));
const Echo = grpc.loadPackageDefinition(definition).cog.test.Echo;
const client = new Echo(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
const until = Date.now() + seconds * 1000;
let calls = 0;
let failed = 0;
const loop = () =>
  new Promise((resolve) => {
    const next = () => {
      if (Date.now() >= until) return resolve();
      client.Unary({ text: "hello" }, (err) => {
        if (err) failed++;
        else calls++;
        next();
      });
    };
    next();
  });
await Promise.all(Array.from({ length: concurrency }, loop));
client.close();
console.log(JSON.stringify({ calls, failed }));
