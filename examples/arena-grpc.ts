// HttpArena's gRPC service (its requests/benchmark.proto; the unary-grpc, unary-grpc-tls,
// stream-grpc and stream-grpc-tls profiles), served by cog-http/connect: `benchmark.BenchmarkService`
// with GetSum (a + b) and StreamSum (`count` replies, the i-th a + b + i). The service is built at
// run time from a descriptor written out here (as test/fixtures/grpc/echo.ts builds the tests'
// Echo service), so the app needs no generated code; bench/grpc/benchmark.proto is the same service
// for the tools that read a .proto (grpc-js's loader, ghz).
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Cog } from "cog-http";
import { connect } from "cog-http/connect";

const int32 = (name: string, number: number) => ({
  name,
  number,
  type: FieldDescriptorProto_Type.INT32,
  jsonName: name,
  label: FieldDescriptorProto_Label.OPTIONAL,
});

const registry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "benchmark.proto",
    package: "benchmark",
    syntax: "proto3",
    messageType: [
      { name: "SumRequest", field: [int32("a", 1), int32("b", 2)] },
      { name: "StreamRequest", field: [int32("a", 1), int32("b", 2), int32("count", 3)] },
      { name: "SumReply", field: [int32("result", 1)] },
    ],
    service: [
      {
        name: "BenchmarkService",
        method: [
          { name: "GetSum", inputType: ".benchmark.SumRequest", outputType: ".benchmark.SumReply" },
          { name: "StreamSum", inputType: ".benchmark.StreamRequest", outputType: ".benchmark.SumReply", serverStreaming: true },
        ],
      },
    ],
  }),
  () => undefined,
);

const service = registry.getService("benchmark.BenchmarkService");
if (service === undefined) throw new Error("arena-grpc.ts: the BenchmarkService did not build");
export const BenchmarkService = service;

/**
 * The service's two calls, as HttpArena's profiles ask them. A service built at run time carries no
 * message types for TypeScript (generated code would): the messages are typed here, and the
 * implementation handed over as such.
 */
export function benchmarkRoutes(router: ConnectRouter): ConnectRouter {
  return router.service(BenchmarkService, {
    getSum: (req: { a: number; b: number }) => ({ result: req.a + req.b }),
    async *streamSum(req: { a: number; b: number; count: number }) {
      const sum = req.a + req.b;
      for (let i = 0; i < req.count; i++) yield { result: sum + i };
    },
  } as never);
}

/**
 * Serves the service on `on` (whose listener speaks HTTP/2: `http2: "h2c"`, or `true` with TLS):
 * a route for its calls' paths, its body left to the RPC to read, so no other route pays for it.
 * For every method (Connect's handler answers the others), which also keeps it out of the app's
 * OpenAPI document: an RPC is not an operation OpenAPI describes.
 */
export function grpc(on: Cog): void {
  on.all(`/${BenchmarkService.typeName}/:method`, { body: "stream" }, connect({ routes: benchmarkRoutes }));
}
