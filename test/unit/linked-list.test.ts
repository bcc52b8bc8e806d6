// The list the app's open event streams are kept in (src/linked-list.ts), against a Set doing the same.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LinkedList, type Link } from "../../src/linked-list.js";

/** A seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe("LinkedList", () => {
  test("adds at the end, removes from anywhere, once; size counts what is in it", () => {
    const list = new LinkedList<string>();
    const a = list.add("a");
    const b = list.add("b");
    const c = list.add("c");
    assert.deepEqual([...list], ["a", "b", "c"]);
    list.remove(b);
    assert.deepEqual([...list], ["a", "c"]);
    list.remove(b);
    assert.equal(list.size, 2, "a second remove does nothing");
    list.remove(a);
    list.remove(c);
    assert.deepEqual([...list], []);
    assert.equal(list.size, 0);
    list.add("d");
    assert.deepEqual([...list], ["d"], "empty, it takes entries again");
  });

  test("a link that leaves is emptied: it names neither its value nor its neighbours", () => {
    const list = new LinkedList<object>();
    list.add({});
    const middle = list.add({});
    list.add({});
    list.remove(middle);
    assert.deepEqual([middle.value, middle.prev, middle.next], [null, null, null]);
  });

  test("iterating gives the values as they were: removing them meanwhile (a shutdown's) skips none", () => {
    const list = new LinkedList<number>();
    const links = [1, 2, 3, 4].map((n) => list.add(n));
    const seen: number[] = [];
    for (const value of list) {
      seen.push(value);
      list.remove(links[value - 1]!);
      if (value === 1) list.remove(links[2]!);
    }
    assert.deepEqual(seen, [1, 2, 3, 4]);
    assert.equal(list.size, 0);
  });

  test("clear takes every link out", () => {
    const list = new LinkedList<number>();
    const links = [1, 2, 3].map((n) => list.add(n));
    list.clear();
    assert.equal(list.size, 0);
    assert.deepEqual([...list], []);
    assert.ok(links.every((link) => link.value === null && link.next === null && link.prev === null));
  });

  test("agrees with a Set over 20,000 random adds and removes", () => {
    const next = random(9);
    const list = new LinkedList<number>();
    const model = new Set<number>();
    const links = new Map<number, Link<number>>();
    for (let op = 0; op < 20_000; op++) {
      if (next() < 0.55 || model.size === 0) {
        links.set(op, list.add(op));
        model.add(op);
      } else {
        const keys = [...model];
        const key = keys[Math.floor(next() * keys.length)]!;
        list.remove(links.get(key)!);
        model.delete(key);
      }
      assert.equal(list.size, model.size);
      if (op % 211 === 0) assert.deepEqual([...list], [...model], `at ${op}`);
    }
  });
});
