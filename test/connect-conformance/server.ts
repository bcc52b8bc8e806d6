// The server under test of Connect's conformance suite (connectrpc/conformance, server mode),
// started by scripts/connect-conformance.mjs through the suite's runner: it reads one
// size-delimited ServerCompatRequest from stdin, serves the suite's ConformanceService through
// `cog-http/connect` on the engine COG_ENGINE names (h2c beside HTTP/1.1, or TLS with h2 and
// HTTP/1.1 by ALPN), and writes a ServerCompatResponse (where it listens) to stdout.
// The suite's protos are not compiled to TypeScript: their descriptor set (built by `buf build`,
// its path in CONFORMANCE_DESCRIPTORS) is read at run time with @bufbuild/protobuf's reflection.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { create, createFileRegistry, fromBinary, toBinary, type DescMessage, type DescService, type Message } from "@bufbuild/protobuf";
import { anyPack, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { Cog } from "../../src/index.js";
import { connect } from "../../src/connect/index.js";

const descriptors = process.env.CONFORMANCE_DESCRIPTORS;
if (descriptors === undefined)
  throw new Error("CONFORMANCE_DESCRIPTORS is unset: run this through scripts/connect-conformance.mjs, which builds the descriptor set");
const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(descriptors)));
const PKG = "connectrpc.conformance.v1";
const message = (name: string): DescMessage => {
  const desc = registry.getMessage(`${PKG}.${name}`);
  if (desc === undefined) throw new Error(`${PKG}.${name} is not in ${descriptors}: is it the conformance module's descriptor set?`);
  return desc;
};
const service = registry.getService(`${PKG}.ConformanceService`) as DescService;
const RequestInfo = message("ConformancePayload.RequestInfo");

// The reflected messages are plain objects: these are the fields the service reads and writes.
interface Header {
  name: string;
  value: string[];
}
interface ErrorDef {
  code: number;
  message?: string;
  details: Array<{ typeUrl: string; value: Uint8Array }>; // google.protobuf.Any
}
interface ResponseDefinition {
  responseHeaders: Header[];
  responseTrailers: Header[];
  responseDelayMs: number;
  response?: { case: "responseData" | "error" | undefined; value?: Uint8Array | ErrorDef }; // unary
  responseData?: Uint8Array[]; // stream
  error?: ErrorDef; // stream
}
interface ConformanceRequest extends Message {
  responseDefinition?: ResponseDefinition;
  fullDuplex?: boolean;
}

function requestInfo(ctx: HandlerContext, requests: ConformanceRequest[]) {
  const requestHeaders: Header[] = [];
  ctx.requestHeader.forEach((value, name) => requestHeaders.push({ name, value: [value] }) as never);
  // The time left is in whole milliseconds (an int64): a grpc-timeout in micro- or nanoseconds leaves a fraction.
  const timeoutMs = ctx.timeoutMs();
  const info: Record<string, unknown> = {
    requestHeaders,
    timeoutMs: timeoutMs === undefined ? undefined : BigInt(Math.round(timeoutMs)),
    requests: requests.map((r) => anyPack(message(r.$typeName.slice(PKG.length + 1)), r)),
  };
  if (ctx.requestMethod === "GET") {
    const queryParams: Header[] = [];
    new URL(ctx.url).searchParams.forEach((value, name) => queryParams.push({ name, value: [value] }));
    info.connectGetInfo = { queryParams };
  }
  return create(RequestInfo, info as never);
}

function setMetadata(ctx: HandlerContext, def: ResponseDefinition | undefined) {
  for (const h of def?.responseHeaders ?? []) for (const v of h.value) ctx.responseHeader.append(h.name, v);
  for (const h of def?.responseTrailers ?? []) for (const v of h.value) ctx.responseTrailer.append(h.name, v);
}

/**
 * The error a response definition asks for: its details (each a google.protobuf.Any, unpacked to
 * be sent again), then the request info when no response carried it.
 */
function failure(error: ErrorDef, info: Message | undefined) {
  const details = error.details.map((any) => {
    const desc = registry.getMessage(any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1));
    if (desc === undefined) throw new Error(`the error detail ${any.typeUrl} is not in ${descriptors}`);
    return { desc, value: fromBinary(desc, any.value) as never };
  });
  if (info) details.push({ desc: RequestInfo, value: info as never });
  return new ConnectError(error.message ?? "", error.code as Code, undefined, details);
}

/** Waits a response's delay; ends early, with the reason, when the call's signal aborts (its deadline, the client gone). */
async function delay(ms: number | undefined, ctx: HandlerContext) {
  if (!ms) return;
  await sleep(ms, undefined, { signal: ctx.signal }).catch(() => {
    throw ctx.signal.reason;
  });
}

function unary(outputName: string) {
  return async (req: ConformanceRequest, ctx: HandlerContext) => {
    const def = req.responseDefinition;
    const info = requestInfo(ctx, [req]);
    setMetadata(ctx, def);
    await delay(def?.responseDelayMs, ctx);
    if (def?.response?.case === "error") throw failure(def.response.value as ErrorDef, info);
    const data = def?.response?.case === "responseData" ? (def.response.value as Uint8Array) : undefined;
    return create(message(outputName), { payload: { data, requestInfo: info } } as never);
  };
}

