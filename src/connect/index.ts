// `cog-http/connect`: ConnectRPC's routes served on Cog. gRPC calls of a single request message
// (unary and server streaming, over HTTP/2) are answered here, straight on Cog's request and
// response (grpc-call.ts); every other call (client and bidi streaming, gRPC-Web, Connect's own
// protocol, gRPC over HTTP/1.1) and every other path goes to Connect's own Node handler, made
// from the same routes, so all of them behave as under `app.use(connectNodeAdapter(...))`.
// It loads @connectrpc/connect and @connectrpc/connect-node (optional peer dependencies), so it
// is an entry of its own: an app that serves no RPC never loads them.
import { createServiceImplSpec, createMethodImplSpec, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { validateUniversalHandlerOptions } from "@connectrpc/connect/protocol";
import { connectNodeAdapter, type ConnectNodeAdapterOptions, compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { Handler } from "../http/handler.js";
import type { Request } from "../http/request.js";
import type { Response } from "../http/response.js";
import { grpcMethod, isGrpcCall, serveGrpc, type GrpcMethod } from "./grpc-call.js";

export type ConnectOptions = ConnectNodeAdapterOptions;

/**
 * A Cog handler serving ConnectRPC's routes for gRPC, gRPC-Web and Connect's protocol:
 * `app.use(connect({ routes }))`. It takes the options of Connect's `connectNodeAdapter`.
 */
export function connect(options: ConnectOptions): Handler {
  const acceptCompression = options.acceptCompression ?? [compressionGzip, compressionBrotli];
  const prefix = options.requestPathPrefix ?? "";
  const methods = new Map<string, GrpcMethod>();
  const record = (method: DescMethod, spec: ReturnType<typeof createMethodImplSpec>, local: object | undefined) => {
    const merged = { ...options, acceptCompression, ...local };
    if ((merged as { grpc?: boolean }).grpc === false) return;
    methods.set(`${prefix}/${method.parent.typeName}/${method.name}`, grpcMethod(spec, validateUniversalHandlerOptions(merged)));
  };
  // Connect's handler, made from the same routes: the router it gives `routes` is wrapped so
  // that each service and method registered is also kept here.
  const fallback = connectNodeAdapter({
    ...options,
    acceptCompression,
    routes(router) {
      const recording: ConnectRouter = {
        get handlers() {
          return router.handlers;
        },
        service(service: DescService, impl: Partial<ServiceImpl<DescService>>, local?: object) {
          router.service(service, impl as never, local);
          const spec = createServiceImplSpec(service, impl as never);
          for (const method of service.methods) record(method, spec.methods[method.localName]!, local);
          return recording;
        },
        rpc(method: DescMethod, impl: never, local?: object) {
          router.rpc(method as never, impl, local);
          record(method, createMethodImplSpec(method as never, impl), local);
          return recording;
        },
      } as ConnectRouter;
      options.routes(recording);
    },
  }) as unknown as Handler;
  return function connectRoutes(req: Request, res: Response, next) {
    const method = methods.get((req.url ?? "").split("?", 1)[0]!);
    if (method === undefined || !isGrpcCall(req, method)) return fallback(req, res, next);
    return serveGrpc(req, res, method, options.contextValues?.(req as never));
  };
}
