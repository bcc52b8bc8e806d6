import { closeAtOnce } from "./linger.js";
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { Refusal, errorBody, type HttpError } from "../../base/errors.js";
import { tooSlow, type Limits } from "../../base/limits.js";

/** Node's parse error, or its request timeout (`ERR_HTTP_REQUEST_TIMEOUT`). */
type ClientError = Error & { code?: string; reason?: string };

/**
 * What Node's parser refuses before a request exists (a head it can't parse, one past
 * maxHeaderSize, a malformed chunk, a client too slow) is answered as the native engine answers
 * it: Cog's JSON error body naming the rule or the limit, in the native engine's words, then the
 * connection closed. Node's own answer is a bare status line. Nothing is logged: any client can
 * send these, as often as it likes.
 */
export function answerClientErrors(server: Server, limits: Limits, fail: FailBody): void {
  server.on("clientError", (err: ClientError, socket: Socket) => {
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    // A body too slow: its request was routed, so the app answers (see `bodyTooSlow`).
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT" && inFlight != null && inFlight.req.complete === false)
      return bodyTooSlow(socket, inFlight, limits.requestTimeout, fail);
    // As Node's own handler: answer unless the response in flight has begun (it can't be interrupted).
    refuseOnSocket(socket, inFlight, refusalOf(err, inFlight, limits));
  });
}

/** How the engine hands an error to the app's error handler (`EngineHost.fail`). */
export type FailBody = (err: HttpError, req: IncomingMessage, res: ServerResponse) => void;

/** The responses whose too-slow body the app has been told of. */
const told = new WeakSet<ServerResponse>();

/**
 * A body that did not arrive within `ms`, its request routed: the app answers the 408 through its
 * error handler (so a custom format applies), with `Connection: close`, and Node closes the
 * connection after it, as the native engine does. Told a second time (by Node's next check, or
 * the engine's second timer) with no answer begun, the engine answers itself and closes.
 */
export function bodyTooSlow(socket: Socket, res: ServerResponse, ms: number, fail: FailBody): void {
  if (res.headersSent) {
    // The app's 408 is out: close (the body may never end). A response begun before is cut, as Node does.
    if (!told.has(res) || res.writableFinished) socket.destroy();
    return;
  }
  if (told.has(res)) return refuseOnSocket(socket, res, tooSlow("requestTimeout", ms));
  told.add(res);
  res.shouldKeepAlive = false;
  closeAtOnce(socket);
  fail(tooSlow("requestTimeout", ms), res.req, res);
}

/** Writes the refusal unless the response in flight has begun (it can't be interrupted), then closes the connection. */
export function refuseOnSocket(socket: Socket, inFlight: ServerResponse | null | undefined, refused: { status: number; message: string }): void {
  if (socket.writable && (inFlight == null || !inFlight.headersSent)) socket.write(refusal(refused));
  socket.destroy();
}

/** The refusal for Node's error: the native engine's status and message for the same fault. */
function refusalOf(err: ClientError, inFlight: ServerResponse | null | undefined, limits: Limits): { status: number; message: string } {
  switch (err.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      // A request whose head was read is in flight until its body is: then the body was too slow.
      return inFlight != null && inFlight.req.complete === false
        ? tooSlow("requestTimeout", limits.requestTimeout)
        : tooSlow("headersTimeout", limits.headersTimeout);
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, message: "Request head is larger than maxHeaderSize; raise the maxHeaderSize option to accept it" };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, message: "Chunk extensions too large" };
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return bad("More than one Content-Length header");
    case "HPE_INVALID_CONTENT_LENGTH":
      return bad("Invalid Content-Length");
    case "HPE_INVALID_TRANSFER_ENCODING":
      return bad(/Content-Length/.test(err.reason ?? "") ? "Both Content-Length and Transfer-Encoding" : "chunked is not the final transfer coding");
    case "HPE_INVALID_CHUNK_SIZE":
      return bad(/overflow/i.test(err.reason ?? "") ? "Chunk size too large" : "Invalid chunk size");
    case "HPE_INVALID_URL":
      return bad("Invalid request target");
    case "HPE_INVALID_VERSION":
      // HTTP/2's preface with something else after its first line: its version is 2.0, which the native engine answers 505.
      if (/HTTP\/2 Connection Preface/.test(err.reason ?? "")) return { status: 505, message: "HTTP version not supported; use HTTP/1.1" };
      // llhttp's words for a line ended by LF alone, which the native engine names.
      return bad(/CRLF/.test(err.reason ?? "") ? "Bare LF in request head" : "Malformed request line");
    case "HPE_INVALID_METHOD":
      return bad("Malformed request line");
    default:
      return bad("Malformed request head");
  }
}

function bad(message: string): { status: number; message: string } {
  return { status: 400, message };
}

/** The bytes of a refusal, as the native engine writes them: the JSON error body every Cog refusal carries, and `Connection: close`. */
export function refusal({ status, message }: { status: number; message: string }): string {
  const body = JSON.stringify(errorBody(status, new Refusal(status, message)));
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\nDate: ${new Date().toUTCString()}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
