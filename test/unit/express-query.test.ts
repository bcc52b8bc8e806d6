// Express 5's "simple" query parser (src/express/query.ts) is node:querystring's parse with a
// shorter way for query strings that need no decoding: held here to node:querystring's answers,
// key for key in the same order, with no prototype, for strings made of the characters that
// change its answers (separators, `+`, `%` escapes good and broken, keys an object would inherit).
import assert from "node:assert/strict";
import * as querystring from "node:querystring";
import { test } from "node:test";
import { parseSimpleQuery } from "../../src/express/query.js";

function assertSame(query: unknown): void {
  const ours = parseSimpleQuery(query);
  const node = querystring.parse(query as string);
  const label = JSON.stringify(query);
  assert.equal(Object.getPrototypeOf(ours), null, label);
  assert.deepEqual(Object.entries(ours), Object.entries(node), label);
}

test("a query string parses as node:querystring parses it", () => {
  const pieces = ["a", "b", "=", "&", "+", "%", "2", "B", "%20", "%zz", "__proto__", "constructor", "hasOwnProperty", "0", "1", "é", "\ud800", " "];
  const fixed = [
    null,
    undefined,
    "",
    "name=John",
    "a=1&a=2&a=3",
    "a=b=c",
    "=",
    "&",
    "&&a",
    "a&",
    "a",
    "=x",
    "x=",
    "a+b=c+d",
    "a=%2B",
    "a=%E2%82%AC",
    "a=%E2%82",
    "%",
    "__proto__=1",
    "a=1&".repeat(999) + "b=2",
    "a=1&".repeat(1000) + "b=2",
    "&".repeat(1200) + "a=1",
  ];
  for (const query of fixed) assertSame(query);
  let seed = 11;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let i = 0; i < 30_000; i++) assertSame(Array.from({ length: random(12) }, () => pieces[random(pieces.length)]).join(""));
});

test("node:querystring's other arguments are node:querystring's own", () => {
  const parse = parseSimpleQuery as (...args: unknown[]) => unknown;
  assert.deepEqual(parse("a:1;b:2", ";", ":"), querystring.parse("a:1;b:2", ";", ":"));
  assert.deepEqual(Object.keys(parse("a=1&b=2&c=3", "&", "=", { maxKeys: 2 }) as object), ["a", "b"]);
});
