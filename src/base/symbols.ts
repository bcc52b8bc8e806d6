/**
 * Cog's private state on requests and responses sits under these symbols, so that no
 * middleware's property (`req.id`, `req.session`, `res.locals`…) can collide with it, and none
 * shows in the public types. One registry, so that every such name is found in one place; the
 * engine contract's own symbols (HOST, WEBSOCKET, SEND_FILE, OPEN_FILE, FRAME_BODY, ECHO_REQUEST_ID…) are
 * in src/engines/contract/engine.ts. This file imports nothing.
 */

// Request helpers (src/http/request.ts): Cog's state on a request, defaults on the prototype
/** `CACHED_BODY` before the body was parsed (a parsed body may be undefined). */
export const UNSET: unique symbol = Symbol("unset");
export const SETTINGS: unique symbol = Symbol("cog.settings");
export const CACHED_PATH: unique symbol = Symbol("cog.path");
export const CACHED_QUERY: unique symbol = Symbol("cog.query");
export const CACHED_COOKIES: unique symbol = Symbol("cog.cookies");
export const CACHED_SIGNED: unique symbol = Symbol("cog.signedCookies");
export const CACHED_BODY: unique symbol = Symbol("cog.body");
export const ORIGINAL_URL: unique symbol = Symbol("cog.originalUrl");
/** The route a request matched, for `req.route` and log lines; null for unmatched requests. */
export const ROUTE: unique symbol = Symbol("cog.route");
/** The response answering this request (set by the app when it dispatches the request). */
export const RESPONSE: unique symbol = Symbol("cog.response");
export const SIGNAL: unique symbol = Symbol("cog.signal");
/** `req.log`, once made or set. */
export const LOG: unique symbol = Symbol("cog.log");
/** The request's message on the `cog.request` tracing channel, set only while someone subscribes (src/observe/request-channel.ts). */
export const TRACED: unique symbol = Symbol("cog.traced");

// Response helpers (src/http/response.ts): Cog's state on a response, defaults on the prototype
/** Headers set with `res.set`, by lower-case name; null until the first one. */
export const PENDING: unique symbol = Symbol("cog.pending");
/** The route's compiled response serializers by status, when it declared response schemas. */
export const SERIALIZERS: unique symbol = Symbol("cog.serializers");
/** Whether anything used the engine's own header store (`setHeader`), which `send` then has to consult. */
export const ENGINE_HEADERS: unique symbol = Symbol("cog.engineHeaders");
/** The app's handlerTimeout watch while this response has not begun; null otherwise. */
export const WATCH: unique symbol = Symbol("cog.watch");
/**
 * On a 304 for a file, the Content-Type and length of the 200 it stands for, which the 304 does
 * not carry: compress() gives the 304 the Vary and ETag form that 200 had. Null otherwise.
 */
export const VALIDATES: unique symbol = Symbol("cog.validates");

// Request bodies (src/http/body.ts), on both engines' requests
/** A body streamed through the request (`streamBody`), counted against its route's limit: on both engines' requests. */
export const STREAM_LIMIT: unique symbol = Symbol("cog.streamLimit");
export const STREAMED: unique symbol = Symbol("cog.streamed");

// The access log (src/observe/access-log.ts)
/** When the app began on this request (performance.now()), for the duration. */
export const STARTED: unique symbol = Symbol("cog.started");
/** Why Cog answered it itself (see `RequestLogLine.reason`), set on the rare request that has one. */
export const REASON: unique symbol = Symbol("cog.reason");

// The node engine (src/engines/node/)
/** Bytes of a streamed body written so far, for the access log (see src/engines/node/body-bytes.ts). */
export const WRITTEN: unique symbol = Symbol("cog.node.written");
/** Set on a response when its `end()` begins (src/engines/node/response.ts): the uncork that follows is its final one. */
export const ENDING: unique symbol = Symbol("cog.node.ending");
/** Set on a request whose body Cog stopped reading (see `H2Request.push`). */
export const BODY_CUT: unique symbol = Symbol("cog.h2.bodyCut");
/** The streams in flight on a session (see `Sessions.idle`). */
export const IN_FLIGHT: unique symbol = Symbol("cog.h2.inFlight");
/** A session's count of header lists refused (see `refusedLists` in src/engines/node/http2.ts). */
export const REFUSED_LISTS: unique symbol = Symbol("cog.h2.refusedLists");
/** The bytes that followed an upgrade request's head on its socket (Node hands them to 'upgrade' listeners). */
export const UPGRADE_HEAD: unique symbol = Symbol("cog.websocket.head");

