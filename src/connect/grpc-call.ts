// One gRPC call (HTTP/2, `application/grpc`) whose request is a single message, unary or server
// streaming, served straight on Cog's request and response: the body read whole, its one
// length-prefixed message parsed by @bufbuild/protobuf, the implementation invoked (through
// Connect's interceptors when the router has any), the answer written as one or more frames and
// the status as grpc-status / grpc-message / grpc-status-details-bin trailers. Connect's own
// pieces are used for every rule of the protocol (timeouts, compression negotiation, status
// trailers, serialization limits), so the call behaves as under Connect's Node handler; what is
// left out is its async-iterable pipeline and eager context per call, where most of that
// handler's CPU goes (docs/decisions/connect-adapter.md).
import { create, isMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type MethodImplSpec } from "@connectrpc/connect";
import {
  compressionNegotiate,
  createMethodSerializationLookup,
  envelopeCompress,
  envelopeDecompress,
  invokeUnaryImplementation,
  transformInvokeImplementation,
  type UniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import { contentTypeJson, contentTypeProto, parseContentType, parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import type { Request } from "../http/request.js";
import type { Response } from "../http/response.js";
import { GrpcContext } from "./context.js";

/** What a call needs of its method: the implementation, its serializers and the router's options. */
export interface GrpcMethod {
  spec: MethodImplSpec;
  options: UniversalHandlerOptions;
  serialization: ReturnType<typeof createMethodSerializationLookup>;
}

export function grpcMethod(spec: MethodImplSpec, options: UniversalHandlerOptions): GrpcMethod {
  return { spec, options, serialization: createMethodSerializationLookup(spec.method, options.binaryOptions, options.jsonOptions, options) };
}

/** Whether this request is a gRPC call of a single request message, which `serveGrpc` answers. */
export function isGrpcCall(req: Request, method: GrpcMethod): boolean {
  const kind = method.spec.kind;
  return (
    req.httpVersionMajor === 2 &&
    req.method === "POST" &&
    (kind === "unary" || kind === "server_streaming") &&
    parseContentType(header(req, "content-type")) !== undefined
  );
}

/** Answers one gRPC call; never rejects (a failure is the call's status). */
export async function serveGrpc(req: Request, res: Response, method: GrpcMethod, values: ContextValues | undefined): Promise<void> {
  const { spec, options, serialization } = method;
  const binary = parseContentType(header(req, "content-type"))!.binary;
  const timeout = parseTimeout(header(req, "grpc-timeout"), options.maxTimeoutMs);
  const compression = compressionNegotiate(
    options.acceptCompression,
    header(req, "grpc-encoding"),
    header(req, "grpc-accept-encoding"),
    "grpc-accept-encoding",
  );
  const head: Record<string, string> = { "content-type": binary ? contentTypeProto : contentTypeJson };
  if (compression.response) head["grpc-encoding"] = compression.response.name;
  const context = new GrpcContext(spec.method, req, timeout.timeoutMs, options.shutdownSignal, values, head);
  const frame = async (message: unknown) => {
    const envelope = await envelopeCompress(
      { flags: 0, data: serialization.getO(binary).serialize(message as never) },
      compression.response,
      options.compressMinBytes,
    );
    const out = Buffer.allocUnsafe(5 + envelope.data.byteLength);
    out[0] = envelope.flags;
    out.writeUInt32BE(envelope.data.byteLength, 1);
    out.set(envelope.data, 5);
    return out;
  };
  let failure: unknown;
  try {
    if (compression.error) throw compression.error;
    if (timeout.error) throw timeout.error;
    if (options.requestGate !== undefined) await options.requestGate(context);
    const body = await bodyOf(req, options.readMaxBytes);
    const envelope = await envelopeDecompress(onlyMessage(body, options.readMaxBytes, spec.kind), compression.request, options.readMaxBytes);
    const input = serialization.getI(binary).parse(envelope.data);
    if (spec.kind === "unary") {
      const output =
        options.interceptors.length === 0
          ? normalized(spec.method.output, await (spec.impl as (input: unknown, context: GrpcContext) => unknown)(input, context))
          : await invokeUnaryImplementation(spec, context.whole(), input as never, options.interceptors);
      const bytes = await frame(output);
      res.writeHead(200, context.headFields());
      res.addTrailers(context.trailerFields());
      res.end(bytes);
      return;
    }
    for await (const output of transformInvokeImplementation(spec, context.whole(), options.interceptors)(single(input))) {
      const bytes = await frame(output);
      if (!res.headersSent) res.writeHead(200, context.headFields());
      res.write(bytes);
    }
  } catch (e) {
    failure = e;
    setTrailerStatus(context.responseTrailer, e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e));
  } finally {
    context.end(failure);
  }
  if (res.writableEnded) return;
  if (!res.headersSent) res.writeHead(200, context.headFields());
  res.addTrailers(context.trailerFields());
  res.end();
}

/** An implementation's answer as a message: Connect lets it return a plain object of its fields. */
const normalized = (desc: Parameters<typeof create>[0], value: unknown) => (isMessage(value, desc) ? value : create(desc, value as never));

/** The request body, whole (one message and its 5-byte prefix at most: more is refused by its own length). */
function bodyOf(req: Request, readMaxBytes: number): Promise<Buffer> {
  if (req.rawBody !== undefined) return Promise.resolve(req.rawBody);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length <= readMaxBytes + 5 || chunks.length === 0) return void chunks.push(chunk);
      req.off("data", onData);
      reject(tooLarge(length - 5, readMaxBytes));
    };
    req.on("data", onData);
    req.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length)));
    req.once("error", reject);
  });
}

const tooLarge = (size: number, readMaxBytes: number) =>
  new ConnectError(`message size ${size} is larger than configured readMaxBytes ${readMaxBytes}`, Code.ResourceExhausted);

/** The one length-prefixed message of a body, as Connect's gRPC handler splits it, with its errors. */
function onlyMessage(body: Buffer, readMaxBytes: number, methodKind: string): { flags: number; data: Uint8Array } {
  if (body.length === 0) throw new ConnectError(`protocol error: missing input message for ${methodKind} method`, Code.Unimplemented);
  if (body.length < 5) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  const length = body.readUInt32BE(1);
  if (length > readMaxBytes) throw tooLarge(length, readMaxBytes);
  if (body.length < 5 + length) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  if (body.length > 5 + length) throw new ConnectError(`protocol error: received extra input message for ${methodKind} method`, Code.Unimplemented);
  return { flags: body[0]!, data: body.subarray(5) };
}

async function* single<T>(input: T): AsyncIterable<T> {
  yield input;
}

function header(req: Request, name: string): string | null {
  const value = req.headers[name];
  return typeof value === "string" ? value : null;
}
