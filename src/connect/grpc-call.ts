// One gRPC call (HTTP/2, `application/grpc`) whose request is a single message, unary or server
// streaming, served straight on Cog's request and response: the body read whole, its one
// length-prefixed message parsed by @bufbuild/protobuf, the implementation invoked with
// Connect's own interceptors, the answer written as one or more frames and the status as
// grpc-status / grpc-message / grpc-status-details-bin trailers. Connect's own pieces are used for
// every rule of the protocol (timeouts, compression negotiation, status trailers, serialization
// limits), so the call behaves as under Connect's Node handler; what is left out is its
// async-iterable pipeline per call, where most of that handler's CPU goes
// (docs/decisions/connect-adapter.md).
import { Code, ConnectError, createHandlerContext, type HandlerContext, type MethodImplSpec } from "@connectrpc/connect";
import {
  compressionNegotiate,
  createMethodSerializationLookup,
  envelopeCompress,
  envelopeDecompress,
  invokeUnaryImplementation,
  transformInvokeImplementation,
  type UniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import { contentTypeJson, contentTypeProto, grpcStatusOk, parseContentType, parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import type { ContextValues } from "@connectrpc/connect";
import type { Request } from "../http/request.js";
import type { Response } from "../http/response.js";

/** What a call needs of its method: the implementation, its serializers and the router's options. */
export interface GrpcMethod {
  spec: MethodImplSpec;
  options: UniversalHandlerOptions;
  serialization: ReturnType<typeof createMethodSerializationLookup>;
}

export function grpcMethod(spec: MethodImplSpec, options: UniversalHandlerOptions): GrpcMethod {
  return { spec, options, serialization: createMethodSerializationLookup(spec.method, options.binaryOptions, options.jsonOptions, options) };
}

/** Whether this request is a gRPC call of a single request message that `serveGrpc` answers. */
export function isGrpcCall(req: Request, method: GrpcMethod): boolean {
  const kind = method.spec.kind;
  return req.httpVersionMajor === 2 && req.method === "POST" && (kind === "unary" || kind === "server_streaming") && parseContentType(header(req, "content-type")) !== undefined;
}

/** Node's headers as web Headers, without HTTP/2's pseudo-headers. */
function webHeaders(headers: Request["headers"]): Headers {
  const out = new Headers();
  for (const name in headers) {
    if (name.charCodeAt(0) === 58 /* : */) continue;
    const value = headers[name];
    if (typeof value === "string") out.append(name, value);
    else if (value !== undefined) for (const v of value) out.append(name, v);
  }
  return out;
}

const plain = (headers: Headers): Record<string, string> => Object.fromEntries(headers);

/** The request body, whole: Cog's if it read it before the chain, else read here. */
async function bodyOf(req: Request, readMaxBytes: number): Promise<Buffer> {
  if (req.rawBody !== undefined) return req.rawBody;
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    length += chunk.length;
    // One message and its 5-byte prefix: anything longer is refused below, by its own length.
    if (length > readMaxBytes + 5 && chunks.length > 0) throw tooLarge(length - 5, readMaxBytes);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
}

const tooLarge = (size: number, readMaxBytes: number) => new ConnectError(`message size ${size} is larger than configured readMaxBytes ${readMaxBytes}`, Code.ResourceExhausted);

/** The one length-prefixed message of a body, as Connect's gRPC handler would split it. */
function onlyMessage(body: Buffer, readMaxBytes: number, methodKind: string): { flags: number; data: Uint8Array } {
  if (body.length === 0) throw new ConnectError(`protocol error: missing input message for ${methodKind} method`, Code.Unimplemented);
  if (body.length < 5) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  const length = body.readUInt32BE(1);
  if (length > readMaxBytes) throw tooLarge(length, readMaxBytes);
  if (body.length < 5 + length) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  if (body.length > 5 + length) throw new ConnectError(`protocol error: received extra input message for ${methodKind} method`, Code.Unimplemented);
  return { flags: body[0]!, data: body.subarray(5) };
}

/** Answers one gRPC call; never rejects (a failure is the call's status). */
export async function serveGrpc(req: Request, res: Response, method: GrpcMethod, contextValues: ContextValues | undefined): Promise<void> {
  const { spec, options, serialization } = method;
  const type = parseContentType(header(req, "content-type"))!;
  const timeout = parseTimeout(header(req, "grpc-timeout"), options.maxTimeoutMs);
  const context = createHandlerContext({
    ...spec,
    service: spec.method.parent,
    requestMethod: "POST",
    protocolName: "grpc",
    timeoutMs: timeout.timeoutMs,
    shutdownSignal: options.shutdownSignal,
    requestSignal: req.signal,
    requestHeader: webHeaders(req.headers),
    url: `http://${req.headers[":authority"] ?? req.headers.host ?? "localhost"}${req.url}`,
    responseHeader: { "content-type": type.binary ? contentTypeProto : contentTypeJson },
    responseTrailer: { "grpc-status": grpcStatusOk },
    contextValues,
  });
  const compression = compressionNegotiate(options.acceptCompression, header(req, "grpc-encoding"), header(req, "grpc-accept-encoding"), "grpc-accept-encoding");
  if (compression.response) context.responseHeader.set("grpc-encoding", compression.response.name);
  let headSent = false;
  const sendHead = () => {
    if (headSent) return;
    headSent = true;
    res.writeHead(200, plain(context.responseHeader));
  };
  const frame = async (message: unknown) => {
    const envelope = await envelopeCompress({ flags: 0, data: serialization.getO(type.binary).serialize(message as never) }, compression.response, options.compressMinBytes);
    const out = Buffer.allocUnsafe(5 + envelope.data.byteLength);
    out[0] = envelope.flags;
    out.writeUInt32BE(envelope.data.byteLength, 1);
    out.set(envelope.data, 5);
    return out;
  };
  try {
    if (compression.error) throw compression.error;
    if (timeout.error) throw timeout.error;
    if (options.requestGate !== undefined) await options.requestGate(context);
    const envelope = await envelopeDecompress(onlyMessage(await bodyOf(req, options.readMaxBytes), options.readMaxBytes, spec.kind === "unary" ? "unary" : "server_streaming"), compression.request, options.readMaxBytes);
    const input = serialization.getI(type.binary).parse(envelope.data);
    if (spec.kind === "unary") {
      const output = await invokeUnaryImplementation(spec, context, input as never, options.interceptors);
      const bytes = await frame(output);
      sendHead();
      res.addTrailers(plain(context.responseTrailer));
      res.end(bytes);
      return;
    }
    for await (const output of transformInvokeImplementation(spec, context, options.interceptors)(single(input))) {
      const bytes = await frame(output);
      sendHead();
      res.write(bytes);
    }
    sendHead();
  } catch (e) {
    setTrailerStatus(context.responseTrailer, e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e));
    sendHead();
  } finally {
    // Connect ends a call's signal when the call is done, whatever the reason.
    context.abort();
  }
  if (!res.writableEnded) {
    res.addTrailers(plain(context.responseTrailer));
    res.end();
  }
}

async function* single<T>(input: T): AsyncIterable<T> {
  yield input;
}

const header = (req: Request, name: string): string | null => {
  const value = req.headers[name];
  return typeof value === "string" ? value : null;
};

export type { HandlerContext };