// The native engine's request (src/engines/native/request.ts): the engine's handles
export const ADDON: unique symbol = Symbol("cog.native.addon");
export const ENCRYPTED: unique symbol = Symbol("cog.native.encrypted");
export const ID: unique symbol = Symbol("cog.native.id");
export const FLAGS: unique symbol = Symbol("cog.native.flags");
export const RECEIVED: unique symbol = Symbol("cog.native.received");
export const RAW: unique symbol = Symbol("cog.native.rawHeaders");
export const HEADERS: unique symbol = Symbol("cog.native.headers");
/** The native request's header lines as the engine gave them (see headers.ts), once fetched. */
export const HEADER_TEXT: unique symbol = Symbol("cog.native.headerText");
export const ADDRESS: unique symbol = Symbol("cog.native.address");
export const SOCKET: unique symbol = Symbol("cog.native.socket");
export const CONTENT_TYPE: unique symbol = Symbol("cog.native.contentType");
/** Where the pieces of a body that follows its request go: a collector (buffered), or the stream's limit (streamed). */
export const COLLECTOR: unique symbol = Symbol("cog.native.collector");
export const PAUSED: unique symbol = Symbol("cog.native.paused");
export const BODY_ENDED: unique symbol = Symbol("cog.native.bodyEnded");
/** A request's route's own requestTimeout (ms), as `Dispatch` returned it: kept by the native engine's request for the 408's words. */
export const BODY_TIMEOUT: unique symbol = Symbol("cog.bodyTimeout");
/** On the native engine's request class: aborts, on a later tick, the response of a request whose connection the app cut (`req.socket.destroy()`). */
export const ABORT_LATER: unique symbol = Symbol("cog.native.abortLater");
/** Set once the engine has forgotten the request (answered or aborted): it can't be asked anything more. */
export const GONE: unique symbol = Symbol("cog.native.gone");
/** The server the app knows (`Engine.serveAs`), when it is not the engine's own: `req.socket.server`. */
export const APP_SERVER: unique symbol = Symbol("cog.native.appServer");
/** The server it came to, as `http.server.*` channel messages give it (see http-channels.ts). */
export const SERVER: unique symbol = Symbol("cog.native.server");
/** The engine's verdict on the head, kept while the request goes through its server's `request` event (only while observed). */
export const VERDICT: unique symbol = Symbol("cog.native.verdict");

// The native engine's ServerResponse (src/engines/native/server-response.ts, response.ts)
/** Headers given to `setHeader`, by lower-case name. */
export const STORE: unique symbol = Symbol("cog.native.store");
/** Headers given to `writeHead`. */
export const HEAD: unique symbol = Symbol("cog.native.head");
/** Whether every name in HEAD is in lower case already (Cog's own headers are). */
export const HEAD_LOWER: unique symbol = Symbol("cog.native.headLower");
/** The status and reason phrase as writeHead took them: node:http writes its status line then, so changing either afterwards changes nothing. */
export const HEAD_STATUS: unique symbol = Symbol("cog.native.headStatus");
export const HEAD_REASON: unique symbol = Symbol("cog.native.headReason");
/** Whether the body is being streamed (status and headers are out). */
export const STREAMING: unique symbol = Symbol("cog.native.streaming");
/** The request id to echo in X-Request-Id (see `ECHO_REQUEST_ID`), kept apart from the store: the engine appends it to the header block. */
export const REQUEST_ID: unique symbol = Symbol("cog.native.requestId");
/** Bytes of a streamed body handed to the engine so far: the access log's count when no Content-Length was declared. */
export const STREAMED_BYTES: unique symbol = Symbol("cog.native.streamedBytes");
/** A write returned false: emit 'drain' when the engine has sent what it holds. */
export const NEED_DRAIN: unique symbol = Symbol("cog.native.needDrain");
/** The whole body `send` is writing: see `FRAME_BODY`. */
export const WHOLE_BODY: unique symbol = Symbol("cog.native.wholeBody");
/** A whole body `end` wrote without `send` (no FRAME_BODY): its length is the access log's, never `getHeader`'s. */
export const ENDED_BODY: unique symbol = Symbol("cog.native.endedBody");
/** What a request keeps of the batch resource's properties (its stores), on its response; null until it sets one (request-context.ts). */
export const STORES: unique symbol = Symbol("cog.native.stores");
/** A request's own AsyncResource, where the native engine gives each one (request-context.ts, "request resources"); null until it is served. */
export const SCOPE: unique symbol = Symbol("cog.native.scope");
/** The engine's bookkeeping for this app's responses, on the prototype of its response class. */
export const FORGET: unique symbol = Symbol("cog.native.forget");
/** The cached block of `writeHead`'s headers, when it found every line in the cache. */
export const KNOWN: unique symbol = Symbol("cog.native.known");
