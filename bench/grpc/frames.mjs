// gRPC's message framing for HttpArena's BenchmarkService (bench/grpc/benchmark.proto), written by
// hand for the tools that send raw HTTP/2 (h2load's request body, the validation's calls): each
// message is int32 fields only, so its protobuf is a varint per field.

/** A gRPC frame of one message whose fields 1, 2, … are `fields` (non-negative int32s): flags 0, the length, the message. */
export function frame(fields) {
  const bytes = [];
  fields.forEach((value, i) => {
    bytes.push(((i + 1) << 3) | 0);
    for (let v = value; ; v >>>= 7) {
      if (v < 0x80) {
        bytes.push(v);
        break;
      }
      bytes.push((v & 0x7f) | 0x80);
    }
  });
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([prefix, Buffer.from(bytes)]);
}

/** The messages of a gRPC body (uncompressed frames), each as its int32 fields by number; throws on a cut or compressed frame. */
export function messages(body) {
  const out = [];
  for (let at = 0; at < body.length;) {
    if (body.length - at < 5) throw new Error(`a gRPC frame's prefix cut short at byte ${at} of ${body.length}`);
    if (body[at] !== 0) throw new Error(`a compressed gRPC frame (flags ${body[at]}), where none was asked for`);
    const length = body.readUInt32BE(at + 1);
    const end = at + 5 + length;
    if (end > body.length) throw new Error(`a gRPC frame of ${length} bytes cut short at byte ${body.length}`);
    const fields = {};
    for (let p = at + 5; p < end;) {
      const key = body[p++];
      if ((key & 7) !== 0) throw new Error(`field ${key >> 3} is not a varint`);
      let value = 0;
      for (let shift = 0; ; shift += 7) {
        const byte = body[p++];
        value += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) break;
      }
      // int32: negative numbers travel as 10-byte varints of their 64-bit two's complement.
      fields[key >> 3] = value >= 2 ** 31 ? Number(BigInt.asIntN(32, BigInt(value))) : value;
    }
    out.push(fields);
    at = end;
  }
  return out;
}
