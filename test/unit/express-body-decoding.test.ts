// Express's body parsers decode a UTF-8 body without iconv-lite's decoder (src/express/body-parsers.ts):
// held here to iconv-lite's answers (Node's StringDecoder, a byte-order mark dropped), which
// raw-body gives body-parser, for bodies full of broken and partial sequences.
import assert from "node:assert/strict";
import { test } from "node:test";
import iconv from "iconv-lite";
import { utf8 } from "../../src/express/body-parsers.js";

test("a UTF-8 body decodes as iconv-lite decodes it: broken and cut sequences, byte-order marks", () => {
  // Lead bytes of every length, continuation bytes, surrogates, overlongs, bytes that are never UTF-8.
  const bytes = [0x41, 0x80, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe2, 0x82, 0xac, 0xed, 0xa0, 0xef, 0xbb, 0xf0, 0x90, 0xf4, 0x8f, 0xf5, 0xf8, 0xff];
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % bytes.length;
  const bodies = [Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf]), Buffer.from([0xef, 0xbb]), Buffer.alloc(0)];
  for (let i = 0; i < 20_000; i++) bodies.push(Buffer.from(Array.from({ length: 1 + (i % 9) }, () => bytes[random()]!)));
  for (const body of bodies) assert.equal(utf8(body), iconv.decode(body, "utf-8"), body.toString("hex"));
});
