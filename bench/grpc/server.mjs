// One gRPC server for bench/grpc-unary.mjs and the arena's gRPC scenarios (bench/lib/grpc.mjs), on
// PORT (or a free port), which it prints ("port PORT", then "ready"): the Echo service of test/fixtures/grpc/echo.proto (its Unary) and HttpArena's
// BenchmarkService (examples/arena-grpc.ts, bench/grpc/benchmark.proto: GetSum, StreamSum), answered by
//   cog-native  Cog on its native engine (h2c), Connect's Node handler mounted with app.use
//   cog-node    the same on Cog's node engine (node:http2)
//   cog-native-connect, cog-node-connect
//               cog-http/connect's `connect({ routes })` (gRPC answered on Cog's request and response)
//   connect     Connect's Node handler on bare node:http2 (http2.createServer)
//   grpc-js     @grpc/grpc-js's own server, the service loaded by @grpc/proto-loader
// Run with tsx (the service's descriptor is the test fixture's TypeScript).
import { createServer } from "node:http2";
import { fileURLToPath } from "node:url";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Echo } from "../../test/fixtures/grpc/echo.ts";
import { benchmarkRoutes } from "../../examples/arena-grpc.ts";

const contender = process.argv[2] ?? process.env.GRPC_SERVER;
const port = Number(process.env.PORT ?? 0);
const ready = (bound) => console.log(`port ${bound}\nready`);
// The arena app's own implementation of BenchmarkService (examples/arena-grpc.ts).
const routes = (router) => benchmarkRoutes(router.service(Echo, { unary: async (req) => ({ text: req.text }) }));

if (contender === "grpc-js") {
  const grpc = await import("@grpc/grpc-js");
  const protoLoader = await import("@grpc/proto-loader");
  const load = (file) => grpc.loadPackageDefinition(protoLoader.loadSync(fileURLToPath(new URL(file, import.meta.url))));
  const server = new grpc.Server();
  server.addService(load("../../test/fixtures/grpc/echo.proto").cog.test.Echo.service, {
    Unary: (call, callback) => callback(null, { text: call.request.text }),
  });
  server.addService(load("benchmark.proto").benchmark.BenchmarkService.service, {
    GetSum: (call, callback) => callback(null, { result: call.request.a + call.request.b }),
    StreamSum(call) {
      const sum = call.request.a + call.request.b;
      for (let i = 0; i < call.request.count; i++) call.write({ result: sum + i });
      call.end();
    },
  });
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
    if (err) throw err;
    ready(bound);
  });
} else if (contender === "connect") {
  const server = createServer(connectNodeAdapter({ routes }));
  server.listen(port, "127.0.0.1", () => ready(server.address().port));
} else {
  const { Cog } = await import("../../dist/index.js");
  const app = new Cog({ engine: contender.startsWith("cog-native") ? "native" : "node", http2: "h2c", logErrors: false });
  if (contender.endsWith("-connect")) {
    const { connect } = await import("../../dist/connect/index.js");
    app.use(connect({ routes }));
  } else app.use(connectNodeAdapter({ routes }));
  ready((await app.listen(port, "127.0.0.1")).port);
}
