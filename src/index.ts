export {
  Cog,
  type Address,
  type SocketAddress,
  type CloseHook,
  type Closing,
  type CogOptions,
  type ListenOptions,
  type EngineName,
  type ErrorHandler,
  type NotFoundHandler,
} from "./cog.js";
export { Group, type AddRoute } from "./core/group.js";
export type { Request, CogRequest, RouteRequest, Query, Cookies, SignedCookies, Params } from "./http/request.js";
export type { PathParams } from "./core/router.js";
export type { Response, CogResponse, CookieOptions, HeaderValue, Locals } from "./http/response.js";
export { HttpError } from "./base/errors.js";
export type { Handler, Next } from "./http/handler.js";
export type { RequestSocket } from "./engines/contract/engine.js";
export type { Limits } from "./base/limits.js";
export type { InjectOptions, InjectResponse } from "./engines/contract/engine.js";
export type { RouteSchema, RouteOptions, Schema, JsonSchema, Infer, SchemaRequest, SchemaResponse } from "./schema/types.js";
export type { ValidationIssue } from "./schema/compile.js";
export type { OpenApiOptions } from "./schema/openapi.js";
export type { OpenApiDocument, OpenApiInfo, OpenApiOperation, OpenApiPathItem, OpenApiResponse, OpenApiVersion } from "./schema/openapi-document.js";
export { WebSocket } from "./websocket/socket.js";
export type { Broker } from "./websocket/topics.js";
export type { WebSocketHandlers, WebSocketOptions, SendResult, MessageData, OutgoingData } from "./websocket/types.js";
export { redisBroker, type RedisBrokerOptions, type RedisClientLike } from "./websocket/redis.js";
export { compress, type CompressOptions, type Encoding } from "./http/compress.js";
export { EventStream, type EventStreamOptions, type ServerEvent } from "./http/sse.js";
export type { MultipartOptions, MultipartLimits, UploadedFile, FormFields } from "./http/multipart.js";
export type { LoggerOption, LogFunction, PinoLike, RequestLogLine, ErrorLogLine, AppLogLine, RequestLog, LogMethod } from "./observe/access-log.js";
export type { TlsOptions } from "./base/tls.js";
export { serveStatic, type StaticOptions, type SendFileOptions, type FileOptions } from "./http/files/serve.js";
export type { RequestMessage } from "./observe/request-channel.js";