const routes = (router: ConnectRouter) =>
  router.service(service, {
    unary: unary("UnaryResponse"),
    idempotentUnary: unary("IdempotentUnaryResponse"),
    async clientStream(reqs: AsyncIterable<ConformanceRequest>, ctx: HandlerContext) {
      const received: ConformanceRequest[] = [];
      for await (const req of reqs) received.push(req);
      const def = received[0]?.responseDefinition;
      const info = requestInfo(ctx, received);
      setMetadata(ctx, def);
      await delay(def?.responseDelayMs, ctx);
      if (def?.response?.case === "error") throw failure(def.response.value as ErrorDef, info);
      const data = def?.response?.case === "responseData" ? (def.response.value as Uint8Array) : undefined;
      return create(message("ClientStreamResponse"), { payload: { data, requestInfo: info } } as never);
    },
    async *serverStream(req: ConformanceRequest, ctx: HandlerContext) {
      const def = req.responseDefinition;
      let info: Message | undefined = requestInfo(ctx, [req]);
      setMetadata(ctx, def);
      for (const data of def?.responseData ?? []) {
        await delay(def?.responseDelayMs, ctx);
        yield create(message("ServerStreamResponse"), { payload: { data, requestInfo: info } } as never);
        info = undefined;
      }
      if (def?.error) throw failure(def.error, info);
    },
    async *bidiStream(reqs: AsyncIterable<ConformanceRequest>, ctx: HandlerContext) {
      const received: ConformanceRequest[] = [];
      let def: ResponseDefinition | undefined;
      let fullDuplex = false;
      let first = true;
      let sent = 0;
      for await (const req of reqs) {
        received.push(req);
        if (first) {
          // The first request carries the definition (received is emptied at each full-duplex response).
          first = false;
          def = req.responseDefinition;
          fullDuplex = req.fullDuplex === true;
          setMetadata(ctx, def);
        }
        if (!fullDuplex) continue;
        // Full duplex: one response per request, echoing the requests since the last response;
        // a request that comes when no response is left ends the call (with the error, if any).
        const data = def?.responseData?.[sent];
        if (data === undefined) break;
        await delay(def?.responseDelayMs, ctx);
        yield create(message("BidiStreamResponse"), { payload: { data, requestInfo: requestInfo(ctx, received.splice(0)) } } as never);
        sent++;
      }
      if (!fullDuplex) {
        // Half duplex: every request read first, then the responses, the first echoing them all.
        let info: Message | undefined = requestInfo(ctx, received);
        for (const data of def?.responseData ?? []) {
          await delay(def?.responseDelayMs, ctx);
          yield create(message("BidiStreamResponse"), { payload: { data, requestInfo: info } } as never);
          info = undefined;
          sent++;
        }
      }
      if (def?.error) throw failure(def.error, sent === 0 ? requestInfo(ctx, received) : undefined);
    },
    // Unimplemented is left out: Connect answers it with code unimplemented, as the suite expects.
  } as never);

/** Reads one size-delimited message (a 4-byte big-endian length, then the bytes) from stdin. */
async function readDelimited(): Promise<Buffer> {
  let buffered = Buffer.alloc(0);
  for await (const chunk of process.stdin) {
    buffered = Buffer.concat([buffered, chunk as Buffer]);
    if (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) break;
  }
  if (buffered.length < 4 || buffered.length < 4 + buffered.readUInt32BE(0)) throw new Error("stdin ended before a whole ServerCompatRequest came");
  return buffered.subarray(4, 4 + buffered.readUInt32BE(0));
}

interface CompatRequest {
  useTls: boolean;
  clientTlsCert: Uint8Array;
  messageReceiveLimit: number;
  serverCreds?: { cert: Uint8Array; key: Uint8Array };
}

const request = fromBinary(message("ServerCompatRequest"), await readDelimited()) as unknown as CompatRequest;
const engine = (process.env.COG_ENGINE ?? "node") as "node" | "native";
const creds = request.useTls ? request.serverCreds : undefined;
if (request.useTls && creds === undefined) throw new Error("the ServerCompatRequest asks for TLS but carries no server_creds");
const tls = creds && {
  key: Buffer.from(creds.key),
  cert: Buffer.from(creds.cert),
  ...(request.clientTlsCert.length > 0 ? { ca: Buffer.from(request.clientTlsCert), requestCert: true, rejectUnauthorized: true } : {}),
};
const app = new Cog(tls ? { engine, tls, http2: true } : { engine, http2: "h2c", allowHTTP1: true });
// The registry lets the JSON codec write the requests packed in google.protobuf.Any (RequestInfo.requests).
app.use(connect({ routes, jsonOptions: { registry }, ...(request.messageReceiveLimit > 0 ? { readMaxBytes: request.messageReceiveLimit } : {}) }));
const { port } = await app.listen(0, "127.0.0.1");
const response = toBinary(message("ServerCompatResponse"), create(message("ServerCompatResponse"), { host: "127.0.0.1", port, pemCert: creds?.cert } as never));
const length = Buffer.alloc(4);
length.writeUInt32BE(response.length);
process.stdout.write(Buffer.concat([length, response]));
process.on("SIGTERM", () => void app.close(1000).then(() => process.exit(0)));
