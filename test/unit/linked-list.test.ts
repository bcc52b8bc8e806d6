// The list the app's open event streams and handlerTimeout's watched responses are kept in
// (src/base/linked-list.ts), against a Set doing the same.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Linked, LinkedList } from "../../src/base/linked-list.js";

class Entry extends Linked<Entry> {
  constructor(readonly value: number) {
    super();
  }
}

/** A list of fresh entries for `values`, and the entries. */
function listOf(...values: number[]): [LinkedList<Entry>, Entry[]] {
  const list = new LinkedList<Entry>();
  const entries = values.map((value) => new Entry(value));
  for (const entry of entries) list.add(entry);
  return [list, entries];
}

const valuesOf = (list: LinkedList<Entry>): number[] => [...list].map((entry) => entry.value);

/** A seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe("LinkedList", () => {
  test("adds at the end, removes from anywhere, once; size counts what is in it; first is the oldest", () => {
    const [list, [a, b, c]] = listOf(1, 2, 3);
    assert.deepEqual(valuesOf(list), [1, 2, 3]);
    assert.equal(list.first, a);
    list.remove(b!);
    assert.deepEqual(valuesOf(list), [1, 3]);
    list.remove(b!);
    assert.equal(list.size, 2, "a second remove does nothing");
    assert.deepEqual(valuesOf(list), [1, 3]);
    list.remove(a!);
    assert.equal(list.first, c);
    list.remove(c!);
    list.remove(c!);
    assert.deepEqual(valuesOf(list), []);
    assert.equal(list.size, 0);
    assert.equal(list.first, null);
    list.add(new Entry(4));
    assert.deepEqual(valuesOf(list), [4], "empty, it takes entries again");
  });

  test("an entry that was never in it is not removed, nor does it change the list", () => {
    const [list] = listOf(1, 2);
    list.remove(new Entry(3));
    assert.equal(list.size, 2);
    assert.deepEqual(valuesOf(list), [1, 2]);
  });

  test("an entry that leaves is emptied: it names neither neighbour, and neither names it", () => {
    const [list, [first, middle, last]] = listOf(1, 2, 3);
    list.remove(middle!);
    assert.deepEqual([middle!.prev, middle!.next], [null, null]);
    assert.equal(first!.next, last);
    assert.equal(last!.prev, first);
  });

  test("iterating gives the entries as they were: removing them meanwhile (a shutdown's) skips none", () => {
    const [list, entries] = listOf(1, 2, 3, 4);
    const seen: number[] = [];
    for (const entry of list) {
      seen.push(entry.value);
      list.remove(entry);
      if (entry.value === 1) list.remove(entries[2]!);
    }
    assert.deepEqual(seen, [1, 2, 3, 4]);
    assert.equal(list.size, 0);
  });

  test("clear takes every entry out", () => {
    const [list, entries] = listOf(1, 2, 3);
    list.clear();
    assert.equal(list.size, 0);
    assert.deepEqual(valuesOf(list), []);
    assert.ok(entries.every((entry) => entry.next === null && entry.prev === null));
  });

  test("agrees with a Set over 20,000 random adds and removes", () => {
    const next = random(9);
    const list = new LinkedList<Entry>();
    const model = new Set<number>();
    const entries = new Map<number, Entry>();
    for (let op = 0; op < 20_000; op++) {
      if (next() < 0.55 || model.size === 0) {
        const entry = new Entry(op);
        entries.set(op, entry);
        list.add(entry);
        model.add(op);
      } else {
        const keys = [...model];
        const key = keys[Math.floor(next() * keys.length)]!;
        list.remove(entries.get(key)!);
        model.delete(key);
      }
      assert.equal(list.size, model.size);
      if (op % 211 === 0) assert.deepEqual(valuesOf(list), [...model], `at ${op}`);
    }
  });
});
