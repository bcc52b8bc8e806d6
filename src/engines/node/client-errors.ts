import { STATUS_CODES, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { Refusal, errorBody } from "../../errors.js";
import { tooSlow, type Limits } from "../../limits.js";

/** Node's parse error, or its request timeout (`ERR_HTTP_REQUEST_TIMEOUT`). */
type ClientError = Error & { code?: string; reason?: string };

/**
 * What Node's parser refuses before a request exists (a head it can't parse, one past
 * maxHeaderSize, a malformed chunk, a client too slow) is answered as the native engine answers
 * it: Cog's JSON error body naming the rule or the limit, in the native engine's words, then the
 * connection closed. Node's own answer is a bare status line. Nothing is logged: any client can
 * send these, as often as it likes.
 */
export function answerClientErrors(server: Server, limits: Limits): void {
  server.on("clientError", (err: ClientError, socket: Socket) => {
    // As Node's own handler: answer unless the response in flight has begun (it can't be interrupted).
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    refuseOnSocket(socket, inFlight, refusalOf(err, inFlight, limits));
  });
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
      return inFlight != null && inFlight.req.complete === false ? tooSlow("requestTimeout", limits.requestTimeout) : tooSlow("headersTimeout", limits.headersTimeout);
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
