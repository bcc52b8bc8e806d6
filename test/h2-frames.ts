// HTTP/2 written and read frame by frame, for the tests that must send what no client library
// sends (floods, a body after the answer began) or see frames no library shows (a reset after an
// END_STREAM): the preface, frames, HPACK literals, and a reader of the frames that come back.
import type { Socket } from "node:net";

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** A frame: its 9-byte head (length, type, flags, stream id) and payload. */
export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an `bits`-bit prefix (RFC 7541 §5.1), its first byte or'ed with `mask`. */
export function integer(value: number, bits: number, mask: number): number[] {
  const max = (1 << bits) - 1;
  if (value < max) return [mask | value];
  const out = [mask | max];
  for (value -= max; value >= 128; value >>= 7) out.push((value & 127) | 128);
  out.push(value);
  return out;
}

/** A literal field: without indexing, or (`indexed`) added to the dynamic table. */
export function literal(name: string, value: string, indexed = false): Buffer {
  const n = Buffer.from(name);
  const v = Buffer.from(value);
  return Buffer.concat([Buffer.from([...(indexed ? [0x40] : [0x00]), ...integer(n.length, 7, 0)]), n, Buffer.from(integer(v.length, 7, 0)), v]);
}

export interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

/** Calls `onFrame` with each whole frame that arrives on `socket`. */
export function readFrames(socket: Socket, onFrame: (frame: Frame) => void): void {
  let input = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    input = Buffer.concat([input, chunk]);
    while (input.length >= 9 && input.length >= 9 + input.readUIntBE(0, 3)) {
      const length = input.readUIntBE(0, 3);
      onFrame({ type: input[3]!, flags: input[4]!, stream: input.readUInt32BE(5) & 0x7fffffff, payload: input.subarray(9, 9 + length) });
      input = input.subarray(9 + length);
    }
  });
}
