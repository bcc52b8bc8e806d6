// HttpArena's BenchmarkService (benchmark.proto) for @connectrpc/connect, built at run time from a
// descriptor written out here, as test/fixtures/grpc/echo.ts builds the tests' Echo service.
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

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
if (service === undefined) throw new Error("benchmark.ts: the BenchmarkService did not build");
export const BenchmarkService = service;
