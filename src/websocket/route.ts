import { asyncResource } from "../base/async-resource.js";
import type { Handler } from "../http/handler.js";
import { HOST, WEBSOCKET, type HostedRequest, type WebSocketEngine } from "../engines/contract/engine.js";
import { HttpError } from "../base/errors.js";
import type { Request } from "../http/request.js";
import type { Response } from "../http/response.js";
import { WebSocket } from "./socket.js";
import type { Topics } from "./topics.js";
import type { WebSocketHandlers, WebSocketSettings } from "./types.js";

/** `Sec-WebSocket-Key`: 16 random bytes in base64 (RFC 6455 §4.1). */
const KEY = /^[A-Za-z0-9+/]{22}==$/;

/**
 * Why a request is not a WebSocket handshake Cog can complete (RFC 6455 §4.2.1), as the
 * HttpError to answer: 426 for a plain request or another version (with the headers that say
 * what to send), 400 for a malformed handshake (one with a body too).
 */
export function handshakeProblem(req: Request): HttpError | null {
  const upgrade = req.firstHeader("upgrade");
  if (upgrade === undefined || !hasToken(upgrade, "websocket")) {
    return new HttpError(426, `${req.path} is a WebSocket endpoint: connect with a WebSocket client`, {
      headers: { Upgrade: "websocket", Connection: "Upgrade" },
    });
  }
  if (req.httpVersion !== "1.1") return new HttpError(400, "A WebSocket handshake is an HTTP/1.1 request");
  if (!hasToken(req.firstHeader("connection") ?? "", "upgrade")) return new HttpError(400, "A WebSocket handshake needs Connection: Upgrade");
  // The handshake is a GET without a body (RFC 6455 §4.1): bytes after its head are frames.
  const length = req.firstHeader("content-length");
  if ((length !== undefined && Number(length) !== 0) || req.firstHeader("transfer-encoding") !== undefined) {
    return new HttpError(400, `A WebSocket handshake has no body: send ${req.path}'s upgrade request without Content-Length or Transfer-Encoding`);
  }
  if (req.firstHeader("sec-websocket-version") !== "13") {
    return new HttpError(426, "Only WebSocket version 13 is supported", { headers: { "Sec-WebSocket-Version": "13" } });
  }
  const key = req.firstHeader("sec-websocket-key");
  if (key === undefined || !KEY.test(key.trim())) return new HttpError(400, "Sec-WebSocket-Key must be 16 bytes in base64");
  return null;
}

function hasToken(list: string, token: string): boolean {
  return list.split(",").some((item) => item.trim().toLowerCase() === token);
}

/**
 * The last handler of a WebSocket route: checks the handshake, runs the `upgrade` hook (whose
 * HttpError refuses, and whose value becomes `ws.data`), and hands the connection to the engine.
 */
export function upgradeHandler(handlers: WebSocketHandlers<unknown>, settings: WebSocketSettings, topics: Topics): Handler {
  const accept = (req: Request, res: Response, data: unknown): void => {
    if (res.headersSent || res.writableEnded || res.destroyed) return;
    const engine = (req as unknown as { [WEBSOCKET]?: WebSocketEngine })[WEBSOCKET];
    if (engine === undefined) throw new Error("This engine was started before the app had WebSocket routes: register app.ws routes before listen");
    let ws: WebSocket<unknown> | null = null;
    const report = (err: unknown, where: string): void => (req as unknown as HostedRequest)[HOST].report(err, req, `in the WebSocket ${where} handler`);
    // The socket's own async context, made in the upgrade request's (so it starts with what that
    // request's context held): each of its events runs in it, apart from every other socket's.
    const scope = asyncResource("CogWebSocket");
    const transport = engine.accept(req, res, settings, {
      message: (message, binary) => {
        if (handlers.message === undefined) return;
        scope.runInAsyncScope(call, null, () => handlers.message!(ws!, message, binary), report, "message");
      },
      drain: () => {
        if (handlers.drain !== undefined) scope.runInAsyncScope(call, null, () => handlers.drain!(ws!), report, "drain");
      },
      close: (code, reason) => {
        ws!.closed();
        if (handlers.close !== undefined) scope.runInAsyncScope(call, null, () => handlers.close!(ws!, code, reason), report, "close");
      },
    });
    if (transport === null) return;
    ws = new WebSocket(data, transport.remoteAddress, transport, topics);
    if (handlers.open !== undefined) call(() => handlers.open!(ws!), report, "open");
  };
  return function webSocketUpgrade(req, res) {
    const problem = handshakeProblem(req);
    if (problem !== null) throw problem;
    if (handlers.upgrade === undefined) return accept(req, res, undefined);
    const data = handlers.upgrade(req) as unknown;
    if (data !== null && typeof data === "object" && typeof (data as PromiseLike<unknown>).then === "function") {
      return (data as Promise<unknown>).then((value) => accept(req, res, value));
    }
    return accept(req, res, data);
  };
}

/** Runs a socket handler; what it throws (or rejects with) is reported, and the socket goes on. */
function call(run: () => unknown, report: (err: unknown, where: string) => void, where: string): void {
  try {
    const result = run() as PromiseLike<unknown> | undefined;
    if (result !== undefined && result !== null && typeof result.then === "function") result.then(undefined, (err: unknown) => report(err, where));
  } catch (err) {
    report(err, where);
  }
}
