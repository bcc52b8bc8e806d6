/** What `send` and `publish` take: a string goes out as text, bytes as binary (unless `isBinary` says otherwise). */
export type OutgoingData = string | Buffer | ArrayBuffer | ArrayBufferView;

/** A payload as the engines take it: a string, or a Buffer over the same bytes (no copy). */
export function payloadOf(data: OutgoingData): string | Buffer {
  if (typeof data === "string" || Buffer.isBuffer(data)) return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError(`a WebSocket message is a string, a Buffer, an ArrayBuffer or a typed array; got ${data === null ? "null" : typeof data}`);
}
