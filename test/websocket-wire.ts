// A raw WebSocket client for the tests: the handshake over a plain TCP socket, client frames
// built byte by byte (masked or not, any bits and lengths, malformed on purpose), and the
// server's frames parsed back, so a test can send what no well-behaved client library would.
import { connect, type Socket } from "node:net";
import { randomBytes } from "node:crypto";

export const TEXT = 0x1;
export const BINARY = 0x2;
export const CONTINUATION = 0x0;
export const CLOSE = 0x8;
export const PING = 0x9;
export const PONG = 0xa;

export interface FrameSpec {
  opcode: number;
  payload?: Buffer | string;
  fin?: boolean;
  /** Reserved bits (0-7) as the frame's bits 6-4. */
  rsv?: number;
  /** Unmasked (a protocol error from a client). */
  unmasked?: boolean;
  /** The length field claims this instead of the payload's length. */
  claimedLength?: bigint;
}

/** A client frame's bytes. */
export function frame(spec: FrameSpec): Buffer {
  const payload = typeof spec.payload === "string" ? Buffer.from(spec.payload) : (spec.payload ?? Buffer.alloc(0));
  const length = spec.claimedLength ?? BigInt(payload.length);
  const head: number[] = [((spec.fin ?? true) ? 0x80 : 0) | ((spec.rsv ?? 0) << 4) | spec.opcode];
  const maskBit = spec.unmasked ? 0 : 0x80;
  let extended = Buffer.alloc(0);
  if (length < 126n) head.push(maskBit | Number(length));
  else if (length <= 0xffffn) {
    head.push(maskBit | 126);
    extended = Buffer.alloc(2);
    extended.writeUInt16BE(Number(length));
  } else {
    head.push(maskBit | 127);
    extended = Buffer.alloc(8);
    extended.writeBigUInt64BE(length);
  }
  if (spec.unmasked) return Buffer.concat([Buffer.from(head), extended, payload]);
  const mask = randomBytes(4);
  const masked = Buffer.from(payload);
  for (let i = 0; i < masked.length; i++) masked[i]! ^= mask[i % 4]!;
  return Buffer.concat([Buffer.from(head), extended, mask, masked]);
}

/** A Close frame's payload: a code, then a reason. */
export function closePayload(code: number, reason: Buffer | string = ""): Buffer {
  const head = Buffer.alloc(2);
  head.writeUInt16BE(code);
  return Buffer.concat([head, typeof reason === "string" ? Buffer.from(reason) : reason]);
}

export interface ServerFrame {
  fin: boolean;
  /** RSV1: the message is compressed (permessage-deflate). */
  rsv1: boolean;
  opcode: number;
  payload: Buffer;
  /** For a Close frame: its code (1005 when it has none). */
  code?: number;
}

/** A raw connection after a completed handshake. */
export interface RawSocket {
  socket: Socket;
  send(...frames: Buffer[]): void;
  /** The next frame from the server (rejects when the connection ends first, or after `ms`). */
  next(ms?: number): Promise<ServerFrame>;
  /** Resolves with every frame the server sent once it closed the connection (or after `ms`). */
  rest(ms?: number): Promise<ServerFrame[]>;
  /** Whether the server closed the TCP connection. */
  readonly ended: boolean;
}

/** The handshake's request, with headers added or replaced. */
export function handshake(path: string, headers: Record<string, string> = {}): string {
  const all: Record<string, string> = {
    Host: "localhost",
    Upgrade: "websocket",
    Connection: "Upgrade",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version": "13",
    ...headers,
  };
  return `GET ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;
}

/** Opens a WebSocket by hand; rejects with the status line and head if the server does not answer 101. */
export function openRaw(port: number, path = "/", headers: Record<string, string> = {}): Promise<RawSocket & { head: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let buffered = Buffer.alloc(0);
    let head: string | null = null;
    const frames: ServerFrame[] = [];
    const waiting: Array<() => void> = [];
    let ended = false;
    const wake = () => {
      for (const w of waiting.splice(0)) w();
    };
    socket.on("error", () => {});
    socket.on("close", () => {
      ended = true;
      if (head === null) reject(new Error(`closed before the handshake's answer: ${buffered.toString("latin1")}`));
      wake();
    });
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (head === null) {
        const end = buffered.indexOf("\r\n\r\n");
        if (end === -1) return;
        head = buffered.subarray(0, end + 4).toString("latin1");
        buffered = buffered.subarray(end + 4);
        if (!head.startsWith("HTTP/1.1 101")) {
          const error = new Error(head.split("\r\n")[0]) as Error & { head: string };
          error.head = head + buffered.toString("latin1");
          socket.destroy();
          return reject(error);
        }
        resolve(raw);
      }
      for (;;) {
        const parsed = parseFrame(buffered);
        if (parsed === null) break;
        frames.push(parsed.frame);
        buffered = buffered.subarray(parsed.used);
      }
      wake();
    });
    const waitFor = <T>(check: () => T | undefined, ms: number, what: string): Promise<T> =>
      new Promise((ok, fail) => {
        const timer = setTimeout(() => fail(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
        const attempt = () => {
          const value = check();
          if (value !== undefined) {
            clearTimeout(timer);
            ok(value);
          } else waiting.push(attempt);
        };
        attempt();
      });
    const raw = {
      socket,
      get head() {
        return head!;
      },
      get ended() {
        return ended;
      },
      send: (...parts: Buffer[]) => {
        if (!socket.destroyed) socket.write(Buffer.concat(parts));
      },
      next: (ms = 3000) =>
        waitFor(
          () => {
            if (frames.length > 0) return frames.shift();
            if (ended) throw new Error("the server closed the connection");
            return undefined;
          },
          ms,
          "a frame",
        ),
      rest: (ms = 3000) => waitFor(() => (ended ? frames.splice(0) : undefined), ms, "the server to close the connection"),
    };
    socket.on("connect", () => socket.write(handshake(path, headers)));
  });
}

function parseFrame(bytes: Buffer): { frame: ServerFrame; used: number } | null {
  if (bytes.length < 2) return null;
  let length = bytes[1]! & 0x7f;
  let at = 2;
  if (length === 126) {
    if (bytes.length < 4) return null;
    length = bytes.readUInt16BE(2);
    at = 4;
  } else if (length === 127) {
    if (bytes.length < 10) return null;
    length = Number(bytes.readBigUInt64BE(2));
    at = 10;
  }
  if (bytes.length < at + length) return null;
  const payload = Buffer.from(bytes.subarray(at, at + length));
  const opcode = bytes[0]! & 0x0f;
  const frame: ServerFrame = { fin: (bytes[0]! & 0x80) !== 0, rsv1: (bytes[0]! & 0x40) !== 0, opcode, payload };
  if (opcode === CLOSE) frame.code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
  return { frame, used: at + length };
}

/** The code of the Close frame the server sends after `frames` (null if it closed without one). */
export async function closeCodeAfter(port: number, path: string, frames: Buffer[]): Promise<number | null> {
  const raw = await openRaw(port, path);
  raw.send(...frames);
  const rest = await raw.rest();
  return rest.find((f) => f.opcode === CLOSE)?.code ?? null;
}
